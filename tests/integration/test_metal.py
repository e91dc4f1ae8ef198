"""A metal cluster (kops' `--cloud=metal`) through the playbooks as a user runs them, from their own directory on a
file:// store: create (check mode first), get, update twice (the second changes nothing; Terraform and
CloudFormation refused), delete; and the kops inventory plugin listing the user's own hosts by instance group.

What the store holds is read from the directory, not with the code under test.  Nothing here runs on a host (enroll
is a later slice)."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.integration.conftest import BIN, REPO, ansible_env, task_results

NAME = "metal.k8s.local"
# kops' e2e (tests/e2e/scenarios/bare-metal/run-test): --cloud=metal --zones main --networking cni, then
# spec.api.publicName set to the control plane's address.
OPTIONS = {"cluster_name": NAME, "cloud_provider": "metal", "zones": ["main"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "api_public_name": "192.168.76.10"}
# What every update of the cluster writes to the store besides its spec (the nodes read them when enrolled).
STORE_FILES = ("cluster-completed.spec", "kops-version.txt",
               "igconfig/control-plane/control-plane-main/nodeupconfig.yaml", "igconfig/node/nodes-main/nodeupconfig.yaml",
               "addons/bootstrap-channel.yaml",
               "pki/private/kubernetes-ca/keyset.yaml", "pki/private/etcd-manager-ca-main/keyset.yaml",
               "secrets/kubelet-bootstrap-token", "backups/etcd/main/control/etcd-cluster-spec")


def _vars_file(tmp_path, store, **options):
    path = tmp_path / "metal.yml"
    path.write_text(yaml.safe_dump({"state_store": "file://%s" % store, "cluster_options": dict(OPTIONS, **options)}))
    return path


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cloud_files(files):
    """The store minus its journal of runs (history) and the lease, which every run writes."""
    return {k: v for k, v in files.items() if not k.startswith((".kubeops-history/", ".kubeops-lease"))}


def _failed_line(run, task):
    result = task_results(run, task)
    assert result.get("failed") is True, result
    assert "\n" not in result["msg"] and "Traceback" not in result["msg"], result["msg"]
    return result["msg"]


def test_a_metal_cluster_through_the_playbooks(playbook, tmp_path):
    store = tmp_path / "state"
    config = _vars_file(tmp_path, store)
    cluster_dir = store / NAME

    # Check mode on a new cluster: the plan, nothing written.
    code, checked = playbook("kubeops.kops.create_cluster", "-e", "@%s" % config, "-e", "target=direct", "--check")
    assert code == 0, checked
    assert task_results(checked, "Write the cluster spec to the state store")["changed"] is True
    assert task_results(checked, "Apply the cluster (direct)")["summary"] == \
        {"create": 0, "update": 0, "delete": 0, "unchanged": 0}
    assert not store.exists()

    code, created = playbook("kubeops.kops.create_cluster", "-e", "@%s" % config, "-e", "target=direct")
    assert code == 0, created
    update = task_results(created, "Apply the cluster (direct)")
    assert update["changed"] is True and update["plan"] == []  # nothing in any cloud
    stored = yaml.safe_load((cluster_dir / "config").read_text())
    # kops' form: the cloud is a label, not spec.cloudProvider (kops refuses cloudProvider: metal on read).
    assert stored["metadata"]["labels"] == {"alpha.kops.k8s.io/cloud": "metal"}
    assert "cloudProvider" not in stored["spec"] and "networkCIDR" not in stored["spec"]
    assert stored["spec"]["subnets"] == [{"name": "main", "type": "Public", "zone": "main"}]
    assert stored["spec"]["topology"] == {"dns": {"type": "None"}}
    assert stored["spec"]["masterPublicName"] == "192.168.76.10"
    for name in ("control-plane-main", "nodes-main"):
        group = yaml.safe_load((cluster_dir / "instancegroup" / name).read_text())["spec"]
        assert group["image"] == "dummy-metal-image" and "machineType" not in group, group
    missing = [f for f in STORE_FILES if not (cluster_dir / f).is_file()]
    assert missing == []
    completed = yaml.safe_load((cluster_dir / "cluster-completed.spec").read_text())
    assert "cloudProvider" not in completed["spec"]
    assert completed["metadata"]["labels"]["alpha.kops.k8s.io/cloud"] == "metal"
    assert "cloudProvider" not in completed["spec"]["kubelet"]  # kops: no --cloud-provider on metal (no CCM)
    written = _cloud_files(_files(cluster_dir))

    code, again = playbook("kubeops.kops.create_cluster", "-e", "@%s" % config)
    assert code == 0 and task_results(again, "Write the cluster spec to the state store")["changed"] is False

    code, got = playbook("kubeops.kops.get_cluster", "-e", "state_store=file://%s" % store,
                         "-e", "cluster_name=" + NAME, "-e", "format=yaml", json_output=False)
    assert code == 0, got
    assert "alpha.kops.k8s.io/cloud: metal" in got and "cloudProvider" not in got and "dummy-metal-image" in got

    for _round in range(2):
        code, updated = playbook("kubeops.kops.update_cluster", "-e", "state_store=file://%s" % store,
                                 "-e", "cluster_name=" + NAME)
        assert code == 0, updated
        assert task_results(updated, "Update the cluster with target direct")["changed"] is False
    assert _cloud_files(_files(cluster_dir)) == written

    for target in ("terraform", "cloudformation"):
        code, refused = playbook("kubeops.kops.update_cluster", "-e", "state_store=file://%s" % store,
                                 "-e", "cluster_name=" + NAME, "-e", "target=" + target, "-e", "out_dir=out")
        assert code != 0
        assert _failed_line(refused, "Update the cluster with target " + target) == \
            "target=%s: a METAL cluster has nothing in a cloud to render; use target: direct, which writes the " \
            "state store's files" % target
        assert not (tmp_path / "out").exists()
    assert _cloud_files(_files(cluster_dir)) == written

    code, listed = playbook("kubeops.kops.delete_cluster", "-e", "state_store=file://%s" % store,
                            "-e", "cluster_name=" + NAME)
    assert code == 0 and cluster_dir.is_dir()
    assert task_results(listed, "Delete cluster " + NAME)["lines"] == ["No cloud resources to delete"]
    code, deleted = playbook("kubeops.kops.delete_cluster", "-e", "state_store=file://%s" % store,
                             "-e", "cluster_name=" + NAME, "-e", "yes=true")
    assert code == 0, deleted
    result = task_results(deleted, "Delete cluster " + NAME)
    assert result["changed"] is True and result["store_deleted"] is True and not cluster_dir.exists()
    # Said in one line where the user looks: without an inventory no host is reset, and how to reset them.
    said = task_results(deleted, "Say the hosts are not reset without an inventory")["msg"]
    assert said.startswith("the hosts of metal cluster %s are not reset: no inventory host names an instance group;"
                           % NAME) and "-i hosts.yml" in said and "\n" not in said, said
    code, again = playbook("kubeops.kops.delete_cluster", "-e", "state_store=file://%s" % store,
                           "-e", "cluster_name=" + NAME, "-e", "yes=true")
    assert code == 0, again
    assert task_results(again, "Delete cluster " + NAME)["changed"] is False
    assert "not found" in " ".join(task_results(again, "Report")["msg"]), task_results(again, "Report")


def test_a_metal_cluster_is_refused_what_kops_refuses(playbook, tmp_path):
    store = tmp_path / "state"
    config = _vars_file(tmp_path, store, dns_type="public", dns_zone="example.com", cluster_name="metal.example.com")
    code, run = playbook("kubeops.kops.create_cluster", "-e", "@%s" % config)
    assert code != 0
    result = task_results(run, "Write the cluster spec to the state store")
    # kops' validation error: the object, then one line per problem naming the field.
    assert result["msg"] == 'cluster metal.example.com is not valid:\n  - spec.topology.dns.type: Unsupported value: ' \
        '"Public": supported values: "None"; not supported on metal'
    assert not store.exists()

    # kops' metal cloud needs spec.api.publicName (its GetApiIngressStatus): update says so and what to set.
    config = _vars_file(tmp_path, store, api_public_name=None)
    code, run = playbook("kubeops.kops.create_cluster", "-e", "@%s" % config, "-e", "target=direct")
    assert code != 0
    assert _failed_line(run, "Apply the cluster (direct)").startswith(
        "spec.api.publicName must be set for bare metal (kops' metal cloud)")
    assert not (store / NAME / "igconfig").exists()  # refused before the store's files were written


def test_a_module_packaged_by_ansible_finds_the_metal_package(tmp_path):
    """KUBEOPS_IN_PROCESS=0: Ansible's zip holds aws and gce (imported by name), not metal, which the module imports
    from the collection directory its action plugin hands over."""
    store = tmp_path / "state"
    config = _vars_file(tmp_path, store)
    env = ansible_env(REPO / "build" / "collections")
    env.update(KUBEOPS_IN_PROCESS="0", ANSIBLE_STDOUT_CALLBACK="test_json",
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"))
    proc = subprocess.run([str(BIN / "ansible-playbook"), "kubeops.kops.create_cluster", "-e", "@%s" % config,
                           "-e", "target=direct"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = json.loads(proc.stdout)
    assert task_results(run, "Apply the cluster (direct)")["changed"] is True
    assert (store / NAME / "igconfig" / "node" / "nodes-main" / "nodeupconfig.yaml").is_file()


HOSTS = """
all:
  children:
    control_plane:
      hosts:
        vm0: {ansible_host: 192.168.76.10}
      vars:
        kops_instance_group: control-plane-main
    ig_nodes_main:
      hosts:
        vm1: {ansible_host: 192.168.76.11, ansible_user: root}
        vm2: {ansible_host: 192.168.76.12}
    other:
      hosts:
        laptop: {ansible_host: 127.0.0.1}
