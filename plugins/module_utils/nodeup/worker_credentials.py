# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The service behind kubeops.kops.node_bootstrap: a worker's kubelet and kube-proxy credentials (and its nodeup
config) from the control plane's bootstrap service (kops' nodeup on a worker with kops-controller).

Certificates on disk are kept while they are good (current_certificate); only the missing or expiring ones are
asked for, with keys made on the node (bootstrap_service.request_bootstrap). The module parses its options and
reports; nothing here knows of Ansible."""

from __future__ import annotations

import datetime

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service, node_file
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

RENEW_BEFORE = datetime.timedelta(days=30)
# kops' nodeup: where a worker keeps the certificates the service issues (the module's default).
DEFAULT_CERTIFICATES = (
    {"name": "kubelet", "cert_path": "/var/lib/kubelet/pki/kubelet-client.crt",
     "key_path": "/var/lib/kubelet/pki/kubelet-client.key"},
    {"name": "kubelet-server", "cert_path": "/srv/kubernetes/kubelet-server.crt",
     "key_path": "/srv/kubernetes/kubelet-server.key"},
    {"name": "kube-proxy", "cert_path": "/var/lib/kube-proxy/client.crt", "key_path": "/var/lib/kube-proxy/client.key"},
)


class WorkerBootstrapError(NodeError):
    """The worker could not get its credentials; retryable when asking again may succeed (the service unreachable
    or not ready), not after a refusal."""

    def __init__(self, message, retryable=False, fix=None):
        super().__init__(message, fix=fix)
        self.retryable = retryable

    def result(self):
        return dict(super().result(), retryable=self.retryable)


def ca_certificates(pem):
    """The CA certificates of a PEM bundle (the cluster's kubernetes-ca)."""
    from cryptography import x509
    blocks = pem.encode("ascii") if isinstance(pem, str) else pem
    loader = getattr(x509, "load_pem_x509_certificates", None)  # cryptography >= 39; nodes may have 38
    try:
        if loader:
            return loader(blocks)
        marker = b"-----END CERTIFICATE-----"
        return [x509.load_pem_x509_certificate(part + marker) for part in blocks.split(marker) if part.strip()]
    except ValueError as exc:
        raise WorkerBootstrapError("ca_cert: %s" % exc)


def current_certificate(item, cas, now):
    """The certificate on disk when it is still good (its key, signed by one of cas, 30 days or more left)."""
    cert_pem, key_pem = (node_file.read_current(item[field])[0] for field in ("cert_path", "key_path"))
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


def node_name(certificate):
    """The node a kubelet client certificate is for (CN system:node:<name>), or None."""
    from cryptography.x509.oid import NameOID
    common_name = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return common_name[len("system:node:"):] if common_name.startswith("system:node:") else None


def node_identity():
    """The node role's credentials that sign its identity (the instance profile, or AWS_* variables)."""
    try:
        import botocore.session
    except ImportError:
        raise WorkerBootstrapError("botocore is required to sign the node's identity", fix="Debian: python3-botocore")
    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise WorkerBootstrapError(
            "no AWS credentials on this node",
            fix="the instance profile (or AWS_* variables) must give the node role's credentials")
    return credentials.get_frozen_credentials()


def ask_service(server, ca_cert, region, sts_endpoint, names, include_node_config):
    """({name: (certificate PEM, key PEM)}, nodeup config text or None) from the bootstrap service."""
    sts = sts_endpoint or "https://sts.%s.amazonaws.com/" % region
    try:
        return bootstrap_service.request_bootstrap(server, ca_cert, node_identity(), sts, region, cert_names=names,
                                                   include_node_config=include_node_config)
    except bootstrap_service.Refused as exc:
        # A service that is up but not ready (its STS unreachable: 503) may answer later; a refusal will not.
        raise WorkerBootstrapError(str(exc), retryable=exc.status >= 500)
    except OSError as exc:
        raise WorkerBootstrapError("the bootstrap service at %s could not be reached: %s" % (server, exc),
                                   retryable=True)


def bootstrap_worker(server, ca_cert, region, sts_endpoint, certificates, include_node_config, check_mode):
    """The worker's credentials brought up to date -> {changed, changed_paths[, node_name][, nodeup_config]}.

    Check mode asks the service only for the nodeup config (and then for no certificate): missing or expiring
    certificates are reported as changes."""
    certs.require_cryptography()
    cas = ca_certificates(ca_cert)
    now = datetime.datetime.now(datetime.timezone.utc)
    current = {item["name"]: current_certificate(item, cas, now) for item in certificates}
    wanted = [item for item in certificates if current[item["name"]] is None]
    result = {"changed": bool(wanted), "changed_paths": []}
    if (wanted and not check_mode) or include_node_config:
        names = [item["name"] for item in wanted] if not check_mode else []
        issued, config = ask_service(server, ca_cert, region, sts_endpoint, names, include_node_config)
        for item in wanted:
            cert_pem, key_pem = issued.get(item["name"]) or (None, None)
            if cert_pem is not None:  # in check mode none is issued
                atomic_write(item["key_path"], 0o600, key_pem)
                atomic_write(item["cert_path"], 0o644, cert_pem)
                current[item["name"]] = certs.load_certificate(cert_pem)
            result["changed_paths"] += [item["key_path"], item["cert_path"]]
        if include_node_config:
            import yaml
            result["nodeup_config"] = yaml.safe_load(config or "") or {}
    if current.get("kubelet") is not None:
        result["node_name"] = node_name(current["kubelet"])
    return result
