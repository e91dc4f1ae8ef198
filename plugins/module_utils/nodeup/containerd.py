# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""containerd's files, as kops' nodeup ContainerdBuilder writes them (nodeup/pkg/model/containerd.go).

- nothing with containerd.skipInstall (the image's containerd, configured by its owner);
- /etc/containerd/config.toml: configOverride verbatim, or the config built from the spec, in the schema of
  the containerd that runs it: version 4 from containerd 2.3, 3 for 2.0 to 2.2 and for the containerd
  Flatcar and Container-Optimized OS bring, and (kops of containerd 1.x days) version 2 for 1.x, such as
  the distribution package a node may install instead of the release tarball;
- /etc/containerd/certs.d/<registry>/hosts.toml per registry mirror (registry config_path points there);
- kubenet-derived networking: the CNI config template and the masquerade rules (cni-iptables-setup);
- the containerd unit, /etc/sysconfig/containerd (its flags), /etc/crictl.yaml and the license of the
  binaries installed; on Flatcar and Container-Optimized OS a drop-in instead.
"""

from __future__ import annotations

import csv
import json
import re

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import distribution, toml
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import containerd_license
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

CONFIG_PATH = "/etc/containerd/config.toml"
REGISTRY_DIR = "/etc/containerd/certs.d"
CNI_TEMPLATE_PATH = "/etc/containerd/config-cni.template"
IPTABLES_SETUP = "/opt/kops/bin/cni-iptables-setup"
OS_CONTAINERD = ("flatcar", "containeros")
# The spec's fields that are containerd's command-line flags (kops' flag tags), in kops' (sorted) order.
FLAGS = (("address", "address"), ("logLevel", "log-level"), ("root", "root"), ("state", "state"))
# Where each setting lives: schema 2 (containerd 1.x) keeps everything in the one CRI plugin.
CRI_V2 = ("plugins", "io.containerd.grpc.v1.cri")
CRI_RUNTIME = ("plugins", "io.containerd.cri.v1.runtime")
CRI_IMAGES = ("plugins", "io.containerd.cri.v1.images")
NRI = ("plugins", "io.containerd.nri.v1.nri")
VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _containerd(config):
    return config.get("containerdConfig") or {}


def parse_version(text):
    """(major, minor, patch) from a version or `containerd --version` output; None when there is none."""
    match = VERSION.search(text or "")
    return tuple(int(part or 0) for part in match.groups()) if match else None


def uses_os_containerd(node):
    return (node or {}).get("distribution") in OS_CONTAINERD


def config_version(config, node=None):
    """The config.toml schema version for the containerd that reads it (module docstring)."""
    if uses_os_containerd(node):
        return 3
    version = parse_version((node or {}).get("containerd_version") or _containerd(config).get("version"))
    if version is None:
        return 3
    if version < (2, 0, 0):
        return 2
    return 4 if version >= (2, 3, 0) else 3


def uses_kubenet(config):
    return bool(config.get("UsesKubenet"))


def _duration_ns(value):
    """Nanoseconds of a Go duration ("5s", "1m30s", "500ms") or a number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value * 1e9)
    units = {"ns": 1, "us": 1e3, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|ms|s|m|h)", str(value))
    if not parts or "".join(n + u for n, u in parts) != str(value).lstrip("+"):
        raise NodeError("containerd.nri: %r is not a duration (for example 5s or 1m30s)" % (value,))
    return int(round(sum(float(number) * units[unit] for number, unit in parts)))


def go_duration(value):
    """A duration as Go's time.Duration.String() writes it (what kops puts in config.toml)."""
    ns = _duration_ns(value)
    if ns == 0:
        return "0s"
    if ns < 1000000000:
        for unit, size in (("ms", 1000000), ("\u00b5s", 1000), ("ns", 1)):
            if ns >= size:
                return _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3600 * 1000000000)
    minutes, rest = divmod(rest, 60 * 1000000000)
    text = _fraction(rest, 1000000000) + "s"
    if hours or minutes:
        text = "%dm" % minutes + text
    if hours:
        text = "%dh" % hours + text
    return text


def _fraction(value, size):
    whole, rest = divmod(value, size)
    if not rest:
        return str(whole)
    digits = len(str(size)) - 1
    return ("%d.%0*d" % (whole, digits, rest)).rstrip("0")


def _addition_path(key):
    """kops splits a configAdditions key as a CSV record with '.' (so quoted plugin names keep their dots)."""
    try:
        return next(csv.reader([key], delimiter=".", quotechar='"', strict=True))
    except (csv.Error, StopIteration):
        raise NodeError("containerd.configAdditions: %r is not a dotted path (quote names with dots)" % (key,))


