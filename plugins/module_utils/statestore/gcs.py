# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""gs:// state stores over the GCS JSON API with google-auth's AuthorizedSession.

STORAGE_EMULATOR_HOST (as Google's own clients honour it) points the store at
an emulator, with anonymous credentials.
"""

from __future__ import annotations

import os

from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import NotFoundError, Store, StoreError

GCS_ENDPOINT = "https://storage.googleapis.com"
SCOPES = ("https://www.googleapis.com/auth/devstorage.read_write",)
TIMEOUT = 60


def _quote(text):
    from urllib.parse import quote
    return quote(text, safe="")


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
        self.anonymous = bool(emulator) and not endpoint
        self._session = None

    @property
    def session(self):
        if self._session is None:
            try:
                import google.auth
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
            self._session = AuthorizedSession(credentials)
        return self._session

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath) if self.prefix else relpath

    def _object_url(self, relpath):
        return "%s/storage/v1/b/%s/o/%s" % (self.endpoint, self.bucket, _quote(self._key(relpath)))

    def _check(self, response, what, relpath=None):
        if response.status_code == 404 and relpath is not None:
            raise NotFoundError("%s not found" % self.url(relpath))
        if response.status_code >= 400:
            hint = {403: "; check the credentials' permissions on the bucket",
                    404: "; create the bucket or fix state_store"}.get(response.status_code, "")
            raise StoreError("state store %s: %s: HTTP %d %s%s"
                             % (self.base_url, what, response.status_code, response.text[:200], hint))
        return response

    def read(self, relpath):
        response = self.session.get(self._object_url(relpath), params={"alt": "media"}, timeout=TIMEOUT)
        return self._check(response, "reading %s" % relpath, relpath).content

    def write(self, relpath, data):
        # A media upload replaces the object in one request: readers see old or new, never half.
        response = self.session.post("%s/upload/storage/v1/b/%s/o" % (self.endpoint, self.bucket),
                                     params={"uploadType": "media", "name": self._key(relpath)},
                                     data=self._bytes(data), headers={"Content-Type": "application/octet-stream"},
                                     timeout=TIMEOUT)
        self._check(response, "writing %s" % relpath)

    def delete(self, relpath):
        response = self.session.delete(self._object_url(relpath), timeout=TIMEOUT)
        if response.status_code != 404:
            self._check(response, "deleting %s" % relpath)

    def list(self, prefix=""):
        base = len(self.prefix) + 1 if self.prefix else 0
        params = {"prefix": self._key(prefix), "fields": "items(name),nextPageToken"}
        names = []
        while True:
            response = self._check(self.session.get("%s/storage/v1/b/%s/o" % (self.endpoint, self.bucket),
                                                    params=params, timeout=TIMEOUT), "listing %s" % (prefix or "/"))
            body = response.json()
            names.extend(item["name"][base:] for item in body.get("items") or [])
            if not body.get("nextPageToken"):
                return sorted(names)
            params["pageToken"] = body["nextPageToken"]
