#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A worker's kubelet and kube-proxy credentials and nodeup config from the control plane's bootstrap service."""

from __future__ import annotations

DOCUMENTATION = r"""
module: node_bootstrap
short_description: Get a worker's kubelet credentials and nodeup config from the bootstrap service
version_added: 0.1.0
description:
  - What kops' nodeup does on workers with kops-controller. The node proves its cloud identity (a
    GetCallerIdentity request signed with its instance role, kops' C(x-aws-sts) token, bound to the request
    body) to the bootstrap service on the control plane (roles/protokube, port 3988), which checks it with
    STS and EC2 and signs the node's kubelet and kube-proxy client certificates with the cluster CA.
  - The private keys are made on the node and never leave it. The worker needs no access to the state
    store (docs/bootstrap-service.md).
  - Certificates already on disk are kept while they are signed by O(ca_cert), match their key and are valid
    for more than 30 more days; then nothing is requested (unless O(include_node_config)).
options:
  server:
    description: The bootstrap service, for example V(https://kops-controller.internal.k8s.example.com:3988).
    type: str
    required: true
  ca_cert:
    description: The cluster CA (kubernetes-ca) certificates, PEM. Only a server certificate they sign is trusted.
    type: str
    required: true
  region:
    description: The AWS region (the STS signing region).
    type: str
    required: true
  sts_endpoint:
    description:
      - The STS endpoint the request is signed for; the service sends it to the same endpoint.
      - Defaults to the regional endpoint C(https://sts.<region>.amazonaws.com/).
    type: str
  certificates:
    description: Which certificates to get (kops' names) and where they go; keys are written 0600.
    type: list
    elements: dict
    default:
      - {name: kubelet, cert_path: /var/lib/kubelet/pki/kubelet-client.crt, key_path: /var/lib/kubelet/pki/kubelet-client.key}
      - {name: kubelet-server, cert_path: /srv/kubernetes/kubelet-server.crt, key_path: /srv/kubernetes/kubelet-server.key}
      - {name: kube-proxy, cert_path: /var/lib/kube-proxy/client.crt, key_path: /var/lib/kube-proxy/client.key}
    suboptions:
      name:
        description: V(kubelet), V(kubelet-server), V(kube-proxy) or V(kube-router) (when it is the CNI).
        type: str
        required: true
        choices: [kube-proxy, kube-router, kubelet, kubelet-server]
      cert_path:
        description: Where the certificate goes.
        type: path
        required: true
      key_path:
        description: Where the private key goes.
        type: path
        required: true
  include_node_config:
    description: Also get the instance group's nodeup config (returned as RV(nodeup_config)); always asks the service.
    type: bool
    default: false
attributes:
  check_mode:
    description: The service is not asked (unless O(include_node_config)); missing or expiring certificates are reported as changes.
    support: full
  diff_mode:
    description: No diff (certificates and keys are not shown).
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: The kubelet's and kube-proxy's certificates from the control plane
  kubeops.kops.node_bootstrap:
    server: https://kops-controller.internal.k8s.example.com:3988
    ca_cert: "{{ lookup('ansible.builtin.file', '/srv/kubernetes/ca.crt') }}"
    region: eu-west-1
"""

RETURN = r"""
retryable:
  description: On failure, whether asking again may succeed (the service unreachable or not ready), not a refusal.
  returned: failure
  type: bool
node_name:
  description: The node name the kubelet certificate is for (C(system:node:<name>)).
  returned: when a kubelet certificate is on disk or was issued
  type: str
changed_paths:
  description: Files written.
  returned: always
  type: list
  elements: str
nodeup_config:
  description: The instance group's nodeup config, parsed.
  returned: when include_node_config
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.errors import reported
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service, worker_credentials


@reported  # WorkerBootstrapError: one line, and whether asking again may succeed (retryable)
def run(module):
    params = module.params
    module.exit_json(**worker_credentials.bootstrap_worker(
        params["server"], params["ca_cert"], params["region"], params["sts_endpoint"], params["certificates"],
        params["include_node_config"], module.check_mode))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            server=dict(type="str", required=True),
            ca_cert=dict(type="str", required=True),
            region=dict(type="str", required=True),
            sts_endpoint=dict(type="str"),
            certificates=dict(type="list", elements="dict", options=dict(
                name=dict(type="str", required=True, choices=sorted(bootstrap_service.CERTIFICATES)),
                cert_path=dict(type="path", required=True),
                key_path=dict(type="path", required=True, no_log=False)),
                default=[dict(item) for item in worker_credentials.DEFAULT_CERTIFICATES]),
            include_node_config=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    try:
        run(module)
    except ImportError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
