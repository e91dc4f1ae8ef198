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
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.store import ABSENT, ConflictError, NotFoundError, Store, StoreError

# kops' default; KOPS_STATE_S3_SSE_ALGORITHM overrides it (e.g. aws:kms).
DEFAULT_SSE = "AES256"
# get_object says NoSuchKey; head_object has no body, so only the status.
MISSING_KEY_CODES = ("NoSuchKey", "404", "NotFound")
# A conditional request that found another version (412), or raced another conditional write (409).
PRECONDITION_CODES = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")
# DeleteObjects takes at most this many keys.
BATCH_DELETE = 1000
# S3-compatible stores without conditional writes.
UNSUPPORTED_CODES = ("NotImplemented", "501")
HINTS = {
    "NoSuchBucket": "create the bucket or fix state_store",
    "AccessDenied": "check the credentials' permissions on the bucket",
    "403": "check the credentials' permissions on the bucket",
    "AllAccessDisabled": "check the credentials' permissions on the bucket",
}


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
        self.conditional = True  # until the endpoint says it does not do If-Match / If-None-Match

    @property
    def client(self):
        if self._client is None:
            self._client = aws.client("s3", region=self._client_region(), endpoint_url=self.endpoint)
        return self._client

    @staticmethod
    def _client_region():
        """AWS_REGION / AWS_DEFAULT_REGION, else the module's region or the AWS config's (botocore: else us-east-1);
        never a GetBucketLocation (kops asks it, one request per run).

        S3 answers a request sent to another region than the bucket's with a redirect naming the bucket's region
        (x-amz-bucket-region); botocore's S3 region redirector re-sends it there and remembers the bucket's region
        for the client's later calls.  So a bucket in the configured region costs nothing and one elsewhere costs
        the one request the lookup cost.
        """
        return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")

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

    def _get(self, relpath):
        answer = self._call("reading %s" % relpath, "get_object", Key=self._key(relpath))
        return answer["Body"].read(), answer["ETag"]

    def _head(self, relpath):
        try:
            return self._call("checking %s" % relpath, "head_object", Key=self._key(relpath))["ETag"]
        except NotFoundError:
            return ABSENT

    def _condition(self, expect):
        """put_object / delete_object arguments for an expected version (S3 conditional requests)."""
        if expect is None or not self.conditional:
            return {}
        return {"IfNoneMatch": "*"} if expect is ABSENT else {"IfMatch": expect}

    def _conditional_call(self, relpath, expect, what, operation, **kwargs):
        """A put/delete that must find expect; ConflictError when S3 says the precondition failed.

        S3-compatible stores that do not implement conditional requests answer
        NotImplemented: then the version is compared by a HEAD first (a small
        race remains; the lease still keeps our own runs apart) and a note says so.
        """
        import botocore.exceptions
        try:
            return getattr(self.client, operation)(Bucket=self.bucket, Key=self._key(relpath),
                                                   **dict(kwargs, **self._condition(expect)))
        except botocore.exceptions.ClientError as exc:
            code = _code(exc)
            if code in PRECONDITION_CODES or (expect not in (None, ABSENT) and code in MISSING_KEY_CODES):
                raise ConflictError("%s was changed by another writer" % self.url(relpath))
            if code in UNSUPPORTED_CODES and self.conditional and expect is not None:
                self.conditional = False
                self.notes.append("state store %s does not support conditional writes (S3 If-Match); "
                                  "writes are checked by a read first" % self.base_url)
                return self._conditional_call(relpath, expect, what, operation, **kwargs)
            raise self._error(exc, what)
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: %s: %s" % (self.base_url, what, exc))

    def _put(self, relpath, data, expect):
        # put_object replaces the object in one request: readers see old or new, never half.
        if expect is not None and not self.conditional and _same_etag(self._head(relpath), expect) is False:
            raise ConflictError("%s was changed by another writer" % self.url(relpath))
        return self._conditional_call(relpath, expect, "writing %s" % relpath, "put_object", Body=data,
                                      ServerSideEncryption=self.sse)["ETag"]

    def _remove(self, relpath, expect):
        # S3 answers 204 for a key that is not there: deleting nothing is fine.
        if expect is not None and not self.conditional and _same_etag(self._head(relpath), expect) is False:
            raise ConflictError("%s was changed by another writer" % self.url(relpath))
        self._conditional_call(relpath, expect, "deleting %s" % relpath, "delete_object")

    def _remove_many(self, items):
        """DeleteObjects, 1,000 keys a request (S3's limit, kops' batch), each key conditional on its ETag (S3's
        conditional DeleteObjects); a store without conditional requests, or one that refuses the batch, gets
        one request per key as before."""
        import botocore.exceptions
        if not self.conditional:
            return Store._remove_many(self, items)
        conflicts = []
        for start in range(0, len(items), BATCH_DELETE):
            batch = items[start:start + BATCH_DELETE]
            keys = {self._key(relpath): (relpath, expect) for relpath, expect in batch}
            objects = [dict({"Key": key}, **({"ETag": expect} if expect is not None else {}))
                       for key, (_relpath, expect) in keys.items()]
            try:
                answer = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True})
            except botocore.exceptions.ClientError as exc:
                if _code(exc) in UNSUPPORTED_CODES + ("MalformedXML",):
                    conflicts += Store._remove_many(self, batch)
                    continue
                raise self._error(exc, "deleting %d objects" % len(batch))
            except botocore.exceptions.BotoCoreError as exc:
                raise StoreError("state store %s: deleting %d objects: %s" % (self.base_url, len(batch), exc))
            failed = []
            for error in answer.get("Errors") or []:
                relpath, expect = keys.get(error.get("Key"), (error.get("Key"), None))
                code = error.get("Code")
                if code in PRECONDITION_CODES or (expect is not None and code in MISSING_KEY_CODES):
                    conflicts.append(relpath)
                elif code not in MISSING_KEY_CODES:
                    failed.append("%s: %s" % (relpath, code))
            if failed:
                raise StoreError("state store %s: deleting %d objects: %s" % (self.base_url, len(batch), "; ".join(failed)))
        return conflicts

    def _list(self, prefix=""):
        import botocore.exceptions
        base = len(self._key(""))
        try:
            objects = aws.paginate(self.client, "list_objects_v2", "Contents", Bucket=self.bucket,
                                   Prefix=self._key(prefix))
        except botocore.exceptions.ClientError as exc:
            raise self._error(exc, "listing %s" % (prefix or "/"))
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError("state store %s: listing %s: %s" % (self.base_url, prefix or "/", exc))
        return {o["Key"][base:]: (o["ETag"], _etag_md5(o["ETag"])) for o in objects}


def _same_etag(current, expect):
    if expect is ABSENT or current is ABSENT:
        return current is expect
    return current.strip('"') == expect.strip('"')


def _etag_md5(etag):
    """The md5 an ETag is for a single-part upload (SSE-S3 or none); None when it cannot be one.

    An SSE-KMS object's ETag is 32 hex digits too but not its md5: Store.matches
    only trusts a match, and reads the object when the digests differ.
    """
    etag = (etag or "").strip('"').lower()
    return etag if len(etag) == 32 and all(c in "0123456789abcdef" for c in etag) else None
