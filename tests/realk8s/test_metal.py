"""A metal cluster comes up: kops' bare-metal e2e (tests/e2e/scenarios/bare-metal/run-test in kops: three machines,
one control plane and two enrolled workers, validate) with the collection's playbooks and the real Kubernetes
components on three test hosts.

The user's directory holds hosts.yml (each host naming its instance group, kops_instance_group) and a file:// state
store: create_cluster.yml (cloud_provider metal, api_public_name the control-plane host's address,
kubernetesVersion the served build URL) -> get_cluster.yml, the spec edited as in git -> replace_cluster.yml ->
update_cluster.yml -> enroll.yml (control plane, then workers, over SSH) -> the three Nodes Ready ->
validate_cluster.yml against the real API -> enroll.yml again: changed=0 -> enroll.yml --check: nothing changes ->
rolling_update.yml --check: nothing to roll -> two sleepers under a PodDisruptionBudget -> the workers' group's
kubelet maxPods changed in git, replaced and updated -> rolling_update.yml --check lists the two workers, changes
nothing -> rolling_update.yml drains, re-enrolls and uncordons them one at a time, the budget held (sampled) -> the
workers' Nodes report the new maxPods -> a second roll changes nothing.

The test-host adjustments are tests/realk8s/cluster.py's and docs/real-cluster.md's (the cgroup-v1 kubelet drop-in,
restrict_oom_score_adj, conntrackMaxPerCore 0, Debian's containerd, runc and CNI plugins, the etcd install override,
the registry mirror). No cloud and no stand-in: metal has no cloud controller.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import pathlib
import re
import time

import pytest
import yaml

from tests.realk8s import binaries, cluster as e2e, registry as test_registry

pytestmark = pytest.mark.hosts

CLUSTER = "metal.k8s.local"
CONTROL_PLANE_GROUP = "control-plane-main"
NODE_GROUP = "nodes-main"
MAX_PODS = 60  # the workers' group's kubelet maxPods after the change rolled in place (the default is 110)


def _edit_group(path, group, edit):
    """The user's edit of one InstanceGroup in the file get_cluster.yml wrote (the Cluster and its groups)."""
    documents = list(yaml.safe_load_all(path.read_text()))
    edit(next(d for d in documents if d["kind"] == "InstanceGroup" and d["metadata"]["name"] == group)["spec"])
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


CONTROL_PLANE_CONFIG = "igconfig/control-plane/%s/nodeupconfig.yaml" % CONTROL_PLANE_GROUP
NODE_CONFIG = "igconfig/node/%s/nodeupconfig.yaml" % NODE_GROUP


def _store_file(store, path):
    return pathlib.Path(store[len("file://"):], CLUSTER, path).read_text()


def _store_digests(store):
    """The digests enroll records, of the store's nodeup configs (sha256 of the parsed config's canonical JSON)."""
    return {path: "sha256:" + hashlib.sha256(json.dumps(yaml.safe_load(_store_file(store, path)), sort_keys=True,
                                                        separators=(",", ":")).encode()).hexdigest()
            for path in (CONTROL_PLANE_CONFIG, NODE_CONFIG)}


def _record(host):
    """The enroll record on the host (roles/enroll: the digest of the nodeup config it runs)."""
    return host.run("cat /etc/kubernetes/kops/enrolled.json").stdout


