"""An IPv6 cluster (kops create cluster --ipv6) applied directly on moto's server: egress-only gateway,
NAT64 and IPv6 default routes, IPv6-only and dual-stack subnets carved from the VPC's block (/64#N),
a dualstack API load balancer; then nothing changes."""

from __future__ import annotations

import ipaddress

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict

from tests.integration.test_aws_update import _mutating, _service, _update

OWNED = [{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}]


def test_ipv6_cluster_direct_then_nothing_changes(aws, tmp_path):
    service = _service("file://%s" % tmp_path, ipv6=True, networking="calico", zones=["us-east-1a", "us-east-1b"])
    # moto cannot launch an instance into an IPv6-only subnet (its generate_dns_from_ip fails on the missing IPv4
    # address, a 500 on CreateAutoScalingGroup), and its groups launch at once: the groups here stay empty.
    cluster, groups = service.read("k8s.example.com")
    for group in groups:
        group["spec"].update(minSize=0, maxSize=0)
    service.execute(service.plan_replace([cluster] + groups))
    dry, dry_plan, dry_calls = _update(service, dry_run=True)
    assert _mutating(dry_calls) == {}
    assert {e.kind for e in dry_plan if e.action == "create"} >= {"aws_egress_only_internet_gateway", "aws_subnet"}

    created, _plan, calls = _update(service)
    assert calls["CreateEgressOnlyInternetGateway"] == 1 and created["create"] > 20

    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.describe_vpcs(Filters=OWNED)["Vpcs"][0]
    vpc_block = ipaddress.ip_network(vpc["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"])
    gateways = ec2.describe_egress_only_internet_gateways()["EgressOnlyInternetGateways"]
    ours = [g for g in gateways if tag_dict(g.get("Tags")).get("KubernetesCluster") == "k8s.example.com"]
    assert len(ours) == 1 and ours[0]["Attachments"][0]["VpcId"] == vpc["VpcId"]
    eigw = ours[0]["EgressOnlyInternetGatewayId"]

    cluster_subnets = {s["name"]: s for s in service.read("k8s.example.com")[0]["spec"]["subnets"]}
    subnets = {tag_dict(s["Tags"])["Name"].split(".")[0]: s for s in ec2.describe_subnets(Filters=OWNED)["Subnets"]}
    assert set(subnets) == set(cluster_subnets)
    for name, subnet in subnets.items():
        block = subnet["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"]
        number = int(cluster_subnets[name]["ipv6CIDR"].split("#")[1], 16)
        # /64#N: the Nth /64 of the VPC's block.
        assert ipaddress.ip_network(block) == list(vpc_block.subnets(new_prefix=64))[number]
        assert bool(subnet.get("CidrBlock")) == bool(cluster_subnets[name].get("cidr"))
    private = [n for n, s in cluster_subnets.items() if s["type"] == "Private"]
    assert private and all(not subnets[n].get("CidrBlock") for n in private)  # IPv6-only

    for zone in ("us-east-1a", "us-east-1b"):
        table = ec2.describe_route_tables(Filters=OWNED + [
            {"Name": "tag:Name", "Values": ["private-%s.k8s.example.com" % zone]}])["RouteTables"][0]
        routes = {r.get("DestinationCidrBlock") or r.get("DestinationIpv6CidrBlock"): r for r in table["Routes"]}
        assert routes["::/0"].get("EgressOnlyInternetGatewayId") == eigw
        assert routes["64:ff9b::/96"].get("NatGatewayId") == routes["0.0.0.0/0"].get("NatGatewayId")
        assert routes["0.0.0.0/0"].get("NatGatewayId", "").startswith("nat-")

    balancers = boto3.client("elbv2", region_name="us-east-1").describe_load_balancers()["LoadBalancers"]
    assert [b["IpAddressType"] for b in balancers] == ["dualstack"]

    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"}, [(e.kind, e.name, e.changes) for e in _plan if e.action != "unchanged"]
    assert _mutating(calls) == {}
