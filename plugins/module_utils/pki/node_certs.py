# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Certificates a control-plane node issues for itself from the cluster's CAs.

kops' nodeup does this on control-plane nodes (they may read pki/ in the
state store); workers never do: they get their kubelet certificate through
TLS bootstrapping.  A certificate on disk is kept while it still says what is
wanted: signed by the signer's primary CA, same subject, names and usages, the
key matching, and more than RENEW_BEFORE left.  Otherwise it is issued again.
"""

from __future__ import annotations

import datetime
import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore
from ansible_collections.kubeops.kops.plugins.module_utils.errors import PkiError

RENEW_BEFORE = datetime.timedelta(days=30)
USAGE_OIDS = {"client": "1.3.6.1.5.5.7.3.2", "server": "1.3.6.1.5.5.7.3.1"}


class NodeCertificateError(PkiError):
    pass


def normalize(spec):
    """A certificate request with every list present and sorted, names validated."""
    if not spec.get("common_name"):
        raise NodeCertificateError("certificates[%s]: common_name is required" % spec.get("cert_path"))
    # A certificate kept inline in a kubeconfig (nodeup's kubeconfig requests) has no files of its own.
    for field in ("signer",) if spec.get("kubeconfig") else ("signer", "cert_path", "key_path"):
        if not spec.get(field):
            raise NodeCertificateError("certificate %s: %s is required" % (spec["common_name"], field))
    usages = sorted(set(spec.get("usages") or ["client"]))
    unknown = [u for u in usages if u not in USAGE_OIDS]
    if unknown:
        raise NodeCertificateError("certificate %s: usages %s unknown (use client and/or server)"
                                   % (spec["common_name"], ", ".join(unknown)))
    addresses = []
    for address in spec.get("ip_addresses") or []:
        try:
            addresses.append(str(ipaddress.ip_address(address)))
        except ValueError:
            raise NodeCertificateError("certificate %s: ip_addresses: %r is not an IP address"
                                       % (spec["common_name"], address))
    return dict(spec, usages=usages, organizations=sorted(spec.get("organizations") or []),
                dns_names=sorted(set(spec.get("dns_names") or [])), ip_addresses=sorted(set(addresses)))


def _subject_fields(certificate):
    from cryptography.x509.oid import NameOID
    common = [a.value for a in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = sorted(a.value for a in certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return (common[0] if common else None), orgs


def _alt_names(certificate):
    from cryptography import x509
    try:
        sans = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    return (sorted(sans.get_values_for_type(x509.DNSName)),
            sorted(str(i) for i in sans.get_values_for_type(x509.IPAddress)))


def _usages(certificate):
    from cryptography import x509
    try:
        extended = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return []
    by_oid = {oid: name for name, oid in USAGE_OIDS.items()}
    return sorted(by_oid[o.dotted_string] for o in extended if o.dotted_string in by_oid)


def reissue_reason(spec, cert_pem, key_pem, signer_certificate, now):
    """Why the certificate on disk must be issued again, or None when it is still right."""
    if not cert_pem or not key_pem:
        return "missing"
    try:
        certificate = certs.load_certificate(cert_pem)
        key = certs.load_key(key_pem)
    except ValueError:
        return "unreadable"
    from cryptography.hazmat.primitives import serialization
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    if (key.public_key().public_bytes(serialization.Encoding.DER, public)
            != certificate.public_key().public_bytes(serialization.Encoding.DER, public)):
        return "key does not match certificate"
    if not certs.issued_by(certificate, signer_certificate):
        return "not signed by the primary %s" % spec["signer"]
    if _subject_fields(certificate) != (spec["common_name"], spec["organizations"]):
        return "subject changed"
    if _alt_names(certificate) != (spec["dns_names"], spec["ip_addresses"]):
        return "names changed"
    if _usages(certificate) != spec["usages"]:
        return "usages changed"
    if certs.not_after(certificate) - now < RENEW_BEFORE:
        return "expires %s" % certs.not_after(certificate).strftime("%Y-%m-%d")
    return None


def signer_material(cluster_store, name, cache):
    """(primary certificate, primary key, trusted bundle PEM) of a keyset, read once per run."""
    if name not in cache:
        keyset = keystore.load(cluster_store, name)
        if keyset is None:
            raise NodeCertificateError("signer %s: no keyset at %s; run kubeops.kops.keypair first"
                                       % (name, cluster_store.store.url(cluster_store.path(keystore.path(name)))))
        certificate, key = keystore.primary(keyset)
        cache[name] = (certificate, key, keystore.trusted_certificates_pem(keyset))
    return cache[name]


def issue_files(spec, signer_certificate, signer_key, now):
    """(certificate PEM, key PEM) for a normalized request."""
    certificate, key = certs.issue(signer_certificate, signer_key, spec["common_name"], spec["organizations"],
                                   spec["usages"], spec["dns_names"], spec["ip_addresses"], now=now)
    return certs.certificate_pem(certificate), certs.key_pem(key)


def describe(cert_pem):
    """What may be shown about a certificate: subject, serial, validity (no key material)."""
    certificate = certs.load_certificate(cert_pem)
    common, orgs = _subject_fields(certificate)
    return {"common_name": common, "organizations": orgs, "serial": certs.key_id(certificate),
            "expires": certs.not_after(certificate).strftime("%Y-%m-%dT%H:%M:%SZ")}
