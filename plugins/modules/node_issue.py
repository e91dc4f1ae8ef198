#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_issue
short_description: Sign a metal worker's certificates on the controller, as kops-controller signs them
version_added: 0.1.0
description:
  - Signs, with the cluster's kubernetes-ca read from the state store on the controller, the public keys a worker
    made (M(kubeops.kops.node_keys)) through the bootstrap service's C(Issuer), as kops-controller does. The
    kubelet's client certificate is for C(system:node:<node>) in C(system:nodes), its serving certificate for the
    node's name and addresses, kube-proxy's for C(system:kube-proxy).
  - Returns the certificates only; the CA key never leaves the controller.
  - The identity is the SSH connection to the inventory's host (docs/metal.md, "How a node proves who it is");
    roles/enroll passes that host's name and address.
  - Signing writes nothing anywhere; check mode signs nothing (no public key comes from a check-mode node_keys).
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  node_name:
    description: The node's name (the inventory host's name, lowercased, as its kubelet registers).
    type: str
    required: true
  addresses:
    description: The node's addresses, for its serving certificate.
    type: list
    elements: str
    default: []
  public_keys:
    description: Certificate name (kubelet, kubelet-server, kube-proxy) to the public key to sign (PEM); nulls skipped.
    type: dict
    required: true
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
requirements:
  - cryptography
attributes:
  check_mode:
    description: Nothing is signed in check mode.
    support: full
  diff_mode:
    description: No diff.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Sign the worker's keys
  kubeops.kops.node_issue:
    state_store: s3://my-kops-state
    cluster_name: metal.k8s.local
    node_name: vm1
    addresses: [192.168.76.11]
    public_keys: "{{ keys.public_keys }}"
  delegate_to: localhost
"""

RETURN = r"""
certificates:
  description: Certificate name to the signed certificate (PEM).
  returned: always
  type: dict
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import credentials
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import worker_certificates

    params = module.params
    wanted = {name: pem for name, pem in params["public_keys"].items() if pem}
    if module.check_mode or not wanted:
        module.exit_json(changed=False, certificates={})
    service = module.service()
    keyset = credentials.cluster_ca(service.cluster_store(params["cluster_name"]), params["cluster_name"])
    issued = worker_certificates.issue(keystore.primary(keyset), params["node_name"].lower(), params["addresses"],
                                       wanted)
    module.exit_json(changed=False, certificates=issued)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        node_name=dict(type="str", required=True),
        addresses=dict(type="list", elements="str", default=[]),
        public_keys=dict(type="dict", required=True),
    ))
    run(module)


if __name__ == "__main__":
    main()
