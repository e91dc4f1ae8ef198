# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every state store is: the Store contract (read once, conditional writes, docs/state-store.md), its errors
and markers.  Apart from vfs.py (which opens a store by its URL's scheme) so that the object-store backends
(s3.py, gcs.py) build on it without importing the module that imports them.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import StateStoreError

STATE_STORE_ENV = "KOPS_STATE_STORE"
# Files under these prefixes hold private keys and secrets: 0600 on disk.
PRIVATE_PREFIXES = ("pki/", "secrets/")
# What one run keeps of the objects it read or wrote; bigger ones (etcd backups) are read again if asked.
CACHED_CONTENT_LIMIT = 4 * 1024 * 1024


class StoreError(StateStoreError):
    """The state store could not be used; the message names the URL and the fix."""


class NotFoundError(StoreError):
    pass


class ConflictError(StoreError):
    """A conditional write or delete found the object changed since this run read it."""


class _Marker(object):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


# The version of an object that does not exist: a write expecting it creates, never replaces.
ABSENT = _Marker("ABSENT")
# write()/delete() default: expect the version this run observed (read, listed or wrote), if any.
OBSERVED = _Marker("OBSERVED")


def is_private(relpath):
    return any(("/" + p) in "/" + relpath for p in PRIVATE_PREFIXES)


def md5_hex(data):
    import hashlib
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


class _Known(object):
    """What this run knows of one object: its version (ABSENT if missing), maybe its bytes and md5."""

    __slots__ = ("version", "data", "md5")

    def __init__(self, version, data=None, md5=None):
        self.version = version
        self.data = data if data is None or len(data) <= CACHED_CONTENT_LIMIT else None
        self.md5 = md5


class Store(object):
    """One run's view of a state store: every object read at most once, writes conditional.

    Each backend provides the raw calls: _get(relpath) -> (bytes, version)
    (NotFoundError if absent), _head(relpath) -> version or ABSENT,
    _put(relpath, bytes, expect) -> new version and _remove(relpath, expect),
    where expect is None (unconditional), ABSENT (must not exist) or a version
    (must still be it) and a mismatch raises ConflictError; and
    _list(prefix) -> {relpath: (version, md5 hex or None)} of every object
    whose path starts with prefix, at any depth (object-store semantics).

    On top, this class remembers per run (a Store is opened per module run)
    every answer: contents, versions, "not found", and listings, which also
    answer "not found" for any path under a listed prefix.  Our own writes
    update what is remembered.  A write or delete of a path this run has
    observed is conditional on the version observed (S3 If-Match /
    If-None-Match, GCS ifGenerationMatch, a flock-guarded check on file://),
    so a read-modify-write cannot silently replace another run's write.
    """

    scheme = None

    def __init__(self, url):
        import threading
        self.base_url = url.rstrip("/")
        self._lock = threading.RLock()
        self._known = {}
        self._listed = set()
        # Contents an unfinished multi-object write (layout's journal) is committed to write: readers see them.
        self._pending = {}
        # Things a run should tell its user (an interrupted write completed, a lease taken over).
        self.notes = []
        # Per-cluster state of this run (layout.ClusterStore keeps its journal check and lease here).
        self.clusters = {}
        # Who this run is, for a lease it takes (the module's name); None: the program's name.
        self.owner = None
        # What the spec's history records of a change this run writes (statestore/history.py): the cause the
        # module was given (the playbook and task, by default) and the number of revisions to keep.
        self.change_cause = None
        self.history_limit = None

    def url(self, relpath=""):
        return "%s/%s" % (self.base_url, relpath) if relpath else self.base_url

    @staticmethod
    def _bytes(data):
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)

    # -- what this run knows ---------------------------------------------------

    def _covered(self, relpath):
        return any(relpath.startswith(prefix) for prefix in self._listed)

    def _remember(self, relpath, version, data=None, md5=None):
        with self._lock:
            old = self._known.get(relpath)
            if old is not None and data is None and old.version == version:
                return  # a listing repeating what we know: keep the bytes
            self._known[relpath] = _Known(version, data, md5)

    def forget(self, relpath):
        """Drop what this run knows of relpath: the next read asks the store."""
        with self._lock:
            self._known.pop(relpath, None)
            self._listed = {p for p in self._listed if not relpath.startswith(p)}

    def refresh(self):
        """Forget everything this run saw (for a process that outlives one run); pending journal contents stay."""
        with self._lock:
            self._known.clear()
            self._listed.clear()

    def observed_version(self, relpath):
        """The version this run saw (ABSENT when it saw no object), or None when it never looked."""
        with self._lock:
            known = self._known.get(relpath)
            if known is not None:
                return known.version
            return ABSENT if self._covered(relpath) else None

    def fingerprint(self, relpath):
        """(version, md5 hex or None) of relpath as this run observed it (listed, read or written), (ABSENT, None)
        when it saw no object there, or None when it never looked or an unfinished journal's contents stand in
        for it.  The md5 is the listing's (S3 ETag of a single-part upload, GCS md5Hash) or that of bytes read."""
        with self._lock:
            if relpath in self._pending:
                return None
            known = self._known.get(relpath)
            if known is None:
                return (ABSENT, None) if self._covered(relpath) else None
            md5 = known.md5 or (md5_hex(known.data) if known.data is not None else None)
            return known.version, md5

    def set_pending(self, contents):
        """Serve these {relpath: bytes or None} to readers, as an unfinished journal will write them."""
        with self._lock:
            self._pending.update(contents)

    def clear_pending(self, relpaths):
        with self._lock:
            for relpath in relpaths:
                self._pending.pop(relpath, None)

    # -- reading -----------------------------------------------------------------

    def read(self, relpath):
        with self._lock:
            if relpath in self._pending:
                if self._pending[relpath] is None:
                    raise NotFoundError("%s not found" % self.url(relpath))
                return self._pending[relpath]
            if self.observed_version(relpath) is ABSENT:
                raise NotFoundError("%s not found" % self.url(relpath))
            known = self._known.get(relpath)
            if known is not None and known.data is not None:
                return known.data
        try:
            data, version = self._get(relpath)
        except NotFoundError:
            self._remember(relpath, ABSENT)
            raise
        self._remember(relpath, version, data)
        return data

    def read_text(self, relpath):
        return self.read(relpath).decode("utf-8")

    def exists(self, relpath):
        with self._lock:
            if relpath in self._pending:
                return self._pending[relpath] is not None
            version = self.observed_version(relpath)
        if version is None:
            version = self._head(relpath)
            self._remember(relpath, version)
        return version is not ABSENT

    def matches(self, relpath, data):
        """Whether relpath holds exactly data; the md5 a listing gave spares reading it."""
        data = self._bytes(data)
        with self._lock:
            known = self._known.get(relpath)
            if relpath not in self._pending and known is not None and known.data is None and known.md5:
                if known.md5 == md5_hex(data):
                    return True
        try:
            return self.read(relpath) == data
        except NotFoundError:
            return False

    def list(self, prefix=""):
        with self._lock:
            covered = self._covered(prefix)
        if not covered:
            entries = self._list(prefix)
            with self._lock:
                for relpath, known in list(self._known.items()):
                    if relpath.startswith(prefix) and relpath not in entries:
                        self._known[relpath] = _Known(ABSENT)
                for relpath, (version, md5) in entries.items():
                    self._remember(relpath, version, md5=md5)
                self._listed.add(prefix)
        with self._lock:
            found = {p for p, k in self._known.items() if p.startswith(prefix) and k.version is not ABSENT}
            for relpath, data in self._pending.items():
                if relpath.startswith(prefix):
                    (found.add if data is not None else found.discard)(relpath)
        return sorted(found)

    # -- writing -----------------------------------------------------------------

    def _expectation(self, relpath, expect):
        return self.observed_version(relpath) if expect is OBSERVED else expect

    def write(self, relpath, data, expect=OBSERVED):
        """Replace relpath whole; conditional on the version this run observed (see the class)."""
        data = self._bytes(data)
        expect = self._expectation(relpath, expect)
        try:
            version = self._put(relpath, data, expect)
        except ConflictError:
            self.forget(relpath)
            # A retried request whose first attempt landed conflicts with itself: same bytes, no conflict.
            try:
                current, version = self._get(relpath)
            except NotFoundError:
                raise ConflictError("%s was changed by another writer" % self.url(relpath))
            if current != data:
                self._remember(relpath, version, current)
                raise ConflictError("%s was changed by another writer" % self.url(relpath))
        except BaseException:
            self.forget(relpath)  # it may or may not have landed
            raise
        with self._lock:
            self._pending.pop(relpath, None)
        self._remember(relpath, version, data, md5_hex(data))

    def delete(self, relpath, expect=OBSERVED):
        """Remove relpath (absent is fine); conditional on the version this run observed."""
        expect = self._expectation(relpath, expect)
        if expect is ABSENT:
            with self._lock:
                self._pending.pop(relpath, None)
            return
        try:
            self._remove(relpath, expect)
        except ConflictError:
            self.forget(relpath)
            if not self._gone(relpath):
                raise ConflictError("%s was changed by another writer" % self.url(relpath))
        except BaseException:
            self.forget(relpath)
            raise
        with self._lock:
            self._pending.pop(relpath, None)
        self._remember(relpath, ABSENT)

    def _gone(self, relpath):
        """Whether relpath is absent now.  A delete whose condition failed because nothing is there is done: the
        usual cause is a retried request whose first attempt landed and whose answer was lost (S3 then answers
        the retry 404); whoever removed it, what the delete asked for is so."""
        return self._head(relpath) is ABSENT

    def delete_many(self, relpaths, expect=OBSERVED):
        """Remove every relpath (absent is fine), each conditional on the version this run observed, in as few
        requests as the backend allows (s3://: DeleteObjects, 1,000 keys a request; the others one by one).
        Deletes what it can; ConflictError names the first path another writer changed."""
        todo = []
        for relpath in relpaths:
            version = self._expectation(relpath, expect)
            if version is ABSENT:
                with self._lock:
                    self._pending.pop(relpath, None)
            else:
                todo.append((relpath, version))
        if not todo:
            return
        try:
            conflicts = [relpath for relpath in self._remove_many(todo) if not self._gone(relpath)]
        except BaseException:
            for relpath, _version in todo:
                self.forget(relpath)
            raise
        for relpath, _version in todo:
            if relpath in conflicts:
                self.forget(relpath)
                continue
            with self._lock:
                self._pending.pop(relpath, None)
            self._remember(relpath, ABSENT)
        if conflicts:
            raise ConflictError("%s was changed by another writer" % self.url(conflicts[0]))

    def _remove_many(self, items):
        """[(relpath, expect)] -> the relpaths whose condition failed (the others are gone)."""
        conflicts = []
        for relpath, expect in items:
            try:
                self._remove(relpath, expect)
            except ConflictError:
                conflicts.append(relpath)
        return conflicts
