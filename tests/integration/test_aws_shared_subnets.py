"""Subnets the user brought (spec.subnets[].id) on moto's server: referred to, tagged as kops tags shared
subnets, never created, routed or deleted; deleting the cluster removes only the cluster's tag.

kops (pkg/model/awsmodel/network.go): a subnet with an id is a shared Subnet task; no route table association,
no NAT and no private route table for it; no public route table when every subnet is shared; no internet
gateway when every subnet has egress External."""

from __future__ import annotations

import collections

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion, updates
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts

from tests.integration.test_aws_update import ADMIN_KEY, MOTO_AMI, READ_ONLY, CountingCloud

NAME = "k8s.example.com"
OWNERSHIP = "kubernetes.io/cluster/" + NAME


def _tags(items):
    return {t["Key"]: t["Value"] for t in items or []}


@pytest.fixture
def existing_network(aws):
    """The user's VPC (with its internet gateway) and two subnets of their own, tagged by them."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
    gateway = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=vpc)
    subnets = {}
    for zone, cidr in (("us-east-1a", "10.1.32.0/19"), ("us-east-1b", "10.1.64.0/19")):
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone, TagSpecifications=[{
            "ResourceType": "subnet", "Tags": [{"Key": "Name", "Value": "team-" + zone}, {"Key": "team", "Value": "x"}]}])
        subnets[subnet["Subnet"]["SubnetId"]] = {"cidr": cidr, "zone": zone, "vpc": vpc}
    return ec2, vpc, subnets


def _update(service, calls=None):
    def factory(name, region):
        cloud = CountingCloud(name, region)
        cloud.calls = calls if calls is not None else collections.Counter()
        return cloud
    plan, _completed, _changed = updates.apply_direct(service, NAME, False, factory, ssh_public_key=ADMIN_KEY)
    return plan


def test_existing_subnets_are_used_tagged_and_left_on_delete(existing_network, tmp_path):
    ec2, vpc, subnets = existing_network
    facts = cloudfacts.StaticCloudFacts({"vpcs": {vpc: "10.1.0.0/16"}, "subnets": subnets})
    service = clusters.ClusterService("file://%s" % tmp_path, facts=facts)
    service.execute(service.plan_create({
        "cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
        "zones": ["us-east-1a", "us-east-1b"], "network_id": vpc, "subnet_ids": sorted(subnets), "image": MOTO_AMI}))
    plan = _update(service)
    assert not [e for e in plan if e.kind == "aws_subnet" and e.action == "create"]

    in_vpc = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    assert sorted(s["SubnetId"] for s in in_vpc) == sorted(subnets)  # 0 subnets created
    for subnet in in_vpc:
        tags = _tags(subnet.get("Tags"))
        # kops' shared-subnet tags added; the user's own (their Name included) kept
        assert tags[OWNERSHIP] == "shared" and tags["SubnetType"] == "Public"
        assert tags["kubernetes.io/role/elb"] == "1" and tags["team"] == "x"
        assert tags["Name"] == "team-" + subnet["AvailabilityZone"] and "KubernetesCluster" not in tags
    # Nothing routed by the cluster: every subnet is shared, so no public route table and no association.
    ours = ec2.describe_route_tables(Filters=[{"Name": "tag:KubernetesCluster", "Values": [NAME]}])["RouteTables"]
    assert ours == []
    # The cluster's objects sit in them.
    groups = boto3.client("autoscaling", region_name="us-east-1").describe_auto_scaling_groups()["AutoScalingGroups"]
    mine = [g for g in groups if _tags(g["Tags"]).get("KubernetesCluster") == NAME]
    assert mine and all(set(g["VPCZoneIdentifier"].split(",")) <= set(subnets) for g in mine)
    security_groups = ec2.describe_security_groups(Filters=[{"Name": "tag:KubernetesCluster", "Values": [NAME]}])
    assert {g["VpcId"] for g in security_groups["SecurityGroups"]} == {vpc}

    calls = collections.Counter()
    again = _update(service, calls)
    assert {e.action for e in again} == {"unchanged"}
    assert {op for op in calls if not op.startswith(READ_ONLY)} == set()

    outcome = deletion.delete_cluster(service, NAME, yes=True, interval=0)
    untagged = sorted(o["id"] for o in outcome.objects if o["kind"] == "subnet")
    assert untagged == sorted(subnets) and all(o["shared"] for o in outcome.objects if o["kind"] == "subnet")
    left = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    assert sorted(s["SubnetId"] for s in left) == sorted(subnets)
    for subnet in left:
        tags = _tags(subnet.get("Tags"))
        assert OWNERSHIP not in tags and tags["team"] == "x" and tags["SubnetType"] == "Public"
    assert ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]


def test_a_missing_subnet_is_named(existing_network, tmp_path):
    _ec2, vpc, subnets = existing_network
    facts = cloudfacts.StaticCloudFacts({"vpcs": {vpc: "10.1.0.0/16"}, "subnets": dict(
        subnets, **{"subnet-0000000000000dead": {"cidr": "10.1.96.0/19", "zone": "us-east-1c", "vpc": vpc}})})
    service = clusters.ClusterService("file://%s" % tmp_path, facts=facts)
    service.execute(service.plan_create({
        "cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
        "zones": ["us-east-1c"], "network_id": vpc, "subnet_ids": ["subnet-0000000000000dead"], "image": MOTO_AMI}))
    with pytest.raises(Exception) as raised:
        _update(service)
    assert "subnet-0000000000000dead not found" in str(raised.value)
