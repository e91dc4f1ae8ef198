# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""s3:// state stores (boto3).  Objects are written with server-side encryption, as kops does."""

from __future__ import annotations

import os

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import NotFoundError, Store, StoreError

# kops' default; KOPS_STATE_S3_SSE_ALGORITHM overrides it (e.g. aws:kms).
DEFAULT_SSE = "AES256"
MISSING_CODES = ("NoSuchKey", "404", "NotFound")


class S3Store(Store):
    scheme = "s3"

    def __init__(self, url, bucket, prefix):
        Store.__init__(self, url)
        self.bucket = bucket
        self.prefix = prefix
        self.sse = os.environ.get("KOPS_STATE_S3_SSE_ALGORITHM", DEFAULT_SSE)
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = aws.client("s3", region=self._bucket_region())
        return self._client

    def _bucket_region(self):
        """The bucket's own region (kops looks it up too), else the configured default."""
        import botocore.exceptions
        probe = aws.client("s3", region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                           or "us-east-1")
        try:
            location = probe.get_bucket_location(Bucket=self.bucket).get("LocationConstraint")
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "finding the region of bucket %s" % self.bucket)
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: %s" % (self.base_url, exc))
        return location or "us-east-1"

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath) if self.prefix else relpath

    def _error(self, exc, what):
        code = ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")
        hints = {
            "NoSuchBucket": "create the bucket or fix state_store",
            "AccessDenied": "check the credentials' permissions on the bucket",
            "403": "check the credentials' permissions on the bucket",
        }
        hint = ("; " + hints[code]) if code in hints else ""
        return StoreError("state store %s: %s: %s%s" % (self.base_url, what, code or exc, hint))

    def read(self, relpath):
        import botocore.exceptions
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(relpath))["Body"].read()
        except botocore.exceptions.ClientError as exc:
            if ((exc.response or {}).get("Error") or {}).get("Code") in MISSING_CODES:
                raise NotFoundError("%s not found" % self.url(relpath))
            raise self._error(exc, "reading %s" % relpath)

    def write(self, relpath, data):
        import botocore.exceptions
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(relpath), Body=self._bytes(data),
                                   ServerSideEncryption=self.sse)
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "writing %s" % relpath)

    def delete(self, relpath):
        import botocore.exceptions
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(relpath))
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "deleting %s" % relpath)

    def list(self, prefix=""):
        import botocore.exceptions
        start = self._key(prefix)
        base = len(self.prefix) + 1 if self.prefix else 0
        try:
            objects = aws.paginate(self.client, "list_objects_v2", "Contents", Bucket=self.bucket, Prefix=start)
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "listing %s" % (prefix or "/"))
        return sorted(o["Key"][base:] for o in objects)
