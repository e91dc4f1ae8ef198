# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster's SSH public keys in the state store (kops' pki/ssh/public/admin/<fingerprint>)."""

from __future__ import annotations

import base64
import hashlib

from ansible_collections.kubeops.kops.plugins.module_utils.errors import PkiError

SSH_KEY_DIR = "pki/ssh/public/admin/"


class SSHKeyError(PkiError):
    pass


def fingerprint(public_key):
    """MD5 fingerprint of an OpenSSH public key, as hex without separators (kops' key id)."""
    parts = public_key.strip().split()
    if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-")):
        raise SSHKeyError("not an OpenSSH public key (expected e.g. 'ssh-rsa AAAA... user@host')")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except ValueError:
        raise SSHKeyError("the SSH public key's base64 body does not decode")
    return hashlib.md5(blob).hexdigest()  # noqa: S324 - the fingerprint format EC2 and kops use
