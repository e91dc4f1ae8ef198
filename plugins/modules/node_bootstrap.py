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

import datetime

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

RENEW_BEFORE = datetime.timedelta(days=30)


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _write(path, data, mode):
    atomic_write(path, mode, data)


def _current(item, cas, now):
    """The certificate on disk when it is still good, else None."""
    cert_pem, key_pem = _read(item["cert_path"]), _read(item["key_path"])
    if not cert_pem or not key_pem:
        return None
    try:
        certificate, key = certs.load_certificate(cert_pem), certs.load_key(key_pem)
    except ValueError:
        return None
    if certificate.public_key().public_numbers() != key.public_key().public_numbers():
        return None
    if not any(certs.issued_by(certificate, ca) for ca in cas) or certs.not_after(certificate) - now < RENEW_BEFORE:
        return None
    return certificate


def _node_name(certificate):
    from cryptography.x509.oid import NameOID
    common_name = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return common_name[len("system:node:"):] if common_name.startswith("system:node:") else None


def _ca_certificates(pem):
    from cryptography import x509
    blocks = pem.encode("ascii") if isinstance(pem, str) else pem
    loader = getattr(x509, "load_pem_x509_certificates", None)  # cryptography >= 39; nodes may have 38
    if loader:
        return loader(blocks)
    marker = b"-----END CERTIFICATE-----"
    return [x509.load_pem_x509_certificate(part + marker) for part in blocks.split(marker) if part.strip()]


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
                default=[{"name": "kubelet", "cert_path": "/var/lib/kubelet/pki/kubelet-client.crt",
                          "key_path": "/var/lib/kubelet/pki/kubelet-client.key"},
                         {"name": "kubelet-server", "cert_path": "/srv/kubernetes/kubelet-server.crt",
                          "key_path": "/srv/kubernetes/kubelet-server.key"},
                         {"name": "kube-proxy", "cert_path": "/var/lib/kube-proxy/client.crt",
                          "key_path": "/var/lib/kube-proxy/client.key"}]),
            include_node_config=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        certs.require_cryptography()
        cas = _ca_certificates(params["ca_cert"])
    except (ImportError, ValueError) as exc:
        module.fail_json(msg="ca_cert: %s" % exc)
    now = datetime.datetime.now(datetime.timezone.utc)
    current = {item["name"]: _current(item, cas, now) for item in params["certificates"]}
    wanted = [item for item in params["certificates"] if current[item["name"]] is None]
    result = {"changed": bool(wanted), "changed_paths": []}
    if wanted or params["include_node_config"]:
        if module.check_mode and not params["include_node_config"]:
            module.exit_json(**result)
        try:
            import botocore.session
        except ImportError:
            module.fail_json(msg="botocore is required to sign the node's identity (Debian: python3-botocore)")
        credentials = botocore.session.get_session().get_credentials()
        if credentials is None:
            module.fail_json(msg="no AWS credentials on this node: the instance profile (or AWS_* variables) must "
                                 "give the node role's credentials")
        sts = params["sts_endpoint"] or "https://sts.%s.amazonaws.com/" % params["region"]
        names = [item["name"] for item in wanted] if not module.check_mode else []
        try:
            issued, config = bootstrap_service.request_bootstrap(
                params["server"], params["ca_cert"], credentials.get_frozen_credentials(), sts, params["region"],
                cert_names=names, include_node_config=params["include_node_config"])
        except bootstrap_service.Refused as exc:
            # A service that is up but not ready (its STS unreachable: 503) may answer later; a refusal will not.
            module.fail_json(msg=str(exc), retryable=exc.status >= 500)
        except OSError as exc:
            module.fail_json(msg="the bootstrap service at %s could not be reached: %s" % (params["server"], exc),
                             retryable=True)
        for item in wanted:
            cert_pem, key_pem = issued[item["name"]]
            if not module.check_mode:
                _write(item["key_path"], key_pem, 0o600)
                _write(item["cert_path"], cert_pem, 0o644)
            result["changed_paths"] += [item["key_path"], item["cert_path"]]
            current[item["name"]] = certs.load_certificate(cert_pem)
        if params["include_node_config"]:
            import yaml
            result["nodeup_config"] = yaml.safe_load(config or "") or {}
    if current.get("kubelet") is not None:
        result["node_name"] = _node_name(current["kubelet"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
