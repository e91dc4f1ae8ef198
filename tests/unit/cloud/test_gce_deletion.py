"""providers/gce/deletion.py through the walker (deletion.delete_cluster) on tests/gce_server.py.

Three clusters share a project: ours (minimal.example.com), a neighbour whose name ends in ours
(eu.minimal.example.com: every kops name of it also ends in ours) and one whose name starts with ours
(minimal.example.com.au: its instances' network tags start with ours).  What is left
is read from the server's store (not with the code under test).
"""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion
from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import deletion as gce_deletion

PROJECT = "test-project"
REGION = "us-test1"
ZONE = "us-test1-a"
# Our neighbours' names end in ours (all their kops names end in ours too) or start with it (their network tags
# start with ours).
OURS, SUFFIXED, PREFIXED = "minimal.example.com", "eu.minimal.example.com", "minimal.example.com.au"


def _p(rel):
    return "projects/%s/%s" % (PROJECT, rel)


def seed_cluster(server, cluster, route_uuid="3f0b8c2e-1d6a-4c1e-9b7a-5a2d8e6f4c10", zone="example"):
    """The objects kops makes for a cluster with an API load balancer (public and internal), NAT, DNS."""
    safe = cluster.replace(".", "-")
    label = {"k8s-io-cluster-name": safe}
    network = server.seed(_p("global/networks"), {"name": safe, "autoCreateSubnetworks": False})["selfLink"]
    subnet = server.seed(_p("regions/%s/subnetworks" % REGION), {
        "name": "%s-%s" % (REGION, safe), "network": network, "ipCidrRange": "10.0.16.0/20"})["selfLink"]
    server.seed(_p("regions/%s/routers" % REGION), {"name": "nat-%s" % safe, "network": network, "nats": [
        {"name": "nat-%s" % safe, "sourceSubnetworkIpRangesToNat": "LIST_OF_SUBNETWORKS",
         "subnetworks": [{"name": subnet, "sourceIpRangesToNat": ["ALL_IP_RANGES"]}]}]})
    for name, tags in (("ssh-external-to-node-%s" % safe, ["%s-k8s-io-role-node" % safe]),
                       ("master-to-master-%s" % safe, ["%s-k8s-io-role-control-plane" % safe, "%s-k8s-io-role-master" % safe])):
        server.seed(_p("global/firewalls"), {"name": name, "network": network, "targetTags": tags,
                                             "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}]})
    templates = {}
    for role in ("master-us-test1-a", "nodes"):
        templates[role] = server.seed(_p("global/instanceTemplates"), {"name": "%s-%s-1700000000" % (role, safe), "properties": {
            "machineType": "e2-medium", "labels": dict(label, **{"k8s-io-instance-group": role}),
            "metadata": {"items": [{"key": "cluster-name", "value": cluster}]},
            "tags": {"items": ["%s-k8s-io-role-node" % safe]},
            "disks": [{"boot": True, "autoDelete": True, "initializeParams": {"diskSizeGb": 64, "labels": label}}],
            "networkInterfaces": [{"network": network, "subnetwork": subnet}]}})["selfLink"]
    health = server.seed(_p("global/httpHealthChecks"), {"name": "api-%s" % safe, "port": 3990})["selfLink"]
    pool = server.seed(_p("regions/%s/targetPools" % REGION), {"name": "api-%s" % safe, "healthChecks": [health]})["selfLink"]
    master = server.seed(_p("zones/%s/instanceGroupManagers" % ZONE), {
        "name": "a-master-us-test1-a-%s" % safe, "baseInstanceName": "master-us-test1-a", "targetSize": 1,
        "instanceTemplate": templates["master-us-test1-a"], "targetPools": [pool]})
    server.seed(_p("zones/%s/instanceGroupManagers" % ZONE), {
        "name": "a-nodes-%s" % safe, "baseInstanceName": "nodes", "targetSize": 2, "instanceTemplate": templates["nodes"]})
    address = server.seed(_p("regions/%s/addresses" % REGION), {"name": "api-%s" % safe})
    server.seed(_p("regions/%s/forwardingRules" % REGION), {
        "name": "api-%s" % safe, "target": pool, "IPAddress": address["selfLink"], "labels": dict(label, name="api")})
    check = server.seed(_p("regions/%s/healthChecks" % REGION), {"name": "api-internal-%s" % safe, "type": "TCP"})["selfLink"]
    service = server.seed(_p("regions/%s/backendServices" % REGION), {
        "name": "api-internal-%s" % safe, "healthChecks": [check], "loadBalancingScheme": "INTERNAL",
        "backends": [{"group": master["instanceGroup"]}]})["selfLink"]
    server.seed(_p("regions/%s/forwardingRules" % REGION), {
        "name": "api-us-test1-%s" % safe, "backendService": service, "loadBalancingScheme": "INTERNAL",
        "network": network, "subnetwork": subnet, "labels": dict(label, name="api-us-test1")})
    # An etcd disk attached to the control plane's instance (it goes when the instance has gone).
    instance = [n for n in server.names(_p("zones/%s/instances" % ZONE)) if n.startswith("master-us-test1-a-")]
    instance = server._get(_p("zones/%s/instances" % ZONE), sorted(instance)[-1])
    disk = server.seed(_p("zones/%s/disks" % ZONE), {"name": "a-etcd-main-%s" % safe, "sizeGb": 20, "users": [instance["selfLink"]],
                                                     "labels": dict(label, **{"k8s-io-etcd-main": "a-2fa", "k8s-io-role-master": "master"})})
    instance["disks"].append({"source": disk["selfLink"], "autoDelete": False, "deviceName": "etcd-main"})
    server.seed(_p("global/routes"), {"name": "%s-%s" % (safe[:26], route_uuid), "network": network,
                                      "destRange": "100.96.1.0/24", "nextHopInstance": instance["selfLink"]})
    # A LoadBalancer service's objects, as the cloud controller names them (kops deletes them with the cluster).
    service_uid = "a%s" % route_uuid.replace("-", "")[:31]
    node_check = server.seed(_p("global/httpHealthChecks"), {"name": "k8s-%s-node" % service_uid[1:17]})["selfLink"]
    service_pool = server.seed(_p("regions/%s/targetPools" % REGION), {"name": service_uid, "healthChecks": [node_check]})
    server.seed(_p("regions/%s/forwardingRules" % REGION), {"name": service_uid, "target": service_pool["selfLink"]})
    for name in ("k8s-fw-%s" % service_uid, "k8s-%s-node-http-hc" % service_uid[1:17]):
        server.seed(_p("global/firewalls"), {"name": name, "network": network, "targetTags": ["%s-k8s-io-role-node" % safe],
                                             "allowed": [{"IPProtocol": "tcp", "ports": ["80"]}]})
    emails = []
    for role in ("control-plane", "node"):
        emails.append(server.seed("iam:" + _p("serviceAccounts"), {
            "accountId": gce_deletion.service_account_id(role, cluster)})["email"])
    policy = server.policies.setdefault(PROJECT, {"version": 1, "etag": "BwWWja0YfJA=", "bindings": []})
    policy["bindings"].append({"role": "roles/compute.viewer", "members": ["serviceAccount:" + e for e in emails]})
    for prefix in ("api", "api.internal"):
        server.seed("dns:" + _p("managedZones/%s/rrsets" % zone), {
            "name": "%s.%s." % (prefix, cluster), "type": "A", "ttl": 60, "rrdatas": ["203.0.113.7"]})


@pytest.fixture
def project(gce):
    """The three clusters' objects: {"base": the zone, "ours": ..., "neighbours": ...} as server paths."""
    gce.seed("dns:" + _p("managedZones"), {"name": "example", "dnsName": "example.com."})
    gce.seed("dns:" + _p("managedZones"), {"name": "example-au", "dnsName": "example.com.au."})
    base = set(gce.objects())
    seed_cluster(gce, OURS)
    ours = set(gce.objects()) - base
    seed_cluster(gce, SUFFIXED, route_uuid="9a1c7d3e-2b4f-4e6a-8c0d-1e2f3a4b5c6d")
    seed_cluster(gce, PREFIXED, route_uuid="0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e", zone="example-au")
    neighbours = set(gce.objects()) - base - ours
    gce.requests.clear()
    return {"base": base, "ours": ours, "neighbours": neighbours}


@pytest.fixture
def service():
    made = clusters.ClusterService("memfs://state")
    made.execute(made.plan_create({"cluster_name": OURS, "cloud_provider": "gce", "zones": [ZONE], "project": PROJECT,
                                   "networking": "cni", "kubernetes_version": "v1.34.2", "dns_zone": "example.com"}))
    return made


def _delete(service, **options):
    return deletion.delete_cluster(service, OURS, sleep=lambda _s: None, interval=0, **options)


def test_every_object_of_ours_is_found_and_no_neighbours(gce, project, service):
    outcome = _delete(service, yes=False)
    kinds = sorted({o["kind"] for o in outcome.objects})
    assert kinds == ["Address", "BackendService", "DNSRecord", "Disk", "FirewallRule", "ForwardingRule", "HTTP HealthCheck",
                     "HealthCheck", "Instance", "InstanceGroupManager", "InstanceTemplate", "Network", "Route",
                     "Router", "ServiceAccount", "Subnet", "TargetPool"]
    neighbour_names = {path.rsplit("/", 1)[-1].split(" ")[0] for path in project["neighbours"]}
    assert not {o["name"] for o in outcome.objects} & neighbour_names
    # every object seeded for us (boot disks included) is listed
    listed = {o["name"] for o in outcome.objects}
    seeded = {path.rsplit("/", 1)[-1] for path in project["ours"]}
    seeded = {s.split(" ")[0] if " " in s else s for s in seeded}  # DNS records are stored as "<name> <type>"
    assert seeded - {s for s in seeded if s.endswith("@%s.iam.gserviceaccount.com" % PROJECT)} <= listed | {
        "example"}, seeded - listed
    assert gce.mutations() == []


def test_delete_takes_ours_and_leaves_every_neighbour_object(gce, project, service):
    outcome = _delete(service, yes=True, timeout=60)
    left = set(gce.objects())
    assert left == project["base"] | project["neighbours"], sorted(left ^ (project["base"] | project["neighbours"]))
    assert outcome.store_deleted and service.cluster_store(OURS).read_cluster() is None
    members = {m for b in gce.policies[PROJECT]["bindings"] for m in b["members"]}
    assert {m.split(":", 1)[1].split("@")[0] for m in members if m.startswith("serviceAccount:")} == {
        gce_deletion.service_account_id(role, name) for role in ("control-plane", "node") for name in (SUFFIXED, PREFIXED)}
    assert all(o["result"] in ("deleted", "already gone") for o in outcome.objects), outcome.objects


def test_check_mode_lists_without_a_mutating_request(gce, project, service):
    outcome = _delete(service, yes=True, dry_run=True)
    assert len(outcome.objects) > 20 and not outcome.store_deleted
    assert gce.mutations() == []
    assert set(gce.objects()) == project["base"] | project["ours"] | project["neighbours"]


def test_a_rerun_after_an_interrupted_delete_finishes(gce, project, service):
    # The first run dies after the groups, templates and the load balancers are gone: the network, subnetwork,
    # router, firewalls (a service's k8s-fw- rule without its forwarding rule), disks and accounts are left
    # (a run cut short by its timeout or a killed play).
    cloud = gce_deletion.cloud(OURS, REGION, spec={"project": PROJECT})
    resources = [r for r in gce_deletion.discover(cloud, {"project": PROJECT})
                 if r.kind in ("InstanceGroupManager", "InstanceTemplate", "ForwardingRule", "TargetPool", "Route",
                               "BackendService", "Instance", "HTTP HealthCheck", "HealthCheck")]
    walker = deletion.Walker(cloud, gce_deletion.KINDS_BY_NAME, resources, sleep=lambda _s: None, interval=0)
    walker.run()
    left = set(gce.objects())
    assert not {p for p in project["ours"] if "/instanceTemplates/" in p} & left  # interrupted after the templates ...
    assert {p for p in project["ours"] if "/networks/" in p} <= left              # ... and before the network
    _delete(service, yes=True, timeout=60)
    assert set(gce.objects()) == project["base"] | project["neighbours"]


def test_a_foreign_object_in_our_network_keeps_it_and_is_named(gce, project, service):
    network = gce.url + "/compute/v1/" + _p("global/networks/minimal-example-com")
    gce.seed(_p("global/firewalls"), {"name": "allow-office", "network": network, "sourceRanges": ["198.51.100.0/24"]})
    with pytest.raises(deletion.DeletionError) as caught:
        _delete(service, yes=True, timeout=60)
    blocked = [o for o in caught.value.objects if o["result"] not in ("deleted", "already gone")]
    assert [(o["kind"], o["result"]) for o in blocked] == [("Network", "blocked")]
    assert "firewall rule allow-office" in blocked[0]["reason"]
    assert "compute:" + _p("global/firewalls/allow-office") in set(gce.objects())
    assert service.cluster_store(OURS).read_cluster() is not None  # kept, so that a later run can finish


def test_kops_names():
    # kops' ClusterSuffixedName(role, cluster, 30): the cluster part cut to fit, ending in its hash
    assert gce_deletion.service_account_id("node", OURS) == "node-minimal-example-com"
    cut = gce_deletion.service_account_id("control-plane", OURS)
    assert cut == "control-plane-minimal-e-" + gce_deletion.hash_string("minimal-example-com") and len(cut) == 30
    assert gce_deletion.network_name(OURS) == "minimal-example-com"
    assert gce_deletion.name_matches(OURS, "ssh-external-to-node-minimal-example-com", 5)
    assert gce_deletion.name_matches(OURS, "nodeport-external-to-node-ipv6-minimal-example-com", 5)  # 5 tokens: kops' longest
    assert not gce_deletion.name_matches(OURS, "a-b-c-d-e-f-minimal-example-com", 5)
    assert gce_deletion.name_matches(OURS, "api-eu-minimal-example-com")  # kops' rule alone takes the neighbour's
    assert not gce_deletion.name_matches(OURS, "api-minimal-example-com-au")


def test_cluster_delete_module_lists_checks_and_deletes(gce, project, run_module, tmp_path):
    """kubeops.kops.cluster_delete as a playbook task runs it, with KOPS_GCE_ENDPOINT set (the `gce` fixture)."""
    from ansible_collections.kubeops.kops.plugins.modules import cluster_delete as cluster_delete_module
    store = "file://%s" % (tmp_path / "state")
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({"cluster_name": OURS, "cloud_provider": "gce", "zones": [ZONE], "project": PROJECT,
                                         "networking": "cni", "kubernetes_version": "v1.34.2", "dns_zone": "example.com"}))
    listed = run_module(cluster_delete_module, state_store=store, cluster_name=OURS, interval=0)
    assert listed["changed"] is False and len(listed["objects"]) == len(listed["lines"]) - 1 > 20  # and the header
    assert listed["lines"][0].split() == ["TYPE", "NAME", "ID"]
    assert any(line.startswith("InstanceGroupManager") and "a-nodes-minimal-example-com" in line for line in listed["lines"])
    checked = run_module(cluster_delete_module, check_mode=True, diff=True, state_store=store, cluster_name=OURS, yes=True,
                         interval=0)
    assert checked["changed"] is True and "Network" in checked["diff"]["before"]
    assert gce.mutations() == []
    deleted = run_module(cluster_delete_module, state_store=store, cluster_name=OURS, yes=True, interval=0, timeout=60)
    assert deleted["changed"] is True and deleted["store_deleted"] is True, deleted.get("msg")
    assert set(gce.objects()) == project["base"] | project["neighbours"]
    again = run_module(cluster_delete_module, state_store=store, cluster_name=OURS, yes=True, interval=0)
    # The delete run again: the cluster is not in the store, said so (not "region is needed"); looking for what it may
    # have left in a cloud needs the region, which the message names.
    assert again["changed"] is False and again["msg"].startswith("cluster %s not found in " % OURS), again
    assert "give region" in again["msg"]


def test_dns_records_only_when_the_cluster_publishes_them():
    assert gce_deletion.publishes_dns(OURS, {"topology": {"dns": {"type": "Public"}}})
    assert gce_deletion.publishes_dns(OURS, None)  # the store is gone: look
    assert not gce_deletion.publishes_dns(OURS, {"networking": {"topology": {"dns": {"type": "None"}}}})
    assert not gce_deletion.publishes_dns(OURS, {"topology": {"dns": {"type": "None"}}})
    assert not gce_deletion.publishes_dns("gossip.k8s.local", {})
