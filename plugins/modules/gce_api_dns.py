#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gce_api_dns
short_description: Keep the API's internal DNS record pointing at the running control-plane instances (GCE Cloud DNS)
version_added: 0.1.0
deprecated:
  removed_in: 1.0.0
  why: One cloud-neutral module does this on every cloud.
  alternative: Use M(kubeops.kops.api_dns) with O(kubeops.kops.api_dns#module:provider=gce).
description:
  - What kops' dns-controller does for C(api.internal.<cluster>) from the kube-apiserver pod's
    C(dns.alpha.kubernetes.io/internal) annotation, without needing the API first. It lists the cluster's RUNNING
    control-plane instances in the region's zones (labels C(k8s-io-cluster-name=<cluster with dots as dashes>) and
    C(k8s-io-role-control-plane) or C(k8s-io-role-master)) and keeps one A record of their internal addresses in
    the cluster's Cloud DNS managed zone, with one change that takes the old record set out and puts the new one in.
  - An unchanged record is left alone. Clusters with C(topology.dns.type=None) need no record; the role does not
    call this module for them.
  - Credentials are Google's application default credentials (on an instance, its service account) or
    O(credentials_file).
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  dns_zone:
    description: The cluster's zone, by DNS name (V(example.com)) or by managed zone name, as C(spec.dnsZone) says it.
    type: str
    required: true
  record_name:
    description: The record to keep. Defaults to C(api.internal.<cluster_name>).
    type: str
  ttl:
    description: Record TTL in seconds (kops' dns-controller uses 60).
    type: int
    default: 60
  project:
    description: The GCE project. Read from the metadata server when omitted.
    type: str
  region:
    description: The cluster's region. Read from the metadata server (this instance's zone) when omitted.
    type: str
  credentials_file:
    description: A service-account key file; by default the application default credentials.
    type: path
attributes:
  check_mode:
    description: Reads instances and the record; changes nothing.
    support: full
  diff_mode:
    description: Shows the addresses before and after.
    support: full
requirements:
  - google-auth
  - requests
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Point api.internal at the control plane
  kubeops.kops.gce_api_dns:
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
managed_zone:
  description: The Cloud DNS managed zone.
  returned: success
  type: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        dns_zone=dict(type="str", required=True),
        record_name=dict(type="str"),
        ttl=dict(type="int", default=60),
        project=dict(type="str"),
        region=dict(type="str"),
        credentials_file=dict(type="path"),
    ), supports_check_mode=True)
    # The cloud-neutral module's GCE side (providers/gce/node.py), with this module's own options.
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import node
    node.api_dns(module)


if __name__ == "__main__":
    main()
