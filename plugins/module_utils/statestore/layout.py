# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' state store layout for one cluster: ``<store>/<cluster>/...``.

    config                      the user's Cluster (create/replace write it)
    instancegroup/<name>        the user's InstanceGroups
    cluster-completed.spec      the completed Cluster (update writes it)
    pki/, secrets/, igconfig/, manifests/, addons/, backups/   (later layers)
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import json
import os
import socket
import sys
import threading
import time

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import ABSENT, ConflictError, NotFoundError
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import StoreError

CLUSTER_CONFIG = "config"
INSTANCE_GROUP_DIR = "instancegroup/"
COMPLETED_SPEC = "cluster-completed.spec"
KOPS_VERSION = "kops-version.txt"
ETCD_CLUSTER_SPEC = "backups/etcd/%s/control/etcd-cluster-spec"
# Ours, beside kops' files (kops ignores them): who is writing the cluster, and what a multi-object write
# is committed to write (docs/state-store.md).
LEASE = ".kubeops-lease"
JOURNAL = ".kubeops-journal"
# Ours too: the public parts of the keysets the nodeup configs need, keyed by each keyset object's version and
# md5 as the listing gives them (nodeconfig/store.py), so an update whose keysets are unchanged reads one object
# instead of one per keyset.  Never a private key.
KEYSET_BUNDLE = ".kubeops-public-keysets"
# A lease lasts this long unless renewed; the holder renews it every third of it while it works.
DEFAULT_LEASE_TTL = 300
CONFLICT = "the cluster %s was changed by another run while this one was working; re-run to apply on top of it"


class ClusterConflict(StoreError):
    """Another run changed the cluster between this run's reads and its writes."""


class LeaseHeld(StoreError):
    """Another run holds the cluster's lease."""


class ClusterBeingDeleted(LeaseHeld):
    """A live cluster_delete holds the cluster's lease: nothing else may change the cluster."""


def split_config_base(config_base):
    """(state store, cluster name) of a config base, kops' `<state store>/<cluster name>` (a nodeup config's
    configBase, the day-2 modules' config_base): a store URL or an absolute path (vfs.open_store takes both)."""
    store_url, _sep, cluster_name = (config_base or "").rstrip("/").rpartition("/")
    has_store = store_url.startswith("/") or "://" in store_url and not store_url.endswith((":/", "://"))
    if not cluster_name or not has_store:
        raise StoreError("config_base %r: expected <state store>/<cluster name>" % config_base,
                         fix="for example s3://my-kops-state/k8s.example.com")
    return store_url, cluster_name


def cluster_store_at(config_base, endpoint=None):
    """The cluster's store named by its config base (split_config_base)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
    store_url, cluster_name = split_config_base(config_base)
    return ClusterStore(vfs.open_store(store_url, endpoint=endpoint), cluster_name)


def instance_group_path(name):
    return INSTANCE_GROUP_DIR + name


def cluster_changes(cluster):
    """The (relpath, bytes) that stores a user Cluster at <cluster>/config, for ClusterStore.apply."""
    return [(CLUSTER_CONFIG, objects.dump_object(cluster).encode("utf-8"))]


def instance_group_changes(instance_group):
    """The (relpath, bytes) that stores a user InstanceGroup at <cluster>/instancegroup/<name>."""
    name = objects.name_of(instance_group)
    if not name or "/" in name:
        raise StoreError("invalid instance group name %r for the state store" % (name,))
    return [(instance_group_path(name), objects.dump_object(instance_group).encode("utf-8"))]


def list_clusters(store):
    """Names of the clusters in a store (those with a config)."""
    suffix = "/" + CLUSTER_CONFIG
    return sorted(p[:-len(suffix)] for p in store.list("") if p.endswith(suffix) and p.count("/") == 1)


class _RunState(object):
    """What one run (one Store) knows of one cluster: its journal, checked once, and the lease it holds."""

    def __init__(self):
        self.opened = False
        self.journal = None
        self.lease = None


def _utc(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _program():
    """This run's name for a lease: the module (AnsiballZ_cluster_update.py -> cluster_update) or program."""
    name = os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "python")
    for affix in ("AnsiballZ_", ".py"):
        name = name.replace(affix, "")
    return name or "python"


