"""What the spec no longer asks for is deleted, only inside the cluster's own objects (moto's server):
security-group rules (kops' RemoveExtraRules), routes, route-table associations; check mode lists
each deletion and changes nothing; what belongs to another cluster or to nobody is never touched."""

from __future__ import annotations

import ipaddress

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import TaskFailed

from tests.integration.test_aws_update import ADMIN_KEY, _mutating, _service, _update

CLUSTER = "k8s.example.com"
OWNED = [{"Name": "tag:KubernetesCluster", "Values": [CLUSTER]}]


def _ec2():
    return boto3.client("ec2", region_name="us-east-1")


def _replace_spec(service, change):
    cluster, groups = service.read(CLUSTER)
    change(cluster["spec"])
    service.execute(service.plan_replace([cluster] + groups))


def _group(ec2, name):
    return ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": [name]}])["SecurityGroups"][0]


def _spare_cidrs(ec2, vpc_id):
    """Two /24s of the VPC that no subnet uses."""
    vpc = ipaddress.ip_network(ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"][0]["CidrBlock"])
    used = [ipaddress.ip_network(s["CidrBlock"]) for s in ec2.describe_subnets(
        Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]]
    return [str(c) for c in vpc.subnets(new_prefix=24) if not any(c.overlaps(u) for u in used)][:2]


def _ingress(ec2, group_id, port):
    rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [group_id]}])
    return sorted(r.get("CidrIpv4") or r.get("CidrIpv6") for r in rules["SecurityGroupRules"]
                  if not r["IsEgress"] and r.get("FromPort") == port and r.get("ToPort") == port)


