# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A small virtual file system over the places kops keeps its state.

``open_store(url)`` returns a Store for ``file://PATH`` (or a bare path),
``s3://bucket/prefix``, ``gs://bucket/prefix`` or ``memfs://name/prefix``.
All paths given to a Store are relative to its URL.  Every write replaces the
object whole: a reader sees the old content or the new one, never half.  A
Store belongs to one run: it reads each object at most once and makes the
writes of what it read conditional (docs/state-store.md).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import threading

# The Store contract lives in store.py; its names are re-exported here, where callers have always found them.
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.store import (  # noqa: F401  # pylint: disable=unused-import
    ABSENT, OBSERVED, STATE_STORE_ENV, ConflictError, NotFoundError, Store, StoreError, is_private)


# What reading a path that is not there raises (a file where a directory was is "not there" too).
_ABSENT_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError)
# What to do about a file system error of a file:// store, by errno (%s: the store's directory).
FILE_SYSTEM_FIXES = {
    errno.EROFS: "the file system holding %s is mounted read-only: remount it read-write or give a state_store "
                 "on a writable file system",
    errno.ENOSPC: "the file system holding %s is full: free space on it or give a state_store elsewhere",
    errno.EDQUOT: "this user's disk quota on the file system holding %s is used up: free space or give a state_store "
                  "elsewhere",
    errno.EACCES: "this user may not write %s: fix its permissions or give a state_store this user may write",
    errno.EPERM: "this user may not write %s: fix its permissions or give a state_store this user may write",
}


class FileStore(Store):
    """file:// -- atomic writes: temp file in the same directory, fsync, rename.

    A version is (inode, mtime, size): every write renames a new inode into
    place.  Writes and deletes check it under an exclusive flock on the
    store's root directory, which every writer of the store takes (no lock
    file is left in the store).
    """

    scheme = "file"

    def __init__(self, url, root):
        Store.__init__(self, url)
        self.root = os.path.abspath(root)

    def _path(self, relpath):
        path = os.path.normpath(os.path.join(self.root, relpath))
        if path != self.root and not path.startswith(self.root + os.sep):
            raise StoreError("path %r escapes the state store %s" % (relpath, self.base_url))
        return path

    @staticmethod
    def _version(stat_result):
        return "%d-%d-%d" % (stat_result.st_ino, stat_result.st_mtime_ns, stat_result.st_size)

    @contextlib.contextmanager
    def _os_errors(self, what, passing=()):
        """An OSError (but those in passing) as one line naming the store, what it was doing and the fix: never the
        temporary file's name or a bare [Errno 28]."""
        try:
            yield
        except passing:
            raise
        except OSError as exc:
            fix = FILE_SYSTEM_FIXES.get(exc.errno)
            raise StoreError("state store %s: %s failed: %s" % (self.base_url, what, exc.strerror or exc),
                             fix=fix % self.root if fix else None)

    def _get(self, relpath):
        try:
            with self._os_errors("reading %s" % relpath, _ABSENT_ERRORS), open(self._path(relpath), "rb") as handle:
                return handle.read(), self._version(os.fstat(handle.fileno()))
        except _ABSENT_ERRORS:
            raise NotFoundError("%s not found" % self.url(relpath))

    def _head(self, relpath):
        try:
            with self._os_errors("checking %s" % relpath, _ABSENT_ERRORS):
                stat_result = os.stat(self._path(relpath))
        except _ABSENT_ERRORS:
            return ABSENT
        return ABSENT if os.path.isdir(self._path(relpath)) else self._version(stat_result)

    def _locked(self):
        """An exclusive flock on the store's root directory, as a context manager."""
        import fcntl

        @contextlib.contextmanager
        def held():
            os.makedirs(self.root, exist_ok=True)
            fd = os.open(self.root, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the lock
        return held()

    def _check(self, relpath, expect):
        if expect is not None and self._head(relpath) != expect:
            raise ConflictError("%s was changed by another writer" % self.url(relpath))

    def _put(self, relpath, data, expect):
        with self._os_errors("writing %s" % relpath):
            return self._put_file(relpath, data, expect)

    def _put_file(self, relpath, data, expect):
        path = self._path(relpath)
        directory = os.path.dirname(path)
        with self._locked():
            self._check(relpath, expect)
            os.makedirs(directory, exist_ok=True)
            temp = os.path.join(directory, ".%s.tmp-%d-%d" % (os.path.basename(path), os.getpid(), threading.get_ident()))
            mode = 0o600 if is_private(relpath) else 0o644
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                    os.fchmod(handle.fileno(), mode)  # exactly this mode, whatever the umask
                    version = self._version(os.fstat(handle.fileno()))
                os.replace(temp, path)
            except BaseException:
                if os.path.exists(temp):
                    os.unlink(temp)
                raise
            _fsync_directory(directory)
        return version

    def _remove(self, relpath, expect):
        with self._os_errors("deleting %s" % relpath), self._locked():
            self._check(relpath, expect)
            try:
                os.unlink(self._path(relpath))
            except FileNotFoundError:
                return
            self._prune_empty_dirs(os.path.dirname(self._path(relpath)))

    def _prune_empty_dirs(self, directory):
        while directory.startswith(self.root + os.sep):
            try:
                os.rmdir(directory)
            except OSError:
                return
            directory = os.path.dirname(directory)

    def _list(self, prefix=""):
        # A prefix need not end at a directory ("c/instance" matches
        # "c/instancegroup/a"), so walk from the directory that holds it.
        start = os.path.dirname(self._path(prefix)) if prefix and not prefix.endswith("/") else self._path(prefix)
        found = {}
        for directory, _dirs, files in os.walk(start):
            for name in files:
                if name.startswith(".") and ".tmp-" in name:  # another writer's file in flight
                    continue
                relpath = os.path.relpath(os.path.join(directory, name), self.root).replace(os.sep, "/")
                if relpath.startswith(prefix):
                    try:
                        found[relpath] = (self._version(os.stat(os.path.join(directory, name))), None)
                    except FileNotFoundError:  # deleted since the walk saw it
                        continue
        return found


def _fsync_directory(directory):
    """Make the rename itself durable (POSIX); platforms without directory fds skip it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# memfs: key -> (bytes, version); versions count up process-wide.
_MEMFS = {}
_MEMFS_LOCK = threading.Lock()
_MEMFS_VERSIONS = itertools.count(1)


class MemStore(Store):
    """memfs:// -- process-wide in-memory store, for tests (as in kops)."""

    scheme = "memfs"

    def __init__(self, url):
        Store.__init__(self, url)
        self.prefix = self.base_url[len("memfs://"):]

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath)

    def _get(self, relpath):
        with _MEMFS_LOCK:
            if self._key(relpath) not in _MEMFS:
                raise NotFoundError("%s not found" % self.url(relpath))
            return _MEMFS[self._key(relpath)]

    def _head(self, relpath):
        with _MEMFS_LOCK:
            return _MEMFS[self._key(relpath)][1] if self._key(relpath) in _MEMFS else ABSENT

    def _check(self, relpath, expect):
        current = _MEMFS[self._key(relpath)][1] if self._key(relpath) in _MEMFS else ABSENT
        if expect is not None and current != expect:
            raise ConflictError("%s was changed by another writer" % self.url(relpath))

    def _put(self, relpath, data, expect):
        with _MEMFS_LOCK:
            self._check(relpath, expect)
            version = str(next(_MEMFS_VERSIONS))
            _MEMFS[self._key(relpath)] = (data, version)
            return version

    def _remove(self, relpath, expect):
        with _MEMFS_LOCK:
            self._check(relpath, expect)
            _MEMFS.pop(self._key(relpath), None)

    def _list(self, prefix=""):
        start = self._key(prefix)
        with _MEMFS_LOCK:
            return {k[len(self.prefix) + 1:]: (v[1], None) for k, v in _MEMFS.items() if k.startswith(start)}