def stale(holder, now=None):
    """Why a lease record may be taken over (expired, or its process is gone from this host), or None while its
    holder is alive."""
    now = time.time() if now is None else now
    if float(holder.get("expiresEpoch") or 0) <= now:
        return "it expired at %s" % holder.get("expires")
    if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int) and not _pid_alive(holder["pid"]):
        return "its process is gone from this host"
    return None


def held_message(cluster_name, holder, action=None):
    """The one line a run that finds the cluster's lease held by a live run fails with."""
    refused = "%s refused" % action if action else "refused"
    if holder.get("deleting"):
        return ("cluster %s is being deleted by %s; %s. Let the delete finish; if it died, re-run it after %s "
                "(its lease is then taken over)" % (cluster_name, Lease.describe(holder), refused, holder.get("expires")))
    return ("cluster %s is being changed by %s; %s: its lease expires at %s. Wait for that run to finish, or if it "
            "died, re-run after that time (its lease is then taken over)"
            % (cluster_name, Lease.describe(holder), refused, holder.get("expires")))


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process, or a platform without signals: assume alive
    # A killed run whose parent never reaped it is a zombie: it answers signals but holds nothing.
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class Lease(object):
    """<cluster>/.kubeops-lease: owner, host, pid and expiry of the run that writes the cluster.

    Taken with a create-only write (S3 If-None-Match, GCS generation 0, ...),
    renewed every ttl/3 by a daemon thread with a write conditional on our own
    last version, released by a conditional delete.  A lease past its expiry,
    or held by a process of this host that no longer exists, is taken over
    with a write conditional on the version read, so two successors cannot
    both take it.
    """

    def __init__(self, cluster_store, owner=None, ttl=None, deleting=False):
        self.cluster_store = cluster_store
        self.store = cluster_store.store
        self.path = cluster_store.path(LEASE)
        self.owner = owner or self.store.owner or _program()
        self.ttl = float(ttl or DEFAULT_LEASE_TTL)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        # A delete marks the cluster in its lease: every other run refuses to touch the cluster while it lives.
        self.deleting = bool(deleting)
        self.started = None
        self.lost_to = None
        self._stop = threading.Event()
        self._renewer = None

    def record(self, now=None):
        now = time.time() if now is None else now
        started = self.started if self.started is not None else now
        record = {"owner": self.owner, "host": self.host, "pid": self.pid, "acquired": _utc(started),
                  "renewed": _utc(now), "expires": _utc(now + self.ttl), "expiresEpoch": now + self.ttl,
                  "ttlSeconds": self.ttl}
        if self.deleting:
            record["deleting"] = True
        return record

    @staticmethod
    def describe(holder):
        return "%s (pid %s on host %s, started %s)" % (holder.get("owner"), holder.get("pid"), holder.get("host"),
                                                       holder.get("acquired"))

    def _stale(self, holder, now):
        return stale(holder, now)

    def _holder(self):
        try:
            return json.loads(self.store.read(self.path).decode("utf-8"))
        except NotFoundError:
            return None
        except ValueError:
            return {"owner": "an unreadable lease", "expiresEpoch": 0, "expires": "(unreadable)"}

    def acquire(self, action=None):
        """Take the lease; LeaseHeld (ClusterBeingDeleted for a delete) names its live holder.
        action: what this run is, for that message (e.g. "cluster_update")."""
        for _attempt in range(3):
            now = time.time()
            expect = self.store.observed_version(self.path)
            if expect is None:
                self.store.exists(self.path)
                expect = self.store.observed_version(self.path)
            holder = self._holder() if expect is not ABSENT else None
            takeover = None
            if holder is not None:
                takeover = self._stale(holder, now)
                if takeover is None:
                    error = ClusterBeingDeleted if holder.get("deleting") else LeaseHeld
                    raise error(held_message(self.cluster_store.name, holder, action or self.owner))
            self.started = now
            try:
                self.store.write(self.path, json.dumps(self.record(now), indent=2).encode("utf-8"))
            except ConflictError:
                self.store.forget(self.path)  # another run got there first: look again
                continue
            if takeover:
                self.store.notes.append("took over the lease on cluster %s from %s: %s%s"
                                        % (self.cluster_store.name, self.describe(holder), takeover,
                                           "; that delete did not finish, so the cluster may be half deleted"
                                           if holder.get("deleting") and not self.deleting else ""))
            self._renewer = threading.Thread(target=self._renew, name="kubeops-lease-%s" % self.cluster_store.name,
                                             daemon=True)
            self._renewer.start()
            return self
        raise LeaseHeld("cluster %s: the lease kept changing hands while this run tried to take it; re-run"
                        % self.cluster_store.name)

    def _renew(self):
        while not self._stop.wait(self.ttl / 3):
            try:
                self.store.write(self.path, json.dumps(self.record(), indent=2).encode("utf-8"))
            except ConflictError:
                holder = self._holder() or {}
                self.lost_to = self.describe(holder) if holder else "a run that removed it"
                return
            except StoreError:
                continue  # the store is unreachable for now: try again at the next beat

    def release(self):
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        if self.lost_to:
            self.store.notes.append("the lease on cluster %s was taken over by %s while this run worked"
                                    % (self.cluster_store.name, self.lost_to))
            return
        try:
            self.store.delete(self.path)
        except ConflictError:
            holder = self._holder()
            if holder:  # else it is gone already: nothing to release, no one to name
                self.store.notes.append("the lease on cluster %s was taken over by %s while this run worked"
                                        % (self.cluster_store.name, self.describe(holder)))


