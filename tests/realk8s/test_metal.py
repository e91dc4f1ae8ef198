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
import re
import time

import pytest
import yaml

from tests.realk8s import binaries, cluster as e2e, registry as test_registry

pytestmark = pytest.mark.hosts

CLUSTER = "metal.k8s.local"
CONTROL_PLANE_GROUP = "control-plane-main"
NODE_GROUP = "nodes-main"


def _prepare_machine(host):
    """What the test machine image carries: the kubelet's cgroup-v1 drop-in. The host keeps its own name (kops'
    metal nodes register under their host name: the inventory's name here)."""
    e2e.write_cgroup_v1_dropin(host)
    named = host.run("hostname")
    assert named.stdout.strip() == host.name, named.stdout


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
            _prepare_machine(host)

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
        print("metal cluster times: %s" % json.dumps(times))
    finally:
        registry.stop()
