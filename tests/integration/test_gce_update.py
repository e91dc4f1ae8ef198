"""Direct update of a GCE cluster on our Compute/IAM/CRM test server (tests/gce_server.py, fixture `gce`):
a create of kops' minimal_gce (and its internal-load-balancer, private variant), a no-op re-run with zero
changes and the number of requests it makes, and check mode with zero mutating requests.

The clusters are kops' own fixture inputs, stored with `kops create cluster`'s options on a memfs store.
"""

from __future__ import annotations

import collections
import copy

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.engine import runner

MUTATING = ("POST", "PATCH", "PUT", "DELETE")
MINIMAL = {"cluster_name": "minimal-gce.example.com", "cloud_provider": "gce", "networking": "cni",
           "kubernetes_version": "v1.32.0", "project": "testproject", "zones": ["us-test1-a"],
           "image": "ubuntu-os-cloud/ubuntu-2604-resolute-amd64-v20221018"}
# What kops makes for this spec: `kops create cluster` on GCE gives a public API load balancer and no DNS
# (kops' create_cluster/minimal-gce), so the objects are minimal_gce's plus those of kops' minimal_gce_plb and
# minimal_gce_dns-none update fixtures (both load balancers, the kops-controller rules), with a service account
# per role since the spec names none.
MINIMAL_KINDS = {"google_compute_network": 1, "google_compute_subnetwork": 1, "google_compute_firewall": 15,
                 "google_compute_disk": 2, "google_compute_instance_template": 2,
                 "google_compute_instance_group_manager": 2, "google_service_account": 2,
                 "google_project_iam_binding": 1, "google_compute_http_health_check": 1,
                 "google_compute_target_pool": 1, "google_compute_address": 2, "google_compute_forwarding_rule": 3,
                 "google_compute_region_health_check": 1, "google_compute_region_backend_service": 1}


def _store(options, store_url="memfs://gce-update"):
    service = clusters.ClusterService(store_url)
    service.execute(service.plan_create(dict(options)))
    return service


def _apply(service, name, dry_run=False):
    plan, _completed, _changed = updates.apply_direct(service, name, dry_run, deadline=60)
    return plan


def _counts(plan):
    return collections.Counter(e.action for e in plan)


def _kinds(plan, action):
    return dict(collections.Counter(e.kind for e in plan if e.action == action))


def _forget_requests(gce):
    """Start counting requests anew (gce.reset() would empty the server)."""
    del gce.requests[:]


def _mutations(gce):
    # Resource Manager's getIamPolicy is a read that Google serves as a POST.
    return [r for r in gce.requests if r[0] in MUTATING and not r[1].endswith(":getIamPolicy")]


def test_create_noop_and_check_mode(gce):
    service = _store(MINIMAL)
    name = MINIMAL["cluster_name"]

    dry = _apply(service, name, dry_run=True)
    assert _mutations(gce) == [], "check mode made mutating calls"
    assert _kinds(dry, runner.CREATE) == MINIMAL_KINDS

    _forget_requests(gce)
    created = _apply(service, name)
    assert _kinds(created, runner.CREATE) == MINIMAL_KINDS
    assert _counts(created) == {runner.CREATE: sum(MINIMAL_KINDS.values())}
    creates = len(_mutations(gce))

    _forget_requests(gce)
    again = _apply(service, name)
    assert _counts(again) == {runner.UNCHANGED: sum(MINIMAL_KINDS.values())}, [
        (e.kind, e.name, e.changes) for e in again if e.action != runner.UNCHANGED]
    assert _mutations(gce) == []
    noop_requests = len(gce.requests)

    _forget_requests(gce)
    check = _apply(service, name, dry_run=True)
    assert _counts(check) == {runner.UNCHANGED: sum(MINIMAL_KINDS.values())}
    assert _mutations(gce) == []

    # The managers run the templates' instances, labelled and with the boot metadata.
    found = gce.objects()
    print("minimal_gce: %d mutating requests to create, no-op re-run %d requests, check mode %d" % (
        creates, noop_requests, len(gce.requests)))
    # One read per object or fewer: the templates are one list, the IAM binding one policy read, and the
    # firewall rules one more list for orphans.
    assert noop_requests <= sum(MINIMAL_KINDS.values())
    assert any(path.endswith("/disks/a-etcd-main-minimal-gce-example-com") for path in found)
    instances = list(gce.store["compute:projects/testproject/zones/us-test1-a/instances"].values())
    assert len(instances) == 2  # a control-plane node and a node, each with its group's boot metadata
    for instance in instances:
        metadata = {i["key"]: i["value"] for i in instance["metadata"]["items"]}
        assert metadata["cluster-name"] == name and metadata["kops-k8s-io-instance-group-name"]
        assert metadata["user-data"].startswith("#!") and "memfs://gce-update/%s" % name in metadata["user-data"]
        assert instance["labels"]["k8s-io-cluster-name"] == "minimal-gce-example-com"


