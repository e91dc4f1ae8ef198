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
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

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


# -- GCE: etcd-manager's GCE volume provider ---------------------------------------------------------
# kops labels a member's persistent disk (pkg/model/master_volumes.go addGCEVolume) with
# k8s-io-cluster-name=<cluster, dots as dashes>, k8s-io-role-master=master and
# k8s-io-etcd-<etcd cluster>=EncodeGCELabel("<member>/<member>"); etcd-manager reads the first token.
GCE_METADATA = "http://metadata.google.internal/computeMetadata/v1"
GCE_CLUSTER_LABEL = "k8s-io-cluster-name"
GCE_ROLE_LABEL = "k8s-io-role-master"
GCE_ETCD_LABEL_PREFIX = "k8s-io-etcd-"
GCE_DEVICE_PREFIX = "/dev/disk/by-id/google-"  # GCE names an attached disk's link by its device name


class GceVolumeError(NodeError):
    """The member's disk cannot be found or used; the message names the labels and the fix."""


def gce_instance_identity(timeout=2.0):
    """(instance name, zone, project id) from the GCE metadata server."""
    def read(path):
        return open_url(GCE_METADATA + path, timeout=timeout, use_proxy=False,
                        headers={"Metadata-Flavor": "Google"}).read().decode("utf-8").strip()
    return read("/instance/name"), read("/instance/zone").rsplit("/", 1)[-1], read("/project/project-id")


def decode_gce_label(value):
    """kops' DecodeGCELabel: "-2f" back to "/" (a URI escape with - for %)."""
    from urllib.parse import unquote
    return unquote((value or "").replace("-", "%"))


def gce_disk_labels(cluster_name):
    """The labels every etcd disk of the cluster carries (the member's own label is matched on its value)."""
    return {GCE_CLUSTER_LABEL: cluster_name.replace(".", "-"), GCE_ROLE_LABEL: "master"}


def find_gce_disk(cloud, cluster_name, etcd_cluster, member, zone):
    """The one disk in zone with the cluster's labels whose k8s-io-etcd-<etcd_cluster> label names member."""
    wanted = gce_disk_labels(cluster_name)
    etcd_label = GCE_ETCD_LABEL_PREFIX + etcd_cluster
    disks = cloud.list("compute", "projects/%s/zones/%s/disks" % (cloud.project, zone),
                       params={"filter": 'labels.%s = "%s"' % (GCE_CLUSTER_LABEL, wanted[GCE_CLUSTER_LABEL])})
    found = [d for d in disks if all((d.get("labels") or {}).get(k) == v for k, v in wanted.items())
             and decode_gce_label((d.get("labels") or {}).get(etcd_label, "")).split("/", 1)[0] == member]
    if len(found) != 1:
        raise GceVolumeError("%s disks in %s carry the labels %s and %s=<%s/...>; expected exactly one "
                             "(cluster_update creates it)" % (len(found) or "no", zone,
                                                              json.dumps(wanted, sort_keys=True), etcd_label, member))
    return found[0]


def gce_ensure_attached(cloud, cluster_name, etcd_cluster, member, instance, zone, dry_run=False):
    """(disk name, changed) with the member's disk attached to instance, as device name = the disk's name
    (so it appears as /dev/disk/by-id/google-<disk name>, etcd-manager's choice)."""
    disk = find_gce_disk(cloud, cluster_name, etcd_cluster, member, zone)
    users = [u.rsplit("/", 1)[-1] for u in disk.get("users") or []]
    if instance in users:
        return disk["name"], False
    if users:
        raise GceVolumeError("disk %s (etcd %s member %s) is attached to %s, not to this instance %s; detach it there "
                             "first (its member must not run twice)"
                             % (disk["name"], etcd_cluster, member, ", ".join(users), instance))
    if not dry_run:
        source = disk.get("selfLink") or "projects/%s/zones/%s/disks/%s" % (cloud.project, zone, disk["name"])
        cloud.call("compute", "POST", "projects/%s/zones/%s/instances/%s/attachDisk" % (cloud.project, zone, instance),
                   body={"source": source, "deviceName": disk["name"], "mode": "READ_WRITE", "type": "PERSISTENT",
                         "autoDelete": False})
    return disk["name"], True


def gce_device(disk_name):
    return GCE_DEVICE_PREFIX + disk_name
