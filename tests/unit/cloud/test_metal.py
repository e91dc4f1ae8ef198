"""providers/metal/: the spec kops writes for `kops create cluster --cloud=metal metal.k8s.local --zones main
--networking cni --api-public-name 192.168.76.10`, its stored form (the alpha.kops.k8s.io/cloud label), kops'
rules for a metal cluster, the update driver and deletion (nothing in a cloud), and the inventory's hosts."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import deletion
from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import new_cluster
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError, SpecError
from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry
from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import inventory

OPTIONS = {"cluster_name": "metal.k8s.local", "cloud_provider": "metal", "zones": ["main"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "api_public_name": "192.168.76.10"}

# What kops 1.37's NewCluster + PerformAssignments give these options (upup/pkg/fi/cloudup/new_cluster.go,
# defaults.go), as its v1alpha2 YAML; docs/metal.md compares field by field.
KOPS_CLUSTER = {
    "apiVersion": "kops.k8s.io/v1alpha2", "kind": "Cluster",
    "metadata": {"name": "metal.k8s.local", "labels": {"alpha.kops.k8s.io/cloud": "metal"}},
    "spec": {
        "api": {"loadBalancer": {"type": "Public"}},
        "authorization": {"rbac": {}},
        "channel": "stable",
        "configBase": "file:///state/metal.k8s.local",
        "etcdClusters": [
            {"name": "main", "cpuRequest": "200m", "memoryRequest": "100Mi", "manager": {"backupRetentionDays": 90},
             "etcdMembers": [{"name": "n", "instanceGroup": "control-plane-main"}]},
            {"name": "events", "cpuRequest": "100m", "memoryRequest": "100Mi", "manager": {"backupRetentionDays": 90},
             "etcdMembers": [{"name": "n", "instanceGroup": "control-plane-main"}]},
        ],
        "iam": {"allowContainerRegistry": True, "legacy": False},
        "kubelet": {"anonymousAuth": False},
        "kubernetesApiAccess": ["0.0.0.0/0", "::/0"],
        "kubernetesVersion": "v1.34.2",
        "masterPublicName": "192.168.76.10",
        "networking": {"cni": {}},
        "nonMasqueradeCIDR": "100.64.0.0/10",
        "sshAccess": ["0.0.0.0/0", "::/0"],
        "subnets": [{"name": "main", "type": "Public", "zone": "main"}],
        "topology": {"dns": {"type": "None"}},
    },
}


def _group(name, role):
    return {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup",
            "metadata": {"name": name, "labels": {"kops.k8s.io/cluster": "metal.k8s.local"}},
            "spec": {"image": "dummy-metal-image", "minSize": 1, "maxSize": 1, "role": role, "subnets": ["main"],
                     "nodeLabels": {"kops.k8s.io/instancegroup": name}}}


def test_create_writes_what_kops_writes_for_metal():
    cluster, groups = new_cluster.new_cluster(OPTIONS, state_store="file:///state")
    assert objects.as_stored(cluster) == KOPS_CLUSTER
    assert groups == [_group("control-plane-main", "Master"), _group("nodes-main", "Node")]
    assert validation.validate_cluster(cluster) == []


def test_the_stored_form_names_the_cloud_by_its_label_and_loads_back():
    cluster, _groups = new_cluster.new_cluster(OPTIONS, state_store="file:///state")
    text = objects.dump_object(cluster)
    assert "cloudProvider" not in text and "alpha.kops.k8s.io/cloud: metal" in text
    assert cluster["spec"]["cloudProvider"] == "metal"  # dumping leaves the object as it was
    loaded = objects.load_objects(text)[0]
    assert loaded == cluster and objects.dump_object(loaded) == text


def test_a_definition_saying_cloudprovider_metal_gets_kops_label():
    text = objects.dump_object(KOPS_CLUSTER).replace("  api:", "  cloudProvider: metal\n  api:", 1)
    text = text.replace("  labels:\n    alpha.kops.k8s.io/cloud: metal\n", "")
    assert "alpha.kops.k8s.io" not in text
    loaded = objects.load_objects(text)[0]
    assert loaded["metadata"]["labels"] == {"alpha.kops.k8s.io/cloud": "metal"}
    assert objects.dump_object(loaded) == objects.dump_object(KOPS_CLUSTER)


def test_the_label_and_another_cloud_is_refused_in_one_line():
    text = objects.dump_object(KOPS_CLUSTER).replace("  api:", "  cloudProvider: aws\n  api:", 1)
    with pytest.raises(errors.ValidationError) as raised:
        objects.load_objects(text)
    assert [str(e) for e in raised.value.errors] == [
        "spec.cloudProvider: Forbidden: the label alpha.kops.k8s.io/cloud: metal names the cluster's cloud; remove "
        "spec.cloudProvider 'aws'"]


@pytest.mark.parametrize("options, problem", [
    ({"dns_type": "public", "dns_zone": "example.com", "cluster_name": "metal.example.com"},
     'spec.topology.dns.type: Unsupported value: "Public": supported values: "None"; not supported on metal'),
    ({"dns_type": "private", "cluster_name": "metal.example.com"},
     'spec.topology.dns.type: Unsupported value: "Private": supported values: "None"; not supported on metal'),
])
def test_kops_rules_for_metal(options, problem):
    cluster, _groups = new_cluster.new_cluster(dict(OPTIONS, **options), state_store="file:///state")
    assert [str(p) for p in validation.validate_cluster(cluster)] == [problem]


def test_metal_needs_no_cidrs_and_has_no_regions():
    """kops' metal constraints: no networkCIDR, no subnet CIDRs; zones are names, not in a region."""
    cluster, groups = new_cluster.new_cluster(dict(OPTIONS, zones=["main", "edge"]), state_store="file:///state")
    assert [s.get("cidr") for s in cluster["spec"]["subnets"]] == [None, None]
    problems = [str(p) for p in validation.validate_cluster(cluster, strict=True)]
    assert [p for p in problems if p.startswith(("spec.subnets", "spec.networkCIDR"))] == []
    assert sorted(objects.name_of(g) for g in groups) == ["control-plane-main", "nodes-edge", "nodes-main"]


