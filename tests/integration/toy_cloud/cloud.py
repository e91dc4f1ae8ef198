# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's client: its JSON API (tests/integration/toy_api.py serves one on 127.0.0.1) at the address in
TOY_API_URL.  Building it makes no call; every verb is one request."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, Failure, TryAgain
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

API_ENV = "TOY_API_URL"
OWNER_LABEL = "kubernetes-cluster"  # the label that makes an object the cluster's own


class ToyApiError(CloudError):
    def __init__(self, status, message):
        CloudError.__init__(self, "toy API %s: %s" % (status, message))
        self.status = status


class ToyCloud(Cloud):
    provider = "toy"

    def __init__(self, cluster_name, region):
        Cloud.__init__(self, cluster_name, region)
        self.url = os.environ.get(API_ENV)
        if not self.url:
            raise CloudError("the toy cloud's API: set %s to its address (e.g. http://127.0.0.1:8080)" % API_ENV)

    def ownership_tags(self):
        return {OWNER_LABEL: self.cluster_name}

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url.rstrip("/") + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
        except urllib.error.HTTPError as exc:
            message = json.loads(exc.read() or b"{}").get("error") or exc.reason
            if exc.code == 409:  # in use: another object still goes away first
                raise TryAgain(message)
            raise ToyApiError(exc.code, message)
        except urllib.error.URLError as exc:
            raise ToyApiError("unreachable", "%s (%s=%s)" % (exc.reason, API_ENV, self.url))
        return json.loads(text) if text else None

    def list(self, collection, **filters):
        """The objects of collection whose fields equal filters (label: "key=value" matches a label)."""
        return self._call("GET", "/%s?%s" % (collection, urllib.parse.urlencode(sorted(filters.items()))))

    def owned(self, collection):
        return self.list(collection, label="%s=%s" % (OWNER_LABEL, self.cluster_name))

    def create(self, collection, fields):
        return self._call("POST", "/" + collection, fields)

    def update(self, collection, object_id, fields):
        return self._call("PATCH", "/%s/%s" % (collection, object_id), fields)

    def delete(self, collection, object_id):
        self._call("DELETE", "/%s/%s" % (collection, object_id))

    def failure(self, exc):
        if isinstance(exc, ToyApiError):
            return Failure(str(exc.status), str(exc).split(": ", 1)[-1], "check the toy API at %s" % self.url)
        return Cloud.failure(self, exc)
