# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' pkg/truncate: shorten a name to fit, ending it with a short hash of the whole.

Shared by completion (GCE names) and the AWS model (load balancer names).
"""

from __future__ import annotations

import base64
import struct


def fnv32a(text):
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def hash_string(text, length=6):
    """kops' truncate.HashString: fnv32a, base32hex, lower case, first `length` characters."""
    digest = base64.b32hexencode(struct.pack(">I", fnv32a(text))).decode("ascii").lower().rstrip("=")
    return digest[:length]


def truncate(text, max_length, always_hash=False, hash_length=6, hash_of=None):
    """kops' truncate.TruncateString; hash_of: hash this instead of text (ours: a name derived from a cluster
    name whose dots became dashes, hashed with the dots kept, so look-alike clusters cannot share it)."""
    if not always_hash and len(text) <= max_length:
        return text
    suffix = hash_string(text if hash_of is None else hash_of, hash_length)
    return text[:max_length - len(suffix) - 1] + "-" + suffix