class ClusterStore(object):
    """One cluster's files in a store.

    The first use in a run lists <cluster>/ once: every later "does it exist"
    and listing is answered from it, and an unfinished journal is found.
    Every write goes through apply() (or delete_cluster()), which holds the
    cluster's lease and journals a multi-object write first.
    """

    def __init__(self, store, cluster_name):
        if not cluster_name or "/" in cluster_name:
            raise StoreError("invalid cluster name %r for the state store" % (cluster_name,))
        self.store = store
        self.name = cluster_name
        self._state = store.clusters.setdefault(cluster_name, _RunState())

    def path(self, relpath):
        return "%s/%s" % (self.name, relpath)

    def config_base(self):
        return self.store.url(self.name)

    def open(self):
        """List the cluster's files once per run; serve an unfinished journal's contents to readers."""
        if self._state.opened:
            return
        self.store.list(self.name + "/")
        self._state.opened = True
        try:
            data = self.store.read(self.path(JOURNAL))
        except NotFoundError:
            return
        self._state.journal = _load_journal(data, self.store.url(self.path(JOURNAL)))
        self.store.set_pending({self.path(c["path"]): c["data"] for c in self._state.journal["changes"]})

    def interrupted_write(self):
        """A description of a multi-object write that was cut off and is not finished yet, or None."""
        self.open()
        journal = self._state.journal
        if journal is None:
            return None
        return ("an interrupted write of %d object(s) to cluster %s by %s at %s (finished by the next write)"
                % (len(journal["changes"]), self.name, journal.get("owner"), journal.get("started")))

    def exists(self):
        self.open()
        return self.store.exists(self.path(CLUSTER_CONFIG))

    def read(self, relpath):
        """Bytes at a cluster-relative path, or None."""
        self.open()
        try:
            return self.store.read(self.path(relpath))
        except NotFoundError:
            return None

    def fingerprint(self, relpath):
        """(version, md5 or None) of a cluster-relative path as this run's listing, reads and writes saw it
        (version ABSENT: not there), or None while an unfinished journal's contents stand in for it."""
        self.open()
        return self.store.fingerprint(self.path(relpath))

    def matches(self, relpath, data):
        """Whether relpath holds exactly data (a listing's md5 spares reading it on s3:// and gs://)."""
        self.open()
        return self.store.matches(self.path(relpath), data)

    def differing(self, changes):
        """The (relpath, bytes-or-None) of changes that the store does not already hold."""
        self.open()
        differ = []
        for relpath, data in changes:
            same = not self.store.exists(self.path(relpath)) if data is None else self.matches(relpath, data)
            if not same:
                differ.append((relpath, data))
        return differ

    def _read_object(self, relpath):
        data = self.read(relpath)
        if data is None:
            return None
        documents = objects.load_objects(data.decode("utf-8"), source=self.store.url(self.path(relpath)))
        if len(documents) != 1:
            raise StoreError("%s holds %d objects; expected one" % (self.store.url(self.path(relpath)), len(documents)))
        return documents[0]

    def read_cluster(self):
        return self._read_object(CLUSTER_CONFIG)

    def read_completed_spec(self):
        return self._read_object(COMPLETED_SPEC)

    def read_instance_group(self, name):
        return self._read_object(instance_group_path(name))

    def read_instance_groups(self):
        self.open()
        prefix = self.path(INSTANCE_GROUP_DIR)
        names = [p[len(prefix):] for p in self.store.list(prefix)]
        return [self.read_instance_group(n) for n in sorted(names) if n and "/" not in n]

    # -- writing -------------------------------------------------------------------

    def lease_holder(self):
        """The lease record of the live run that holds the cluster, or None when no live run does (the run's
        listing of the cluster says whether there is a lease, so a free cluster costs no request)."""
        if self._state.lease is not None:
            return None  # this run holds it
        self.open()
        path = self.path(LEASE)
        if not self.store.exists(path):
            return None
        try:
            holder = json.loads(self.store.read(path).decode("utf-8"))
        except NotFoundError:
            return None
        except ValueError:
            return None  # unreadable: taken over by the next run that takes the lease
        return None if not isinstance(holder, dict) or stale(holder) else holder

    def refuse_while_deleting(self, action):
        """Raise ClusterBeingDeleted (one line naming the delete: host, process, start time) while a live
        cluster_delete holds the cluster; for runs that change the cluster without taking its lease
        (rolling_update) or before they plan (a replace, a check-mode update)."""
        holder = self.lease_holder()
        if holder is not None and holder.get("deleting"):
            raise ClusterBeingDeleted(held_message(self.name, holder, action))

    @contextlib.contextmanager
    def lease(self, owner=None, ttl=None, deleting=False, action=None):
        """Hold the cluster's lease for the block (re-entrant within a run); finishes an interrupted write first.

        Raises LeaseHeld naming the holder and its expiry when another live run holds it (ClusterBeingDeleted
        when that run is a delete).  deleting: this run deletes the cluster; its lease says so, and every other
        run refuses while it lives.
        """
        self.open()
        if self._state.lease is not None:
            yield self._state.lease
            return
        held = Lease(self, owner, ttl, deleting=deleting).acquire(action)
        self._state.lease = held
        try:
            self._finish_journal()
            yield held
        finally:
            self._state.lease = None
            try:
                held.release()
            except Exception as exc:  # never hide the block's own error; the lease expires by itself
                self.store.notes.append("releasing the lease on cluster %s failed (%s); it expires at %s"
                                        % (self.name, exc, _utc(time.time() + held.ttl)))

    def apply(self, changes, owner=None, operation=None, record=None):
        """Write/delete (relpath, bytes-or-None) pairs, all or nothing, under the cluster's lease.

        Each write is conditional on what this run read (a change by another
        run is a ClusterConflict, never overwritten).  Several objects are
        journaled first (<cluster>/.kubeops-journal: each path, its new bytes
        and their sha256), so a run killed half-way is finished by the next
        one; a write that fails is rolled back.

        A change of the spec (config, instancegroup/*), or any write given an
        operation (history.OPERATIONS), is one revision of the spec's history:
        its snapshot and index entry are written in the same journaled write.
        record: more for the revision's entry (a rollback's "restores", a keypair change's "keysets").
        """
        if not changes:
            return
        with self.lease(owner):
            if operation or any(history.is_spec_path(relpath) for relpath, _data in changes):
                context = {"cause": self.store.change_cause, "limit": self.store.history_limit, "record": record}
                changes = list(changes) + history.History(self).changes_for(changes, operation, context)
            previous = {}
            for relpath, _data in changes:
                if relpath not in previous:
                    previous[relpath] = self.read(relpath)
            journaled = len(changes) > 1
            if journaled:
                self._write(JOURNAL, _dump_journal(changes, self._state.lease))
            done = 0
            try:
                for relpath, data in changes:
                    self._write(relpath, data)
                    done += 1
            except Exception as exc:  # any failure: roll back what this call wrote
                self._roll_back(changes, done, previous, exc, journaled)
            if journaled:
                self._write(JOURNAL, None)

    def _write(self, relpath, data):
        try:
            if data is None:
                self.store.delete(self.path(relpath))
            else:
                self.store.write(self.path(relpath), data)
        except ConflictError:
            raise ClusterConflict(CONFLICT % self.name)

    def _roll_back(self, changes, done, previous, exc, journaled):
        # The failed call is restored too: a write that timed out may still have landed.  Not after a
        # conflict: what is there now is the other run's.
        touched = []
        for relpath, _data in changes[:done if isinstance(exc, ClusterConflict) else done + 1]:
            if relpath not in touched:
                touched.append(relpath)
        failed_restores = self._restore([(p, previous[p]) for p in reversed(touched)])
        if isinstance(exc, ClusterConflict) and not failed_restores:
            if journaled:
                self._write(JOURNAL, None)
            raise exc
        if failed_restores:
            note = "; restoring %s failed too, so %s" % (
                ", ".join(failed_restores), "the journal stays and the next run that writes this cluster finishes "
                "the write" if journaled else "the store is half-written")
        else:
            if journaled:
                self._write(JOURNAL, None)
            note = "; the %d earlier change(s) were rolled back" % done
        relpath, data = changes[done]
        raise StoreError("state store %s: %s %s failed (%s)%s"
                         % (self.config_base(), "deleting" if data is None else "writing", relpath, exc, note))

    def _restore(self, previous):
        failed = []
        for relpath, data in previous:
            try:
                self._write(relpath, data)
            except Exception:  # keep restoring the rest; report which ones failed
                failed.append(relpath)
        return failed

    def _finish_journal(self):
        """Write what an interrupted run's journal holds (under our lease), then drop the journal."""
        journal = self._state.journal
        if journal is None:
            return
        paths = [self.path(c["path"]) for c in journal["changes"]]
        self.store.clear_pending(paths)  # from here on, compare with what is really stored
        written = 0
        for change in journal["changes"]:
            path, data = self.path(change["path"]), change["data"]
            if (not self.store.exists(path)) if data is None else self.store.matches(path, data):
                continue
            self._write(change["path"], data)
            written += 1
        self._write(JOURNAL, None)
        self._state.journal = None
        self.store.notes.append("finished an interrupted write of %d object(s) to cluster %s by %s at %s: "
                                "%d written now, the others had landed"
                                % (len(paths), self.name, journal.get("owner"), journal.get("started"), written))

    def delete_cluster(self, owner=None):
        """Remove everything under <cluster>/ (kops delete cluster's last step), in batches, the config last.

        A delete cut off half-way leaves the config, so the cluster is still
        listed and deleting it again finishes the job.
        """
        with self.lease(owner):
            paths = [p for p in self.store.list(self.name + "/") if p not in (self.path(LEASE), self.path(JOURNAL))]
            config = self.path(CLUSTER_CONFIG)
            try:
                # Batched (S3 DeleteObjects, 1,000 a request, as kops empties the store), then the config.
                self.store.delete_many(sorted(p for p in paths if p != config))
                if config in paths:
                    self.store.delete(config)
            except ConflictError:
                raise ClusterConflict(CONFLICT % self.name)


