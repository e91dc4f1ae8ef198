# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a cloud's deletion module (deletion/<provider>.py) builds on: the Resource it reports, the fates an
object can have, ALREADY_GONE, each_object.  Kept apart from the walker (deletion/__init__.py), which imports
the cloud modules, so that no module imports one that imports it back."""

from __future__ import annotations


class _AlreadyGone(object):
    def __repr__(self):
        return "ALREADY_GONE"


# What a kind's delete returns for an object that was not there any more.
ALREADY_GONE = _AlreadyGone()

# An object's fate, as reported.
PLANNED, DELETED, GONE, UNTAGGED, BLOCKED, FAILED, WAITING = (
    "delete", "deleted", "already gone", "untagged", "blocked", "failed", "not deleted")


class Resource(object):
    """One cloud object the cluster owns (or shares).

    kind:     the provider's kind name (kops' resource types: vpc, subnet, security-group, ...).
    shared:   the cluster only uses it: its cluster tags are removed, it is not deleted.
    data:     what the kind's deleter needs (the describe item).
    held_by:  what outside the cluster keeps it from being deleted (text), found before deleting.
    pending:  its delete was already issued (by this run, or an interrupted one): only wait for it.
    """

    __slots__ = ("kind", "id", "name", "shared", "data", "held_by", "pending", "result", "reason", "attempts")

    def __init__(self, kind, object_id, name="", shared=False, data=None, pending=False):
        self.kind = kind
        self.id = object_id
        self.name = name or ""
        self.shared = shared
        self.data = data if data is not None else {}
        self.held_by = []
        self.pending = pending
        self.result = PLANNED if not shared else "untag"
        self.reason = ""
        self.attempts = 0

    @property
    def key(self):
        return "%s:%s" % (self.kind, self.id)

    def report(self):
        entry = {"kind": self.kind, "id": self.id, "name": self.name, "shared": self.shared, "result": self.result}
        if self.reason:
            entry["reason"] = self.reason
        if self.held_by:
            entry["held_by"] = list(self.held_by)
        return entry


def each_object(resources, delete):
    """{id: None | ALREADY_GONE | exception}: delete(resource) one object at a time, each failure kept for the
    walker to report beside its object (a provider's Kind.delete)."""
    results = {}
    for resource in resources:
        try:
            results[resource.id] = delete(resource)
        except Exception as exc:  # reported per object by the walker; pylint: disable=broad-except
            results[resource.id] = exc
    return results
