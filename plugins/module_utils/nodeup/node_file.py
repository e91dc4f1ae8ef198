# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""One file nodeup writes (path, content, mode, the units it restarts), and the kubeconfigs nodes use."""

from __future__ import annotations

import base64
import json
import os

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write


class NodeFile(object):
    """One file: content, mode, the units to restart when it changes; if_missing files are only created."""

    __slots__ = ("path", "content", "mode", "restarts", "if_missing")

    def __init__(self, path, content, mode=0o644, restarts=(), if_missing=False):
        self.path = path
        self.content = content if isinstance(content, bytes) else content.encode("utf-8")
        self.mode = mode
        self.restarts = tuple(restarts)
        self.if_missing = if_missing


def kubeconfig(server, ca_pem, user, user_name="kubelet", embed_ca=False):
    """A kubeconfig (JSON is YAML): a client certificate or a bootstrap token.

    Static pods see only their own host paths, so theirs carry the CA inline (embed_ca).
    """
    cluster = {"server": server}
    if embed_ca:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem.encode("ascii")).decode("ascii")
    else:
        cluster["certificate-authority"] = "/srv/kubernetes/ca.crt"
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "default",
        "clusters": [{"name": "local", "cluster": cluster}],
        "contexts": [{"name": "default", "context": {"cluster": "local", "user": user_name}}],
        "users": [{"name": user_name, "user": user}],
    }, indent=2, sort_keys=True) + "\n"


def read_current(path):
    """(bytes, mode) of the file at path, or (None, None) where there is none."""
    try:
        with open(path, "rb") as handle:
            return handle.read(), os.stat(path).st_mode & 0o7777
    except (IOError, OSError):
        return None, None


def write_atomically(path, mode, fill):
    """Write path through a temporary file renamed over it: fill(handle) writes the content (atomic.atomic_write)."""
    atomic_write(path, mode, fill)
