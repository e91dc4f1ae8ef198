#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_volume
short_description: Attach this control-plane instance's etcd volume (etcd-manager's volume providers, AWS EBS and GCE persistent disk)
version_added: 0.1.0
description:
  - On AWS (O(provider=aws), the default) finds the one EBS volume in the instance's availability zone that carries the etcd member's volume tags
    (C(k8s.io/etcd/<cluster>=<member>/<members>), C(k8s.io/role/control-plane=1),
    C(kubernetes.io/cluster/<name>=owned), as C(cluster_update) creates them) and attaches it to this instance.
  - A volume already attached here is left alone; one attached to another instance is refused, so that an etcd
    member's data is never used twice.
  - Returns the device the volume appears as on this machine (the NVMe link on Nitro instances).
    Formatting and mounting are roles/protokube's next tasks.
  - On GCE (O(provider=gce)) the persistent disk in the instance's zone with
    kops' labels for the member (O(cluster_name), O(etcd_cluster), O(member)), attached with its name as device
    name; the device is C(/dev/disk/by-id/google-<disk name>) and the result names it in C(disk).
options:
  volume_tags:
    description: AWS, required there. The member's volume tags (the nodeup config's C(kubeops.etcdClusters[].members[].volumeTags)).
    type: dict
  instance_id:
    description: AWS only. This instance. Read from the instance metadata service (IMDSv2) when omitted.
    type: str
  zone:
    description: This instance's zone. Read from the instance metadata (AWS) or metadata server (GCE) when omitted.
    type: str
  device_name:
    description: AWS only. The device name to attach as.
    type: str
    default: /dev/xvdu
  wait:
    description: AWS only. Wait until EC2 reports the volume attached.
    type: bool
    default: true
  cluster_name:
    description: GCE, required there. The cluster (as kops names it, with dots).
    type: str
  etcd_cluster:
    description: GCE, required there. The etcd cluster, V(main) or V(events).
    type: str
  member:
    description: GCE, required there. The etcd member this instance runs (C(spec.etcdClusters[].etcdMembers[].name)).
    type: str
  instance:
    description: GCE only. This instance's name. Read from the metadata server when omitted.
    type: str
extends_documentation_fragment:
  - kubeops.kops.node_cloud
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Finds the volume and reports whether it would be attached; attaches nothing.
    support: full
  diff_mode:
    description: Not applicable; the result says which volume and instance.
    support: none
requirements:
  - boto3 (AWS)
  - google-auth and requests (GCE)
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Attach the volume of etcd main on this control-plane instance
  kubeops.kops.etcd_volume:
    volume_tags:
      k8s.io/etcd/main: a/a,b,c
      k8s.io/role/control-plane: "1"
      kubernetes.io/cluster/k8s.example.com: owned
  register: etcd_main_volume

- name: The same on GCE, where the disk is found by kops' labels
  kubeops.kops.etcd_volume:
    provider: gce
    cluster_name: k8s.example.com
    etcd_cluster: main
    member: a
  register: etcd_main_volume
"""

RETURN = r"""
volume_id:
  description: The etcd member's EBS volume.
  returned: success, on AWS
  type: str
  sample: vol-0123456789abcdef0
instance_id:
  description: The instance it is attached to.
  returned: success, on AWS
  type: str
disk:
  description: The etcd member's persistent disk.
  returned: success, on GCE
  type: str
  sample: a-etcd-main-k8s-example-com
instance:
  description: The instance it is attached to.
  returned: success, on GCE
  type: str
device:
  description: Where the volume appears on this machine.
  returned: success
  type: str
  sample: /dev/nvme1n1
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.providers import node


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        node.cloud_options(),
        volume_tags=dict(type="dict"),
        instance_id=dict(type="str"),
        zone=dict(type="str"),
        device_name=dict(type="str", default="/dev/xvdu"),
        wait=dict(type="bool", default=True),
        cluster_name=dict(type="str"),
        etcd_cluster=dict(type="str"),
        member=dict(type="str"),
        instance=dict(type="str"),
    )), supports_check_mode=True)
    node.run(module, "etcd_volume")


if __name__ == "__main__":
    main()
