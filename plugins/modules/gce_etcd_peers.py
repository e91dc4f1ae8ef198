#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gce_etcd_peers
short_description: Find where each etcd member of a control-plane node's cluster runs, in GCE
version_added: 0.1.0
deprecated:
  removed_in: 1.0.0
  why: One cloud-neutral module does this on every cloud.
  alternative: Use M(kubeops.kops.etcd_peers) with O(kubeops.kops.etcd_peers#module:provider=gce).
description:
  - For the first etcd cluster of the nodeup config (members share instances across clusters), each member's
    address is the internal address of the RUNNING instance its persistent disk (label C(k8s-io-etcd-<cluster>))
    is attached to, else of the one RUNNING instance of its instance group (label C(k8s-io-instance-group)), both
    labelled C(k8s-io-cluster-name) for the cluster. What M(kubeops.kops.etcd_peers) does on AWS.
  - Waits up to O(wait) seconds for every member to have an instance, as members boot together.
  - Credentials are Google's application default credentials (on an instance, its service account) or
    O(credentials_file).
options:
  nodeup_config:
    description: The instance group's nodeup config (its C(ClusterName) and C(kubeops.etcdClusters)).
    type: dict
    required: true
  wait:
    description: Seconds to wait for every member to have a running instance.
    type: int
    default: 600
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
    description: Reads only, in check mode as otherwise.
    support: full
  diff_mode:
    description: Not applicable.
    support: none
requirements:
  - google-auth
  - requests
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Find the etcd members' instances in GCE
  kubeops.kops.gce_etcd_peers:
    nodeup_config: "{{ nodeup_document }}"
  register: etcd_peers
"""

RETURN = r"""
peers:
  description: Member name to internal IPv4 address.
  returned: always
  type: dict
  sample: {a: 10.0.16.2, b: 10.0.16.3, c: 10.0.16.4}
missing:
  description: Members without a running instance when the wait ran out.
  returned: failure
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        nodeup_config=dict(type="dict", required=True),
        wait=dict(type="int", default=600),
        project=dict(type="str"),
        region=dict(type="str"),
        credentials_file=dict(type="path"),
    ), supports_check_mode=True)
    # The cloud-neutral module's GCE side (providers/gce/node.py), with this module's own options.
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import node
    node.etcd_peers(module)


if __name__ == "__main__":
    main()
