# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""s3:// state stores (boto3).  Objects are written with server-side encryption, as kops does.

Clients come from cloud/aws.py (botocore's standard retries, paginators,
AWS_ENDPOINT_URL[_S3], profiles, regions); this file only maps S3's answers
onto the Store interface and its errors onto messages that name the URL.
"""

from __future__ import annotations

import os

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import NotFoundError, Store, StoreError

# kops' default; KOPS_STATE_S3_SSE_ALGORITHM overrides it (e.g. aws:kms).
DEFAULT_SSE = "AES256"
# get_object says NoSuchKey; head_object has no body, so only the status.
MISSING_KEY_CODES = ("NoSuchKey", "404", "NotFound")
HINTS = {
    "NoSuchBucket": "create the bucket or fix state_store",
    "AccessDenied": "check the credentials' permissions on the bucket",
    "403": "check the credentials' permissions on the bucket",
    "AllAccessDisabled": "check the credentials' permissions on the bucket",
}
# get_bucket_location's legacy answers.
LEGACY_LOCATIONS = {None: "us-east-1", "": "us-east-1", "EU": "eu-west-1"}


def _code(exc):
    return ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")


class S3Store(Store):
    scheme = "s3"

    def __init__(self, url, bucket, prefix, endpoint=None):
        Store.__init__(self, url)
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        self.sse = os.environ.get("KOPS_STATE_S3_SSE_ALGORITHM", DEFAULT_SSE)
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = aws.client("s3", region=self._bucket_region(), endpoint_url=self.endpoint)
        return self._client

    def _bucket_region(self):
        """The bucket's own region (kops looks it up too), else the configured one.

        Talking to the bucket's region avoids a redirect per call.  Credentials
        that may use the bucket but not GetBucketLocation fall back to the
        configured region; botocore then follows S3's redirects itself.
        """
        import botocore.exceptions
        configured = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        probe = aws.client("s3", region=configured or "us-east-1", endpoint_url=self.endpoint)
        try:
            location = probe.get_bucket_location(Bucket=self.bucket).get("LocationConstraint")
        except botocore.exceptions.ClientError as exc:
            if _code(exc) in ("AccessDenied", "403") and configured:
                return configured
            raise self._error(exc, "finding the region of bucket %s" % self.bucket)
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: %s" % (self.base_url, exc))
        return LEGACY_LOCATIONS.get(location, location)

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath) if self.prefix else relpath

    def _error(self, exc, what):
        code = _code(exc)
        hint = ("; " + HINTS[code]) if code in HINTS else ""
        return StoreError("state store %s: %s: %s%s" % (self.base_url, what, code or exc, hint))

    def _call(self, what, operation, **kwargs):
        """One S3 call with its errors mapped; a missing key raises NotFoundError."""
        import botocore.exceptions
        try:
            return getattr(self.client, operation)(Bucket=self.bucket, **kwargs)
        except botocore.exceptions.ClientError as exc:
            if "Key" in kwargs and _code(exc) in MISSING_KEY_CODES:
                raise NotFoundError("%s not found" % self.url(kwargs["Key"][len(self._key("")):]))
            raise self._error(exc, what)
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: %s: %s" % (self.base_url, what, exc))

    def read(self, relpath):
        return self._call("reading %s" % relpath, "get_object", Key=self._key(relpath))["Body"].read()

    def exists(self, relpath):
        try:
            self._call("checking %s" % relpath, "head_object", Key=self._key(relpath))
        except NotFoundError:
            return False
        return True

    def write(self, relpath, data):
        # put_object replaces the object in one request: readers see old or new, never half.
        self._call("writing %s" % relpath, "put_object", Key=self._key(relpath), Body=self._bytes(data),
                   ServerSideEncryption=self.sse)

    def delete(self, relpath):
        # S3 answers 204 for a key that is not there: deleting nothing is fine.
        self._call("deleting %s" % relpath, "delete_object", Key=self._key(relpath))

    def list(self, prefix=""):
        import botocore.exceptions
        base = len(self._key(""))
        try:
            objects = aws.paginate(self.client, "list_objects_v2", "Contents", Bucket=self.bucket,
                                   Prefix=self._key(prefix))
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "listing %s" % (prefix or "/"))
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: listing %s: %s" % (self.base_url, prefix or "/", exc))
        return sorted(o["Key"][base:] for o in objects)
