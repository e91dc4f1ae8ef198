"""A metal cluster comes up: kops' bare-metal e2e (tests/e2e/scenarios/bare-metal/run-test in kops: three machines,
one control plane and two enrolled workers, validate) with the collection's playbooks and the real Kubernetes
components on three test hosts.

The user's directory holds hosts.yml (each host naming its instance group, kops_instance_group) and a file:// state
store: create_cluster.yml (cloud_provider metal, api_public_name the control-plane host's address,
kubernetesVersion the served build URL) -> get_cluster.yml, the spec edited as in git -> replace_cluster.yml ->
update_cluster.yml -> enroll.yml (control plane, then workers, over SSH) -> the three Nodes Ready ->
validate_cluster.yml against the real API -> enroll.yml again: changed=0 -> enroll.yml --check: nothing changes.

The test-host adjustments are tests/realk8s/cluster.py's and docs/real-cluster.md's (the cgroup-v1 kubelet drop-in,
restrict_oom_score_adj, conntrackMaxPerCore 0, Debian's containerd, runc and CNI plugins, the etcd install override,
the registry mirror). No cloud and no stand-in: metal has no cloud controller.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest
import yaml

from tests.realk8s import binaries, cluster as e2e, registry as test_registry
from tests.realk8s.test_cluster import _etcd_install, _served_directory

pytestmark = pytest.mark.hosts

CLUSTER = "metal.k8s.local"
CONTROL_PLANE_GROUP = "control-plane-main"
NODE_GROUP = "nodes-main"
# Debian's containerd, runc and CNI plugins from the image's apt cache (kops' releases are on GitHub).
DISTRO = {"containerd": "containerd", "runc": "runc", "cni-plugins": "containernetworking-plugins"}


def _prepare_machine(host):
    """What the test machine image carries: the kubelet's cgroup-v1 drop-in (cluster.py's CGROUP_V1_DROPIN). The
    host keeps its own name (kops' metal nodes register under their host name: the inventory's name here)."""
    dropin = "/etc/systemd/system/kubelet.service.d/10-test-host-cgroupv1.conf"
    done = host.run("mkdir -p %s && cat > %s <<'EOF'\n%sEOF\nhostname"
                    % (os.path.dirname(dropin), dropin, e2e.CGROUP_V1_DROPIN))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == host.name, done.stdout


def _edit_spec(path, registry_url):
    """The user's edits of the spec kept in git (kops fields; docs/real-cluster.md says why each):
    the registry mirror, conntrackMaxPerCore 0 (/sys read-only in a test host), restrict_oom_score_adj (TEST HOSTS
    ONLY: no CAP_SYS_RESOURCE here)."""
    documents = list(yaml.safe_load_all(path.read_text()))
    spec = next(d for d in documents if d["kind"] == "Cluster")["spec"]
    spec.setdefault("containerd", {})["registryMirrors"] = {"registry.k8s.io": [registry_url]}
    spec["containerd"]["configAdditions"] = {'plugins."io.containerd.grpc.v1.cri".restrict_oom_score_adj': "true"}
    spec.setdefault("kubeProxy", {})["conntrackMaxPerCore"] = 0
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def _recap(output):
    """{host: {"changed": n, "failed": n}} from ansible-playbook's PLAY RECAP."""
    found = {}
    for host, changed, failed in re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)",
                                            output, re.M):
        found[host] = {"changed": int(changed), "failed": int(failed)}
    return found


def test_a_metal_cluster_is_enrolled_ready_and_validated(host_pool, tmp_path):
    build = binaries.require_build((binaries.NEWER,))
    times = {}
    pool = host_pool(3, kubelet=True)
    control, worker1, worker2 = pool.hosts
    hosts = pool.hosts
    bridge = "%s.1" % pool.subnet
    served_url = pool.serve_directory(_served_directory(build, [binaries.NEWER], tmp_path / "served"))
    registry = test_registry.Registry(images=test_registry.standard_images(build, tmp_path / "images"),
                                      host=bridge).start()
    user_dir = tmp_path / "user"  # the user's own directory, where they run ansible-playbook
    user_dir.mkdir()
    store = "file://%s" % (tmp_path / "state")
    day2 = ("-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store)
    # The user's inventory: each host names its instance group. The test-host settings (Debian's packages, the etcd
    # build served here) are host variables, as a user's machines would carry theirs.
    test_host_vars = {"nodeup_distro_packages": DISTRO,
                      "protokube_etcd_install_override": _etcd_install(build, served_url)}
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
            _edit_spec(user_dir / ("%s.yaml" % CLUSTER), registry.url)
            e2e.check(e2e.run_playbook("replace_cluster.yml", "-e", "state_store=%s" % store, "-e",
                                       "spec_file=%s.yaml" % CLUSTER, cwd=user_dir), "replace_cluster.yml")
            e2e.check(e2e.run_playbook("update_cluster.yml", *day2, cwd=user_dir), "update_cluster.yml")
        for host in hosts:
            _prepare_machine(host)
        os_before = {host.name: _os_state(host) for host in hosts}  # compared after delete_cluster.yml resets them

        admin = tmp_path / "admin.kubeconfig"
        with e2e.step("export_kubeconfig.yml", [], times):
            e2e.check(e2e.run_playbook("export_kubeconfig.yml", *day2, "-e", "path=%s" % admin, cwd=user_dir),
                      "export_kubeconfig.yml")

        with e2e.step("enroll.yml --check on new hosts lists what it would do and does nothing", hosts, times):
            checked = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, "--check", cwd=user_dir),
                                "enroll.yml --check (new hosts)")
            recap = _recap(checked.stdout)
            assert sorted(recap) == sorted(h.name for h in hosts), checked.stdout[-3000:]
            assert all(r["changed"] > 0 for r in recap.values()), checked.stdout[-3000:]
            for host in hosts:
                untouched = host.run("test ! -e /usr/local/bin/kubelet && test ! -e /etc/kubernetes/kops")
                assert untouched.returncode == 0, "%s: --check changed the host" % host.name
        started = time.monotonic()
        with e2e.step("enroll.yml: the control plane, then the two workers", hosts, times):
            enroll = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, cwd=user_dir), "enroll.yml")
            recap = _recap(enroll.stdout)
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
            recap = _recap(again.stdout)
            assert recap and all(r["changed"] == 0 for r in recap.values()), again.stdout[-6000:]
        with e2e.step("enroll.yml --check lists nothing to do on an enrolled cluster", hosts, times):
            checked = e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, "--check", cwd=user_dir),
                                "enroll.yml --check")
            assert all(r["changed"] == 0 for r in _recap(checked.stdout).values()), checked.stdout[-6000:]
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
        assert after[name] == before[name], "%s: %s changed:\n%s\n---\n%s" % (host.name, name, before[name],
                                                                            after[name])
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
        assert _recap(removed.stdout)[worker.name]["failed"] == 0, removed.stdout[-3000:]
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
        assert _recap(deleted.stdout)[hosts[0].name]["changed"] > 0, deleted.stdout[-3000:]
    with e2e.step("delete_cluster.yml again: not found, the hosts untouched", hosts, times):
        again = e2e.check(e2e.run_playbook("delete_cluster.yml", *inventory, *day2, "-e", "yes=true", cwd=user_dir),
                          "delete_cluster.yml (2)")
        assert "not found" in again.stdout, again.stdout[-3000:]
        assert all(r["changed"] == 0 for h, r in _recap(again.stdout).items() if h != "localhost"), again.stdout[-3000:]
