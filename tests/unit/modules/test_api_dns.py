"""api_dns against moto: api.internal follows the running control-plane instances, idempotently."""

from __future__ import annotations

import boto3

from ansible_collections.kubeops.kops.plugins.modules import api_dns

CLUSTER = "k8s.example.com"


def _instances(ec2, count, role_tag="k8s.io/role/control-plane", cluster=CLUSTER):
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    reservation = ec2.run_instances(ImageId=image, MinCount=count, MaxCount=count, InstanceType="t3.medium",
                                    TagSpecifications=[{"ResourceType": "instance", "Tags": [
                                        {"Key": "KubernetesCluster", "Value": cluster},
                                        {"Key": role_tag, "Value": "1"}]}])
    return reservation["Instances"]


def _record(route53, zone, name="api.internal.%s." % CLUSTER):
    records = route53.list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
    return sorted(r["Value"] for s in records if s["Name"] == name and s["Type"] == "A"
                  for r in s["ResourceRecords"])


def test_points_api_internal_at_the_control_plane(run_module, aws):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com", CallerReference="t1")["HostedZone"]["Id"].split("/")[-1]
    control = _instances(ec2, 3)
    _instances(ec2, 2, role_tag="k8s.io/role/node")  # workers are not API servers
    _instances(ec2, 1, cluster="other.example.com")  # another cluster's control plane
    expected = sorted(i["PrivateIpAddress"] for i in control)
    args = dict(cluster_name=CLUSTER, dns_zone="example.com", region="us-east-1")
    check = run_module(api_dns, check_mode=True, diff=True, **args)
    assert check["changed"] and check["addresses"] == expected and _record(route53, zone) == []
    first = run_module(api_dns, **args)
    assert first["changed"] and first["zone_id"] == zone and _record(route53, zone) == expected
    assert run_module(api_dns, **args)["changed"] is False
    # A control-plane instance goes away: the record follows.
    ec2.terminate_instances(InstanceIds=[control[0]["InstanceId"]])
    moved = run_module(api_dns, **dict(args, dns_zone=zone))
    assert moved["changed"] and _record(route53, zone) == sorted(set(expected) - {control[0]["PrivateIpAddress"]})


def test_no_zone_or_no_control_plane_is_a_clear_error(run_module, aws):
    missing = run_module(api_dns, cluster_name=CLUSTER, dns_zone="nowhere.example", region="us-east-1")
    assert missing["failed"] and "no hosted zones are named nowhere.example." in missing["msg"]
    boto3.client("route53", region_name="us-east-1").create_hosted_zone(Name="example.com", CallerReference="t2")
    empty = run_module(api_dns, cluster_name=CLUSTER, dns_zone="example.com", region="us-east-1")
    assert empty["failed"] and "no running control-plane instance" in empty["msg"]


def test_the_bootstrap_services_name_beside_api_internal(run_module, aws):
    """roles/protokube keeps kops-controller.internal.<cluster> (where workers ask the bootstrap service for their
    certificates) with the same module, record_name given, and leaves api.internal to its own task."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com", CallerReference="t3")["HostedZone"]["Id"].split("/")[-1]
    control = _instances(ec2, 1)
    name = "kops-controller.internal.%s" % CLUSTER
    args = dict(cluster_name=CLUSTER, dns_zone="example.com", region="us-east-1", record_name=name)
    assert run_module(api_dns, **args)["changed"]
    assert _record(route53, zone, name + ".") == [control[0]["PrivateIpAddress"]] and _record(route53, zone) == []
    assert run_module(api_dns, **args)["changed"] is False


def test_api_public_name_follows_the_public_addresses_without_a_load_balancer(run_module, aws):
    """kops' dns-controller keeps api.<cluster> at the control plane's public addresses when the cluster has no API
    load balancer; roles/protokube asks for that with address_type public."""
    ec2 = boto3.client("ec2", region_name="us-east-1")
    route53 = boto3.client("route53", region_name="us-east-1")
    zone = route53.create_hosted_zone(Name="example.com", CallerReference="t4")["HostedZone"]["Id"].split("/")[-1]
    control = _instances(ec2, 2)
    public = sorted(i["PublicIpAddress"] for i in ec2.describe_instances(
        InstanceIds=[c["InstanceId"] for c in control])["Reservations"][0]["Instances"] if i.get("PublicIpAddress"))
    assert len(public) == 2 and not set(public) & {c["PrivateIpAddress"] for c in control}
    name = "api.%s" % CLUSTER
    args = dict(cluster_name=CLUSTER, dns_zone="example.com", region="us-east-1", record_name=name,
                address_type="public")
    first = run_module(api_dns, **args)
    assert first["changed"] and first["addresses"] == public and _record(route53, zone, name + ".") == public
    assert run_module(api_dns, **args)["changed"] is False
    assert _record(route53, zone) == []  # api.internal is its own task's