def test_narrowing_ssh_access_revokes_the_old_rules_and_nothing_foreign(aws, tmp_path):
    ec2 = _ec2()
    service = _service("file://%s" % tmp_path)
    _update(service)
    nodes = _group(ec2, "nodes.%s" % CLUSTER)
    masters = _group(ec2, "masters.%s" % CLUSTER)
    assert _ingress(ec2, nodes["GroupId"], 22) == ["0.0.0.0/0", "::/0"]
    # Rules the cluster did not make: one out of kops' removal scope in its own group (a load balancer
    # service's node port), and port-22 rules in another cluster's group and in an untagged group.
    ec2.authorize_security_group_ingress(GroupId=nodes["GroupId"], IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 30080, "ToPort": 30080, "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    foreign = {}
    for name, tags in (("other", [{"Key": "KubernetesCluster", "Value": "other.example.com"},
                                  {"Key": "kubernetes.io/cluster/other.example.com", "Value": "owned"}]),
                       ("untagged", [])):
        spec = [{"ResourceType": "security-group", "Tags": tags}] if tags else []
        group_id = ec2.create_security_group(GroupName="nodes.%s" % name, Description=name, VpcId=nodes["VpcId"],
                                             TagSpecifications=spec)["GroupId"]
        ec2.authorize_security_group_ingress(GroupId=group_id, IpPermissions=[{
            "IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
        foreign[name] = group_id

    _replace_spec(service, lambda spec: spec.update(sshAccess=["10.1.2.0/24"]))
    dry, dry_plan, dry_calls = _update(service, dry_run=True)
    assert _mutating(dry_calls) == {}
    deletions = sorted(e.name for e in dry_plan if e.action == "delete")
    assert deletions == ["%s.%s:ingress tcp port 22 from %s" % (group, CLUSTER, cidr)
                         for group in ("masters", "nodes") for cidr in ("0.0.0.0/0", "::/0")]
    assert all(e.kind == "aws_security_group_rule" for e in dry_plan if e.action == "delete")
    assert _ingress(ec2, nodes["GroupId"], 22) == ["0.0.0.0/0", "::/0"]  # check mode changed nothing

    done, plan, calls = _update(service)
    assert (done["create"], done["delete"]) == (2, 4)
    assert _mutating(calls) == {"AuthorizeSecurityGroupIngress": 2, "RevokeSecurityGroupIngress": 4}
    for group in (nodes, masters):
        assert _ingress(ec2, group["GroupId"], 22) == ["10.1.2.0/24"]
    assert _ingress(ec2, nodes["GroupId"], 30080) == ["0.0.0.0/0"]
    for group_id in foreign.values():
        assert _ingress(ec2, group_id, 22) == ["0.0.0.0/0"]

    again, plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_removed_additional_route_and_stray_association_are_deleted(aws, tmp_path):
    ec2 = _ec2()
    tgw = ec2.create_transit_gateway(Description="peering")["TransitGateway"]["TransitGatewayId"]
    service = _service("file://%s" % tmp_path, topology="private")

    def add_route(spec):
        for subnet in spec["subnets"]:
            if subnet["type"] == "Private":
                subnet["additionalRoutes"] = [{"cidr": "192.168.0.0/16", "target": tgw}]

    _replace_spec(service, add_route)
    _update(service)
    tables = {tag_dict(t["Tags"])["Name"]: t for t in ec2.describe_route_tables(Filters=OWNED)["RouteTables"]}
    private = tables["private-us-east-1a.%s" % CLUSTER]
    public = tables[CLUSTER]
    assert [r["DestinationCidrBlock"] for r in private["Routes"] if r.get("TransitGatewayId") == tgw] == [
        "192.168.0.0/16"]
    vpc_id = private["VpcId"]
    # Objects in the cluster's VPC that are not the cluster's: an untagged table with a route to the
    # same gateway and a subnet of its own; and a subnet someone associated with the cluster's public table.
    spare = _spare_cidrs(ec2, vpc_id)
    stray_subnet = ec2.create_subnet(VpcId=vpc_id, CidrBlock=spare[0], AvailabilityZone="us-east-1a")[
        "Subnet"]["SubnetId"]
    stray_association = ec2.associate_route_table(RouteTableId=public["RouteTableId"], SubnetId=stray_subnet)[
        "AssociationId"]
    foreign_table = ec2.create_route_table(VpcId=vpc_id)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=foreign_table, DestinationCidrBlock="192.168.0.0/16", TransitGatewayId=tgw)
    foreign_subnet = ec2.create_subnet(VpcId=vpc_id, CidrBlock=spare[1], AvailabilityZone="us-east-1a")[
        "Subnet"]["SubnetId"]
    ec2.associate_route_table(RouteTableId=foreign_table, SubnetId=foreign_subnet)

    _replace_spec(service, lambda spec: [s.pop("additionalRoutes", None) for s in spec["subnets"]])
    dry, dry_plan, dry_calls = _update(service, dry_run=True)
    assert _mutating(dry_calls) == {}
    assert sorted((e.kind, e.name, e.id) for e in dry_plan if e.action == "delete") == [
        ("aws_route", "private-us-east-1a.%s:192.168.0.0/16" % CLUSTER, "%s-192.168.0.0/16" % private["RouteTableId"]),
        ("aws_route_table_association", "%s:%s" % (CLUSTER, stray_subnet), stray_association)]

    done, plan, calls = _update(service)
    assert _mutating(calls) == {"DeleteRoute": 1, "DisassociateRouteTable": 1}
    routes = ec2.describe_route_tables(RouteTableIds=[private["RouteTableId"], foreign_table])["RouteTables"]
    by_id = {t["RouteTableId"]: t for t in routes}
    assert not [r for r in by_id[private["RouteTableId"]]["Routes"] if r.get("TransitGatewayId")]
    assert [r["DestinationCidrBlock"] for r in by_id[foreign_table]["Routes"] if r.get("TransitGatewayId")] == [
        "192.168.0.0/16"]
    assert [a["SubnetId"] for a in by_id[foreign_table]["Associations"]] == [foreign_subnet]
    public_now = ec2.describe_route_tables(RouteTableIds=[public["RouteTableId"]])["RouteTables"][0]
    assert stray_subnet not in [a.get("SubnetId") for a in public_now["Associations"]]
    # The cluster's own default routes and the VPC's local route stay.
    kept = {r.get("DestinationCidrBlock") for r in by_id[private["RouteTableId"]]["Routes"]}
    assert kept >= {"172.20.0.0/16", "0.0.0.0/0"}
    assert len(by_id[private["RouteTableId"]]["Routes"]) == len(private["Routes"]) - 1

    again, plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_etcd_volume_kms_key_is_sent_and_a_changed_key_is_reported(aws, tmp_path):
    ec2 = _ec2()
    kms = boto3.client("kms", region_name="us-east-1")
    first, second = (kms.create_key(Description=which)["KeyMetadata"]["Arn"] for which in ("first", "second"))

    def use_key(key):
        def change(spec):
            for etcd in spec["etcdClusters"]:
                for member in etcd["etcdMembers"]:
                    member.update(encryptedVolume=True, kmsKeyId=key, volumeIops=4000, volumeThroughput=200)
        return change

    service = _service("file://%s" % tmp_path)
    _replace_spec(service, use_key(first))
    _update(service)
    volumes = ec2.describe_volumes(Filters=OWNED)["Volumes"]
    assert len(volumes) == 2
    assert {(v["KmsKeyId"], v["Encrypted"], v["Iops"], v["Throughput"]) for v in volumes} == {(first, True, 4000, 200)}
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}

    _replace_spec(service, use_key(second))
    dry, dry_plan, dry_calls = _update(service, dry_run=True)
    assert _mutating(dry_calls) == {}
    assert sorted((e.kind, e.changes) for e in dry_plan if e.action == "update") == [
        ("aws_ebs_volume", {"kms_key_id": (first, second)})] * 2
    with pytest.raises(TaskFailed) as failed:
        _update(service)
    assert len(failed.value.errors) == 2
    assert all("kms_key_id cannot be changed in place" in line for line in failed.value.errors)


def test_an_object_with_our_name_that_is_not_ours_is_refused(aws, tmp_path):
    ec2 = _ec2()
    service = _service("file://%s" % tmp_path)
    # A key pair of the name the cluster would import, made by someone else (no ownership tag).
    key_name = "kubernetes.%s-c4:a6:ed:9a:a8:89:b9:e2:c3:9c:d6:63:eb:9c:71:57" % CLUSTER
    ec2.import_key_pair(KeyName=key_name, PublicKeyMaterial=ADMIN_KEY.encode())
    with pytest.raises(TaskFailed) as failed:
        _update(service, ssh_public_key=ADMIN_KEY)
    assert [line for line in failed.value.errors if line.startswith("aws_key_pair/")] == [
        line for line in failed.value.errors if key_name in line and "not adopted" in line]
    ec2.delete_key_pair(KeyName=key_name)
    _update(service, ssh_public_key=ADMIN_KEY)

    # A subnet that lost its ownership tag (kubernetes.io/cluster/<name>=owned) is no longer the cluster's.
    subnet = ec2.describe_subnets(Filters=OWNED)["Subnets"][0]
    ec2.delete_tags(Resources=[subnet["SubnetId"]], Tags=[{"Key": "kubernetes.io/cluster/%s" % CLUSTER}])
    with pytest.raises(TaskFailed) as failed:
        _update(service, dry_run=True)
    assert any(line.startswith("aws_subnet/") and subnet["SubnetId"] in line and "not adopted" in line
               for line in failed.value.errors)
    assert len(ec2.describe_subnets(Filters=OWNED)["Subnets"]) == 1
