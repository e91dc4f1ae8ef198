#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: api_dns
short_description: Keep the API's internal DNS record pointing at the running control-plane instances (AWS Route53)
version_added: 0.1.0
description:
  - What kops' dns-controller does for C(api.internal.<cluster>) from the kube-apiserver pod's
    C(dns.alpha.kubernetes.io/internal) annotation, without needing the API first. It lists the cluster's running
    control-plane instances (tags C(KubernetesCluster=<cluster>) and C(k8s.io/role/control-plane=1)) and upserts
    one A record with their private addresses in the cluster's hosted zone.
  - An unchanged record is left alone. Clusters with C(topology.dns.type=None) (or gossip) need no record; the
    role does not call this module for them.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  dns_zone:
    description: The cluster's hosted zone, by name (V(example.com)) or id (V(Z123...)), as C(spec.dnsZone) says it.
    type: str
    required: true
  record_name:
    description: The record to keep. Defaults to C(api.internal.<cluster_name>).
    type: str
  address_type:
    description:
      - Which addresses of the instances the record names. V(public) is for C(api.<cluster>) of a cluster without an
        API load balancer, which kops' dns-controller points at the control plane's public addresses.
    type: str
    choices: [private, public]
    default: private
  ttl:
    description: Record TTL in seconds (kops' dns-controller uses 60).
    type: int
    default: 60
extends_documentation_fragment:
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Reads instances and the record; changes nothing.
    support: full
  diff_mode:
    description: Shows the addresses before and after.
    support: full
requirements:
  - boto3
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Point api.internal at the control plane
  kubeops.kops.api_dns:
    cluster_name: k8s.example.com
    dns_zone: example.com
  run_once: true
"""

RETURN = r"""
record_name:
  description: The record kept.
  returned: success
  type: str
  sample: api.internal.k8s.example.com
addresses:
  description: The control-plane addresses it now holds.
  returned: success
  type: list
  elements: str
zone_id:
  description: The hosted zone.
  returned: success
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        cluster_name=dict(type="str", required=True),
        dns_zone=dict(type="str", required=True),
        record_name=dict(type="str"),
        address_type=dict(type="str", choices=["private", "public"], default="private"),
        ttl=dict(type="int", default=60),
    )), supports_check_mode=True)
    aws.configure_module(module)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import api_dns

    params = module.params
    name = params["record_name"] or "api.internal.%s" % params["cluster_name"]
    try:
        ec2 = aws.client("ec2", region=params["region"])
        route53 = aws.client("route53", region=params["region"])
        zone_id = api_dns.zone_id(route53, params["dns_zone"])
        addresses = api_dns.control_plane_addresses(ec2, params["cluster_name"], params["address_type"])
        if not addresses:
            module.fail_json(msg="no running control-plane instance of %s has a %s address; nothing to point "
                                 "%s at" % (params["cluster_name"], params["address_type"], name))
        before = api_dns.current_addresses(route53, zone_id, name)
        changed = before != addresses
        if changed and not module.check_mode:
            api_dns.upsert(route53, zone_id, name, addresses, params["ttl"])
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "keeping %s" % name)))
    result = dict(changed=changed, record_name=name, addresses=addresses, zone_id=zone_id)
    if module._diff and changed:
        result["diff"] = {"before": "%s A %s\n" % (name, " ".join(before)),
                          "after": "%s A %s\n" % (name, " ".join(addresses))}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
