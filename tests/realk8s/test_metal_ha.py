"""A highly available metal cluster comes up and is upgraded in place: three control-plane hosts in three instance
groups, as `kops create cluster --cloud=metal --control-plane-count 3 --zones main` lays them out
(control-plane-main-1, -2, -3, etcd members etcd-1, -2, -3), enrolled, Ready and validated with the real components;
then upgrade_cluster.yml one minor up (v1.35 to v1.36, the served builds the AWS e2e uses) with the update, and
rolling_update.yml updating the hosts in place, one control plane at a time, while a watch asks every API server
for its etcd check: at every sample at least one answers, so etcd never lost its quorum. Afterwards every component
runs the new version, etcd kept its data, and a second roll changes nothing.

One worker in kops' nodes-main (kops refuses a cluster without a Node group), rolled after the control plane. The
test-host adjustments are tests/realk8s/cluster.py's (docs/real-cluster.md).
"""

from __future__ import annotations

import json
import re
import time

import pytest
import yaml

from tests.realk8s import binaries, cluster as e2e, registry as test_registry

pytestmark = pytest.mark.hosts

CLUSTER = "ha.k8s.local"
GROUPS = ["control-plane-main-1", "control-plane-main-2", "control-plane-main-3"]
NODES = "nodes-main"
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")


def _api_client(kubeconfig, address):
    """An admin client of one control-plane host's API server (the kubeconfig names spec.api.publicName, whose
    name the certificate holds: the cluster's CA is checked, the name is not)."""
    import kubernetes
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    configuration.host = "https://%s" % address
    configuration.assert_hostname = False
    return kubernetes.client.ApiClient(configuration)


class QuorumWatch(e2e.Poller):
    """Samples, every half second, which API servers answer their etcd readiness check (/readyz/etcd: a quorum read
    through the host's own etcd member). A sample where none answers is a moment etcd had no quorum or no API
    server was up."""

    def __init__(self, kubeconfig, hosts):
        super().__init__(self.sample, interval=0.5)
        self.clients = {h.name: _api_client(kubeconfig, h.address) for h in hosts}
        self.samples = []

    def _answers(self, client):
        try:
            answer = client.call_api("GET", client.configuration.host + "/readyz/etcd", _request_timeout=3)
            return answer.read() == b"ok"
        except Exception:  # a restarting API server: this host does not answer now
            return False

    def sample(self):
        self.samples.append(sorted(name for name, client in self.clients.items() if self._answers(client)))

    def fewest(self):
        return min((len(s) for s in self.samples), default=None)


def _at_version(images, components):
    """The node's static pod images when every component's is at the newer version, else None."""
    return images if all(images.get(c, "").endswith(":" + binaries.NEWER) for c in components) else None