def _roll_a_config_change_in_place(admin, core, user_dir, store, workers, control, times):
    """Day 2 on the hosts: a kubelet field of the workers' group changed in git, replaced and updated, then
    rolling_update.yml (--check first) drains, re-enrolls and uncordons the two workers one at a time while a
    PodDisruptionBudget keeps one of two sleepers Ready; the control plane, whose config did not change, is left."""
    day2 = ("-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store)
    args = ("-i", "hosts.yml") + day2
    with e2e.step("rolling_update.yml --check right after enroll: nothing to roll", [], times):
        checked = e2e.check(e2e.run_playbook("rolling_update.yml", *args, "--check", cwd=user_dir),
                            "rolling_update.yml --check (enrolled)")
        if "No rolling-update required." not in checked.stdout:
            pytest.fail("an enrolled cluster has hosts to roll:\n%s\nrecords: %s\nthe store's: %s" % (
                checked.stdout[-3000:], {h.name: _record(h) for h in workers + [control]}, _store_digests(store)))
    with e2e.step("two sleepers on the workers under a PodDisruptionBudget (minAvailable 1)", workers, times):
        e2e.run_sleepers(e2e.apps_api(admin), core, replicas=2)
        e2e.create_budget(admin, {"app": "sleeper"}, 1)
    with e2e.step("maxPods of the workers' group changed: replace_cluster.yml, update_cluster.yml", [], times):
        spec_file = user_dir / ("%s.yaml" % CLUSTER)
        _edit_group(spec_file, NODE_GROUP, lambda spec: spec.setdefault("kubelet", {}).update(maxPods=MAX_PODS))
        e2e.check(e2e.run_playbook("replace_cluster.yml", "-e", "state_store=%s" % store, "-e",
                                   "spec_file=%s" % spec_file.name, cwd=user_dir), "replace_cluster.yml (maxPods)")
        e2e.check(e2e.run_playbook("update_cluster.yml", *day2, cwd=user_dir), "update_cluster.yml (maxPods)")
    control_config = _store_file(store, CONTROL_PLANE_CONFIG)
    records = {h.name: _record(h) for h in workers + [control]}
    with e2e.step("rolling_update.yml --check: the two workers to update, nothing changed", workers, times):
        checked = e2e.check(e2e.run_playbook("rolling_update.yml", *args, "--check", cwd=user_dir),
                            "rolling_update.yml --check")
        assert "%s: 2 host(s) to update in place (%s)" % (NODE_GROUP, ", ".join(sorted(h.name for h in workers))) \
            in checked.stdout, checked.stdout[-4000:]
        if "%s: 1 host(s) to update" % CONTROL_PLANE_GROUP in checked.stdout:
            pytest.fail("the control plane's config did not change, yet it is to roll:\n%s\nrecords: %s\nthe store's: "
                        "%s\n%s" % (checked.stdout[-3000:], records, _store_digests(store), "".join(
                            difflib.unified_diff(control_config.splitlines(True),
                                                 _store_file(store, CONTROL_PLANE_CONFIG).splitlines(True)))))
        assert sorted(e2e.playbook_recap(checked.stdout)) == ["localhost"], checked.stdout[-4000:]  # no host was rolled
        assert {h.name: _record(h) for h in workers + [control]} == records
    with e2e.step("rolling_update.yml rolls the two workers in place, the budget honoured", workers + [control],
                  times):
        watch = e2e.ReadyPodsWatch(admin, "app=sleeper").start()
        started = time.monotonic()
        try:
            roll = e2e.run_playbook("rolling_update.yml", *args, "-e", "validate_count=1", cwd=user_dir)
        finally:
            watch.stop()
        times["in-place roll of 2 workers"] = round(time.monotonic() - started, 1)
        e2e.check(roll, "rolling_update.yml")
        recap = e2e.playbook_recap(roll.stdout)
        assert all(recap[h.name]["changed"] > 0 for h in workers) and control.name not in recap, roll.stdout[-6000:]
        fewest = watch.fewest()
        assert fewest is not None and fewest >= 1, "the budget (minAvailable 1) was broken: %s" % watch.samples
        assert "a disruption budget refuses to evict" in roll.stdout or fewest == 1, roll.stdout[-6000:]
        print("in-place roll: fewest ready sleepers %s of 2 over %d samples" % (fewest, len(watch.samples)))
    with e2e.step("the workers run the new config, schedulable; a second roll changes nothing", workers, times):
        for host in workers:
            node = core.read_node(host.name.lower())
            assert node.status.capacity["pods"] == str(MAX_PODS) and not node.spec.unschedulable, node.status.capacity
            assert _record(host) != records[host.name]
        assert core.read_node(control.name.lower()).status.capacity["pods"] != str(MAX_PODS)
        assert _record(control) == records[control.name]
        e2e.wait_for("2 sleepers Running", lambda: len([
            p for p in core.list_namespaced_pod("default", label_selector="app=sleeper").items
            if p.status.phase == "Running"]) == 2, 120)
        again = e2e.check(e2e.run_playbook("rolling_update.yml", *args, cwd=user_dir), "rolling_update.yml (2)")
        assert "No rolling-update required." in again.stdout, again.stdout[-4000:]
        assert all(r["changed"] == 0 for r in e2e.playbook_recap(again.stdout).values()), again.stdout[-4000:]


def test_a_metal_cluster_is_enrolled_ready_and_validated(host_pool, tmp_path):
    build = binaries.require_build((binaries.NEWER,))
    times = {}
    pool = host_pool(3, kubelet=True)
    control, worker1, worker2 = pool.hosts
    hosts = pool.hosts
    bridge = "%s.1" % pool.subnet
    served_url = pool.serve_directory(e2e.served_directory(build, [binaries.NEWER], tmp_path / "served"))
    registry = test_registry.Registry(images=test_registry.standard_images(build, tmp_path / "images"),
                                      host=bridge).start()
    user_dir = tmp_path / "user"  # the user's own directory, where they run ansible-playbook
    user_dir.mkdir()
    store = "file://%s" % (tmp_path / "state")
    day2 = ("-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store)
    # The user's inventory: each host names its instance group. The test-host settings (Debian's packages, the etcd
    # build served here) are host variables, as a user's machines would carry theirs.
    test_host_vars = {"nodeup_distro_packages": e2e.DISTRO_PACKAGES,
                      "protokube_etcd_install_override": e2e.etcd_install(build, served_url)}
    pool.inventory_file(user_dir / "hosts.yml", hostvars={
        control.name: dict(test_host_vars, kops_instance_group=CONTROL_PLANE_GROUP),
        worker1.name: dict(test_host_vars, kops_instance_group=NODE_GROUP),
        worker2.name: dict(test_host_vars, kops_instance_group=NODE_GROUP)})
    inventory = ("-i", "hosts.yml")
    try:
        with e2e.step("create, edit and update the metal cluster", [], times):
            (user_dir / "metal.yml").write_text(yaml.safe_dump({
                "state_store": store,
                "cluster_options": {"cluster_name": CLUSTER, "cloud_provider": "metal", "zones": ["main"],
                                    "networking": "kubenet", "api_public_name": control.address,
                                    "kubernetes_version": "%s/%s" % (served_url, binaries.NEWER),
                                    "node_count": 2}}))
            e2e.check(e2e.run_playbook("create_cluster.yml", "-e", "@metal.yml", "-e", "target=direct",
                                       cwd=user_dir), "create_cluster.yml")
            e2e.check(e2e.run_playbook("get_cluster.yml", *day2, "-e", "output=%s.yaml" % CLUSTER, cwd=user_dir),
                      "get_cluster.yml")
            e2e.edit_spec(user_dir / ("%s.yaml" % CLUSTER), registry.url)
            e2e.check(e2e.run_playbook("replace_cluster.yml", "-e", "state_store=%s" % store, "-e",
                                       "spec_file=%s.yaml" % CLUSTER, cwd=user_dir), "replace_cluster.yml")
            e2e.check(e2e.run_playbook("update_cluster.yml", *day2, cwd=user_dir), "update_cluster.yml")
        for host in hosts:
            e2e.prepare_metal_host(host)
        os_before = {host.name: _os_state(host) for host in hosts}  # compared after delete_cluster.yml resets them

        admin = tmp_path / "admin.kubeconfig"
        with e2e.step("export_kubeconfig.yml", [], times):
            e2e.check(e2e.run_playbook("export_kubeconfig.yml", *day2, "-e", "path=%s" % admin, cwd=user_dir),
                      "export_kubeconfig.yml")

        with e2e.step("enroll.yml --check on new hosts lists what it would do and does nothing", hosts, times):
            checked = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, "--check", cwd=user_dir),
                                "enroll.yml --check (new hosts)")
            recap = e2e.playbook_recap(checked.stdout)
            assert sorted(recap) == sorted(h.name for h in hosts), checked.stdout[-3000:]
            assert all(r["changed"] > 0 for r in recap.values()), checked.stdout[-3000:]
            for host in hosts:
                untouched = host.run("test ! -e /usr/local/bin/kubelet && test ! -e /etc/kubernetes/kops")
                assert untouched.returncode == 0, "%s: --check changed the host" % host.name
        started = time.monotonic()
        with e2e.step("enroll.yml: the control plane, then the two workers", hosts, times):
            enroll = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, cwd=user_dir), "enroll.yml")
            recap = e2e.playbook_recap(enroll.stdout)
            assert sorted(recap) == sorted(h.name for h in hosts), enroll.stdout[-3000:]
        core = e2e.core_api(admin)
        with e2e.step("the three nodes Ready", hosts, times):
            for host in hosts:
                # The kubelet registers under the host name, lowercased (a Node's name is a DNS name).
                name = host.name.lower()
                node = e2e.wait_for("node %s Ready" % name, lambda n=name: e2e.ready_node(core, n), 600)
                assert node.status.node_info.kubelet_version == binaries.NEWER, node.status.node_info
        times["enroll.yml to three nodes Ready"] = round(time.monotonic() - started, 1)
        with e2e.step("the control plane runs its static pods; what has no image here is removed", [control], times):
            e2e.wait_for("kube-system's control-plane pods Running", lambda: e2e.control_plane_pods_running(
                core, ("kube-apiserver", "kube-controller-manager", "kube-scheduler")), 300)
            skipped = e2e.remove_workloads_without_images(e2e.apps_api(admin), core, registry)
            print("no image here, removed after the channel applied them: %s" % ", ".join(sorted(skipped)))
        with e2e.step("validate_cluster.yml with the inventory's hosts as the machines", hosts, times):
            validate = e2e.check(e2e.run_playbook("validate_cluster.yml", *inventory, *day2, "-e", "wait=300",
                                                  cwd=user_dir), "validate_cluster.yml")
            assert "Your cluster %s is ready" % CLUSTER in validate.stdout, validate.stdout[-3000:]
            for host in hosts:
                assert host.name.lower() in validate.stdout, validate.stdout[-3000:]
        with e2e.step("enroll.yml again changes nothing", hosts, times):
            again = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, cwd=user_dir), "enroll.yml (2)")
            recap = e2e.playbook_recap(again.stdout)
            assert recap and all(r["changed"] == 0 for r in recap.values()), again.stdout[-6000:]
        with e2e.step("enroll.yml --check lists nothing to do on an enrolled cluster", hosts, times):
            checked = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, "--check", cwd=user_dir),
                                "enroll.yml --check")
            assert all(r["changed"] == 0 for r in e2e.playbook_recap(checked.stdout).values()), checked.stdout[-6000:]
        _roll_a_config_change_in_place(admin, core, user_dir, store, [worker1, worker2], control, times)
        _remove_enroll_and_delete(user_dir, hosts, worker2, core, inventory, day2, store, os_before, times)
        print("metal cluster times: %s" % json.dumps(times))
    finally:
        registry.stop()


