# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Service-account issuer discovery documents (kops' IssuerDiscoveryModelBuilder).

With ``spec.serviceAccountIssuerDiscovery.discoveryStore`` the cluster's OIDC discovery document
(``.well-known/openid-configuration``) and its signing keys (``openid/v1/jwks``) are published in
that store, which is served at the service-account issuer's URL: an IAM OIDC provider (or anyone
checking a projected token) reads them.  Every trusted key of the ``service-account`` keyset is
published, so during a rotation (kubeops.kops.keypair rotate) tokens signed by either key verify.
"""

from __future__ import annotations

import base64
import hashlib
import json

from ansible_collections.kubeops.kops.plugins.module_utils.errors import PkiError

DISCOVERY_PATH = ".well-known/openid-configuration"
JWKS_PATH = "openid/v1/jwks"
# kops' ManagedFile names (its Terraform aws_s3_object names, dots as dashes).
DISCOVERY_NAME = "discovery.json"
JWKS_NAME = "keys.json"
SIGNING_KEYSET = "service-account"


def _b64url(data):
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _int_bytes(value):
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _go_json(document):
    """encoding/json MarshalIndent(v, "", ""): one member per line, no indentation, HTML characters escaped."""
    text = json.dumps(document, indent="", ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")).encode("utf-8")


def discovery_document(issuer):
    """The OIDC discovery document of an issuer URL (kops buildDiscoveryJSON)."""
    return _go_json({
        "issuer": issuer,
        "jwks_uri": "%s/%s" % (issuer, JWKS_PATH),
        "authorization_endpoint": "urn:kubernetes:programmatic_authorization",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "claims_supported": ["sub", "iss"],
    })


def jwks_document(keyset):
    """The JSON web key set of a service-account keyset: each trusted RSA key, as kops' OIDCKeys writes it
    (key id: the unpadded base64url SHA-256 of the public key's DER SubjectPublicKeyInfo; sorted by it)."""
    from cryptography.hazmat.primitives import serialization
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    from cryptography.x509.oid import NameOID
    keys = []
    for item in (keyset or {}).get("spec", {}).get("keys") or []:
        if item.get("distrustTimestamp"):
            continue
        certificate = certs.load_certificate(base64.b64decode(item["publicMaterial"]))
        names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if not names or names[0].value != SIGNING_KEYSET:
            continue
        public = certificate.public_key()
        der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        numbers = public.public_numbers()
        keys.append({"use": "sig", "kty": "RSA", "kid": _b64url(hashlib.sha256(der).digest()), "alg": "RS256",
                     "n": _b64url(_int_bytes(numbers.n)), "e": _b64url(_int_bytes(numbers.e))})
    keys.sort(key=lambda key: key["kid"])
    return _go_json({"keys": keys})


def discovery_store(spec):
    """spec.serviceAccountIssuerDiscovery.discoveryStore, or None."""
    return (spec.get("serviceAccountIssuerDiscovery") or {}).get("discoveryStore") or None


def documents(completed, keyset):
    """[(kops' file name, path under the discovery store, bytes)]; [] without a discovery store."""
    spec = completed["spec"]
    if not discovery_store(spec):
        return []
    issuer = (spec.get("kubeAPIServer") or {}).get("serviceAccountIssuer")
    if not issuer:
        raise PkiError("spec.kubeAPIServer.serviceAccountIssuer is missing from the completed spec: the discovery "
                       "documents name it (complete the cluster spec first)")
    if keyset is None:
        raise PkiError("keyset service-account is missing from the state store: its public keys are published in "
                       "spec.serviceAccountIssuerDiscovery.discoveryStore", fix="run kubeops.kops.cluster_update again")
    return [(JWKS_NAME, JWKS_PATH, jwks_document(keyset)), (DISCOVERY_NAME, DISCOVERY_PATH, discovery_document(issuer))]
