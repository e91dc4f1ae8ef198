# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Resetting a host enrolled into a metal cluster: what kubespray's reset does (reset/tasks/main.yml), on what kops'
nodeup and etcd-manager left (the roles say which units and paths: roles/*/tasks/reset.yml).

In order: the units stopped and disabled (the kubelet first, containerd last, its containers' tasks killed before
it stops, so no pod outlives it); the mounts under the removed directories unmounted, deepest first; the iptables
rules of kube-proxy and the CNI plugins (chains KUBE-*, CNI-*) removed from every table, the host's own rules kept
(kubespray flushes whole tables; here only what Kubernetes made goes); kube-proxy's IPVS dummy link and the CNI
bridges deleted; the paths removed.

Pure planning here (``plan``, ``without_chains``, ``mounts_under``); ``Host`` runs the commands.  Check mode plans
and reports, and runs no command that changes anything.
"""

from __future__ import annotations

import json
import os
import re
import shutil

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

CHAIN_PREFIXES = ("KUBE-", "CNI-")
CONTAINERD_NAMESPACES = ("k8s.io",)
NETNS_DIR = "/run/netns"
CNI_NETNS_PREFIX = "cni-"  # the network namespaces containerd's CRI makes for pods (/run/netns/cni-<uuid>)


class ResetError(NodeError):
    pass


def without_chains(save_text, prefixes=CHAIN_PREFIXES):
    """iptables-save output -> (the same without the chains named by prefixes and every rule that is in or jumps to
    one, [table:chain removed]).  Tables and the host's own rules are kept as they are."""
    kept, removed, table = [], [], ""
    chain = re.compile(r"^:(\S+)\s")
    for line in save_text.splitlines():
        if line.startswith("*"):
            table = line[1:]
        found = chain.match(line)
        if found and found.group(1).startswith(prefixes):
            removed.append("%s:%s" % (table, found.group(1)))
            continue
        if line.startswith(("-A ", "-I ")):
            words = line.split()
            targets = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-j", "-g", "--jump", "--goto")]
            if words[1].startswith(prefixes) or any(t.startswith(prefixes) for t in targets):
                continue
        kept.append(line)
    return "\n".join(kept) + "\n", removed


def mounts_under(mountinfo_text, directories):
    """/proc/self/mountinfo -> the mount points at or under any of directories, deepest first (unmount order)."""
    points = []
    for line in mountinfo_text.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ")
        if any(point == d or point.startswith(d.rstrip("/") + "/") for d in directories) and point not in points:
            points.append(point)
    return sorted(points, key=lambda p: (-p.count("/"), p))


def cni_bridges(documents):
    """The bridges CNI network configs name (a .conf's "bridge", or its plugins' in a .conflist): the bridge plugin
    makes them on the host, and they outlive the pods."""
    found = []
    for document in documents:
        for plugin in [document] + list(document.get("plugins") or []):
            name = plugin.get("bridge") if isinstance(plugin, dict) and plugin.get("type") == "bridge" else None
            if name and name not in found:
                found.append(name)
    return found


def plan(units, paths, existing_units, exists):
    """What a reset would do: the units that exist (in the order given) and the paths that exist (each once, a path
    under another removed path left out: removing the directory removes it)."""
    present = [u for u in units if u in existing_units]
    chosen = []
    for path in paths:
        path = path.rstrip("/") or "/"
        if path in ("/", "") or path in chosen or not exists(path):
            continue
        chosen.append(path)
    covered = [p for p in chosen if not any(p != other and p.startswith(other + "/") for other in chosen)]
    return present, covered


class Host(object):
    """The commands a reset runs on the host (run_command: AnsibleModule.run_command)."""

    def __init__(self, run_command, root="/"):
        self.run_command = run_command
        self.root = root

    def _run(self, args, data=None, check=True):
        rc, out, err = self.run_command(args, data=data)
        if check and rc != 0:
            raise ResetError("%s failed: %s" % (" ".join(args), (err or out).strip().splitlines()[-1:] or rc))
        return rc, out

    def path(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def exists(self, path):
        return os.path.lexists(self.path(path))

    def units(self, names):
        """The names among units systemd knows (a unit file or loaded), from one systemctl call."""
        if not names:
            return set()
        rc, out = self._run(["systemctl", "show", "--property=Id,LoadState"] + list(names), check=False)
        if rc != 0:
            return set()
        known = set()
        for block in out.strip().split("\n\n"):
            fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
            if fields.get("LoadState") not in (None, "not-found"):
                known.add(fields.get("Id"))
        return {n for n in names if n in known or ("%s.service" % n) in known}

    def container_tasks(self):
        """[(namespace, task id)] containerd runs, or [] when ctr is not there or containerd is not running."""
        if not shutil.which("ctr"):
            return []
        found = []
        for namespace in CONTAINERD_NAMESPACES:
            rc, out = self._run(["ctr", "--namespace", namespace, "tasks", "list", "--quiet"], check=False)
            if rc == 0:
                found.extend((namespace, task) for task in out.split())
        return found

    def kill_container_tasks(self, tasks):
        for namespace, task in tasks:
            self._run(["ctr", "--namespace", namespace, "tasks", "kill", "--all", "--signal", "SIGKILL", task],
                      check=False)
        for namespace, task in tasks:
            self._run(["ctr", "--namespace", namespace, "tasks", "delete", "--force", task], check=False)

    def stop(self, units):
        for unit in units:
            self._run(["systemctl", "disable", "--now", unit], check=False)
            self._run(["systemctl", "stop", unit])

    def mountinfo(self):
        with open("/proc/self/mountinfo") as handle:
            return handle.read()

    def unmount(self, points):
        for point in points:
            if self._run(["umount", point], check=False)[0] != 0:
                self._run(["umount", "--lazy", point])

    def iptables(self, prefixes):
        """{command: (filtered rules, removed chains)} for iptables and ip6tables where they are installed."""
        found = {}
        for save, restore in (("iptables-save", "iptables-restore"), ("ip6tables-save", "ip6tables-restore")):
            if not shutil.which(save):
                continue
            rc, out = self._run([save], check=False)
            if rc != 0:
                continue
            rules, removed = without_chains(out, prefixes)
            if removed:
                found[restore] = (rules, removed)
        return found

    def restore_iptables(self, found):
        for restore, (rules, _removed) in sorted(found.items()):
            self._run([restore], data=rules)

    def cni_configs(self, paths):
        """The CNI network configs (JSON) among paths and in the directories among them."""
        documents = []
        for path in paths:
            full = self.path(path)
            names = sorted(os.path.join(d, n) for d, _dirs, files in os.walk(full) for n in files) \
                if os.path.isdir(full) else [full]
            for name in names:
                if not name.endswith((".conf", ".conflist")) or not os.path.isfile(name):
                    continue
                try:
                    with open(name) as handle:
                        documents.append(json.load(handle))
                except ValueError:
                    continue  # not a network config: nothing to learn from it
        return documents

    def pod_network_namespaces(self):
        """The pods' network namespaces left in /run/netns (bind mounts, removed after they are unmounted)."""
        directory = self.path(NETNS_DIR)
        if not os.path.isdir(directory):
            return []
        return sorted("%s/%s" % (NETNS_DIR, n) for n in os.listdir(directory) if n.startswith(CNI_NETNS_PREFIX))

    def links(self, names):
        return [n for n in names if os.path.exists("/sys/class/net/%s" % n)]

    def delete_links(self, names):
        for name in names:
            self._run(["ip", "link", "delete", name])

    def ipvs_services(self):
        if not shutil.which("ipvsadm"):
            return False
        rc, out = self._run(["ipvsadm", "--save", "--numeric"], check=False)
        return rc == 0 and bool(out.strip())

    def clear_ipvs(self):
        self._run(["ipvsadm", "--clear"])

    def remove(self, paths):
        for path in paths:
            full = self.path(path)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)

    def daemon_reload(self):
        self._run(["systemctl", "daemon-reload"], check=False)
        self._run(["systemctl", "reset-failed"], check=False)


def reset(host, units, paths, links, chain_prefixes=CHAIN_PREFIXES, check_mode=False):
    """Reset the host (or, check_mode, say what a reset would do).  Returns the result's fields."""
    stopped, removed = plan(units, list(paths) + host.pod_network_namespaces(), host.units(units), host.exists)
    tasks = host.container_tasks()
    mounts = mounts_under(host.mountinfo(), removed)
    iptables = host.iptables(tuple(chain_prefixes))
    ipvs = host.ipvs_services() and "kube-ipvs0" in links and bool(host.links(["kube-ipvs0"]))
    cni_dirs = [p for p in removed if p == "/etc/cni" or p.startswith("/etc/cni/")]
    deleted_links = host.links(list(links) + [b for b in cni_bridges(host.cni_configs(cni_dirs)) if b not in links])
    result = dict(stopped=stopped, containers=["%s/%s" % t for t in tasks], unmounted=mounts, removed=removed,
                  iptables_chains=sorted(c for _rules, removed_chains in iptables.values() for c in removed_chains),
                  ipvs_cleared=ipvs, links=deleted_links)
    result["changed"] = any(result[k] for k in ("stopped", "containers", "unmounted", "removed", "iptables_chains",
                                                "ipvs_cleared", "links"))
    if check_mode or not result["changed"]:
        return result
    containerd = [u for u in stopped if u in ("containerd", "containerd.service")]
    host.stop([u for u in stopped if u not in containerd])
    host.kill_container_tasks(host.container_tasks())
    host.stop(containerd)
    host.unmount(mounts_under(host.mountinfo(), removed))
    host.restore_iptables(iptables)
    if ipvs:
        host.clear_ipvs()
    host.delete_links(deleted_links)
    host.remove(removed)
    host.daemon_reload()
    return result