# What enroll put on a host and a reset removes (roles/nodeup, roles/protokube and roles/enroll tasks/reset.yml).
ENROLLED_PATHS = ("/var/lib/kubelet", "/var/lib/containerd", "/etc/kubernetes", "/etc/containerd", "/srv/kubernetes",
                  "/etc/cni/net.d", "/opt/cni", "/var/lib/kube-proxy", "/opt/kubeops", "/etc/kubeops",
                  "/usr/local/bin/kubelet", "/usr/local/bin/kubectl", "/etc/systemd/system/kubelet.service",
                  "/etc/sysctl.d/99-k8s-general.conf", "/etc/modules-load.d/kubeops-kops.conf")
CONTROL_PLANE_PATHS = ("/mnt/etcd-main", "/mnt/etcd-events", "/etc/systemd/system/etcd-main.service",
                       "/etc/systemd/system/etcd-main-backup.timer", "/usr/local/bin/etcdctl",
                       "/var/log/kube-apiserver.log")
# The processes of Kubernetes, etcd and containerd (pgrep -x on the command name, 15 characters).
PROCESSES = ("kubelet", "kube-apiserver", "kube-controller", "kube-scheduler", "kube-proxy", "etcd", "containerd",
             "containerd-shim", "pause")


def _os_state(host):
    """What a reset leaves as it was: the OS release, /etc/hosts, /etc/fstab, the installed packages with their
    versions, sshd running."""
    state = {}
    for name, command in (("os-release", "cat /etc/os-release"), ("hosts", "cat /etc/hosts"),
                          ("fstab", "cat /etc/fstab 2>/dev/null || true"),
                          ("packages", "dpkg-query -W -f='${Package} ${Version}\\n'"),
                          ("sshd", "systemctl is-active ssh sshd 2>&1; pgrep -x sshd >/dev/null && echo running; "
                                   "true")):
        done = host.run(command)
        assert done.returncode == 0, "%s: %s: %s" % (host.name, command, done.stderr)
        state[name] = done.stdout
    return state