def _addition_value(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    return {"true": True, "false": False}.get(str(value), str(value))


def _gvisor(config):
    gvisor = _containerd(config).get("gvisor") or {}
    # kops: only where the group runs workloads (role Node; not the control plane nor apiserver-only groups).
    return bool(gvisor.get("enabled")) and config.get("ControlPlaneConfig") is None and \
        config.get("APIServerConfig") is None


def _nvidia(config, node):
    return bool((_containerd(config).get("nvidiaGPU") or {}).get("enabled")) and (node or {}).get("gpu_vendor") == \
        "nvidia"


def containerd_toml(config, node=None):
    """/etc/containerd/config.toml as kops renders it (buildContainerdConfig), in the schema config_version says."""
    containerd = _containerd(config)
    if containerd.get("configOverride") is not None:
        return containerd["configOverride"]
    version = config_version(config, node)
    runtime, images = (CRI_V2, CRI_V2) if version == 2 else (CRI_RUNTIME, CRI_IMAGES)
    tree = toml.Tree()
    tree.set_path(["version"], version)
    nri = containerd.get("nri")
    if nri is not None and nri.get("enabled") in (None, True):
        tree.set_path(list(NRI) + ["disable"], False)
        for key, field in (("plugin_request_timeout", "pluginRequestTimeout"),
                           ("plugin_registration_timeout", "pluginRegistrationTimeout")):
            if nri.get(field) is not None:
                tree.set_path(list(NRI) + [key], go_duration(nri[field]))
    if containerd.get("selinuxEnabled"):
        tree.set_path(list(runtime) + ["enable_selinux"], True)
    if containerd.get("sandboxImage") is not None:
        sandbox = ["sandbox_image"] if version == 2 else ["pinned_images", "sandbox"]
        tree.set_path(list(images) + sandbox, containerd["sandboxImage"])
    if containerd.get("registryMirrors"):
        tree.set_path(list(images) + ["registry", "config_path"], REGISTRY_DIR)
    runtimes = list(runtime) + ["containerd", "runtimes"]
    tree.set_path(list(runtime) + ["containerd", "default_runtime_name"], "runc")
    tree.set_path(runtimes + ["runc", "runtime_type"], "io.containerd.runc.v2")
    tree.set_path(runtimes + ["runc", "options", "SystemdCgroup"], True)
    if uses_kubenet(config):
        tree.set_path(list(runtime) + ["cni", "conf_template"], CNI_TEMPLATE_PATH)
    if _nvidia(config, node):
        for key, value in (("privileged_without_host_devices", False), ("runtime_engine", ""), ("runtime_root", ""),
                           ("runtime_type", "io.containerd.runc.v2")):
            tree.set_path(runtimes + ["nvidia", key], value)
        tree.set_path(runtimes + ["nvidia", "options", "SystemdCgroup"], True)
        tree.set_path(runtimes + ["nvidia", "options", "BinaryName"], "/usr/bin/nvidia-container-runtime")
    if _gvisor(config):
        tree.set_path(runtimes + ["runsc", "runtime_type"], "io.containerd.runsc.v1")
    for key in sorted(containerd.get("configAdditions") or {}):
        tree.set_path(_addition_path(key), _addition_value(containerd["configAdditions"][key]))
    return tree.render()


def registry_hosts(config):
    """{path: hosts.toml} per registry mirror; '*' is containerd's catch-all _default; endpoints keep their order."""
    containerd = _containerd(config)
    if containerd.get("configOverride") is not None:
        return {}
    hosts = {}
    for name, endpoints in sorted((containerd.get("registryMirrors") or {}).items()):
        if not name or "/" in name or name in (".", ".."):
            raise NodeError("containerd.registryMirrors: %r is not a registry host name (or '*')" % (name,))
        text = "".join('[host.%s]\n  capabilities = ["pull", "resolve"]\n\n' % toml.quote(endpoint)
                       for endpoint in endpoints or [])
        hosts["%s/%s/hosts.toml" % (REGISTRY_DIR, "_default" if name == "*" else name)] = text
    return hosts


def cni_config_template(config):
    """kops' kubenet CNI template (containerd fills in the pod CIDR)."""
    routes = [{"dst": "0.0.0.0/0"}]
    if ":" in ((config.get("Networking") or {}).get("nonMasqueradeCIDR") or ""):
        routes.append({"dst": "::/0"})
    return ("{\n"
            '    "cniVersion": "1.0.0",\n'
            '    "name": "k8s-pod-network",\n'
            '    "plugins": [\n'
            "        {\n"
            '            "type": "ptp",\n'
            '            "ipam": {\n'
            '                "type": "host-local",\n'
            '                "ranges": [[{"subnet": "{{.PodCIDR}}"}]],\n'
            '                "routes": %s\n'
            "            }\n"
            "        },\n"
            "        {\n"
            '            "type": "portmap",\n'
            '            "capabilities": {"portMappings": true}\n'
            "        }\n"
            "    ]\n"
            "}\n") % json.dumps(routes, separators=(",", ":"))


IPTABLES_SETUP_UNIT = """[Unit]
Description=Configure iptables for kubernetes CNI
Documentation=https://github.com/kubernetes/kops
Before=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/opt/kops/bin/cni-iptables-setup

[Install]
WantedBy=basic.target
"""


def masquerade_files(config):
    """kops' IP-MASQ rules for kubenet-derived networking (pods take the node's address leaving the cluster)."""
    cidr = (config.get("Networking") or {}).get("nonMasqueradeCIDR") or ""
    if not cidr or cidr.endswith("/0"):
        return []
    script = ("#!/bin/bash\n"
              "# Built by kOps - do not edit\n\n"
              "iptables -w -t nat -N IP-MASQ\n"
              'iptables -w -t nat -A POSTROUTING -m comment --comment "ip-masq: ensure nat POSTROUTING directs all '
              'non-LOCAL destination traffic to our custom IP-MASQ chain" -m addrtype ! --dst-type LOCAL -j IP-MASQ\n'
              'iptables -w -t nat -A IP-MASQ -d %s -m comment --comment "ip-masq: pod cidr is not subject to '
              'MASQUERADE" -j RETURN\n'
              'iptables -w -t nat -A IP-MASQ -m comment --comment "ip-masq: outbound traffic is subject to '
              'MASQUERADE (must be last in chain)" -j MASQUERADE\n') % cidr
    unit = "cni-iptables-setup.service"
    return [NodeFile(IPTABLES_SETUP, script, mode=0o755, restarts=(unit,)),
            NodeFile("/etc/systemd/system/" + unit, IPTABLES_SETUP_UNIT, restarts=(unit,))]


def containerd_unit(config, node=None):
    """kops' containerd.service (buildSystemdService), for the binaries it installs in /usr/bin."""
    lines = ["[Unit]", "Description=containerd container runtime", "Documentation=https://containerd.io",
             "After=network.target dbus.service", "", "[Service]"]
    if distribution.is_rhel_family((node or {}).get("distribution") or "") and \
            _containerd(config).get("selinuxEnabled"):
        lines += ["ExecStartPre=/bin/sh -c 'restorecon -v /usr/sbin/runc'",
                  "ExecStartPre=/bin/sh -c 'restorecon -v /usr/bin/containerd*'"]
    lines += ["EnvironmentFile=/etc/sysconfig/containerd", "EnvironmentFile=/etc/environment",
              "ExecStartPre=-/sbin/modprobe overlay",
              'ExecStart=/usr/bin/containerd -c %s "$CONTAINERD_OPTS"' % CONFIG_PATH,
              "Type=notify", "Delegate=yes", "KillMode=process", "Restart=always", "RestartSec=5",
              "LimitNPROC=infinity", "LimitCORE=infinity", "LimitNOFILE=1048576", "TasksMax=infinity",
              "OOMScoreAdjust=-999"]
    cgroup = (config.get("KubeletConfig") or {}).get("runtimeCgroups") or ""
    if cgroup:
        lines.append("Slice=%s.slice" % cgroup.strip("/"))
    lines += ["", "[Install]", "WantedBy=multi-user.target"]
    return "\n".join(lines) + "\n"


def sysconfig(config):
    """/etc/sysconfig/containerd: the spec's flags (kops' flagbuilder: --name=value, no trailing newline)."""
    containerd = _containerd(config)
    flags = ["--%s=%s" % (flag, containerd[field]) for field, flag in FLAGS if containerd.get(field) not in (None, "")]
    return "CONTAINERD_OPTS=" + " ".join(flags)


# The drop-ins kops writes where the image brings containerd (no trailing newline, as kops writes them).
OS_DROPINS = {
    "flatcar": "[Service]\nEnvironmentFile=/etc/environment\nExecStart=\n"
               "ExecStart=/usr/bin/containerd --config " + CONFIG_PATH,
    "containeros": "[Service]\nEnvironmentFile=/etc/environment\nTasksMax=infinity",
}


def containerd_files(config, node=None):
    """[NodeFile] of kops' ContainerdBuilder for this node (module docstring)."""
    containerd = _containerd(config)
    if containerd.get("skipInstall"):
        return []
    node = node or {}
    restart = ("containerd",)
    files = []
    os_dropin = OS_DROPINS.get(node.get("distribution"))
    if os_dropin is not None:
        files.append(NodeFile("/etc/systemd/system/containerd.service.d/10-kops.conf", os_dropin, restarts=restart))
    if uses_kubenet(config):
        files.append(NodeFile(CNI_TEMPLATE_PATH, cni_config_template(config), restarts=restart))
        files.extend(masquerade_files(config))
    # containerd watches certs.d: a changed hosts.toml needs no restart.
    files.extend(NodeFile(path, text) for path, text in sorted(registry_hosts(config).items()))
    files.append(NodeFile(CONFIG_PATH, containerd_toml(config, node), restarts=restart))
    if _gvisor(config):
        platform = (containerd.get("gvisor") or {}).get("platform") or "systrap"
        files.append(NodeFile("/etc/containerd/runsc.toml", "\n[runsc_config]\n  platform = %s\n" % toml.quote(platform),
                              restarts=restart))
    if os_dropin is None:
        files += [
            NodeFile("/usr/share/doc/containerd/apache.txt", containerd_license.TEXT),
            NodeFile("/etc/crictl.yaml", "\nruntime-endpoint: unix:///run/containerd/containerd.sock\n"),
            NodeFile("/etc/systemd/system/containerd.service", containerd_unit(config, node), restarts=restart),
            NodeFile("/etc/sysconfig/containerd", sysconfig(config), restarts=restart),
        ]
    return files
