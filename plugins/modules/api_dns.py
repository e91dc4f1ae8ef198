#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: api_dns
short_description: Keep the API's internal DNS record pointing at the running control-plane instances (Route53, Cloud DNS)
version_added: 0.1.0
description:
  - What kops' dns-controller does for C(api.internal.<cluster>) from the kube-apiserver pod's
    C(dns.alpha.kubernetes.io/internal) annotation, without needing the API first. It lists the cluster's running
    control-plane instances (tags C(KubernetesCluster=<cluster>) and C(k8s.io/role/control-plane=1)) and upserts
    one A record with their private addresses in the cluster's hosted zone.
  - On GCE (O(provider=gce)) the RUNNING control-plane instances in the region's zones (kops' labels) and one A
    record of their internal addresses in the cluster's Cloud DNS managed zone (O(address_type) is AWS's).
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
  - kubeops.kops.node_cloud
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Reads instances and the record; changes nothing.
    support: full
  diff_mode:
    description: Shows the addresses before and after.
    support: full
requirements:
  - boto3 (AWS)
  - google-auth and requests (GCE)
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
managed_zone:
  description: The Cloud DNS managed zone (GCE).
  returned: success, on GCE
  type: str
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
from ansible_collections.kubeops.kops.plugins.module_utils.providers import node


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        node.cloud_options(),
        cluster_name=dict(type="str", required=True),
        dns_zone=dict(type="str", required=True),
        record_name=dict(type="str"),
        address_type=dict(type="str", choices=["private", "public"], default="private"),
        ttl=dict(type="int", default=60),
    )), supports_check_mode=True)
    node.run(module, "api_dns")


if __name__ == "__main__":
    main()
