# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Find and attach a control-plane node's etcd EBS volume, as etcd-manager's AWS volume provider does.

The volume is the one in this instance's zone whose tags are the member's volume tags
(model/aws/volumes.py writes them: k8s.io/etcd/<cluster>=<member>/<all members>,
k8s.io/role/control-plane=1, kubernetes.io/cluster/<name>=owned).  Already attached
here: nothing to do.  Available: attach it.  Attached to another instance: refuse, so
two members never share one volume's data.
"""

from __future__ import annotations

import glob
import json
import os

from ansible.module_utils.urls import open_url
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsError

IMDS = "http://169.254.169.254"
DEFAULT_DEVICE = "/dev/xvdu"  # etcd-manager's first device name


def instance_identity(timeout=2.0):
    """(instance id, availability zone, region) from IMDSv2 (kops' launch templates require tokens)."""
    token = open_url(IMDS + "/latest/api/token", method="PUT", timeout=timeout, use_proxy=False,
                     headers={"X-aws-ec2-metadata-token-ttl-seconds": "300"}).read().decode("ascii")
    response = open_url(IMDS + "/latest/dynamic/instance-identity/document", timeout=timeout, use_proxy=False,
                        headers={"X-aws-ec2-metadata-token": token})
    document = json.loads(response.read().decode("utf-8"))
    return document["instanceId"], document["availabilityZone"], document["region"]


def find_volume(ec2, volume_tags, zone):
    """The one volume in zone carrying every tag; an error naming the tags when there is none or several."""
    filters = [{"Name": "tag:%s" % key, "Values": [value]} for key, value in sorted(volume_tags.items())]
    filters.append({"Name": "availability-zone", "Values": [zone]})
    volumes = []
    for page in ec2.get_paginator("describe_volumes").paginate(Filters=filters):
        volumes.extend(page.get("Volumes") or [])
    if len(volumes) != 1:
        raise AwsError("%s EBS volumes in %s carry the tags %s; expected exactly one (cluster_update creates it)"
                       % (len(volumes) or "no", zone, json.dumps(volume_tags, sort_keys=True)))
    return volumes[0]


def attachment(volume):
    attachments = [a for a in volume.get("Attachments") or [] if a.get("State") in ("attaching", "attached")]
    return attachments[0] if attachments else None


def local_device(volume_id, device_name):
    """Where the volume shows up on this machine: the NVMe by-id link on Nitro instances, else device_name."""
    nvme = glob.glob("/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_%s" % volume_id.replace("-", ""))
    if nvme:
        return os.path.realpath(nvme[0])
    return device_name


def ensure_attached(ec2, volume_tags, instance_id, zone, device_name=DEFAULT_DEVICE, dry_run=False, wait=True):
    """(volume id, changed) with the member's volume attached to instance_id."""
    volume = find_volume(ec2, volume_tags, zone)
    current = attachment(volume)
    if current and current["InstanceId"] == instance_id:
        return volume["VolumeId"], False
    if current:
        raise AwsError("EBS volume %s (tags %s) is attached to %s, not to this instance %s; detach it there first "
                       "(its member must not run twice)"
                       % (volume["VolumeId"], json.dumps(volume_tags, sort_keys=True), current["InstanceId"],
                          instance_id))
    if not dry_run:
        ec2.attach_volume(VolumeId=volume["VolumeId"], InstanceId=instance_id, Device=device_name)
        if wait:
            ec2.get_waiter("volume_in_use").wait(VolumeIds=[volume["VolumeId"]],
                                                 WaiterConfig={"Delay": 2, "MaxAttempts": 60})
    return volume["VolumeId"], True
