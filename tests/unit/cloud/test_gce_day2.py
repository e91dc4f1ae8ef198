"""The GCE day-2 reader (providers/gce/groups), the GCE rolling side (providers/gce/rolling) and the inventory's GCE hosts, on
the in-memory stand-in of GceCloud (gce_fake): which managers and instances are the cluster's, needs_update by
template, sizes summed over zones, no surge, recreateInstances, and never one call per instance."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce.inventory import gce_instance_hosts
from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups as gce_groups
from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
from ansible_collections.kubeops.kops.plugins.module_utils.kube import endpoint
from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import rolling as gce_rolling
from ansible_collections.kubeops.kops.plugins.module_utils.rolling import planner, roller
from tests.unit.cloud.gce_fake import FakeGce

CLUSTER = "k8s.example.com"
GROUPS = [{"metadata": {"name": "master-us-test1-a"}, "spec": {"role": "Master"}},
          {"metadata": {"name": "nodes"}, "spec": {"role": "Node"}}]


@pytest.fixture
def cloud():
    """A control plane in zone a, nodes over zones a and b (one manager each), the node template changed after
    zone a's instances were made; another cluster's manager and a manager of an unmanaged template beside."""
    fake = FakeGce(CLUSTER)
    control = fake.template("master-us-test1-a-k8s-example-com-1", "master-us-test1-a",
                            labels={"k8s-io-role-master": "master", "k8s-io-role-control-plane": "control-plane"})
    fake.manager("us-test1-a", "a-master-us-test1-a-k8s-example-com", control, 1, address_base=1)
    old = fake.template("nodes-k8s-example-com-1", "nodes", labels={"k8s-io-role-node": "node"})
    fake.manager("us-test1-a", "a-nodes-k8s-example-com", old, 2, address_base=2)
    new = fake.template("nodes-k8s-example-com-2", "nodes", labels={"k8s-io-role-node": "node"})
    fake.manager("us-test1-b", "b-nodes-k8s-example-com", new, 1, address_base=3)
    fake.resources[("compute", "projects/p1/zones/us-test1-a/instanceGroupManagers/a-nodes-k8s-example-com")][
        "instanceTemplate"] = new["selfLink"]  # the update set the new template; zone a's instances are older
    other = fake.template("nodes-other-example-com-1", "nodes", cluster="other.example.com")
    fake.manager("us-test1-a", "a-nodes-other-example-com", other, 1, address_base=9)
    fake.add("compute", "projects/p1/zones/us-test1-b/instanceGroupManagers/hand-made", {
        "instanceTemplate": "https://x/compute/v1/projects/p1/global/instanceTemplates/hand-made", "targetSize": 3})
    return fake


def test_reader_groups_managers_per_instance_group(cloud):
    groups = gce_groups.cloud_groups(cloud)
    assert sorted(groups) == ["master-us-test1-a", "nodes"]
    nodes = groups["nodes"]
    assert (nodes["min"], nodes["desired"], nodes["max"]) == (3, 3, 3)
    assert nodes["group_name"] == "a-nodes-k8s-example-com,b-nodes-k8s-example-com"
    assert {i["name"]: i["needs_update"] for i in nodes["instances"]} == {
        "a-nodes-k8s-example-com-0000": True, "a-nodes-k8s-example-com-0001": True, "b-nodes-k8s-example-com-0000": False}
    first = nodes["instances"][0]
    assert (first["zone"], first["manager"], first["private_ip"], first["instance_template"], first["roles"]) == (
        "us-test1-a", "a-nodes-k8s-example-com", "10.0.2.2", "nodes-k8s-example-com-1", ["node"])
    assert groups["master-us-test1-a"]["instances"][0]["roles"] == ["control-plane"]
    # Reads only, and per zone / per manager, never per instance.
    assert {m for m, _p in cloud.calls} == {"GET", "POST"}
    assert sum(1 for m, p in cloud.calls if p.endswith("/instances")) == len(cloud.zones)
    assert [p for m, p in cloud.calls if m == "POST"] == [
        "projects/p1/zones/us-test1-a/instanceGroupManagers/%s/listManagedInstances" % n
        for n in ("a-master-us-test1-a-k8s-example-com", "a-nodes-k8s-example-com")] + [
        "projects/p1/zones/us-test1-b/instanceGroupManagers/b-nodes-k8s-example-com/listManagedInstances"]


def test_reader_skips_instances_on_their_way_out(cloud):
    manager = "projects/p1/zones/us-test1-a/instanceGroupManagers/a-nodes-k8s-example-com"
    cloud.managed[manager][0]["currentAction"] = "DELETING"
    names = [i["name"] for i in gce_groups.cloud_groups(cloud)["nodes"]["instances"]]
    assert names == ["a-nodes-k8s-example-com-0001", "b-nodes-k8s-example-com-0000"]


def test_api_endpoint_is_the_clusters_forwarding_rule(cloud):
    rules = "projects/p1/regions/us-test1/forwardingRules/"
    cloud.add("compute", rules + "api-other-example-com", {"IPAddress": "203.0.113.9",
                                                           "labels": {"k8s-io-cluster-name": "other-example-com"}})
    assert gce_groups.api_endpoint(cloud) is None
    cloud.add("compute", rules + "api-k8s-example-com-internal", {
        "IPAddress": "10.0.0.100", "loadBalancingScheme": "INTERNAL", "labels": {"k8s-io-cluster-name": "k8s-example-com"}})
    cloud.add("compute", rules + "api-k8s-example-com", {
        "IPAddress": "203.0.113.7", "loadBalancingScheme": "EXTERNAL", "labels": {"k8s-io-cluster-name": "k8s-example-com"}})
    assert gce_groups.api_endpoint(cloud) == "203.0.113.7"
    spec = {"cloudProvider": "gce", "topology": {"dns": {"type": "None"}}, "api": {"loadBalancer": {"type": "Public"}}}
    completed = {"metadata": {"name": CLUSTER}, "spec": spec}
    assert endpoint.api_server(completed, cloud) == "https://203.0.113.7"


def test_cloud_for_takes_the_project_from_the_spec(monkeypatch):
    real_cloud = gce_groups.cloud
    made = []
    monkeypatch.setattr(gce_groups, "cloud", lambda name, region, profile, project=None: made.append(
        (name, region, project)) or "cloud")
    spec = {"cloudProvider": "gce", "project": "my-project", "subnets": [{"name": "us-test1", "region": "us-test1"}]}
    completed = {"metadata": {"name": CLUSTER}, "spec": spec}
    reader, cloud = providers.cloud_for(completed)
    assert (reader, cloud, made) == (gce_groups, "cloud", [(CLUSTER, "us-test1", "my-project")])
    with pytest.raises(gce_groups.GceReadError, match="no spec.project"):
        real_cloud(CLUSTER, "us-test1", None, project=None)


def _statuses(cloud):
    return planner.statuses(GROUPS, gce_rolling.GceRolling(cloud).cloud_groups(), nodes=[])


def test_rolling_plan_does_not_surge_on_gce(cloud):
    groups = _statuses(cloud)
    completed = {"metadata": {"name": CLUSTER}, "spec": {"cloudProvider": "gce"}}
    plans = dict(roller.plans_for(completed, groups, {}))
    assert plans["control-plane"] == []
    (nodes,) = plans["node"]
    assert [i["id"] for i in nodes["update"]] == ["a-nodes-k8s-example-com-0000", "a-nodes-k8s-example-com-0001"]
    assert (nodes["max_surge"], nodes["max_unavailable"], nodes["detach"]) == (0, 1, [])
    assert planner.table(groups, cloud_only=True) == [
        "NAME                    STATUS          NEEDUPDATE      READY   MIN     TARGET  MAX",
        "master-us-test1-a       Ready           0               1       1       1       1",
        "nodes                   NeedsUpdate     2               1       3       3       3"]


def test_one_roll_step_recreates_through_the_manager(cloud):
    rolling = gce_rolling.GceRolling(cloud, sleep=lambda s: None)
    (group,) = [g for g in _statuses(cloud) if g.name == "nodes"]
    instance = group.need_update[0]
    with pytest.raises(ValueError, match="cannot surge"):
        rolling.detach(group.cloud, instance)
    cloud.calls.clear()
    rolling.deregister(group.cloud, instance)
    assert cloud.calls == []  # kops' DeregisterInstance on GCE does nothing
    rolling.terminate(group.cloud, instance)
    manager = "projects/p1/zones/us-test1-a/instanceGroupManagers/a-nodes-k8s-example-com"
    assert cloud.calls == [("POST", manager + "/recreateInstances")]
    assert sorted(rolling.wait_in_service(group.cloud, 10)) == [
        "a-nodes-k8s-example-com-0000", "a-nodes-k8s-example-com-0001", "b-nodes-k8s-example-com-0000"]
    after = {i["name"]: i["needs_update"] for i in rolling.cloud_groups()["nodes"]["instances"]}
    assert after["a-nodes-k8s-example-com-0000"] is False and after["a-nodes-k8s-example-com-0001"] is True
    # An instance already gone counts as recreated (kops: "Instance not found, assuming deleted").
    rolling.terminate(group.cloud, dict(instance, name="gone-0000"))


def test_wait_in_service_names_the_manager_short_of_its_size(cloud):
    clock = iter(range(0, 1000, 5))
    rolling = gce_rolling.GceRolling(cloud, sleep=lambda s: None, clock=lambda: next(clock))
    group = rolling.cloud_groups()["nodes"]
    cloud.managed["projects/p1/zones/us-test1-b/instanceGroupManagers/b-nodes-k8s-example-com"][0][
        "currentAction"] = "CREATING"
    with pytest.raises(ValueError, match="b-nodes-k8s-example-com has 0 of 1 instances running"):
        rolling.wait_in_service(group, 20)


def test_inventory_hosts(cloud):
    cloud.resources[("compute", "projects/p1/zones/us-test1-a/instances/a-master-us-test1-a-k8s-example-com-0000")][
        "networkInterfaces"][0]["accessConfigs"] = [{"natIP": "203.0.113.5"}]
    hosts = {name: (variables, groups) for name, variables, groups in gce_instance_hosts(
        CLUSTER, GROUPS, gce_groups.cloud_groups(cloud), "private-ip-address", "gs://store", "ubuntu")}
    assert sorted(hosts) == ["10.0.1.2", "10.0.2.2", "10.0.2.3", "10.0.3.2"]
    variables, groups = hosts["10.0.2.2"]
    assert groups == ["kops_k8s_example_com", "role_node", "ig_nodes", "zone_us_test1_a", "needs_update"]
    assert variables["kops_status"] == "NeedsUpdate" and variables["kops_instance_template"] == "nodes-k8s-example-com-1"
    assert variables["kops_group_instance_template"] == "nodes-k8s-example-com-2"
    assert variables["kops_instance_id"] == "a-nodes-k8s-example-com-0000"
    # Through the control plane's public address: no bastion, so no jump; each host is reached directly.
    assert hosts["10.0.1.2"][0]["ansible_host"] == "203.0.113.5" and "ansible_ssh_common_args" not in variables
    assert hosts["10.0.3.2"][1] == ["kops_k8s_example_com", "role_node", "ig_nodes", "zone_us_test1_b"]
