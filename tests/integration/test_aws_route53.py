"""The bastion and the Route53 records against moto's server (started by tests/conftest.py)."""

from __future__ import annotations

import collections

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import resource_name_32

from tests.integration.test_aws_update import CountingCloud

CLUSTER = "k8s.example.com"
MOTO_AMI = "ami-1e749f67"
READ_ONLY = ("Describe", "List", "Get")


def _service(store, dns_zone):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({
        "cluster_name": CLUSTER, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
        "zones": ["us-east-1a"], "image": MOTO_AMI, "topology": "private", "bastion": True,
        "api_load_balancer_type": "public", "dns_zone": dns_zone}))
    return service


def _update(service, dry_run=False):
    calls = collections.Counter()

    def factory(name, region):
        cloud = CountingCloud(name, region)
        cloud.calls = calls
        return cloud

    plan, _completed, _changed = updates.apply_direct(service, CLUSTER, dry_run, factory)
    return plan, calls


def test_bastion_and_api_records_converge(aws, tmp_path):
    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com.", CallerReference="kubeops-test")["HostedZone"]["Id"]
    # The zone by name: looked up with ListHostedZones.
    service = _service("file://%s" % tmp_path, "example.com")

    plan, _calls = _update(service)
    created = {(e.kind, e.name) for e in plan if e.action == "create"}
    assert ("aws_route53_record", "api.%s" % CLUSTER) in created
    assert ("aws_lb", "bastion.%s" % CLUSTER) in created

    ec2 = boto3.client("ec2", region_name="us-east-1")
    groups = {g["GroupName"]: g for g in ec2.describe_security_groups()["SecurityGroups"]}
    assert {"bastion.%s" % CLUSTER, "bastion-elb.%s" % CLUSTER} <= set(groups)
    assert tag_dict(groups["bastion.%s" % CLUSTER]["Tags"])["KubernetesCluster"] == CLUSTER
    elb_rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [
        groups["bastion-elb.%s" % CLUSTER]["GroupId"]]}])["SecurityGroupRules"]
    assert any(r.get("FromPort") == 22 and r.get("CidrIpv4") == "0.0.0.0/0" for r in elb_rules)

    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    balancers = {b["LoadBalancerName"]: b for b in elbv2.describe_load_balancers()["LoadBalancers"]}
    bastion = balancers[resource_name_32(CLUSTER, "bastion")]
    api = balancers[resource_name_32(CLUSTER, "api")]
    listeners = elbv2.describe_listeners(LoadBalancerArn=bastion["LoadBalancerArn"])["Listeners"]
    assert [(listener["Port"], listener["Protocol"]) for listener in listeners] == [(22, "TCP")]

    records = {(r["Name"], r["Type"]): r for r in route53.list_resource_record_sets(HostedZoneId=zone)[
        "ResourceRecordSets"]}
    for record_type in ("A", "AAAA"):
        alias = records[("api.%s." % CLUSTER, record_type)]["AliasTarget"]
        assert alias["DNSName"].rstrip(".").lower() == api["DNSName"].lower()
        assert alias["HostedZoneId"] == api["CanonicalHostedZoneId"]

    # Nothing to do the second time: one record listing for the zone, no change.
    plan, calls = _update(service)
    assert {e.action for e in plan if e.kind not in ("aws_ami",)} == {"unchanged"}, [
        (e.kind, e.name, e.changes) for e in plan if e.action != "unchanged"]
    assert calls["ListResourceRecordSets"] == 1 and calls["ListHostedZones"] == 1
    assert "ChangeResourceRecordSets" not in calls


def test_a_moved_record_is_upserted_back(aws, tmp_path):
    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com.", CallerReference="kubeops-test-2")["HostedZone"]["Id"]
    # The zone by id, as kops' completion writes it (without /hostedzone/).
    service = _service("file://%s" % tmp_path, zone.rsplit("/", 1)[-1])
    _update(service)
    route53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{
        "Action": "UPSERT", "ResourceRecordSet": {"Name": "api.%s" % CLUSTER, "Type": "A", "AliasTarget": {
            "DNSName": "elsewhere.example.org", "HostedZoneId": "Z0000000000", "EvaluateTargetHealth": False}}}]})
    dry, dry_calls = _update(service, dry_run=True)
    changed = [e for e in dry if e.action == "update"]
    assert [(e.kind, e.name) for e in changed] == [("aws_route53_record", "api.%s" % CLUSTER)]
    assert "ChangeResourceRecordSets" not in dry_calls
    plan, calls = _update(service)
    assert calls["ChangeResourceRecordSets"] == 1
    _plan, calls = _update(service)
    assert "ChangeResourceRecordSets" not in calls
