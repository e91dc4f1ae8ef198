# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Publishing the service-account issuer's discovery documents in spec.serviceAccountIssuerDiscovery.discoveryStore
(kops' IssuerDiscoveryModelBuilder ManagedFiles), for targets that write them directly (direct, CloudFormation,
Terraform on a store its provider has no object resource for).

The documents must be readable by whoever verifies tokens (AWS STS, through the IAM OIDC provider).  As in kops,
when the issuer is the S3 bucket's own URL and the bucket is not public, each object gets a public-read ACL.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

PUBLIC_READ = "public-read"


def _issuer_is_bucket(spec, bucket):
    issuer = (spec.get("kubeAPIServer") or {}).get("serviceAccountIssuer") or ""
    return issuer.startswith("https://%s.s3." % bucket)


def bucket_is_public(client, bucket):
    """S3's own answer (GetBucketPolicyStatus); a bucket without a policy is not public."""
    import botocore.exceptions
    try:
        return bool(client.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"])
    except botocore.exceptions.ClientError as exc:
        if (exc.response.get("Error") or {}).get("Code") in ("NoSuchBucketPolicy", "NoSuchPolicy"):
            return False
        raise


def needs_public_acl(completed, store=None, warn=None):
    """Whether kops would write the documents with a public-read ACL: an s3:// store serving the issuer itself, in a
    bucket that is not public.  Without an answer from S3 (no credentials) the warning says what to check."""
    spec = completed["spec"]
    url = discovery.discovery_store(spec) or ""
    if not url.startswith("s3://"):
        return False
    bucket = url[len("s3://"):].split("/", 1)[0]
    if not _issuer_is_bucket(spec, bucket):
        return False  # a user-managed issuer (kops: "using user managed serviceAccountIssuers")
    try:
        store = store or vfs.open_store(url)
        return not bucket_is_public(store.client, bucket)
    except Exception as exc:  # pylint: disable=broad-except  # no credentials: rendered for review
        if warn:
            warn("could not ask S3 whether discovery bucket %s is public (%s): its documents are rendered without a "
                 "public-read ACL; the IAM OIDC provider needs them readable" % (bucket, exc))
        return False


def publish(completed, documents, dry_run=False, warn=None):
    """Write each (name, path, bytes) of discovery.documents() under the discovery store where it differs; whether
    anything differed."""
    url = discovery.discovery_store(completed["spec"])
    if not url or not documents:
        return False
    store = vfs.open_store(url)
    public = needs_public_acl(completed, store, warn)
    changed = False
    for _name, path, data in documents:
        if store.matches(path, data):
            continue
        changed = True
        if dry_run:
            continue
        store.write(path, data)
        if public:
            store.client.put_object_acl(Bucket=store.bucket, Key=store._key(path),  # pylint: disable=protected-access
                                        ACL=PUBLIC_READ)
    return changed


def unpublish(spec):
    """Remove the discovery documents from spec.serviceAccountIssuerDiscovery.discoveryStore, as kops' delete
    cluster does (absent ones are fine: a delete run again); the URLs removed, [] without a discovery store."""
    url = discovery.discovery_store(spec or {})
    if not url:
        return []
    store = vfs.open_store(url)
    removed = []
    for path in (discovery.JWKS_PATH, discovery.DISCOVERY_PATH):
        if store.exists(path):
            store.delete(path)
            removed.append(store.url(path))
    return removed
