# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""etcd volumes: one EBS volume per member of each etcd cluster, in its control-plane group's zone,
tagged the way etcd-manager (and roles/protokube) finds them."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2

DEFAULT_VOLUME = {"size": 20, "type": "gp3", "iops": 3000, "throughput": 125}


def build_etcd_volumes(cluster, groups, tasks):
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    zones_by_subnet = {s["name"]: s.get("zone") for s in spec.get("subnets") or []}
    zones_by_group = {g["metadata"]["name"]: zones_by_subnet.get(((g.get("spec") or {}).get("subnets") or [None])[0])
                      for g in groups}
    for etcd in spec.get("etcdClusters") or []:
        members = etcd.get("etcdMembers") or []
        all_names = ",".join(m["name"] for m in members)
        for member in members:
            volume_name = "%s.etcd-%s.%s" % (member["name"], etcd["name"], name)
            volume_type = member.get("volumeType") or DEFAULT_VOLUME["type"]
            fields = {
                "availability_zone": zones_by_group.get(member["instanceGroup"]),
                "encrypted": bool(member.get("encryptedVolume")),
                "size": member.get("volumeSize") or DEFAULT_VOLUME["size"],
                "type": volume_type,
                "tags": cluster_tags(name, volume_name, extra={
                    "k8s.io/etcd/%s" % etcd["name"]: "%s/%s" % (member["name"], all_names),
                    "k8s.io/role/control-plane": "1",
                    "k8s.io/role/master": "1",
                }),
            }
            if volume_type == "gp3":
                fields["iops"] = member.get("volumeIops") or DEFAULT_VOLUME["iops"]
                fields["throughput"] = member.get("volumeThroughput") or DEFAULT_VOLUME["throughput"]
            if member.get("kmsKeyId"):  # v1alpha2's name (kops' Go field is KmsKeyID)
                fields["kms_key_id"] = member["kmsKeyId"]
            task = ec2.EBSVolume(volume_name, **fields)
            tasks[task.key] = task
