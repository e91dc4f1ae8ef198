#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_keys
short_description: Make a metal worker's keys on the host, or write the certificates the controller signed for them
version_added: 0.1.0
description:
  - O(state=keys) makes a new key on the host for each of the kubelet's client certificate, its serving certificate and
    kube-proxy's certificate that is missing, not for its key, not signed by O(ca_cert) or expiring within 30 days
    (kops nodeup's places; good ones are kept), and returns the public halves only.
    M(kubeops.kops.node_issue) signs them on the controller.
  - O(state=certificates) writes the certificates O(certificates) holds where nodeup reads them, each checked against
    the key made for it.
  - roles/enroll runs both for a worker of a metal cluster (docs/metal.md, "How a node proves who it is"); the worker
    never gets a CA key nor the cluster's bootstrap token.
  - Check mode says which keys and certificates would be made, and writes nothing.
options:
  state:
    description: V(keys) or V(certificates).
    type: str
    choices: [keys, certificates]
    default: keys
  ca_cert:
    description: The cluster's kubernetes-ca certificate(s), PEM (the nodeup config's C(CAs.kubernetes-ca)).
    type: str
  certificates:
    description: For O(state=certificates), the signed certificates by name (kubelet, kubelet-server, kube-proxy).
    type: dict
    default: {}
requirements:
  - cryptography
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: The worker's keys
  kubeops.kops.node_keys:
    ca_cert: "{{ nodeup_config.CAs['kubernetes-ca'] }}"
  register: keys
"""

RETURN = r"""
public_keys:
  description: For O(state=keys), each certificate to sign and its new public key (PEM; null in check mode).
  returned: state=keys
  type: dict
changed_paths:
  description: For O(state=certificates), the certificate files written.
  returned: state=certificates
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.errors import reported


@reported  # WorkerCertificateError, WorkerBootstrapError: one line naming the certificate
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import worker_certificates
    params = module.params
    if params["state"] == "keys":
        if not params["ca_cert"]:
            module.fail_json(msg="ca_cert: required with state=keys (the nodeup config's CAs.kubernetes-ca)")
        wanted = worker_certificates.host_keys(params["ca_cert"], check_mode=module.check_mode)
        module.exit_json(changed=bool(wanted), public_keys=wanted)
    written = worker_certificates.write_certificates(params["certificates"], check_mode=module.check_mode)
    module.exit_json(changed=bool(written), changed_paths=written)


def main():
    module = AnsibleModule(argument_spec=dict(
        state=dict(type="str", choices=["keys", "certificates"], default="keys"),
        ca_cert=dict(type="str"),
        certificates=dict(type="dict", default={}),
    ), supports_check_mode=True)
    run(module)


if __name__ == "__main__":
    main()