def _assert_clean(host, control_plane, before):
    """The host as a reset leaves it, file by file: what enroll put there gone, no Kubernetes, etcd or containerd
    process, no kube-proxy chain; the OS as before enroll (packages enroll installed stay: docs/metal.md)."""
    paths = ENROLLED_PATHS + (CONTROL_PLANE_PATHS if control_plane else ())
    left = host.run("for p in %s; do test -e \"$p\" && echo \"$p\"; done; true" % " ".join(paths)).stdout.split()
    assert left == [], "%s: the reset left %s" % (host.name, left)
    running = host.run("for p in %s; do pgrep -x \"$p\" >/dev/null && echo \"$p\"; done; true"
                       % " ".join(PROCESSES)).stdout.split()
    assert running == [], "%s: still running after the reset: %s" % (host.name, running)
    chains = host.run("(iptables-save; ip6tables-save) 2>/dev/null | grep -E '^:(KUBE-|CNI-)' || true").stdout
    assert chains.strip() == "", "%s: iptables chains left: %s" % (host.name, chains)
    enabled = host.run("systemctl is-enabled kubelet containerd 2>/dev/null; true").stdout.split()
    assert "enabled" not in enabled, "%s: units still enabled: %s" % (host.name, enabled)
    after = _os_state(host)
    for name in ("os-release", "hosts", "fstab", "sshd"):
        assert after[name] == before[name], "%s: %s changed:\n%s\n---\n%s" % (
            host.name, name, before[name], after[name])
    installed = set(after["packages"].splitlines())
    assert set(before["packages"].splitlines()) <= installed, \
        "%s: packages removed or changed: %s" % (host.name, set(before["packages"].splitlines()) - installed)
    return sorted(p.split()[0] for p in installed - set(before["packages"].splitlines()))


