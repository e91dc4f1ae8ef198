#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_volume
short_description: Attach this control-plane instance's etcd EBS volume (etcd-manager's AWS volume provider)
version_added: 0.1.0
description:
  - Finds the one EBS volume in the instance's availability zone that carries the etcd member's volume tags
    (C(k8s.io/etcd/<cluster>=<member>/<members>), C(k8s.io/role/control-plane=1),
    C(kubernetes.io/cluster/<name>=owned), as C(cluster_update) creates them) and attaches it to this instance.
  - A volume already attached here is left alone; one attached to another instance is refused, so that an etcd
    member's data is never used twice.
  - Returns the device the volume appears as on this machine (the NVMe link on Nitro instances).
    Formatting and mounting are roles/protokube's next tasks.
options:
  volume_tags:
    description: The member's volume tags (the nodeup config's C(kubeops.etcdClusters[].members[].volumeTags)).
    type: dict
    required: true
  instance_id:
    description: This instance. Read from the instance metadata service (IMDSv2) when omitted.
    type: str
  zone:
    description: This instance's availability zone. Read from the instance metadata when omitted.
    type: str
  device_name:
    description: The device name to attach as.
    type: str
    default: /dev/xvdu
  wait:
    description: Wait until EC2 reports the volume attached.
    type: bool
    default: true
extends_documentation_fragment:
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Finds the volume and reports whether it would be attached; attaches nothing.
    support: full
  diff_mode:
    description: Not applicable; the result says which volume and instance.
    support: none
requirements:
  - boto3
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
"""

RETURN = r"""
volume_id:
  description: The etcd member's EBS volume.
  returned: success
  type: str
  sample: vol-0123456789abcdef0
instance_id:
  description: The instance it is attached to.
  returned: success
  type: str
device:
  description: Where the volume appears on this machine.
  returned: success
  type: str
  sample: /dev/nvme1n1
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        volume_tags=dict(type="dict", required=True),
        instance_id=dict(type="str"),
        zone=dict(type="str"),
        device_name=dict(type="str", default="/dev/xvdu"),
        wait=dict(type="bool", default=True),
    )), supports_check_mode=True)
    aws.configure_module(module)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_volume

    params = module.params
    instance_id, zone, region = params["instance_id"], params["zone"], params["region"]
    try:
        if not (instance_id and zone and region):
            metadata = etcd_volume.instance_identity()
            instance_id, zone, region = instance_id or metadata[0], zone or metadata[1], region or metadata[2]
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and JSON errors alike
        module.fail_json(msg="instance metadata (IMDSv2) did not answer (%s): give instance_id, zone and region" % exc)
    try:
        ec2 = aws.client("ec2", region=region)
        volume_id, changed = etcd_volume.ensure_attached(
            ec2, {k: str(v) for k, v in params["volume_tags"].items()}, instance_id, zone,
            device_name=params["device_name"], dry_run=module.check_mode, wait=params["wait"])
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "attaching the etcd volume")))
    module.exit_json(changed=changed, volume_id=volume_id, instance_id=instance_id,
                     device=etcd_volume.local_device(volume_id, params["device_name"]))


if __name__ == "__main__":
    main()
