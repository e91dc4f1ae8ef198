#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_peers
short_description: Find where each etcd member of a cluster runs (AWS, GCE)
version_added: 0.1.0
description:
  - For the first etcd cluster of the node's nodeup config, the private address of every member, for
    roles/protokube's C(protokube_etcd_peers). A member is the instance its EBS volume is attached to, or, before
    that, the one running instance of its instance group.
  - Two describe calls, whatever the number of members. Read-only.
  - On GCE (O(provider=gce)) a member is the RUNNING instance its persistent disk (label C(k8s-io-etcd-<cluster>)) is
    attached to, else the one RUNNING instance of its instance group, both labelled for the cluster.
  - With O(wait), polls until every member has an address (control-plane instances boot at the same time).
options:
  nodeup_config:
    description: The node's nodeup config (its C(ClusterName) and C(kubeops.etcdClusters)).
    type: dict
    required: true
  wait:
    description: Seconds to wait for every member to have an address (0 to answer at once).
    type: int
    default: 600
extends_documentation_fragment:
  - kubeops.kops.node_cloud
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Read-only; runs the same in check mode.
    support: full
  diff_mode:
    description: Not applicable.
    support: none
requirements:
  - boto3 (AWS)
  - google-auth and requests (GCE)
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Where the etcd members run
  kubeops.kops.etcd_peers:
    nodeup_config: "{{ nodeup_document }}"
  register: etcd_peers

- name: Run etcd
  ansible.builtin.include_role:
    name: kubeops.kops.protokube
  vars:
    protokube_nodeup_config: "{{ nodeup_document }}"
    protokube_etcd_peers: "{{ etcd_peers.peers }}"
"""

RETURN = r"""
peers:
  description: Member name (spec.etcdClusters[].etcdMembers[].name) to private IPv4 address.
  returned: success
  type: dict
  sample: {a: 172.20.32.10, b: 172.20.64.10, c: 172.20.96.10}
missing:
  description: Members still without an address when O(wait) ran out (the module then fails).
  returned: failure
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.providers import node


def main():
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        node.cloud_options(),
        nodeup_config=dict(type="dict", required=True),
        wait=dict(type="int", default=600),
    )), supports_check_mode=True)
    node.run(module, "etcd_peers")


if __name__ == "__main__":
    main()
