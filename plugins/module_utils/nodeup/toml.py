# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The small TOML writer kops' nodeup renders containerd's files with (kops' pkg/tomlwriter), byte for byte.

A table writes its scalars first, then its subtables, each sorted by key; a subtable header has a blank line
before it and is indented two spaces per level.  Keys outside [A-Za-z0-9_-] are quoted (a key that already
carries its quotes is kept as it is).  Values are strings, integers and booleans.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

BARE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def escape(value):
    return "".join(ESCAPES.get(c) or ("\\u%04X" % ord(c) if ord(c) < 0x1F else c) for c in value)


def quote(value):
    """A TOML basic string."""
    return '"%s"' % escape(value)


def quote_key(key):
    if len(key) >= 2 and key[0] == '"' and key[-1] == '"':
        return key
    if not key:
        return '""'
    return key if all(c in BARE for c in key) else quote(key)


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    raise NodeError("TOML value %r: only strings, integers and booleans are written" % (value,))


class Tree(object):
    """A TOML document or table."""

    def __init__(self):
        self.values = {}

    def table(self, path):
        """The table at path, made as needed; a scalar on the way leaves the walk in the current table (as kops)."""
        tree = self
        for key in path:
            found = tree.values.get(key)
            if found is None:
                found = tree.values[key] = Tree()
            if isinstance(found, Tree):
                tree = found
        return tree

    def set_path(self, path, value):
        scalar(value)  # refuses what kops cannot write
        self.table(path[:-1]).values[path[-1]] = value

    def render(self):
        out = []
        self._write(out, "", "")
        return "".join(out)

    def _write(self, out, indent, keyspace):
        keys = sorted(self.values)
        for key in keys:
            if not isinstance(self.values[key], Tree):
                out.append("%s%s = %s\n" % (indent, quote_key(key), scalar(self.values[key])))
        for key in keys:
            subtree = self.values[key]
            if isinstance(subtree, Tree):
                combined = quote_key(key) if not keyspace else keyspace + "." + quote_key(key)
                out.append("\n%s[%s]\n" % (indent, combined))
                subtree._write(out, indent + "  ", combined)
