"""etcd_peers against moto's EC2: members are the instances their volumes are attached to, else their group's."""

from __future__ import annotations

import boto3

from ansible_collections.kubeops.kops.plugins.modules import etcd_peers

CLUSTER = "k8s.example.com"
CONFIG = {"ClusterName": CLUSTER, "kubeops": {"etcdClusters": [{"name": "main", "members": [
    {"name": "a", "instanceGroup": "control-plane-a"}, {"name": "b", "instanceGroup": "control-plane-b"},
    {"name": "c", "instanceGroup": "control-plane-c"}]}]}}


def _instance(ec2, group):
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    instance = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType="t3.medium",
                                 Placement={"AvailabilityZone": "us-east-1a"}, TagSpecifications=[
                                     {"ResourceType": "instance", "Tags": [
                                         {"Key": "KubernetesCluster", "Value": CLUSTER},
                                         {"Key": "kops.k8s.io/instancegroup", "Value": group}]}])["Instances"][0]
    return instance["InstanceId"], instance["PrivateIpAddress"]


def _volume(ec2, member):
    return ec2.create_volume(AvailabilityZone="us-east-1a", Size=20, TagSpecifications=[{
        "ResourceType": "volume", "Tags": [{"Key": "k8s.io/etcd/main", "Value": "%s/a,b,c" % member},
                                           {"Key": "kubernetes.io/cluster/%s" % CLUSTER, "Value": "owned"}]}])["VolumeId"]


def test_members_by_volume_then_by_group(run_module, aws):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    a_id, a_ip = _instance(ec2, "control-plane-a")
    _b1, b1_ip = _instance(ec2, "control-plane-b")
    b2_id, b2_ip = _instance(ec2, "control-plane-b")  # a replacement during a rolling update
    missing = run_module(etcd_peers, nodeup_config=CONFIG, region="us-east-1", wait=0)
    # b has two candidates and no volume attached: unknown; c has no instance at all.
    assert missing["failed"] and missing["missing"] == ["b", "c"] and missing["peers"] == {"a": a_ip}
    ec2.attach_volume(VolumeId=_volume(ec2, "b"), InstanceId=b2_id, Device="/dev/xvdu")
    ec2.attach_volume(VolumeId=_volume(ec2, "a"), InstanceId=a_id, Device="/dev/xvdu")
    _c_id, c_ip = _instance(ec2, "control-plane-c")
    found = run_module(etcd_peers, nodeup_config=CONFIG, region="us-east-1", wait=0)
    assert found["changed"] is False and found["peers"] == {"a": a_ip, "b": b2_ip, "c": c_ip}
    assert b1_ip != b2_ip


def test_no_etcd_no_calls(run_module, aws):
    assert run_module(etcd_peers, nodeup_config={"ClusterName": CLUSTER, "kubeops": {}})["peers"] == {}