def reset_memfs():
    with _MEMFS_LOCK:
        _MEMFS.clear()


def _split_bucket(url, scheme):
    rest = url[len(scheme) + 3:]
    bucket, _sep, prefix = rest.partition("/")
    if not bucket:
        raise StoreError("%s: no bucket name (expected %s://bucket[/prefix])" % (url, scheme))
    return bucket, prefix.strip("/")


def open_store(url=None, endpoint=None):
    """The Store for a state store URL; None means $KOPS_STATE_STORE, as kops does.

    endpoint overrides the object-store API address (an S3-compatible
    endpoint for s3://, the GCS JSON API root for gs://); without it the
    usual environment applies (AWS_ENDPOINT_URL[_S3], STORAGE_EMULATOR_HOST).
    """
    url = url or os.environ.get(STATE_STORE_ENV)
    if not url:
        raise StoreError("no state store: set state_store (e.g. s3://my-kops-state) or the %s environment variable"
                         % STATE_STORE_ENV)
    url = url.strip()
    if url.startswith("s3://"):
        from ansible_collections.kubeops.kops.plugins.module_utils.statestore import s3
        bucket, prefix = _split_bucket(url, "s3")
        return s3.S3Store(url, bucket, prefix, endpoint=endpoint)
    if url.startswith("gs://"):
        from ansible_collections.kubeops.kops.plugins.module_utils.statestore import gcs
        bucket, prefix = _split_bucket(url, "gs")
        return gcs.GCSStore(url, bucket, prefix, endpoint=endpoint)
    if url.startswith("memfs://"):
        return MemStore(url)
    if url.startswith("file://"):
        return FileStore(url, url[len("file://"):])
    if "://" in url:
        raise StoreError("state store %s: unsupported scheme (use s3://, gs://, file:// or a path)" % url)
    root = os.path.abspath(os.path.expanduser(url))
    return FileStore("file://" + root, root)
