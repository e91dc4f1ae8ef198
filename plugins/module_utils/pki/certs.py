# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Keys and certificates with `cryptography`: CAs and the certificates they sign.

Key ids are certificate serial numbers in decimal, as kops' keysets use them.
"""

from __future__ import annotations

import datetime
import ipaddress

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:  # reported by require_cryptography()
    x509 = None

RSA_BITS = 2048
CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=455)
# kops backdates certificates a little so that slightly skewed clocks accept them.
BACKDATE = datetime.timedelta(hours=1)


def require_cryptography():
    if x509 is None:
        raise ImportError("the cryptography library is required for kubeops.kops PKI (pip install cryptography)")


def new_private_key():
    require_cryptography()
    return rsa.generate_private_key(public_exponent=65537, key_size=RSA_BITS)


def _name(common_name, organizations=()):
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def new_ca(common_name, key=None, now=None):
    """A self-signed CA certificate and its key."""
    require_cryptography()
    key = key or new_private_key()
    now = now or _now()
    subject = _name(common_name)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE).not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, content_commitment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return certificate, key


def issue(ca_certificate, ca_key, common_name, organizations=(), usages=("client",), dns_names=(),
          ip_addresses=(), key=None, now=None, validity=LEAF_VALIDITY):
    """A leaf certificate signed by the CA; usages: "client" and/or "server"; validity: a timedelta."""
    require_cryptography()
    key = key or new_private_key()
    now = now or _now()
    extended = [{"client": ExtendedKeyUsageOID.CLIENT_AUTH, "server": ExtendedKeyUsageOID.SERVER_AUTH}[u]
                for u in usages]
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organizations)).issuer_name(ca_certificate.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE).not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, content_commitment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    )
    names = [x509.DNSName(n) for n in dns_names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ip_addresses]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def certificate_pem(certificate):
    return certificate.public_bytes(serialization.Encoding.PEM)


def key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def load_certificate(pem):
    require_cryptography()
    return x509.load_pem_x509_certificate(pem)


def load_key(pem):
    require_cryptography()
    return serialization.load_pem_private_key(pem, password=None)


def key_id(certificate):
    return str(certificate.serial_number)


# Nodes run their distribution's cryptography (Debian 12: 38, Ubuntu 22.04: 3.4), so no newer-only API here.
def _utc(certificate, field):
    aware = getattr(certificate, field + "_utc", None)  # cryptography >= 42; the naive field is deprecated there
    return aware if aware is not None else getattr(certificate, field).replace(tzinfo=datetime.timezone.utc)


def not_after(certificate):
    """Expiry as an aware UTC datetime."""
    return _utc(certificate, "not_valid_after")


def not_before(certificate):
    return _utc(certificate, "not_valid_before")


def issued_by(certificate, signer_certificate):
    """True when signer_certificate's key signed certificate and it names signer as issuer (RSA CAs)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import padding
    if certificate.issuer != signer_certificate.subject:
        return False
    try:
        signer_certificate.public_key().verify(certificate.signature, certificate.tbs_certificate_bytes,
                                               padding.PKCS1v15(), certificate.signature_hash_algorithm)
    except InvalidSignature:
        return False
    return True