def test_an_ha_metal_cluster_is_upgraded_in_place_keeping_etcd_quorum(host_pool, tmp_path):
    build = binaries.require_build((binaries.OLDER, binaries.NEWER))
    times = {}
    pool = host_pool(4, kubelet=True)
    machines = pool.hosts
    hosts = machines[:3]  # the three control planes; machines[3] the worker
    bridge = "%s.1" % pool.subnet
    served_url = pool.serve_directory(e2e.served_directory(build, [binaries.OLDER, binaries.NEWER],
                                                           tmp_path / "served"))
    registry = test_registry.Registry(images=test_registry.standard_images(build, tmp_path / "images"),
                                      host=bridge).start()
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    store = "file://%s" % (tmp_path / "state")
    day2 = ("-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store)
    test_host_vars = {"nodeup_distro_packages": e2e.DISTRO_PACKAGES,
                      "protokube_etcd_install_override": e2e.etcd_install(build, served_url)}
    pool.inventory_file(user_dir / "hosts.yml", hostvars={
        host.name: dict(test_host_vars, kops_instance_group=group) for host, group in zip(machines, GROUPS + [NODES])})
    inventory = ("-i", "hosts.yml")
    try:
        with e2e.step("create (three control planes), edit, replace and update the metal cluster", [], times):
            (user_dir / "ha.yml").write_text(yaml.safe_dump({
                "state_store": store,
                "cluster_options": {"cluster_name": CLUSTER, "cloud_provider": "metal", "zones": ["main"],
                                    "networking": "kubenet", "api_public_name": hosts[0].address,
                                    "control_plane_count": 3, "node_count": 1,
                                    "kubernetes_version": "%s/%s" % (served_url, binaries.OLDER)}}))
            e2e.check(e2e.run_playbook("create_cluster.yml", "-e", "@ha.yml", "-e", "target=direct", cwd=user_dir),
                      "create_cluster.yml")
            e2e.check(e2e.run_playbook("get_cluster.yml", *day2, "-e", "output=%s.yaml" % CLUSTER, cwd=user_dir),
                      "get_cluster.yml")
            spec_file = user_dir / ("%s.yaml" % CLUSTER)
            e2e.edit_spec(spec_file, registry.url)
            groups = sorted(d["metadata"]["name"] for d in yaml.safe_load_all(spec_file.read_text())
                            if d["kind"] == "InstanceGroup")
            assert groups == GROUPS + [NODES], groups  # kops' HA layout: one control-plane group per member
            e2e.check(e2e.run_playbook("replace_cluster.yml", "-e", "state_store=%s" % store, "-e",
                                       "spec_file=%s" % spec_file.name, cwd=user_dir), "replace_cluster.yml")
            e2e.check(e2e.run_playbook("update_cluster.yml", *day2, cwd=user_dir), "update_cluster.yml")
        for host in machines:
            e2e.prepare_metal_host(host)
        admin = tmp_path / "admin.kubeconfig"
        e2e.check(e2e.run_playbook("export_kubeconfig.yml", *day2, "-e", "path=%s" % admin, cwd=user_dir),
                  "export_kubeconfig.yml")

        started = time.monotonic()
        with e2e.step("enroll.yml: the three control planes together, then the worker", machines, times):
            e2e.check(e2e.run_playbook("enroll.yml", *inventory, *day2, cwd=user_dir), "enroll.yml")
        core = e2e.core_api(admin)
        with e2e.step("the four nodes Ready", machines, times):
            for host in machines:
                node = e2e.wait_for("node %s Ready" % host.name, lambda n=host.name.lower(): e2e.ready_node(core, n),
                                    600)
                assert node.status.node_info.kubelet_version == binaries.OLDER, node.status.node_info
        times["enroll.yml to three control planes and a worker Ready"] = round(time.monotonic() - started, 1)
        with e2e.step("every API server answers its etcd check; what has no image here is removed", hosts, times):
            watch = QuorumWatch(admin, hosts)
            e2e.wait_for("three API servers with etcd", lambda: watch.sample() or len(watch.samples[-1]) == 3, 300)
            e2e.wait_for("kube-system's control-plane pods Running", lambda: e2e.control_plane_pods_running(
                core, ("kube-apiserver", "kube-controller-manager", "kube-scheduler")), 300)
            e2e.remove_workloads_without_images(e2e.apps_api(admin), core, registry)
        with e2e.step("validate_cluster.yml", machines, times):
            validate = e2e.check(e2e.run_playbook("validate_cluster.yml", *inventory, *day2, "-e", "wait=300",
                                                  cwd=user_dir), "validate_cluster.yml")
            assert "Your cluster %s is ready" % CLUSTER in validate.stdout, validate.stdout[-3000:]
        with e2e.step("upgrade_cluster.yml one minor up, with the update", [], times):
            e2e.config_map(admin, "written-before-the-upgrade", {"etcd": "keeps its data"})
            upgrade = e2e.check(e2e.run_playbook(
                "upgrade_cluster.yml", *day2, "-e", "kubernetes_version=%s/%s" % (served_url, binaries.NEWER),
                "-e", "then_update=true", cwd=user_dir), "upgrade_cluster.yml")
            assert "%s/%s" % (served_url, binaries.NEWER) in upgrade.stdout, upgrade.stdout[-3000:]
        with e2e.step("rolling_update.yml upgrades the three control planes in place, one at a time, etcd keeping "
                      "its quorum, then the worker", machines, times):
            watch = QuorumWatch(admin, hosts).start()
            started = time.monotonic()
            try:
                roll = e2e.run_playbook("rolling_update.yml", *inventory, *day2, "-e", "validate_count=1",
                                        cwd=user_dir)
            finally:
                watch.stop()
            times["in-place upgrade roll of 3 control planes and a worker"] = round(time.monotonic() - started, 1)
            e2e.check(roll, "rolling_update.yml")
            # kops' order: the control-plane groups by name, one host at a time (serial 1: a task per host), then the
            # node groups.
            order = re.findall(r"TASK \[Drain the host's Node\][^\n]*\n(?:[^\n]*\n)*?changed: \[(\S+) -> localhost\]",
                               roll.stdout)
            assert order == [h.name for h in machines], roll.stdout[-6000:]
            fewest = watch.fewest()
            lost = [i for i, s in enumerate(watch.samples) if not s]
            assert fewest is not None and fewest >= 1 and not lost, \
                "etcd lost its quorum (no API server's etcd check answered) at samples %s of %s" % (lost,
                                                                                                    watch.samples)
            print("upgrade roll: %d samples, fewest API servers with etcd %d, the samples with two: %d" % (
                len(watch.samples), fewest, sum(1 for s in watch.samples if len(s) == 2)))
        with e2e.step("the new version everywhere, etcd kept its data, a second roll changes nothing", machines,
                      times):
            assert e2e.api_server_version(admin) == binaries.NEWER
            for host in machines:
                name = host.name.lower()
                components = COMPONENTS if host in hosts else ("kube-proxy",)
                node = e2e.wait_for("node %s Ready" % name, lambda n=name: e2e.ready_node(core, n), 300)
                assert node.status.node_info.kubelet_version == binaries.NEWER, node.status.node_info
                assert not node.spec.unschedulable, name
                images = e2e.wait_for("%s's static pods at %s" % (name, binaries.NEWER),
                                      lambda n=name, want=components: _at_version(e2e.static_pod_images(core, n), want),
                                      300)
                print("%s: %s" % (name, images))
            assert core.read_namespaced_config_map("written-before-the-upgrade", "default").data == {
                "etcd": "keeps its data"}
            watch = QuorumWatch(admin, hosts)
            e2e.wait_for("three API servers with etcd", lambda: watch.sample() or len(watch.samples[-1]) == 3, 120)
            again = e2e.check(e2e.run_playbook("rolling_update.yml", *inventory, *day2, cwd=user_dir),
                              "rolling_update.yml (2)")
            assert "No rolling-update required." in again.stdout, again.stdout[-4000:]
            assert all(r["changed"] == 0 for r in e2e.playbook_recap(again.stdout).values()), again.stdout[-4000:]
        print("HA metal cluster times: %s" % json.dumps(times))
    finally:
        registry.stop()
