"""etcd_volume against moto's EC2: attach the member's tagged volume once, never one in use elsewhere."""

from __future__ import annotations

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.modules import etcd_volume

TAGS = {"k8s.io/etcd/main": "a/a,b,c", "k8s.io/role/control-plane": "1",
        "kubernetes.io/cluster/k8s.example.com": "owned"}
ZONE = "us-east-1a"


@pytest.fixture
def ec2(aws):
    return boto3.client("ec2", region_name="us-east-1")


def _instance(ec2):
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    reservation = ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType="t3.medium",
                                    Placement={"AvailabilityZone": ZONE})
    return reservation["Instances"][0]["InstanceId"]


def _volume(ec2, tags=None, zone=ZONE):
    tags = TAGS if tags is None else tags
    return ec2.create_volume(AvailabilityZone=zone, Size=20, VolumeType="gp3", TagSpecifications=[
        {"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}])["VolumeId"]


def _attachments(ec2, volume_id):
    return [(a["InstanceId"], a["Device"]) for a in
            ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0].get("Attachments") or []]


def test_attaches_once(run_module, ec2):
    instance = _instance(ec2)
    wanted = _volume(ec2)
    _volume(ec2, dict(TAGS, **{"k8s.io/etcd/main": "b/a,b,c"}))  # another member's volume
    _volume(ec2, zone="us-east-1b")  # same tags, other zone: not this instance's
    args = dict(volume_tags=TAGS, instance_id=instance, zone=ZONE, region="us-east-1")
    check = run_module(etcd_volume, check_mode=True, **args)
    assert check["changed"] and check["volume_id"] == wanted and _attachments(ec2, wanted) == []
    first = run_module(etcd_volume, **args)
    assert first["changed"] and first["volume_id"] == wanted and first["device"] == "/dev/xvdu"
    assert _attachments(ec2, wanted) == [(instance, "/dev/xvdu")]
    again = run_module(etcd_volume, **args)
    assert again["changed"] is False and again["volume_id"] == wanted


def test_refuses_a_volume_in_use_elsewhere_and_names_missing_tags(run_module, ec2):
    mine, other = _instance(ec2), _instance(ec2)
    volume = _volume(ec2)
    ec2.attach_volume(VolumeId=volume, InstanceId=other, Device="/dev/xvdu")
    failed = run_module(etcd_volume, volume_tags=TAGS, instance_id=mine, zone=ZONE, region="us-east-1")
    assert failed["failed"] and other in failed["msg"] and "detach it there first" in failed["msg"]
    assert _attachments(ec2, volume) == [(other, "/dev/xvdu")]
    missing = run_module(etcd_volume, volume_tags=dict(TAGS, **{"k8s.io/etcd/main": "z/z"}), instance_id=mine,
                         zone=ZONE, region="us-east-1")
    assert missing["failed"] and "no EBS volumes in us-east-1a carry the tags" in missing["msg"]
