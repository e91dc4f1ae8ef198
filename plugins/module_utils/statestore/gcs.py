# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""gs:// state stores over the GCS JSON API with google-auth's AuthorizedSession.

STORAGE_EMULATOR_HOST (as Google's own clients honour it) or an explicit
endpoint points the store elsewhere; an emulator is spoken to with anonymous
credentials, Google itself with google.auth.default().
"""

from __future__ import annotations

import os

from ansible_collections.kubeops.kops.plugins.module_utils.errors import unreachable
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.store import ABSENT, ConflictError, NotFoundError, Store, StoreError

GCS_ENDPOINT = "https://storage.googleapis.com"
SCOPES = ("https://www.googleapis.com/auth/devstorage.read_write",)
TIMEOUT = 60
LIST_PAGE_SIZE = 1000
# GCS' own retry guidance: 408, 429 and 5xx, with exponential backoff.  Every
# call here is safe to repeat (a media upload replaces the object whole; a
# conditional one whose first attempt landed fails its precondition, and
# Store.write then finds its own bytes there).
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)
RETRY_ATTEMPTS = 5


class _PreconditionFailed(StoreError):
    """HTTP 412: an ifGenerationMatch that did not match."""


def _quote(text):
    from urllib.parse import quote
    return quote(text, safe="")


def _is_emulator(endpoint):
    # Google serves GCS over https only; a plain-http endpoint is an emulator.
    return endpoint.startswith("http://")


class GCSStore(Store):
    scheme = "gs"

    def __init__(self, url, bucket, prefix, endpoint=None):
        Store.__init__(self, url)
        self.bucket = bucket
        self.prefix = prefix
        emulator = os.environ.get("STORAGE_EMULATOR_HOST")
        self.endpoint = (endpoint or emulator or GCS_ENDPOINT).rstrip("/")
        if "://" not in self.endpoint:
            self.endpoint = "http://" + self.endpoint
        self.anonymous = (bool(emulator) and not endpoint) or _is_emulator(self.endpoint)
        self._session = None
        self._bucket_seen = False

    @property
    def session(self):
        if self._session is None:
            try:
                import google.auth
                import google.auth.exceptions
                import requests.adapters
                import urllib3.util.retry
                from google.auth.credentials import AnonymousCredentials
                from google.auth.transport.requests import AuthorizedSession
            except ImportError:
                raise StoreError("gs:// state stores need google-auth and requests (pip install google-auth requests)")
            if self.anonymous:
                credentials = AnonymousCredentials()
            else:
                try:
                    credentials = google.auth.default(scopes=SCOPES)[0]
                except google.auth.exceptions.DefaultCredentialsError as exc:
                    raise StoreError("state store %s: no Google credentials (%s)" % (self.base_url, exc))
            session = AuthorizedSession(credentials)
            retry = urllib3.util.retry.Retry(total=RETRY_ATTEMPTS, backoff_factor=0.5, status_forcelist=RETRY_STATUSES,
                                             allowed_methods=None, raise_on_status=False)
            for scheme in ("http://", "https://"):
                session.mount(scheme, requests.adapters.HTTPAdapter(max_retries=retry))
            self._session = session
        return self._session

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath) if self.prefix else relpath

    def _object_url(self, relpath):
        return "%s/storage/v1/b/%s/o/%s" % (self.endpoint, self.bucket, _quote(self._key(relpath)))

    def _request(self, method, url, what, relpath=None, **kwargs):
        """One JSON API call with its errors mapped; a missing object (relpath given) raises NotFoundError."""
        import requests
        try:
            response = self.session.request(method, url, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise StoreError("state store %s: %s: %s" % (self.base_url, what, unreachable(exc)))
        if response.status_code < 400:
            return response
        message = _error_message(response)
        if response.status_code == 412:
            raise _PreconditionFailed(message)
        if response.status_code == 404 and relpath is not None:
            self._require_bucket(what)
            raise NotFoundError("%s not found" % self.url(relpath))
        hint = {401: "; check the Google credentials",
                403: "; check the credentials' permissions on the bucket",
                404: "; create the bucket or fix state_store"}.get(response.status_code, "")
        raise StoreError("state store %s: %s: HTTP %d %s%s"
                         % (self.base_url, what, response.status_code, message, hint))

    def _require_bucket(self, what):
        """Raise StoreError if the bucket is missing, so a 404 on an object means the object.

        GCS answers 404 for both; only its message tells them apart, and
        emulators do not copy the message.  So ask for the bucket, once.
        Credentials with object-only roles may not read bucket metadata (403):
        then the bucket is taken to exist.
        """
        import requests
        if self._bucket_seen:
            return
        try:
            response = self.session.get("%s/storage/v1/b/%s" % (self.endpoint, self.bucket),
                                        params={"fields": "name"}, timeout=TIMEOUT)
        except requests.RequestException as exc:
            raise StoreError("state store %s: %s: %s" % (self.base_url, what, unreachable(exc)))
        if response.status_code == 404:
            raise StoreError("state store %s: %s: bucket %s does not exist; create the bucket or fix state_store"
                             % (self.base_url, what, self.bucket))
        self._bucket_seen = True

    def _get(self, relpath):
        response = self._request("GET", self._object_url(relpath), "reading %s" % relpath, relpath,
                                 params={"alt": "media"})
        generation = response.headers.get("x-goog-generation")
        if generation is None:  # not every emulator sends it: ask for the metadata
            generation = self._head(relpath)
        return response.content, generation

    def _head(self, relpath):
        try:
            return str(self._request("GET", self._object_url(relpath), "checking %s" % relpath, relpath,
                                     params={"fields": "generation"}).json()["generation"])
        except NotFoundError:
            return ABSENT

    @staticmethod
    def _condition(expect):
        """GCS preconditions: generation 0 means "no live object"."""
        if expect is None:
            return {}
        return {"ifGenerationMatch": "0" if expect is ABSENT else expect}

    def _conditional(self, method, url, what, relpath, expect, **kwargs):
        try:
            return self._request(method, url, what, relpath, **kwargs)
        except _PreconditionFailed:
            raise ConflictError("%s was changed by another writer" % self.url(relpath))
        except NotFoundError:
            if expect not in (None, ABSENT):
                raise ConflictError("%s was changed by another writer" % self.url(relpath))
            raise

    def _put(self, relpath, data, expect):
        # One multipart upload (metadata + bytes) replaces the object in one request: readers see old or
        # new, never half.  Multipart rather than media: emulators honour ifGenerationMatch on it too.
        body, content_type = _multipart({"name": self._key(relpath)}, data)
        response = self._conditional("POST", "%s/upload/storage/v1/b/%s/o" % (self.endpoint, self.bucket),
                                     "writing %s" % relpath, None, expect,
                                     params=dict(self._condition(expect), uploadType="multipart"),
                                     data=body, headers={"Content-Type": content_type})
        return str(response.json()["generation"])

    def _remove(self, relpath, expect):
        try:
            self._conditional("DELETE", self._object_url(relpath), "deleting %s" % relpath, relpath, expect,
                              params=self._condition(expect))
        except NotFoundError:
            pass  # deleting nothing is fine, as on the other backends

    def _list(self, prefix=""):
        base = len(self._key(""))
        params = {"prefix": self._key(prefix), "fields": "items(name,generation,md5Hash),nextPageToken",
                  "maxResults": LIST_PAGE_SIZE}
        found = {}
        while True:
            body = self._request("GET", "%s/storage/v1/b/%s/o" % (self.endpoint, self.bucket),
                                 "listing %s" % (prefix or "/"), params=params).json()
            for item in body.get("items") or []:
                found[item["name"][base:]] = (str(item["generation"]), _md5_hex(item.get("md5Hash")))
            if not body.get("nextPageToken"):
                return found
            params["pageToken"] = body["nextPageToken"]


def _multipart(metadata, data):
    """(body, content type) of a multipart/related upload: JSON metadata, then the bytes."""
    import json
    import uuid
    boundary = uuid.uuid4().hex
    while boundary.encode("ascii") in data:
        boundary = uuid.uuid4().hex
    head = ("--%s\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n%s\r\n"
            "--%s\r\nContent-Type: application/octet-stream\r\n\r\n" % (boundary, json.dumps(metadata), boundary))
    return head.encode("utf-8") + data + ("\r\n--%s--\r\n" % boundary).encode("ascii"), \
        "multipart/related; boundary=%s" % boundary


def _md5_hex(md5_base64):
    if not md5_base64:
        return None
    import base64
    return base64.b64decode(md5_base64).hex()


def _error_message(response):
    """GCS' own error message ({"error": {"message": ...}}), else the start of the body."""
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200]
