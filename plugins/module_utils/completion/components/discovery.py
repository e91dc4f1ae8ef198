# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Service-account issuer and JWKS URI (kops DiscoveryOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context

API_AUDIENCES = ["kubernetes.svc.default"]
JWKS_PATH = "/openid/v1/jwks"
OPEN_TO_ALL = ("0.0.0.0/0", "::/0")


def build(spec, ctx):
    apiserver = context.section(spec, "kubeAPIServer")
    if not apiserver.get("apiAudiences"):
        apiserver["apiAudiences"] = list(API_AUDIENCES)
    if apiserver.get("serviceAccountIssuer") is None:
        apiserver["serviceAccountIssuer"] = _issuer(spec, ctx)
    apiserver["serviceAccountJWKSURI"] = apiserver["serviceAccountIssuer"] + JWKS_PATH


def _issuer(spec, ctx):
    discovery = spec.get("serviceAccountIssuerDiscovery") or {}
    if discovery.get("discoveryStore"):
        return discovery_store_url(discovery["discoveryStore"], context.is_ipv6_only(spec), ctx.bucket_region)
    if discovery.get("discoveryService") is not None:
        url = discovery["discoveryService"].get("url")
        if not url:
            raise errors.ValidationError([errors.required("spec.serviceAccountIssuerDiscovery.discoveryService.url",
                                                          "the discovery service needs a URL")], "completed cluster")
        return url
    public_name = spec.get("masterPublicName")
    if public_name and _serves_public_jwks(spec):
        return "https://" + public_name
    return "https://api.internal." + ctx.cluster_name


def _serves_public_jwks(spec):
    """The API server itself can serve the JWKS publicly if anonymous requests may reach it from anywhere."""
    if not (spec.get("kubeAPIServer") or {}).get("anonymousAuth"):
        return False
    return any(cidr in OPEN_TO_ALL for cidr in spec.get("kubernetesApiAccess") or [])


# HTTPS form of a discovery store, by scheme (kops' VFS GetHTTPsUrl); S3 names the bucket's region when
# it is known and uses the dual-stack endpoint for IPv6-only clusters.
S3_URLS = {
    (False, False): "https://{bucket}.s3.amazonaws.com",
    (False, True): "https://{bucket}.s3.{region}.amazonaws.com",
    (True, False): "https://{bucket}.s3.dualstack.amazonaws.com",
    (True, True): "https://{bucket}.s3.dualstack.{region}.amazonaws.com",
}
BUCKET_URLS = {"gs": "https://storage.googleapis.com/{bucket}", "memfs": "https://{bucket}"}


def discovery_store_url(store, ipv6=False, bucket_region=None):
    """The public HTTPS URL of an s3:// or gs:// discovery store (memfs:// in tests)."""
    scheme, sep, rest = store.partition("://")
    bucket, _sep, key = rest.partition("/")
    if scheme == "s3":
        region = bucket_region(bucket) if bucket_region else None
        url = S3_URLS[(bool(ipv6), bool(region))].format(bucket=bucket, region=region)
    elif sep and scheme in BUCKET_URLS:
        url = BUCKET_URLS[scheme].format(bucket=bucket)
    else:
        raise errors.ValidationError([errors.invalid("spec.serviceAccountIssuerDiscovery.discoveryStore", store,
                                                     "use an s3:// or gs:// location")], "completed cluster")
    key = key.strip("/")
    return url + "/" + key if key else url
