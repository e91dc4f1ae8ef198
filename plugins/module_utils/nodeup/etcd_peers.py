# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Where each etcd member runs, found in EC2 (what etcd-manager learns from its volumes and peers).

A member is the instance its EBS volume is attached to (model/aws/volumes.py tags it
k8s.io/etcd/<cluster>=<member>/<members>); before that volume is attached, the one
running instance of the member's instance group (kops.k8s.io/instancegroup).  Two
describe calls, whatever the number of members.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate


def member_addresses(ec2, cluster_name, etcd_cluster):
    """{member name: private IPv4} for one etcd cluster of the nodeup config (members without one are left out)."""
    tag = "k8s.io/etcd/%s" % etcd_cluster["name"]
    volumes = paginate(ec2, "describe_volumes", "Volumes", Filters=[
        {"Name": "tag-key", "Values": [tag]},
        {"Name": "tag:kubernetes.io/cluster/%s" % cluster_name, "Values": ["owned"]}])
    reservations = paginate(ec2, "describe_instances", "Reservations", Filters=[
        {"Name": "tag:KubernetesCluster", "Values": [cluster_name]},
        {"Name": "instance-state-name", "Values": ["running"]}])
    instances = {i["InstanceId"]: i for r in reservations for i in r["Instances"] if i.get("PrivateIpAddress")}
    attached = {}
    for volume in volumes:
        member = next((t["Value"].split("/", 1)[0] for t in volume.get("Tags") or [] if t["Key"] == tag), None)
        for attachment in volume.get("Attachments") or []:
            if attachment.get("State") in ("attaching", "attached") and attachment["InstanceId"] in instances:
                attached[member] = instances[attachment["InstanceId"]]["PrivateIpAddress"]
    by_group = {}
    for instance in instances.values():
        group = next((t["Value"] for t in instance.get("Tags") or [] if t["Key"] == "kops.k8s.io/instancegroup"), None)
        by_group.setdefault(group, []).append(instance["PrivateIpAddress"])
    addresses = {}
    for member in etcd_cluster.get("members") or []:
        if member["name"] in attached:
            addresses[member["name"]] = attached[member["name"]]
        elif len(by_group.get(member["instanceGroup"], [])) == 1:
            addresses[member["name"]] = by_group[member["instanceGroup"]][0]
    return addresses


# -- GCE ----------------------------------------------------------------------------------------------
# kops labels (pkg/model/master_volumes.go, gcemodel): disks k8s-io-etcd-<cluster>=EncodeGCELabel("<member>/..."),
# instances k8s-io-instance-group=<instance group>, both k8s-io-cluster-name=<cluster with dots as dashes>.
GCE_CLUSTER_LABEL = "k8s-io-cluster-name"
GCE_INSTANCE_GROUP_LABEL = "k8s-io-instance-group"


def gce_member_addresses(cloud, etcd_cluster):
    """{member name: internal IPv4} for one etcd cluster of the nodeup config, as member_addresses does on AWS: the
    instance a member's disk is attached to, else the one RUNNING instance of its instance group.  Per zone, one
    disks list and one instances list, whatever the number of members."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.etcd_volume import decode_gce_label

    label = cloud.cluster_name.replace(".", "-")
    owned = {"filter": 'labels.%s = "%s"' % (GCE_CLUSTER_LABEL, label)}
    etcd_label = "k8s-io-etcd-%s" % etcd_cluster["name"]
    instances, disks = {}, []
    for zone in cloud.zones:
        for instance in cloud.list("compute", "projects/%s/zones/%s/instances" % (cloud.project, zone), params=owned):
            address = ((instance.get("networkInterfaces") or [{}])[0]).get("networkIP")
            if instance.get("status") == "RUNNING" and (instance.get("labels") or {}).get(GCE_CLUSTER_LABEL) == label \
                    and address:
                instances[instance["name"]] = (address, (instance.get("labels") or {}).get(GCE_INSTANCE_GROUP_LABEL))
        disks += [d for d in cloud.list("compute", "projects/%s/zones/%s/disks" % (cloud.project, zone), params=owned)
                  if (d.get("labels") or {}).get(GCE_CLUSTER_LABEL) == label and etcd_label in (d.get("labels") or {})]
    attached = {}
    for disk in disks:
        member = decode_gce_label(disk["labels"][etcd_label]).split("/", 1)[0]
        for user in disk.get("users") or []:
            if user.rsplit("/", 1)[-1] in instances:
                attached[member] = instances[user.rsplit("/", 1)[-1]][0]
    by_group = {}
    for address, group in instances.values():
        by_group.setdefault(group, []).append(address)
    addresses = {}
    for member in etcd_cluster.get("members") or []:
        if member["name"] in attached:
            addresses[member["name"]] = attached[member["name"]]
        elif len(by_group.get(member["instanceGroup"], [])) == 1:
            addresses[member["name"]] = by_group[member["instanceGroup"]][0]
    return addresses