def test_update_has_nothing_in_a_cloud_and_renders_nothing():
    driver = registry.driver_for({"cloudProvider": "metal"})
    assert driver.targets == ("direct",)
    cluster, groups = new_cluster.new_cluster(OPTIONS, state_store="file:///state")
    assert driver.build_tasks(cluster, groups, [], {}) == {} and driver.task_classes() == []
    assert driver.cloud("metal.k8s.local", "", spec=cluster["spec"]).provider == "metal"
    del cluster["spec"]["masterPublicName"]
    with pytest.raises(SpecError, match=r"^spec.api.publicName must be set for bare metal"):
        driver.cloud("metal.k8s.local", "", spec=cluster["spec"])


def test_delete_finds_nothing_in_a_cloud_and_says_what_it_leaves():
    module = deletion.driver_module("metal")
    cloud = module.cloud("metal.k8s.local", "", None, {})
    assert module.discover(cloud, {}) == [] and module.any_owned(cloud) is None and module.KINDS_BY_NAME == {}
    assert "reset by playbooks/delete_cluster.yml given the inventory" in module.left_behind({})[0]


GROUPS = [_group("control-plane-main", "Master"), dict(_group("nodes-main", "Node"), spec=dict(
    _group("nodes-main", "Node")["spec"], minSize=2, maxSize=2))]


def test_hosts_by_variable_or_group():
    cluster, _groups = new_cluster.new_cluster(OPTIONS, state_store="file:///state")
    found = inventory.metal_hosts(cluster, GROUPS, [
        ("vm1", {"ansible_host": "10.0.0.11", "ansible_user": "root"}, ["ig_nodes_main"]),
        ("vm0", {"kops_instance_group": "control-plane-main", "ansible_host": "10.0.0.10"}, ["control_plane"]),
        ("laptop", {}, ["ungrouped"]),
    ], "file:///state")
    assert [(name, groups) for name, _v, groups in found] == [
        ("vm0", ["kops_metal_k8s_local", "role_control_plane", "ig_control_plane_main", "zone_main"]),
        ("vm1", ["kops_metal_k8s_local", "role_node", "ig_nodes_main", "zone_main"])]
    variables = dict((name, v) for name, v, _g in found)
    assert variables["vm0"]["kops_role"] == "Master" and "ansible_user" not in variables["vm0"]
    assert variables["vm1"]["ansible_user"] == "root" and variables["vm1"]["kops_private_ip"] == "10.0.0.11"
    assert inventory.oversized(GROUPS, found) == []


def test_a_group_with_more_hosts_than_its_max_size_is_reported():
    cluster, _groups = new_cluster.new_cluster(OPTIONS, state_store="file:///state")
    found = inventory.metal_hosts(cluster, GROUPS, [("vm%d" % i, {"kops_instance_group": "control-plane-main"}, [])
                                                    for i in range(3)], "file:///state")
    assert inventory.oversized(GROUPS, found) == [("control-plane-main", 3, 1)]


@pytest.mark.parametrize("host_vars, host_groups, message", [
    ({"kops_instance_group": "nodes-b"}, [],
     "kops inventory: host h: kops_instance_group: nodes-b is not an instance group of metal.k8s.local (it has "
     "control-plane-main, nodes-main); fix the host's kops_instance_group"),
    ({"kops_instance_group": "nodes-main"}, ["ig_control_plane_main"],
     "kops inventory: host h names instance groups control-plane-main and nodes-main (kops_instance_group: "
     "nodes-main, group ig_control_plane_main); a machine belongs to one"),
])
def test_a_host_naming_a_group_the_cluster_lacks_fails_in_one_line(host_vars, host_groups, message):
    by_name = {objects.name_of(g): g for g in GROUPS}
    with pytest.raises(inventory.InventoryError) as raised:
        inventory.group_of("metal.k8s.local", "h", host_vars, host_groups, by_name)
    assert str(raised.value) == message


