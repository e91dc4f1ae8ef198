"""Requests of `cluster_delete` for the 22-group cluster, ours against kops' (run by hand, not in the test suite).

    .venv/bin/python bench/delete_requests.py [--groups 22]

Makes bench/aws_update.py's 22-group cluster (3 zones, 3 control-plane groups, the rest node groups) on an s3://
store in moto (tests/servers.MotoServer), applies it, then deletes it with deletion.delete_cluster (yes=True,
interval 0, as cluster_delete does) and counts every request it sends: the cloud's by operation (botocore's
before-call, and before-send for HTTP requests, so retries show) and the store's S3 requests by operation.

kops' figure for the same objects is counted from kops' source (pkg/resources/aws, pkg/resources/ops,
upup/pkg/fi/cloudup/awsup, pkg/commands/delete_cluster.go and the vfs S3 path): see kops_requests() for each
term and where it comes from.  It is what kops sends when every delete succeeds the first time (its best case).
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO), str(REPO / "bench")]

import boto3  # noqa: E402

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, deletion, updates  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud  # noqa: E402
from aws_update import make_cluster  # noqa: E402
from tests import servers  # noqa: E402

READ_PREFIXES = ("Describe", "List", "Get")
BUCKET = "kops-bench-delete"


class CountingCloud(AwsCloud):
    """AwsCloud counting each API call by operation (before-call) and each HTTP request (before-send)."""

    calls = None
    sent = None

    def client(self, service):
        return self._counted(AwsCloud.client(self, service))

    def single_attempt_client(self, service):
        return self._counted(AwsCloud.single_attempt_client(self, service))

    def _counted(self, api):
        if not getattr(api, "_bench_counted", False):
            api.meta.events.register("before-call.*.*", lambda model, **_: self.calls.update([model.name]))
            api.meta.events.register("before-send.*.*", lambda **_: self.sent.update(["http"]))
            api._bench_counted = True
        return api


def _owned(tags, name):
    tags = {t["Key"]: t["Value"] for t in tags or []}
    return tags.get("KubernetesCluster") == name or ("kubernetes.io/cluster/%s" % name) in tags


def facts(c, name):
    """What kops' delete sends requests for, read with plain boto3 (c: {service: client}): {fact: count}."""
    ec2, iam = c["ec2"], c["iam"]
    tagged = [{"Name": "tag:KubernetesCluster", "Values": [name]}]
    running = [i for r in ec2.describe_instances(Filters=tagged + [
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"] for i in r["Instances"]]
    groups = ec2.describe_security_groups(Filters=tagged)["SecurityGroups"]
    roles = [r["RoleName"] for r in iam.list_roles()["Roles"] if _owned(iam.get_role(RoleName=r["RoleName"])["Role"].get(
        "Tags"), name)]
    profiles = [p for p in iam.list_instance_profiles()["InstanceProfiles"] if _owned(p.get("Tags"), name)
                or p["InstanceProfileName"].endswith(name)]
    rules = [r["Name"] for r in c["events"].list_rules()["Rules"]]
    nat = [n for n in ec2.describe_nat_gateways()["NatGateways"] if n["State"] not in ("deleted", "deleting")]
    zones = [z for z in c["route53"].list_hosted_zones()["HostedZones"]
             if name.endswith("." + z["Name"].rstrip("."))]
    records = sum(1 for z in zones for r in c["route53"].list_resource_record_sets(HostedZoneId=z["Id"])[
        "ResourceRecordSets"] if r["Name"].rstrip(".").endswith(name))
    return {
        "vpc": len(ec2.describe_vpcs(Filters=tagged)["Vpcs"]),
        "subnet": len(ec2.describe_subnets(Filters=tagged)["Subnets"]),
        "security_group": len(groups),
        "security_group_with_ingress": sum(1 for g in groups if g.get("IpPermissions")),
        "route_table": len(ec2.describe_route_tables(Filters=tagged)["RouteTables"]),
        "internet_gateway": len(ec2.describe_internet_gateways(Filters=tagged)["InternetGateways"]),
        "internet_gateway_attachment": sum(len(g.get("Attachments") or []) for g in ec2.describe_internet_gateways(
            Filters=tagged)["InternetGateways"]),
        "dhcp_options": len(ec2.describe_dhcp_options(Filters=tagged)["DhcpOptions"]),
        "nat_gateway": len(nat),
        "nat_gateway_address": sum(len(n.get("NatGatewayAddresses") or []) for n in nat),
        "elastic_ip": len(ec2.describe_addresses(Filters=tagged)["Addresses"]),
        "volume": len([v for v in ec2.describe_volumes(Filters=tagged)["Volumes"]
                       if not any(a.get("DeleteOnTermination") for a in v.get("Attachments") or [])]),
        "instance": len(running),
        "instance_subnet": len({i.get("SubnetId") for i in running}),
        "launch_template": len(ec2.describe_launch_templates(MaxResults=200, Filters=[  # kops' filter
            {"Name": "tag:kubernetes.io/cluster/" + name, "Values": ["owned"]}])["LaunchTemplates"]),
        "key_pair": len([k for k in ec2.describe_key_pairs()["KeyPairs"] if k["KeyName"].startswith("kubernetes." + name)]),
        "autoscaling_group": len([g for g in c["autoscaling"].describe_auto_scaling_groups()["AutoScalingGroups"]
                                  if _owned(g.get("Tags"), name)]),
        "load_balancer": len(c["elbv2"].describe_load_balancers()["LoadBalancers"]),
        "target_group": len(c["elbv2"].describe_target_groups()["TargetGroups"]),
        "iam_role": len(roles),
        "iam_role_inline_policy": sum(len(iam.list_role_policies(RoleName=r)["PolicyNames"]) for r in roles),
        "iam_role_attached_policy": sum(len(iam.list_attached_role_policies(RoleName=r)["AttachedPolicies"])
                                        for r in roles),
        "iam_instance_profile": len(profiles),
        "iam_instance_profile_role": sum(len(p["Roles"]) for p in profiles),
        "sqs_queue": len(c["sqs"].list_queues(QueueNamePrefix=name.replace(".", "-")).get("QueueUrls", [])),
        "event_rule": len(rules),
        "event_rule_with_targets": sum(1 for r in rules if c["events"].list_targets_by_rule(Rule=r)["Targets"]),
        "hosted_zone": len(zones),
        "dns_record": records,
    }


def _pages(count, size):
    return max(1, -(-count // size))


def kops_requests(n, store_objects):
    """({request: count} listing, {request: count} deleting, {request: count} store) of kops' `delete cluster --yes`
    for these objects, when every delete succeeds at its first try (kops' best case: on AWS, a security group or
    subnet still held by a terminating instance or a deleting NAT gateway is tried again after --interval, 10 s).

    Read from kops 268927e: cmd/kops/delete_cluster.go (GetCluster, BuildCloud, ListResources once,
    ops.DeleteResources, clientset.DeleteCluster), upup/pkg/fi/cloudup/utils.go BuildCloud (ValidateZones:
    DescribeAvailabilityZones), pkg/resources/aws/*.go (a lister per kind, a deleter per object),
    upup/pkg/fi/cloudup/awsup (FindAutoscalingGroups; ELBv2 listings at 20 a page, one DescribeTags a page),
    pkg/client/simple/vfsclientset DeleteAllClusterState and util/pkg/vfs/s3fs.go (ReadTree, RemoveAll)."""
    listing = {
        "DescribeAvailabilityZones (BuildCloud's ValidateZones)": 1,
        "DescribeVpcs (two tag filter sets)": 2,
        "autoscaling DescribeTags (FindAutoscalingGroups)": _pages(n["autoscaling_group"], 50),
        "DescribeAutoScalingGroups (50 names a call)": -(-n["autoscaling_group"] // 50),
        "DescribeInstances": 1, "DescribeKeyPairs": 1, "DescribeSecurityGroups (two filter sets)": 2,
        "DescribeVolumes": 1, "DescribeDhcpOptions": 1, "DescribeInternetGateways": 1,
        "DescribeEgressOnlyInternetGateways": 1, "DescribeRouteTables (two filter sets)": 2, "DescribeSubnets": 1,
        "DescribeNetworkInterfaces (two filter sets)": 2, "elb DescribeLoadBalancers": 1,
        "elbv2 DescribeLoadBalancers (20 a page)": _pages(n["load_balancer"], 20),
        "elbv2 DescribeTags (load balancers, a page)": -(-n["load_balancer"] // 20),
        "elbv2 DescribeTargetGroups (20 a page)": _pages(n["target_group"], 20),
        "elbv2 DescribeTags (target groups, a page)": -(-n["target_group"] // 20),
        "ListInstanceProfiles": 1, "GetInstanceProfile (each profile)": n["iam_instance_profile"],
        "ListRoles": 1, "GetRole (each role)": n["iam_role"], "ListOpenIDConnectProviders": 1,
        "ListQueues": 1, "ListRules": 1,
        "ListHostedZones (route53 lister)": 1, "ListResourceRecordSets (each zone)": n["hosted_zone"],
        "DescribeInternetGateways (untagged gateways of the VPC)": 1,
        "DescribeLaunchTemplates (FindAutoScalingLaunchTemplates)": 1,
        "DescribeRouteTables (addUntaggedRouteTables)": 1,
        "DescribeRouteTables (FindNatGateways)": 1 if n["route_table"] else 0,
        "DescribeNatGateways (each NAT gateway)": n["nat_gateway"],
        "DescribeAddresses (each NAT gateway address)": n["nat_gateway_address"],
    }
    deleting = {
        "DeleteAutoScalingGroup (ForceDelete)": n["autoscaling_group"],
        "DeleteLaunchTemplate": n["launch_template"],
        "TerminateInstances (one per subnet)": n["instance_subnet"],
        "DeleteKeyPair": n["key_pair"],
        "DescribeSecurityGroups + DescribeSecurityGroupRules + DeleteSecurityGroup": 3 * n["security_group"],
        "RevokeSecurityGroupIngress (groups with ingress rules)": n["security_group_with_ingress"],
        "DeleteVolume": n["volume"],
        "DeleteLoadBalancer": n["load_balancer"], "DeleteTargetGroup": n["target_group"],
        "DeleteNatGateway": n["nat_gateway"], "ReleaseAddress": n["elastic_ip"],
        "DeleteSubnet": n["subnet"], "DeleteRouteTable": n["route_table"],
        "DescribeInternetGateways + DeleteInternetGateway": 2 * n["internet_gateway"],
        "DetachInternetGateway": n["internet_gateway_attachment"],
        "DeleteDhcpOptions": n["dhcp_options"], "DeleteVpc": n["vpc"],
        "RemoveRoleFromInstanceProfile": n["iam_instance_profile_role"],
        "DeleteInstanceProfile": n["iam_instance_profile"],
        "ListRolePolicies + ListAttachedRolePolicies + DeleteRole": 3 * n["iam_role"],
        "DeleteRolePolicy": n["iam_role_inline_policy"], "DetachRolePolicy": n["iam_role_attached_policy"],
        "DeleteQueue": n["sqs_queue"],
        "ListTargetsByRule + DeleteRule": 2 * n["event_rule"], "RemoveTargets": n["event_rule_with_targets"],
        "ChangeResourceRecordSets (each zone with records)": n["hosted_zone"] if n["dns_record"] else 0,
    }
    store = {
        "GetBucketLocation": 1, "GetObject (config)": 1,
        "ListObjectsV2 (DeleteAllClusterState's ReadTree, then RemoveAll's)": 2 * _pages(store_objects, 1000),
        "DeleteObjects (1,000 keys a call)": -(-store_objects // 1000),
    }
    return listing, deleting, store


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=22)
    args = parser.parse_args()
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    name = "bench%d.example.com" % args.groups
    try:
        with tempfile.TemporaryDirectory():
            clients = {kind: boto3.client(kind, region_name="us-east-1")
                       for kind in ("ec2", "elbv2", "autoscaling", "iam", "sqs", "events", "s3", "route53")}
            clients["s3"].create_bucket(Bucket=BUCKET)
            store = "s3://%s/state" % BUCKET
            service = make_cluster(store, name, args.groups)
            updates.apply_direct(service, name, False, AwsCloud)  # the create
            found = facts(clients, name)
            service = clusters.ClusterService(store)
            store_objects = len(service.store.list(name + "/"))
            store_calls = collections.Counter()
            service.store.client.meta.events.register("before-call.s3.*", lambda model, **_: store_calls.update(
                [model.name]))
            calls, sent = collections.Counter(), collections.Counter()

            def factory(cluster, region):
                cloud = CountingCloud(cluster, region)
                cloud.calls, cloud.sent = calls, sent
                return cloud

            deletion.delete_cluster(service, name, yes=True, interval=0, cloud_factory=factory)
            listing, deleting, kops_store = kops_requests(found, store_objects)
            ours_cloud, ours_store = sum(calls.values()), sum(store_calls.values())
            kops_cloud = sum(listing.values()) + sum(deleting.values())
            print("cluster %s: %d groups; objects %s; %d store objects" % (name, args.groups, dict(found),
                                                                           store_objects))
            print("ours: cloud %d calls (%d HTTP requests, %d mutating), store %d requests %s"
                  % (ours_cloud, sum(sent.values()), sum(v for k, v in calls.items() if not k.startswith(READ_PREFIXES)),
                     ours_store, dict(store_calls)))
            print("ours by operation: %s" % dict(sorted(calls.items())))
            print("kops (best case, from its source): cloud %d (listing %d, deleting %d), store %d %s"
                  % (kops_cloud, sum(listing.values()), sum(deleting.values()), sum(kops_store.values()), kops_store))
            print("kops listing: %s" % {k: v for k, v in listing.items() if v})
            print("kops deleting: %s" % {k: v for k, v in deleting.items() if v})
            print("total: ours %d, kops %d" % (ours_cloud + ours_store, kops_cloud + sum(kops_store.values())))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