def _dump_journal(changes, lease):
    entries = []
    for relpath, data in changes:
        entries.append({"path": relpath, "delete": True} if data is None else
                       {"path": relpath, "sha256": hashlib.sha256(data).hexdigest(),
                        "data": base64.b64encode(data).decode("ascii")})
    return json.dumps({"owner": lease.owner if lease else _program(), "host": socket.gethostname(),
                       "pid": os.getpid(), "started": _utc(time.time()), "changes": entries}).encode("utf-8")


def _load_journal(data, url):
    """The journal with each change's bytes decoded and checked against its sha256."""
    fix = "; check the cluster's files and delete %s to go on" % url
    try:
        journal = json.loads(data.decode("utf-8"))
        changes = []
        for entry in journal["changes"]:
            if entry.get("delete"):
                changes.append({"path": entry["path"], "data": None})
                continue
            content = base64.b64decode(entry["data"])
            if hashlib.sha256(content).hexdigest() != entry["sha256"]:
                raise StoreError("%s: the content for %s does not match its sha256%s" % (url, entry["path"], fix))
            changes.append({"path": entry["path"], "data": content})
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, StoreError):
            raise
        raise StoreError("%s is not a readable journal (%s)%s" % (url, exc, fix))
    journal["changes"] = changes
    return journal