def _cluster_secrets(store):
    """A line of each thing a worker must never hold: the kubelet bootstrap token, and a line from the middle of each
    CA private key of the store (pki/private/*/keyset.yaml)."""
    import base64
    root = store[len("file://"):] + "/" + CLUSTER
    with open(root + "/secrets/kubelet-bootstrap-token") as handle:
        found = [base64.b64decode(json.load(handle)["Data"]).decode("ascii")]
    private = root + "/pki/private"
    for name in sorted(os.listdir(private)):
        with open("%s/%s/keyset.yaml" % (private, name)) as handle:
            for key in yaml.safe_load(handle)["spec"]["keys"]:
                lines = base64.b64decode(key["privateMaterial"]).decode("ascii").splitlines()
                found.append(lines[len(lines) // 2])
    return found


def _remove_enroll_and_delete(user_dir, hosts, worker, core, inventory, day2, store, os_before, times):
    """kubespray's remove-node and scale, and delete: a worker removed (its Node gone, the host clean), enrolled
    again (Ready); delete_cluster.yml --check lists what it would remove per host; then the three hosts reset and the
    store deleted; a second delete finds nothing."""
    import kubernetes
    name = worker.name.lower()
    with e2e.step("the etcd backup timer's program runs on the control-plane host", hosts, times):
        control = hosts[0]
        ran = control.run("systemctl start etcd-main-backup.service && "
                          "ls /etc/kubernetes/kops/store/%s/backups/etcd/main/*/etcd.backup.gz" % CLUSTER)
        assert ran.returncode == 0 and "etcd.backup.gz" in ran.stdout, (ran.stdout, ran.stderr, control.run(
            "journalctl -u etcd-main-backup.service --no-pager | tail -20").stdout)
    with e2e.step("no worker file holds the bootstrap token or a CA key", hosts, times):
        secrets = _cluster_secrets(store)
        for host in hosts[1:]:
            found = host.run("grep -rlF %s /etc /var /srv /opt /root /tmp /usr/local 2>/dev/null; true"
                             % " ".join("-e '%s'" % s for s in secrets)).stdout.split()
            assert found == [], "%s: files holding the bootstrap token or a CA key: %s" % (host.name, found)
            issued = host.run("openssl x509 -noout -subject -in /var/lib/kubelet/pki/kubelet-client.crt").stdout
            assert "system:node:%s" % host.name.lower() in issued, issued
    with e2e.step("remove_node.yml -l a worker: drained, reset, Node deleted", hosts, times):
        removed = e2e.check(e2e.run_playbook("remove_node.yml", *inventory, *day2, "-l", worker.name, "-e", "yes=true",
                                             cwd=user_dir), "remove_node.yml")
        assert e2e.playbook_recap(removed.stdout)[worker.name]["failed"] == 0, removed.stdout[-3000:]
        with pytest.raises(kubernetes.client.exceptions.ApiException) as gone:
            core.read_node(name)
        assert gone.value.status == 404
        _assert_clean(worker, False, os_before[worker.name])
    with e2e.step("enroll.yml -l the worker: Ready again", hosts, times):
        e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, "-l", worker.name, cwd=user_dir), "enroll.yml -l")
        e2e.wait_for("node %s Ready" % name, lambda: e2e.ready_node(core, name), 300)
    with e2e.step("delete_cluster.yml -i hosts.yml --check lists per host what it would remove", hosts, times):
        checked = e2e.check(e2e.run_playbook("delete_cluster.yml", *inventory, *day2, "-e", "yes=true", "--check",
                                             cwd=user_dir), "delete_cluster.yml --check")
        for host in hosts:
            assert re.search(r"%s: would stop kubelet" % re.escape(host.name), checked.stdout), checked.stdout[-4000:]
            assert host.run("test -e /var/lib/kubelet && pgrep -x kubelet").returncode == 0, host.name
        assert os.path.isdir(store[len("file://"):] + "/" + CLUSTER)
    with e2e.step("delete_cluster.yml -i hosts.yml resets the three hosts, then deletes the store", hosts, times):
        deleted = e2e.check(e2e.run_playbook("delete_cluster.yml", *inventory, *day2, "-e", "yes=true", cwd=user_dir),
                            "delete_cluster.yml")
        assert not os.path.exists(store[len("file://"):] + "/" + CLUSTER)
        for host in hosts:
            added = _assert_clean(host, host is hosts[0], os_before[host.name])
            print("%s: packages enroll installed, left by the reset: %s" % (host.name, " ".join(added)))
        assert e2e.playbook_recap(deleted.stdout)[hosts[0].name]["changed"] > 0, deleted.stdout[-3000:]
    with e2e.step("delete_cluster.yml again: not found, the hosts untouched", hosts, times):
        again = e2e.check(e2e.run_playbook("delete_cluster.yml", *inventory, *day2, "-e", "yes=true", cwd=user_dir),
                          "delete_cluster.yml (2)")
        assert "not found" in again.stdout, again.stdout[-3000:]
        assert all(r["changed"] == 0 for h, r in e2e.playbook_recap(again.stdout).items() if h != "localhost"), \
            again.stdout[-3000:]
