#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_member
short_description: Decide how a new etcd member starts, joining a running cluster when there is one
version_added: 0.1.0
description:
  - The membership part of etcd-manager, for a member that has no data yet.
  - When no other member answers, the cluster is formed with all members (C(initial-cluster-state=new)).
  - When one answers, this member is added through it (C(etcdctl member add)) and starts with
    C(initial-cluster-state=existing) and the cluster's current members. A member of the same name that ran before
    (its disk was replaced) is removed first. A member that is listed but never started is not added twice.
  - A member whose data directory holds data changes nothing; etcd ignores the initial settings then.
options:
  name:
    description: This member's etcd name, for example V(etcd-a) or V(etcd-events-a).
    type: str
    required: true
  peer_url:
    description: This member's peer URL.
    type: str
    required: true
  members:
    description: Every member of the cluster, name to peer URL (this one included).
    type: dict
    required: true
  other_endpoints:
    description: Client URLs of the other members, asked in order.
    type: list
    elements: str
    default: []
  data_dir:
    description: This member's data directory.
    type: path
    required: true
  cacert:
    description: CA bundle that signs the members' serving certificates.
    type: path
    required: true
  cert:
    description: Client certificate (signed by C(etcd-clients-ca)).
    type: path
    required: true
  key:
    description: Key of O(cert).
    type: path
    required: true
  etcdctl:
    description: The etcdctl binary.
    type: path
    default: etcdctl
attributes:
  check_mode:
    description: Decides and adds nothing.
    support: full
  diff_mode:
    description: Not supported; the result says what was done.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Join or form etcd main
  kubeops.kops.etcd_member:
    name: etcd-a
    peer_url: https://etcd-a.internal.k8s.example.com:2380
    members:
      etcd-a: https://etcd-a.internal.k8s.example.com:2380
      etcd-b: https://etcd-b.internal.k8s.example.com:2380
      etcd-c: https://etcd-c.internal.k8s.example.com:2380
    other_endpoints: [https://etcd-b.internal.k8s.example.com:4001, https://etcd-c.internal.k8s.example.com:4001]
    data_dir: /mnt/etcd-main/data
    cacert: /etc/kubernetes/pki/etcd-main/server-ca.crt
    cert: /etc/kubernetes/pki/etcd-main/etcdctl.crt
    key: /etc/kubernetes/pki/etcd-main/etcdctl.key
"""

RETURN = r"""
state:
  description: The initial cluster state to start with.
  returned: always
  type: str
  sample: new
initial_cluster:
  description: The initial cluster to start with (name=peer URL, comma-separated).
  returned: always
  type: str
action:
  description: What was done to the cluster's membership (none, add or replace).
  returned: always
  type: str
reason:
  description: Why.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        name=dict(type="str", required=True),
        peer_url=dict(type="str", required=True),
        members=dict(type="dict", required=True),
        other_endpoints=dict(type="list", elements="str", default=[]),
        data_dir=dict(type="path", required=True),
        cacert=dict(type="path", required=True),
        cert=dict(type="path", required=True),
        key=dict(type="path", required=True, no_log=False),  # a file path, not key material
        etcdctl=dict(type="path", default="etcdctl"),
    ), supports_check_mode=True)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_node
    params = module.params
    tls = {"cacert": params["cacert"], "cert": params["cert"], "key": params["key"], "etcdctl": params["etcdctl"]}
    try:
        result = etcd_node.ensure_membership(tls, params["name"], params["peer_url"], params["members"],
                                             params["other_endpoints"], params["data_dir"],
                                             check_mode=module.check_mode)
    except (ValueError, OSError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