def _ready_node(name):
    return {"metadata": {"name": name, "labels": {}}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def test_validate_reads_the_inventorys_hosts_as_the_machines():
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import validation as cluster_validation
    completed = {"metadata": {"name": "metal.k8s.local"}, "spec": dict(KOPS_CLUSTER["spec"], cloudProvider="metal")}
    hosts = {"control-plane-main": ["VM0"], "nodes-main": ["vm2", "vm1"]}
    reader, machines = registry.cloud_for(completed, hosts=hosts)
    assert reader.api_endpoint(machines) == "192.168.76.10"  # kops' metal GetApiIngressStatus: spec.api.publicName
    found = reader.cloud_groups(machines)
    assert found["nodes-main"]["desired"] == 2
    assert [m["id"] for m in found["nodes-main"]["instances"]] == ["vm1", "vm2"]
    groups = [_group("control-plane-main", "ControlPlane"), _group("nodes-main", "Node")]
    # The kubelet registers under the host name lowercased; a host whose Node is missing has not joined.
    result = cluster_validation.validate(groups, found, [_ready_node("vm0"), _ready_node("vm1")], [])
    assert [f["message"] for f in result["failures"]] == [
        'machine "vm2" has not yet joined cluster',
        'control-plane node "vm0" is missing kube-apiserver pod',
        'control-plane node "vm0" is missing kube-controller-manager pod',
        'control-plane node "vm0" is missing kube-scheduler pod']
    assert sorted(n["name"] for n in result["nodes"]) == ["vm0", "vm1"]


def test_validate_without_inventory_hosts_says_how_to_give_them():
    completed = {"metadata": {"name": "metal.k8s.local"}, "spec": dict(KOPS_CLUSTER["spec"], cloudProvider="metal")}
    reader, machines = registry.cloud_for(completed, hosts={})
    with pytest.raises(CloudError, match="no inventory host names an instance group of metal cluster metal.k8s.local: run with"):
        reader.cloud_groups(machines)


def test_removing_a_host_is_refused_for_an_etcd_member_and_the_last_control_plane():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import removal
    etcd = [{"name": "main", "etcdMembers": [{"name": "a", "instanceGroup": "control-plane-a"}]},
            {"name": "events", "etcdMembers": [{"name": "a", "instanceGroup": "control-plane-a"}]}]
    member = _group("control-plane-a", "ControlPlane")
    said = removal.refusal("vm0", member, etcd, ["vm0", "vm3"])
    assert said.startswith("vm0 runs etcd (main member a, events member a, instance group control-plane-a): removing "
                           "an etcd member is not built; to take the host out, move the members") and "\n" not in said
    api_only = _group("apiservers", "APIServer")
    assert removal.refusal("vm3", api_only, etcd, ["vm0", "vm3"]) is None
    assert removal.refusal("vm3", api_only, etcd, ["vm3"]).startswith(
        "vm3 is the cluster's last control-plane host: the cluster would have no API; enroll another")
    assert removal.refusal("vm2", _group("nodes-main", "Node"), etcd, ["vm0"]) is None


class _Gone(Exception):
    status = 404


class _FakeCore(object):
    """CoreV1Api as removal.py uses it: one node, its pods; records what changes."""

    def __init__(self, nodes):
        self.nodes = set(nodes)
        self.calls = []

    def read_node(self, name, _request_timeout=None):
        if name not in self.nodes:
            raise _Gone()
        return {"metadata": {"name": name}}

    def delete_node(self, name, _request_timeout=None):
        self.calls.append(("delete", name))
        self.nodes.discard(name)


class _FakeDrainer(object):
    def __init__(self, core, pods):
        self.core, self.pods, self.calls = core, pods, []

    def pods_to_evict(self, name):
        return [{"metadata": {"namespace": "default", "name": p}} for p in self.pods]

    def cordon_and_label(self, name):
        self.calls.append(("cordon", name))

    def drain(self, name, timeout, report=None):
        self.calls.append(("drain", name, timeout))
        return len(self.pods)


def test_a_node_is_drained_then_deleted_and_check_mode_changes_nothing():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import removal
    core = _FakeCore(["vm2"])
    drainer = _FakeDrainer(core, ["web-1", "web-2"])
    assert removal.drain(drainer, "vm2", 900, check_mode=True) == {"found": True, "evicted": 0,
                                                                   "pods": ["default/web-1", "default/web-2"]}
    assert drainer.calls == [] and removal.delete_node(core, "vm2", check_mode=True) is True and core.calls == []
    assert removal.drain(drainer, "vm2", 900, check_mode=False)["evicted"] == 2
    assert drainer.calls == [("cordon", "vm2"), ("drain", "vm2", 900)]
    assert removal.delete_node(core, "vm2", check_mode=False) is True and core.calls == [("delete", "vm2")]
    # A second run: the Node is gone, nothing to drain or delete.
    assert removal.drain(drainer, "vm2", 900, check_mode=False) == {"found": False, "evicted": 0, "pods": []}
    assert removal.delete_node(core, "vm2", check_mode=False) is False and core.calls == [("delete", "vm2")]
