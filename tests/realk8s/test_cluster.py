"""A real cluster comes up: the collection's playbooks create an AWS cluster (on moto), test hosts boot its instances
from their launch templates' user data, and Kubernetes' own components run what the collection wrote.

The steps, each timed and each naming its component's log when it fails (tests/realk8s/cluster.py `step`):
create_cluster.yml (spec only) -> get_cluster.yml, the YAML edited as a user edits it in git -> replace_cluster.yml
-> update_cluster.yml target direct (moto) -> each test host plays an instance of an autoscaling group and runs its
user data: the control plane's nodeup and protokube (etcd main and events, the static control plane, the bootstrap
service, the addons channel, the node labeller), a worker's config and kubelet certificate from the bootstrap service
-> the worker Ready -> validate_cluster.yml -> kubectl with the kubeconfig export_kubeconfig.yml wrote ->
upgrade_cluster.yml from the older minor to the newer, with the update -> rolling_update.yml replaces the control
plane (its host plays the new instance, etcd's data kept as a re-attached volume) and the worker (a spare host plays
the new instance, its drain honouring a budget) -> every component reports the new version, etcd kept its data.

What stands in for what cannot be had here is listed in tests/realk8s/cluster.py's docstring and docs/real-cluster.md.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import threading

import pytest
import yaml

from tests.realk8s import binaries, cluster as e2e, registry as test_registry

pytestmark = pytest.mark.hosts

CLUSTER = "e2e.example.com"
CONTROL_PLANE_GROUP = "control-plane-%s" % e2e.ZONE
NODE_GROUP = "nodes-%s" % e2e.ZONE


def _edit_aws_spec(spec):
    """The AWS e2e's own edit besides the shared ones (cluster.py edit_spec): the EBS CSI driver and
    node-termination-handler off (no volume and no queue to serve here, and no image)."""
    spec.setdefault("cloudConfig", {})["awsEBSCSIDriver"] = {"enabled": False}
    spec["nodeTerminationHandler"] = {"enabled": False}


def _adapted(user_data, config_server=None, nodeup_vars=None):
    """The user data with the settings an EC2 instance gets from its cloud, here moto's and the test hosts':
    the STS endpoint a worker signs for, and the role variables that replace EC2/EBS/Route53 lookups of things
    moto only invents (instance addresses, attached volumes, a hosted zone)."""
    lines = []
    for line in user_data.splitlines():
        for name, overrides in (("CONFIG_SERVER", config_server), ("NODEUP_VARS", nodeup_vars)):
            if overrides and line.startswith(name + "="):
                value = json.loads(shlex.split(line[len(name) + 1:])[0])
                value.update(overrides)
                line = "%s=%s" % (name, shlex.quote(json.dumps(value, sort_keys=True)))
        lines.append(line)
    return "\n".join(lines) + "\n"


# The control plane's etcd data (kops' EBS volumes, here directories the replacement instance finds again).
ETCD_VOLUMES = ["/mnt/etcd-main", "/mnt/etcd-events"]


def test_a_real_cluster_comes_up_and_is_upgraded(host_pool, tmp_path):
    build = binaries.require_build((binaries.OLDER, binaries.NEWER))
    times = {}
    wheels = e2e.boot_wheels()
    pool = host_pool(3, kubelet=True, binds=[tmp_path, wheels])
    control, worker, spare = pool.hosts  # spare: the instance the roll launches
    hosts = [control, worker]
    bridge = "%s.1" % pool.subnet
    cloud = e2e.Cloud(bridge)
    served = e2e.served_directory(build, [binaries.OLDER, binaries.NEWER], tmp_path / "served")
    served_url = pool.serve_directory(served)
    registry = test_registry.Registry(images=test_registry.standard_images(build, tmp_path / "images"),
                                      host=bridge).start()
    user_dir = tmp_path / "user"  # the user's own directory, where they run ansible-playbook
    user_dir.mkdir()
    store = "file://%s" % (tmp_path / "state")
    try:
        with e2e.step("create, edit and update the cluster (moto)", [], times):
            (user_dir / "my-cluster.yml").write_text(yaml.safe_dump({
                "state_store": store, "target": "none",
                "cluster_options": {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": [e2e.ZONE],
                                    "networking": "kubenet",
                                    "kubernetes_version": "%s/%s" % (served_url, binaries.OLDER),
                                    "image": e2e.MOTO_AMI, "node_count": 1}}))
            e2e.check(e2e.run_playbook("create_cluster.yml", "-e", "@my-cluster.yml", env=cloud.env, cwd=user_dir),
                      "create_cluster.yml")
            e2e.check(e2e.run_playbook("get_cluster.yml", "-e", "cluster_name=%s" % CLUSTER, "-e",
                                       "state_store=%s" % store, "-e", "output=%s.yaml" % CLUSTER, env=cloud.env,
                                       cwd=user_dir), "get_cluster.yml")
            e2e.edit_spec(user_dir / ("%s.yaml" % CLUSTER), registry.url, _edit_aws_spec)
            e2e.check(e2e.run_playbook("replace_cluster.yml", "-e", "state_store=%s" % store, "-e",
                                       "spec_file=%s.yaml" % CLUSTER, env=cloud.env, cwd=user_dir),
                      "replace_cluster.yml")
            e2e.check(e2e.run_playbook("update_cluster.yml", "-e", "cluster_name=%s" % CLUSTER, "-e",
                                       "state_store=%s" % store, "-e", "target=direct", env=cloud.env, cwd=user_dir),
                      "update_cluster.yml")
            instances = cloud.instances(CLUSTER)
            assert len(instances.get(CONTROL_PLANE_GROUP, [])) == 1 and len(instances.get(NODE_GROUP, [])) == 1, \
                instances
        control_instance, worker_instance = instances[CONTROL_PLANE_GROUP][0], instances[NODE_GROUP][0]

        names = {"api.internal.%s" % CLUSTER: control.address, "kops-controller.internal.%s" % CLUSTER: control.address}
        # Debian's containerd, runc and CNI plugins from the image's apt cache (kops' releases are on GitHub, which
        # test hosts cannot reach); the ECR credential provider from the machine image (no package).
        distro = dict(e2e.DISTRO_PACKAGES, **{"ecr-credential-provider": ""})
        moto_endpoints = {"ec2Endpoint": cloud.moto.url, "stsEndpoint": cloud.moto.url + "/"}
        control_vars = {
            "nodeup_distro_packages": distro, "nodeup_node_address": control.address,
            "nodeup_etcd_peer_discovery": "inventory", "protokube_etcd_peers": {"a": control.address},
            "protokube_etcd_install_override": e2e.etcd_install(build, served_url),
            "protokube_etcd_volume_provider": "none", "protokube_api_dns_provider": "none",
            "protokube_bootstrap_overrides": moto_endpoints, "protokube_node_labeller_overrides": moto_endpoints}
        worker_vars = {"nodeup_distro_packages": distro, "nodeup_bootstrap_sts_endpoint": cloud.moto.url + "/"}

        def play(host, instance_id):
            """The host becomes the instance: its machine image, its instance profile's credentials, its user data."""
            e2e.prepare_machine(host, build, names, instance_id)
            e2e.write_credentials(host, cloud.instance_credentials(instance_id))
            user_data = e2e.user_data_of(cloud, instance_id)
            if instance_id in cloud.instances(CLUSTER).get(CONTROL_PLANE_GROUP, []):
                script = _adapted(user_data, nodeup_vars=control_vars)
            else:
                script = _adapted(user_data, config_server={"stsEndpoint": cloud.moto.url + "/"},
                                  nodeup_vars=worker_vars)
            path = tmp_path / ("user-data-%s" % instance_id)
            path.write_text(script)
            return host.run("bash %s" % path, timeout=1800)

        admin = tmp_path / "admin.kubeconfig"
        with e2e.step("export_kubeconfig.yml (before the API is up)", [], times):
            e2e.check(e2e.run_playbook("export_kubeconfig.yml", "-e", "cluster_name=%s" % CLUSTER, "-e",
                                       "state_store=%s" % store, "-e", "path=%s" % admin, "-e",
                                       "api_server=https://%s" % control.address, env=cloud.env, cwd=user_dir),
                      "export_kubeconfig.yml")

        stand_in = e2e.CloudControllerStandIn(admin, {control_instance: (control_instance, control.address),
                                                      worker_instance: (worker_instance, worker.address)}, cloud)
        with e2e.step("boot: user data on the control plane and the worker", hosts, times):
            results = {}
            threads = [threading.Thread(target=lambda h=h, i=i: results.update({h.name: play(h, i)}))
                       for h, i in ((control, control_instance), (worker, worker_instance))]
            stand_in.start()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            for host in hosts:
                proc = results[host.name]
                assert proc.returncode == 0, "%s's user data failed:\n%s\n%s" % (
                    host.name, proc.stdout[-6000:], proc.stderr[-6000:])

        core = e2e.core_api(admin)
        with e2e.step("the control plane answers /readyz and runs its static pods", [control], times):
            e2e.wait_for("/readyz", lambda: e2e.readyz(admin), 300)
            e2e.wait_for("kube-system's control-plane pods Running", lambda: e2e.control_plane_pods_running(
                core, ("kube-apiserver", "kube-controller-manager", "kube-scheduler")), 300)
        with e2e.step("the worker registers with the bootstrap service's certificate and becomes Ready", hosts, times):
            node = e2e.wait_for("node %s Ready" % worker_instance, lambda: e2e.ready_node(core, worker_instance), 600)
            assert node.status.node_info.kubelet_version == binaries.OLDER
        with e2e.step("the node labeller labels each node from its instance group", [control], times):
            for name, group, role in ((worker_instance, NODE_GROUP, "node"),
                                      (control_instance, CONTROL_PLANE_GROUP, "control-plane")):
                e2e.wait_for("%s labelled" % name, lambda: e2e.labelled(core, name, group, role), 300)
        with e2e.step("the bootstrap channel was applied; what has no image here is named and removed", hosts,
                      times):
            skipped = e2e.remove_workloads_without_images(e2e.apps_api(admin), core, registry)
            assert "coredns" in skipped, skipped  # applied by channel_apply, and named here
            print("no image here, removed after the channel applied them: %s" % ", ".join(sorted(skipped)))
        with e2e.step("a workload from the registry mirror runs on the worker", hosts, times):
            e2e.run_sleepers(e2e.apps_api(admin), core, replicas=2)
        with e2e.step("validate_cluster.yml", hosts, times):
            validate = e2e.check(e2e.run_playbook(
                "validate_cluster.yml", "-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store, "-e",
                "api_server=https://%s" % control.address, "-e", "wait=300", env=cloud.env, cwd=user_dir),
                "validate_cluster.yml")
            assert "Your cluster %s is ready" % CLUSTER in validate.stdout, validate.stdout[-3000:]
        with e2e.step("kubectl with the exported kubeconfig", [], times):
            kubectl = subprocess.run([str(build.binary("kubectl")), "--kubeconfig", str(admin), "get", "nodes",
                                      "-o", "name"], capture_output=True, text=True, timeout=60, check=False)
            assert kubectl.returncode == 0, kubectl.stderr
            assert sorted(kubectl.stdout.split()) == sorted(["node/%s" % control_instance, "node/%s" % worker_instance])
        with e2e.step("upgrade_cluster.yml to the newer minor, with the update", [], times):
            e2e.config_map(admin, "written-before-the-upgrade", {"etcd": "keeps its data"})
            upgrade = e2e.check(e2e.run_playbook(
                "upgrade_cluster.yml", "-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store, "-e",
                "kubernetes_version=%s/%s" % (served_url, binaries.NEWER), "-e", "then_update=true", env=cloud.env,
                cwd=user_dir), "upgrade_cluster.yml")
            assert "%s/%s" % (served_url, binaries.NEWER) in upgrade.stdout, upgrade.stdout[-3000:]
        with e2e.step("rolling_update.yml replaces the control plane and the worker, the drain honouring a "
                      "PodDisruptionBudget", hosts + [spare], times):
            # kube-controller-manager's disruption controller keeps the budget; the roll's evictions ask it.
            e2e.create_budget(admin, {"app": "sleeper"}, 1)
            watch = e2e.ReadyPodsWatch(admin, "app=sleeper").start()
            players = [e2e.InstancePlayer(cloud, CLUSTER, CONTROL_PLANE_GROUP, {control_instance: control}, [], play,
                                          stand_in, volumes=ETCD_VOLUMES).start(),
                       e2e.InstancePlayer(cloud, CLUSTER, NODE_GROUP, {worker_instance: worker}, [spare], play,
                                          stand_in).start()]
            try:
                roll = e2e.run_playbook(
                    "rolling_update.yml", "-e", "cluster_name=%s" % CLUSTER, "-e", "state_store=%s" % store, "-e",
                    "api_server=https://%s" % control.address, "-e", "max_surge=1", env=cloud.env, cwd=user_dir)
            finally:
                for player in players:
                    player.stop()
                watch.stop()
            fewest = watch.fewest()
            e2e.check(roll, "rolling_update.yml")
            instances = cloud.instances(CLUSTER)
            new_control, new_worker = instances[CONTROL_PLANE_GROUP], instances[NODE_GROUP]
            assert control_instance not in new_control and len(new_control) == 1, (new_control, players[0].errors)
            assert worker_instance not in new_worker and len(new_worker) == 1, (new_worker, players[1].errors)
            for player, instance_id in ((players[0], new_control[0]), (players[1], new_worker[0])):
                assert player.booted[instance_id].returncode == 0, player.booted[instance_id].stdout[-4000:]
            assert fewest is not None and fewest >= 1, "the budget (minAvailable 1) was broken: %s" % watch.samples
            print("roll: fewest ready sleepers %s of 2 over %d samples; the new nodes %s; deleted %s" % (
                fewest, len(watch.samples), new_control + new_worker, stand_in.deleted))
        with e2e.step("the new version runs everywhere, and etcd kept its data", [control, spare], times):
            assert e2e.api_server_version(admin) == binaries.NEWER
            static = {new_control[0]: ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"),
                      new_worker[0]: ("kube-proxy",)}
            for name, components in static.items():
                node = e2e.wait_for("node %s Ready" % name, lambda n=name: e2e.ready_node(core, n), 300)
                assert node.status.node_info.kubelet_version == binaries.NEWER, node.status.node_info
                images = e2e.static_pod_images(core, name)
                assert all(images.get(c, "").endswith(":" + binaries.NEWER) for c in components), images
            # The old instances' Nodes go once they are NotReady (the cloud controller stand-in's lifecycle part).
            e2e.wait_for("only the new instances' nodes", lambda: sorted(
                n.metadata.name for n in core.list_node().items) == sorted(new_control + new_worker), 180)
            assert core.read_namespaced_config_map("written-before-the-upgrade", "default").data == {
                "etcd": "keeps its data"}
            e2e.wait_for("the sleepers on the new worker", lambda: len([
                p for p in core.list_namespaced_pod("default", label_selector="app=sleeper").items
                if p.spec.node_name == new_worker[0] and p.status.phase == "Running"]) == 2, 300)
        print("real cluster times: %s" % json.dumps(times))
    finally:
        if "stand_in" in locals():
            stand_in.stop()
        registry.stop()
        cloud.stop()