"""


def _inventory(tmp_path, hosts_text, **environment):
    from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService

    store = "file://%s" % (tmp_path / "state")
    service = ClusterService(store)
    if service.read(NAME)[0] is None:
        service.execute(service.plan_create(dict(OPTIONS, node_count=2)))
    user = tmp_path / "inventory"
    user.mkdir(exist_ok=True)
    (user / "hosts.yml").write_text(hosts_text)
    (user / "metal.kops.yml").write_text("plugin: kubeops.kops.kops\nstate_store: %s\ncluster_name: %s\n"
                                         "ansible_user: debian\n" % (store, NAME))
    env = ansible_env(REPO / "build" / "collections")
    env.update(environment)
    # The hosts file first: the kops plugin reads the hosts the sources before it added.
    return subprocess.run([str(BIN / "ansible-inventory"), "-i", "hosts.yml", "-i", "metal.kops.yml", "--list"],
                          cwd=user, env=env, capture_output=True, text=True, check=False, timeout=120), store


def test_the_inventory_lists_the_users_hosts_by_role_and_instance_group(tmp_path):
    proc, store = _inventory(tmp_path, HOSTS)
    assert proc.returncode == 0, proc.stderr
    inventory = json.loads(proc.stdout)
    assert inventory["role_control_plane"]["hosts"] == ["vm0"]
    assert sorted(inventory["role_node"]["hosts"]) == ["vm1", "vm2"]
    assert inventory["ig_control_plane_main"]["hosts"] == ["vm0"]
    assert sorted(inventory["ig_nodes_main"]["hosts"]) == ["vm1", "vm2"]
    assert sorted(inventory["kops_metal_k8s_local"]["hosts"]) == ["vm0", "vm1", "vm2"]
    assert sorted(inventory["zone_main"]["hosts"]) == ["vm0", "vm1", "vm2"]
    hostvars = json.loads(json.dumps(inventory["_meta"]["hostvars"]),
                          object_hook=lambda d: d.get("__ansible_unsafe", d) if len(d) == 1 else d)
    assert hostvars["laptop"] == {"ansible_host": "127.0.0.1"}  # not a machine of the cluster: left as it was
    assert hostvars["vm0"]["kops_role"] == "Master" and hostvars["vm0"]["kops_instance_group"] == "control-plane-main"
    assert hostvars["vm1"]["kops_instance_group"] == "nodes-main" and hostvars["vm1"]["kops_zone"] == "main"
    assert hostvars["vm1"]["kops_state_store"] == store and hostvars["vm1"]["kops_cluster_name"] == NAME
    assert hostvars["vm1"]["kops_private_ip"] == "192.168.76.11"
    assert hostvars["vm1"]["ansible_user"] == "root"  # the user's own is kept
    assert hostvars["vm2"]["ansible_user"] == "debian"  # else the plugin's option


@pytest.mark.parametrize("host, expected", [
    ("laptop: {kops_instance_group: nodes-b}",
     "kops inventory: host laptop: kops_instance_group: nodes-b is not an instance group of metal.k8s.local (it has "
     "control-plane-main, nodes-main); fix the host's kops_instance_group"),
    ("vm0: {kops_instance_group: nodes-main}",
     "kops inventory: host vm0 names instance groups control-plane-main and nodes-main (kops_instance_group: "
     "nodes-main, group ig_control_plane_main); a machine belongs to one"),
])
def test_a_host_naming_a_group_the_cluster_lacks_fails_in_one_line(tmp_path, host, expected):
    hosts = "all:\n  hosts:\n    %s\n  children:\n    ig_control_plane_main:\n      hosts:\n        vm0: {}\n" % host
    proc, _store = _inventory(tmp_path, hosts, ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true")
    assert proc.returncode != 0
    assert expected in proc.stderr, proc.stderr


def _host_result(run, task_name, host):
    for play in run["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == task_name and host in task["hosts"]:
                return task["hosts"][host]
    raise AssertionError("no task %r on %s in run" % (task_name, host))


def test_remove_node_refuses_in_one_line_before_touching_a_host(playbook, tmp_path):
    """remove_node.yml's refusals come from the controller, before any host is reached (the inventory's addresses
    answer nothing: 127.0.0.9, port 1): no -l; an etcd member (the only control plane); a host naming a group the
    cluster lacks (a typo)."""
    store = tmp_path / "state"
    code, created = playbook("kubeops.kops.create_cluster", "-e", "@%s" % _vars_file(tmp_path, store),
                             "-e", "target=direct")
    assert code == 0, created
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {
        "vm0": {"ansible_host": "127.0.0.9", "ansible_port": 1, "kops_instance_group": "control-plane-main"},
        "vm1": {"ansible_host": "127.0.0.9", "ansible_port": 1, "kops_instance_group": "nodes-main"},
        "vm3": {"ansible_host": "127.0.0.9", "ansible_port": 1, "kops_instance_group": "nodes-mian"}}}}))
    day2 = ("-i", "hosts.yml", "-e", "state_store=file://%s" % store, "-e", "cluster_name=" + NAME)

    code, unlimited = playbook("kubeops.kops.remove_node", *day2)
    assert code != 0
    said = _host_result(unlimited, "Check cluster_name, the state store and the hosts to remove", "vm0")["msg"]
    assert said == "name the hosts to remove with -l, e.g. -l vm2 (remove_node.yml never removes every host)"

    code, member = playbook("kubeops.kops.remove_node", *day2, "-l", "vm0", "-e", "yes=true")
    assert code != 0
    said = _host_result(member, "Drain the host's Node", "vm0")
    assert said["failed"] is True and "Traceback" not in said["msg"] and "\n" not in said["msg"], said
    assert said["msg"].startswith("vm0 runs etcd (main member n, events member n, instance group control-plane-main): "
                                  "removing an etcd member is not built"), said["msg"]

    code, typo = playbook("kubeops.kops.remove_node", *day2, "-l", "vm3")
    assert code != 0
    said = _host_result(typo, "Check the store has the host's instance group", "vm3")["msg"]
    assert said.startswith("host vm3: kops_instance_group: nodes-mian is not an instance group of %s" % NAME), said
    assert (store / NAME / "config").is_file()  # nothing deleted


def test_a_control_planes_store_files_come_from_an_s3_store(playbook, tmp_path, aws):
    """enroll copies a control plane's files from any store: kubeops.kops.store_export (what roles/enroll runs on the
    controller for an s3:// or gs:// store) writes the cluster's files, CA keys included, 0600 in 0700 directories,
    byte for byte as the store holds them, leaving out the boot wheels and the run journal; the store is untouched."""
    import boto3
    from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService

    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="metal-store")
    store = "s3://metal-store/state"
    (tmp_path / "metal.yml").write_text(yaml.safe_dump({"state_store": store, "cluster_options": OPTIONS}))
    code, created = playbook("kubeops.kops.create_cluster", "-e", "@metal.yml", "-e", "target=direct")
    assert code == 0, created
    service = ClusterService(store)
    stored = {p[len(NAME) + 1:]: service.store.read(p) for p in service.store.list(NAME + "/")}
    dest = tmp_path / "copy"
    dest.mkdir()
    (tmp_path / "export.yml").write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "Export", "kubeops.kops.store_export": {"state_store": store, "cluster_name": NAME,
                                                             "dest": str(dest)}, "no_log": False}]}]))
    for extra in ((), ("--check",)):
        code, run = playbook(tmp_path / "export.yml", *extra)
        assert code == 0, run
        result = task_results(run, "Export")
        assert result["changed"] is False
        wanted = {k: v for k, v in stored.items() if not k.startswith(("boot/", ".kubeops-"))}
        assert sorted(result["files"]) == sorted(wanted) and "pki/private/kubernetes-ca/keyset.yaml" in wanted
        assert _files(dest) == wanted
        assert {oct(p.stat().st_mode & 0o777) for p in dest.rglob("*") if p.is_file()} == {"0o600"}
        assert {oct(p.stat().st_mode & 0o777) for p in dest.rglob("*") if p.is_dir()} == {"0o700"}
    assert {p[len(NAME) + 1:]: service.store.read(p) for p in ClusterService(store).store.list(NAME + "/")} == stored

    (tmp_path / "typo.yml").write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "Export", "kubeops.kops.store_export": {"state_store": store, "cluster_name": "other.k8s.local",
                                                             "dest": str(dest)}}]}]))
    code, refused = playbook(tmp_path / "typo.yml")
    assert code != 0
    assert _failed_line(refused, "Export") == "cluster other.k8s.local not found in s3://metal-store/state"
