#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_certificates
short_description: Issue a control-plane node's own certificates from the cluster's CAs
version_added: 0.1.0
description:
  - What kops' nodeup does on control-plane nodes. It reads the signing CAs from C(<config_base>/pki/) in the
    state store, and writes each requested certificate, its private key (mode 0600) and the signer's trusted CA
    bundle to the node.
  - A certificate already on disk is kept while it is signed by the signer's primary CA, has the same subject,
    names and usages, matches its key and is valid for more than 30 more days. Otherwise it is issued again, so
    a second run changes nothing and a CA rotation (after promote) re-issues.
  - All certificates are given in one call, so a node's PKI costs one task.
  - Only control-plane nodes may read the CA keys (their IAM role allows C(pki/)). Workers get their kubelet
    certificate through Kubernetes TLS bootstrapping instead.
options:
  config_base:
    description:
      - The cluster's location in the state store, C(<state store>/<cluster name>), for example
        V(s3://my-kops-state/k8s.example.com) or V(file:///srv/kops/k8s.example.com).
      - The nodeup config hands it over as C(kubeops.configBase).
    type: str
    required: true
  certificates:
    description:
      - The certificates this node needs, besides those O(nodeup_config) implies.
      - At least one of O(certificates) and O(nodeup_config) is required.
    type: list
    elements: dict
    default: []
    suboptions:
      signer:
        description: Keyset that signs, for example V(kubernetes-ca) or V(etcd-peers-ca-main).
        type: str
        required: true
      common_name:
        description: Subject common name.
        type: str
        required: true
      organizations:
        description: Subject organizations (Kubernetes groups for client certificates).
        type: list
        elements: str
        default: []
      usages:
        description: Extended key usages.
        type: list
        elements: str
        choices: [client, server]
        default: [client]
      dns_names:
        description: DNS subject alternative names.
        type: list
        elements: str
        default: []
      ip_addresses:
        description: IP subject alternative names.
        type: list
        elements: str
        default: []
      cert_path:
        description: Where the certificate goes.
        type: path
        required: true
      key_path:
        description: Where the private key goes (written 0600).
        type: path
        required: true
      ca_path:
        description: Where the signer's trusted CA bundle goes, if anywhere.
        type: path
  nodeup_config:
    description:
      - The node's nodeup config. On a node that runs an API server or the control plane it adds what kops'
        nodeup issues there (kube-apiserver's serving, kubelet-api, aggregator and etcd client certificates,
        the kubelet's client and serving certificates, the controller manager's and scheduler's serving certificates,
        aws-iam-authenticator's serving certificate under O(nodeup_config) authentication.aws) and copies the
        keypairs they sign or verify with (the kubernetes-ca keypair for the controller manager, the
        service-account key).
      - The client certificates of the controller manager, the scheduler, kube-proxy and kubectl live inline in
        their kubeconfigs, as kops' nodeup writes them (C(/var/lib/<component>/kubeconfig),
        C(/var/lib/kubectl/kubeconfig), mode 0400); a kubeconfig is rewritten when its certificate is issued again.
      - On workers it adds nothing.
    type: dict
  node_name:
    description:
      - The node's Kubernetes name, for the kubelet's client certificate (C(system:node:<name>)).
      - Defaults to the node's host name in lower case, which is what the kubelet registers as.
    type: str
  node_addresses:
    description: The node's addresses, added to the kubelet's serving certificate (its SANs) after O(node_name).
    type: list
    elements: str
    default: []
  endpoint:
    description: Object-store API endpoint override (an S3-compatible endpoint, or the GCS JSON API root).
    type: str
  root:
    description: Directory that every path is relative to (V(/) on a node; a scratch directory to render a tree).
    type: path
    default: /
extends_documentation_fragment:
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Decides what would be issued and writes nothing.
    support: full
  diff_mode:
    description: Lists the certificates that would be issued and why (never key material).
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: The etcd peer certificate of this member
  kubeops.kops.node_certificates:
    config_base: s3://my-kops-state/k8s.example.com
    certificates:
      - signer: etcd-peers-ca-main
        common_name: etcd-a
        usages: [client, server]
        dns_names: [etcd-a.internal.k8s.example.com]
        ip_addresses: [10.0.1.10, 127.0.0.1]
        cert_path: /etc/kubernetes/pki/etcd-main/peer.crt
        key_path: /etc/kubernetes/pki/etcd-main/peer.key
        ca_path: /etc/kubernetes/pki/etcd-main/peer-ca.crt

- name: Everything a control-plane node issues for itself, from its nodeup config
  kubeops.kops.node_certificates:
    config_base: "{{ nodeup_document.kubeops.configBase }}"
    nodeup_config: "{{ nodeup_document }}"
    node_name: "{{ inventory_hostname }}"
"""

RETURN = r"""
changed_paths:
  description: Files written (certificates, keys, CA bundles).
  returned: always
  type: list
  elements: str
certificates:
  description: Per certificate its path, whether it was issued, why, and its subject, serial and expiry.
  returned: always
  type: list
  elements: dict
  sample:
    - cert_path: /etc/kubernetes/pki/etcd-main/peer.crt
      issued: true
      reason: missing
      common_name: etcd-a
      organizations: []
      serial: "1234"
      expires: "2028-02-20T10:00:00Z"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.errors import reported
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


@reported  # NodeCertificateError, StoreError: messages name the certificate or store
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_issuance
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout

    certs.require_cryptography()
    params = module.params
    cluster_store = layout.cluster_store_at(params["config_base"], params["endpoint"])
    requests, copies = node_issuance.node_requests(params["certificates"], params["nodeup_config"],
                                                   params["node_name"], params["node_addresses"], params["root"])
    changed_paths, reports, diffs = node_issuance.issue_node_certificates(cluster_store, requests, copies,
                                                                          module.check_mode)
    result = dict(changed=bool(changed_paths), changed_paths=changed_paths, certificates=reports)
    if module._diff and changed_paths:
        result["diff"] = {"before": "", "after": "\n".join(diffs + ["write %s" % p for p in changed_paths]) + "\n"}
    module.exit_json(**result)


def main():
    certificate = dict(
        signer=dict(type="str", required=True),
        common_name=dict(type="str", required=True),
        organizations=dict(type="list", elements="str", default=[]),
        usages=dict(type="list", elements="str", choices=["client", "server"], default=["client"]),
        dns_names=dict(type="list", elements="str", default=[]),
        ip_addresses=dict(type="list", elements="str", default=[]),
        cert_path=dict(type="path", required=True),
        key_path=dict(type="path", required=True, no_log=False),  # a file path, not key material
        ca_path=dict(type="path"),
    )
    module = AnsibleModule(argument_spec=aws.argument_spec(dict(
        config_base=dict(type="str", required=True),
        certificates=dict(type="list", elements="dict", default=[], options=certificate),
        nodeup_config=dict(type="dict"),
        node_name=dict(type="str"),
        node_addresses=dict(type="list", elements="str", default=[]),
        endpoint=dict(type="str"),
        root=dict(type="path", default="/"),
    )), supports_check_mode=True)
    aws.configure_module(module)
    if not module.params["certificates"] and not module.params["nodeup_config"]:
        module.fail_json(msg="give certificates, nodeup_config or both")
    try:
        run(module)
    except ImportError as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
