# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The spec's history, beside kops' layout: ``<cluster>/.kubeops-history/``.

    .kubeops-history/index.json        every kept revision: number, operation, who, when, cause, sha256
    .kubeops-history/r00000051.json    the user spec (config + instancegroup/*) as stored at a revision

kops never sees these: it finds clusters by the paths that end in ``/config`` (none here does) and reads
only its own names (config, instancegroup/, pki/, ...).  ``kops delete cluster`` removes them with the rest.

Revisions are numbered from 1 (the create), one more per change of the spec: one create, replace, instance
group edit, upgrade, rollback or keypair change is one revision, whatever files it writes.  The index and the
new snapshot are written in the same journaled, conditional write as the spec itself (layout.ClusterStore.apply),
so a revision is recorded exactly when its spec lands, and two writers of the same revision conflict.

A spec changed by another tool (kops itself) is not a revision of ours: the next write here records what it
finds as a revision of its own (operation ``outside``) before its change, so nothing stored is ever lost.
"""

from __future__ import annotations

import datetime
import getpass
import hashlib
import json
import os
import socket

from ansible_collections.kubeops.kops.plugins.module_utils.errors import StateStoreError

HISTORY_DIR = ".kubeops-history/"
INDEX = HISTORY_DIR + "index.json"
SNAPSHOT = HISTORY_DIR + "r%08d.json"
# How many revisions are kept unless the cluster module's history_limit says otherwise.
DEFAULT_LIMIT = 100
# What the spec is, in kops' layout: the Cluster and the InstanceGroups.
CLUSTER_CONFIG = "config"
INSTANCE_GROUP_DIR = "instancegroup/"
# Operations a revision records (the module that wrote it says which).
OPERATIONS = ("create", "replace", "rollback", "instance_group", "upgrade", "keypair", "outside", "found")


class HistoryError(StateStoreError):
    """A revision that is not kept, or a history that cannot be read."""


def is_spec_path(relpath):
    return relpath == CLUSTER_CONFIG or (relpath.startswith(INSTANCE_GROUP_DIR) and "/" not in relpath[len(INSTANCE_GROUP_DIR):]
                                         and len(relpath) > len(INSTANCE_GROUP_DIR))


def spec_sha(spec):
    """sha256 of a spec ({relpath: bytes}): what tells one stored state from another."""
    digest = hashlib.sha256()
    for relpath in sorted(spec):
        digest.update(("%s\0%d\0" % (relpath, len(spec[relpath]))).encode("utf-8"))
        digest.update(spec[relpath])
    return digest.hexdigest()


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user():
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return "uid %d" % os.getuid()


class Revision(object):
    """Where a cluster's stored spec stands: its number, and whether a revision of ours recorded it.

    recorded False: another tool wrote the spec after our last revision (or before our first); the state is
    numbered as the next write will record it, and its sha256 tells it apart from a later such change.
    """

    def __init__(self, number, recorded, sha):
        self.number = number
        self.recorded = recorded
        self.sha = sha

    def __str__(self):
        if self.recorded:
            return str(self.number)
        return "%d (unrecorded %s)" % (self.number, self.sha[:16])

    def matches(self, text):
        """Whether a revision as get_cluster.yml wrote it (str(Revision)) names this state."""
        number, sha = parse(text)
        if number != self.number:
            return False
        return sha is None if self.recorded else (sha is not None and self.sha.startswith(sha))


def parse(text):
    """(number, unrecorded sha prefix or None) of a revision as str(Revision) writes it; HistoryError otherwise."""
    words = str(text).replace("(", " ").replace(")", " ").split()
    try:
        number = int(words[0])
        if number < 1 or (len(words) > 1 and (len(words) != 3 or words[1] != "unrecorded")):
            raise StateStoreError(text)
        if len(words) == 3:
            int(words[2], 16)
    except (ValueError, IndexError):
        raise HistoryError("revision %r is not a revision of kubeops.kops' history (a number from 1, as get_cluster.yml "
                           "writes it); read the cluster again with get_cluster.yml" % (text,))
    return number, (words[2] if len(words) == 3 else None)


class History(object):
    """One cluster's history in one run (reads go through the run's Store, so each object is read once)."""

    def __init__(self, cluster_store):
        self.cluster_store = cluster_store

    # -- reading -------------------------------------------------------------------

    def index(self):
        """The index ({"limit": n, "revisions": [entry, ...]} oldest first), or None before the first revision."""
        data = self.cluster_store.read(INDEX)
        if data is None:
            return None
        try:
            index = json.loads(data.decode("utf-8"))
            if not isinstance(index.get("revisions"), list):
                raise StateStoreError("no revisions list")
        except (ValueError, UnicodeDecodeError, AttributeError) as exc:
            raise HistoryError("%s is not a readable history index (%s); move it away to start the history again"
                               % (self.cluster_store.store.url(self.cluster_store.path(INDEX)), exc))
        return index

    def revisions(self):
        """Every kept revision's entry, oldest first."""
        index = self.index()
        return list(index["revisions"]) if index else []

    def current_spec(self):
        """{relpath: bytes} of the stored spec: the config and every instance group."""
        store = self.cluster_store
        spec = {}
        config = store.read(CLUSTER_CONFIG)
        if config is not None:
            spec[CLUSTER_CONFIG] = config
        prefix = store.path(INSTANCE_GROUP_DIR)
        for path in store.store.list(prefix):
            relpath = path[len(store.name) + 1:]
            if is_spec_path(relpath):
                data = store.read(relpath)
                if data is not None:
                    spec[relpath] = data
        return spec

    def current(self):
        """The Revision the stored spec is at, or None when no cluster is stored."""
        spec = self.current_spec()
        if CLUSTER_CONFIG not in spec:
            return None
        sha = spec_sha(spec)
        entries = self.revisions()
        head = entries[-1] if entries else None
        if head is not None and head.get("sha256") == sha:
            return Revision(head["revision"], True, sha)
        return Revision(head["revision"] + 1 if head else 1, False, sha)

    def entry(self, number):
        for entry in self.revisions():
            if entry["revision"] == number:
                return entry
        kept = self.revisions()
        raise HistoryError("revision %s of cluster %s is not kept (%s); list them with get_cluster.yml -e history=true"
                           % (number, self.cluster_store.name,
                              "kept: %d to %d" % (kept[0]["revision"], kept[-1]["revision"]) if kept
                              else "the cluster has no history yet"))

    def spec_at(self, number):
        """{relpath: bytes} of the spec as it was stored at revision number (HistoryError if not kept)."""
        entry = self.entry(int(number))
        path = SNAPSHOT % entry["snapshot"]
        data = self.cluster_store.read(path)
        if data is None:
            raise HistoryError("%s is missing: revision %d of cluster %s cannot be read"
                               % (self.cluster_store.store.url(self.cluster_store.path(path)), entry["revision"],
                                  self.cluster_store.name))
        try:
            snapshot = json.loads(data.decode("utf-8"))
            spec = {p: text.encode("utf-8") for p, text in snapshot["spec"].items()}
        except (ValueError, KeyError, AttributeError, UnicodeDecodeError) as exc:
            raise HistoryError("%s is not a readable snapshot (%s)"
                               % (self.cluster_store.store.url(self.cluster_store.path(path)), exc))
        if spec_sha(spec) != entry["sha256"]:
            raise HistoryError("%s does not match the sha256 its index entry records"
                               % self.cluster_store.store.url(self.cluster_store.path(path)))
        return spec

    # -- recording -----------------------------------------------------------------

    def changes_for(self, changes, operation=None, context=None):
        """The history writes that go with writing changes ((relpath, bytes-or-None) pairs) to the spec: the new
        snapshot (unless the spec equals a kept one), the index, and the snapshots that fall out of the limit.

        operation: what the write is (OPERATIONS); context: {"cause", "module", "limit", "record"} (record: more
        fields for the entry).  Returns []
        when neither the spec changes nor an operation asks for a revision."""
        context = dict(context or {})
        store = self.cluster_store
        before = self.current_spec()
        after = dict(before)
        for relpath, data in changes:
            if is_spec_path(relpath):
                if data is None:
                    after.pop(relpath, None)
                else:
                    after[relpath] = bytes(data)
        if CLUSTER_CONFIG not in after:
            return []  # the cluster is being removed: its history goes with it
        index = self.index() or {"revisions": []}
        entries = list(index["revisions"])
        limit = int(context.get("limit") or index.get("limit") or DEFAULT_LIMIT)
        new_snapshots = {}
        before_sha, after_sha = spec_sha(before), spec_sha(after)
        head = entries[-1] if entries else None
        if before and (head is None or head.get("sha256") != before_sha):
            # Stored by another tool (or before our history began): keep it as a revision of its own.
            number = head["revision"] + 1 if head else 1
            entries.append(self._entry(number, "found" if head is None else "outside", before_sha, number, {
                "cause": "stored before kubeops.kops kept this cluster's history" if head is None
                else "changed outside kubeops.kops (by kops or by hand) after revision %d" % head["revision"]},
                stamp=False))
            new_snapshots[number] = before
            head = entries[-1]
        if head is not None and after_sha == head["sha256"] and operation in (None, "create", "replace",
                                                                              "instance_group", "upgrade", "rollback"):
            if not new_snapshots:
                return []  # the spec does not change: no revision
        else:
            number = head["revision"] + 1 if head else 1
            snapshot = next((e["snapshot"] for e in reversed(entries) if e["sha256"] == after_sha), None)
            if snapshot is None:
                snapshot = number
                new_snapshots[number] = after
            entries.append(self._entry(number, operation or store.store.owner or "write", after_sha, snapshot, context,
                                       paths=sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))))
        kept, dropped = entries[-limit:], entries[:-limit]
        referenced = {e["snapshot"] for e in kept}
        writes = []
        for number in sorted(new_snapshots):
            if number in referenced:
                writes.append((SNAPSHOT % number, _dump_snapshot(number, new_snapshots[number])))
        for snapshot in sorted({e["snapshot"] for e in dropped} - referenced):
            if store.store.exists(store.path(SNAPSHOT % snapshot)):
                writes.append((SNAPSHOT % snapshot, None))
        index = {"limit": limit, "revisions": kept}
        writes.append((INDEX, json.dumps(index, indent=1, sort_keys=True).encode("utf-8")))
        return writes

    def _entry(self, number, operation, sha, snapshot, context, paths=None, stamp=True):
        entry = {"revision": number, "operation": operation, "sha256": sha, "snapshot": snapshot, "time": _now()}
        if stamp:
            entry.update({"user": _user(), "host": socket.gethostname(), "pid": os.getpid(),
                          "module": context.get("module") or self.cluster_store.store.owner})
        if context.get("cause"):
            entry["cause"] = context["cause"]
        entry.update({k: v for k, v in (context.get("record") or {}).items() if v is not None})
        if paths is not None:
            entry["paths"] = paths
        return entry


def _dump_snapshot(number, spec):
    try:
        texts = {p: data.decode("utf-8") for p, data in spec.items()}
    except UnicodeDecodeError as exc:
        raise HistoryError("the spec to record as revision %d is not UTF-8 text (%s)" % (number, exc))
    return json.dumps({"revision": number, "spec": texts}, indent=1, sort_keys=True).encode("utf-8")
