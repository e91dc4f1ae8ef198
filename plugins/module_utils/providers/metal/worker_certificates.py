# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A metal worker's certificates without the cluster's bootstrap token (docs/metal.md, "How a node proves who it is").

kops' way (its enroll registers the host's SSH key; kops-controller signs what nodeup asks for): the worker makes its
keys on the host (``host_keys``, kubeops.kops.node_keys), only their public halves go to the controller, which holds
the store and signs the kubelet's client certificate (``system:node:<host>``), its serving certificate and
kube-proxy's through the bootstrap service's ``Issuer`` (``issue``, kubeops.kops.node_issue); the certificates come
back.  The SSH connection to the inventory's host is the identity: the controller signs for the host it reaches.  A
worker never sees a CA key nor a cluster-wide secret."""

from __future__ import annotations

import datetime

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service, node_file
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import worker_credentials
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

# kops-controller's certNames for a worker; where nodeup keeps them (worker_credentials.DEFAULT_CERTIFICATES).
CERTIFICATES = worker_credentials.DEFAULT_CERTIFICATES


class WorkerCertificateError(NodeError):
    pass


def host_keys(ca_pem, certificates=CERTIFICATES, now=None, check_mode=False):
    """On the worker: {name: public key PEM} for each certificate that is missing or expiring (a new key written at its
    key_path, 0600, unless check_mode: then the name maps to None).  Good certificates are kept."""
    certs.require_cryptography()
    cas = worker_credentials.ca_certificates(ca_pem)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    wanted = {}
    for item in certificates:
        if worker_credentials.current_certificate(item, cas, now) is not None:
            continue
        if check_mode:
            wanted[item["name"]] = None
            continue
        key = certs.new_private_key()
        atomic_write(item["key_path"], 0o600, certs.key_pem(key))
        wanted[item["name"]] = public_pem(key)
    return wanted


def public_pem(key):
    from cryptography.hazmat.primitives import serialization
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def issue(keyset_primary, node_name, addresses, public_keys):
    """On the controller: {name: certificate PEM} for the host's public keys, signed by kubernetes-ca (keyset_primary:
    (CA certificate, CA key)) as kops-controller signs them: the kubelet's client certificate for system:node:<node>,
    its serving certificate for the node's name and addresses, kube-proxy's."""
    ca_certificate, ca_key = keyset_primary
    issuer = bootstrap_service.Issuer(certs.certificate_pem(ca_certificate), certs.key_pem(ca_key))
    identity = {"node_name": node_name, "instance_id": node_name,
                "certificate_names": [node_name] + [a for a in addresses if a and a != node_name]}
    issued = {}
    for name, pem in sorted(public_keys.items()):
        try:
            issued[name] = issuer.issue(name, pem, identity)
        except bootstrap_service.Refused as exc:
            raise WorkerCertificateError("host %s: %s" % (node_name, exc))
    return issued


def write_certificates(issued, certificates=CERTIFICATES, check_mode=False):
    """On the worker: each issued certificate at its cert_path (0644), checked against the key made for it.  Returns
    the paths written."""
    written = []
    for item in certificates:
        pem = issued.get(item["name"])
        if not pem:
            continue
        if node_file.read_current(item["cert_path"])[0] == pem.encode("ascii"):
            continue
        key_pem = node_file.read_current(item["key_path"])[0]
        if not check_mode:
            certificate = certs.load_certificate(pem.encode("ascii"))
            if key_pem is None or certificate.public_key().public_numbers() != \
                    certs.load_key(key_pem).public_key().public_numbers():
                raise WorkerCertificateError("the %s certificate is not for the key at %s: enroll again"
                                             % (item["name"], item["key_path"]))
            atomic_write(item["cert_path"], 0o644, pem)
        written.append(item["cert_path"])
    return written