def test_a_changed_spec_updates_in_place_and_moves_the_groups(gce):
    service = _store(MINIMAL)
    name = MINIMAL["cluster_name"]
    _apply(service, name)
    cluster, groups = service.read(name)
    changed = copy.deepcopy(cluster)
    changed["spec"]["sshAccess"] = ["10.0.0.0/8"]
    nodes = copy.deepcopy(next(g for g in groups if g["spec"]["role"] == "Node"))
    group = nodes["metadata"]["name"]
    nodes["spec"]["machineType"] = "e2-standard-4"
    service.execute(service.plan_replace([changed, nodes]))

    _forget_requests(gce)
    plan = _apply(service, name, dry_run=True)
    assert _mutations(gce) == []
    planned = {(e.kind, e.name): e for e in plan if e.action != runner.UNCHANGED}

    _forget_requests(gce)
    applied = _apply(service, name)
    done = {(e.kind, e.name): e.action for e in applied if e.action != runner.UNCHANGED}
    assert done == {k: e.action for k, e in planned.items()}, "check mode planned what the run then did"
    assert done[("google_compute_firewall", "ssh-external-to-node-minimal-gce-example-com")] == runner.UPDATE
    assert done[("google_compute_instance_template", "%s-minimal-gce-example-com" % group)] == runner.CREATE
    # The manager moves to the new template in place (the engine reports an object whose parent was created in
    # the run as created, in check mode and here alike).
    assert ("google_compute_instance_group_manager", "a-%s-minimal-gce-example-com" % group) in done
    moved = [p for m, p in _mutations(gce) if p.endswith("/setInstanceTemplate")]
    assert len(moved) == 1 and "a-%s-minimal-gce-example-com" % group in moved[0]
    assert not [p for m, p in _mutations(gce) if m == "DELETE"]

    _forget_requests(gce)
    assert _counts(_apply(service, name)) == {runner.UNCHANGED: sum(MINIMAL_KINDS.values())}


@pytest.mark.parametrize("topology", ["private"])
def test_internal_load_balancer_and_nat(gce, topology):
    """Private subnets with Cloud NAT and an internal API load balancer, the kinds minimal_gce lacks."""
    options = dict(MINIMAL, cluster_name="minimal-gce-ilb.example.com", topology=topology,
                   api_load_balancer_type="internal")
    service = _store(options)
    created = _apply(service, options["cluster_name"])
    kinds = _kinds(created, runner.CREATE)
    # As kops' minimal_gce_dns-none: NAT for the private subnet, the internal load balancer with kops-controller's
    # rule beside the API's (no DNS), no public parts.
    for kind, count in (("google_compute_router", 1), ("google_compute_router_nat", 1), ("google_compute_address", 1),
                        ("google_compute_region_health_check", 1), ("google_compute_region_backend_service", 1),
                        ("google_compute_forwarding_rule", 2), ("google_compute_target_pool", None)):
        assert kinds.get(kind) == count, (kind, kinds)
    _forget_requests(gce)
    again = _apply(service, options["cluster_name"])
    assert _counts(again) == {runner.UNCHANGED: len(created)}, [
        (e.kind, e.name, e.changes) for e in again if e.action != runner.UNCHANGED]
    assert _mutations(gce) == []


def test_firewall_rules_the_spec_dropped_are_deleted_and_only_those(gce):
    """A rule of the cluster's network named for the cluster goes when no task wants it; a rule of another
    network, or not named for the cluster, stays (kops' name rule, docs/gce-model.md)."""
    service = _store(MINIMAL)
    name = MINIMAL["cluster_name"]
    _apply(service, name)
    network = "projects/testproject/global/networks/"
    rule = {"allowed": [{"IPProtocol": "tcp", "ports": ["8080"]}], "sourceRanges": ["0.0.0.0/0"]}
    gce.seed("projects/testproject/global/networks", {"name": "other-net"})
    gce.seed("projects/testproject/global/firewalls", dict(rule, name="old-rule-minimal-gce-example-com",
                                                           network=network + "minimal-gce-example-com"))
    gce.seed("projects/testproject/global/firewalls", dict(rule, name="users-own-rule",
                                                           network=network + "minimal-gce-example-com"))
    gce.seed("projects/testproject/global/firewalls", dict(rule, name="elsewhere-minimal-gce-example-com",
                                                           network=network + "other-net"))
    _forget_requests(gce)
    plan = _apply(service, name, dry_run=True)
    assert [(e.kind, e.name) for e in plan if e.action == runner.DELETE] == [
        ("google_compute_firewall", "old-rule-minimal-gce-example-com")]
    assert _mutations(gce) == []
    _apply(service, name)
    left = gce.names("projects/testproject/global/firewalls")
    assert "old-rule-minimal-gce-example-com" not in left
    assert {"users-own-rule", "elsewhere-minimal-gce-example-com"} <= set(left)


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubeops.kops.kops:
      state_store: "{{ store }}"
  tasks:
    - name: create
      kubeops.kops.cluster:
        options:
          cluster_name: minimal-gce.example.com
          cloud_provider: gce
          project: testproject
          zones: [us-test1-a]
          networking: cni
          kubernetes_version: v1.32.0
          image: ubuntu-os-cloud/ubuntu-2604-resolute-amd64-v20221018
    - name: plan
      kubeops.kops.cluster_update:
        cluster_name: minimal-gce.example.com
      check_mode: true
    - name: apply
      kubeops.kops.cluster_update:
        cluster_name: minimal-gce.example.com
    - name: again
      kubeops.kops.cluster_update:
        cluster_name: minimal-gce.example.com
    - name: terraform
      kubeops.kops.cluster_update:
        cluster_name: minimal-gce.example.com
        target: terraform
        out_dir: "{{ out }}"
"""


def test_cluster_update_module_on_gce(gce, playbook, tmp_path):
    """As the user runs it: the installed collection's modules, from another directory."""
    from tests.integration.conftest import task_results
    (tmp_path / "gce.yml").write_text(PLAYBOOK)
    code, run = playbook(tmp_path / "gce.yml", "-e", "store=file://%s/store" % tmp_path, "-e", "out=%s/tf" % tmp_path)
    assert code == 0, [t["hosts"]["localhost"].get("msg") for p in run["plays"] for t in p["tasks"]]
    plan = task_results(run, "plan")
    assert plan["changed"] and plan["summary"]["create"] == sum(MINIMAL_KINDS.values())
    assert task_results(run, "apply")["summary"]["create"] == sum(MINIMAL_KINDS.values())
    again = task_results(run, "again")
    assert again["changed"] is False and again["summary"]["unchanged"] == sum(MINIMAL_KINDS.values())
    text = (tmp_path / "tf" / "kubernetes.tf").read_text()
    assert 'provider "google"' in text and 'provider "aws"' not in text
    assert 'resource "google_compute_instance_group_manager" "a-' in text
    # kops writes three outputs for GCE, all the pipeline's (no GCE task writes one).
    assert [line.split(" = ")[0].strip() for line in text.split("locals {\n", 1)[1].split("\n}", 1)[0].splitlines()] \
        == ["cluster_name", "project", "region"]


def test_ip_alias_networking_reruns_unchanged(gce):
    """IP-alias networking: the subnetwork's pods and services ranges and the templates' alias range."""
    # Kindnet uses IP aliases on GCE as kops' GCP mode does (networking.gce is not yet accepted by the API layer).
    options = dict(MINIMAL, cluster_name="alias.example.com", networking="kindnet")
    service = _store(options)
    created = _apply(service, options["cluster_name"])
    subnet = gce.store["compute:projects/testproject/regions/us-test1/subnetworks"]["us-test1-alias-example-com"]
    ranges = sorted(r["rangeName"] for r in subnet["secondaryIpRanges"])
    assert ranges == ["pods-alias-example-com", "services-alias-example-com"]
    template = next(iter(gce.store["compute:projects/testproject/global/instanceTemplates"].values()))
    aliases = template["properties"]["networkInterfaces"][0]["aliasIpRanges"]
    assert aliases == [{"subnetworkRangeName": "pods-alias-example-com", "ipCidrRange": "/24"}]
    assert template["properties"]["canIpForward"] is False
    _forget_requests(gce)
    again = _apply(service, options["cluster_name"])
    assert _counts(again) == {runner.UNCHANGED: len(created)}, [
        (e.kind, e.name, e.changes) for e in again if e.action != runner.UNCHANGED]


def test_an_object_of_another_cluster_is_refused_by_name(gce):
    """An etcd disk under this cluster's name but labelled for another cluster fails the run, naming it."""
    service = _store(MINIMAL)
    gce.seed("projects/testproject/zones/us-test1-a/disks", {
        "name": "a-etcd-main-minimal-gce-example-com", "sizeGb": "20",
        "labels": {"k8s-io-cluster-name": "someone-else"}})
    with pytest.raises(runner.TaskFailed) as failed:
        _apply(service, MINIMAL["cluster_name"])
    assert "google_compute_disk/a-etcd-main-minimal-gce-example-com" in str(failed.value)
    assert "not labelled as cluster minimal-gce.example.com's" in str(failed.value)
    assert gce.store["compute:projects/testproject/zones/us-test1-a/disks"][
        "a-etcd-main-minimal-gce-example-com"]["labels"] == {"k8s-io-cluster-name": "someone-else"}


def test_cloudformation_is_refused_before_anything_is_written(tmp_path):
    service = _store(MINIMAL)
    before = sorted(service.store.list(""))
    with pytest.raises(updates.UpdateError, match="target=cloudformation: a GCE cluster applies directly or renders "
                                                  "as terraform"):
        updates.render_cloudformation(service, MINIMAL["cluster_name"], str(tmp_path), dry_run=False)
    assert sorted(service.store.list("")) == before and not list(tmp_path.iterdir())
