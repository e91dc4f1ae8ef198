# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A small virtual file system over the places kops keeps its state.

``open_store(url)`` returns a Store for ``file://PATH`` (or a bare path),
``s3://bucket/prefix``, ``gs://bucket/prefix`` or ``memfs://name/prefix``.
All paths given to a Store are relative to its URL.  Every write replaces the
object whole: a reader sees the old content or the new one, never half.
"""

from __future__ import annotations

import os
import threading

STATE_STORE_ENV = "KOPS_STATE_STORE"
# Files under these prefixes hold private keys and secrets: 0600 on disk.
PRIVATE_PREFIXES = ("pki/", "secrets/")


class StoreError(ValueError):
    """The state store could not be used; the message names the URL and the fix."""


class NotFoundError(StoreError):
    pass


def _is_private(relpath):
    return any(("/" + p) in "/" + relpath for p in PRIVATE_PREFIXES)


class Store(object):
    scheme = None

    def __init__(self, url):
        self.base_url = url.rstrip("/")

    def url(self, relpath=""):
        return "%s/%s" % (self.base_url, relpath) if relpath else self.base_url

    def read_text(self, relpath):
        return self.read(relpath).decode("utf-8")

    def exists(self, relpath):
        try:
            self.read(relpath)
        except NotFoundError:
            return False
        return True

    @staticmethod
    def _bytes(data):
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)

    # Each backend provides: read(relpath) -> bytes (NotFoundError if absent),
    # write(relpath, bytes|str) replacing the object whole, delete(relpath)
    # (absent is fine) and list(prefix) -> sorted relpaths that start with
    # prefix, at any depth -- object-store semantics, on every backend.


class FileStore(Store):
    """file:// -- atomic writes: temp file in the same directory, fsync, rename."""

    scheme = "file"

    def __init__(self, url, root):
        Store.__init__(self, url)
        self.root = os.path.abspath(root)

    def _path(self, relpath):
        path = os.path.normpath(os.path.join(self.root, relpath))
        if path != self.root and not path.startswith(self.root + os.sep):
            raise StoreError("path %r escapes the state store %s" % (relpath, self.base_url))
        return path

    def read(self, relpath):
        try:
            with open(self._path(relpath), "rb") as handle:
                return handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise NotFoundError("%s not found" % self.url(relpath))

    def write(self, relpath, data):
        path = self._path(relpath)
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        temp = os.path.join(directory, ".%s.tmp-%d-%d" % (os.path.basename(path), os.getpid(), threading.get_ident()))
        mode = 0o600 if _is_private(relpath) else 0o644
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(self._bytes(data))
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, mode)  # exactly this mode, whatever the umask
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise
        _fsync_directory(directory)

    def delete(self, relpath):
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

    def list(self, prefix=""):
        # A prefix need not end at a directory ("c/instance" matches
        # "c/instancegroup/a"), so walk from the directory that holds it.
        start = os.path.dirname(self._path(prefix)) if prefix and not prefix.endswith("/") else self._path(prefix)
        found = []
        for directory, _dirs, files in os.walk(start):
            for name in files:
                if name.startswith(".") and ".tmp-" in name:  # another writer's file in flight
                    continue
                relpath = os.path.relpath(os.path.join(directory, name), self.root).replace(os.sep, "/")
                if relpath.startswith(prefix):
                    found.append(relpath)
        return sorted(found)


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


_MEMFS = {}
_MEMFS_LOCK = threading.Lock()


class MemStore(Store):
    """memfs:// -- process-wide in-memory store, for tests (as in kops)."""

    scheme = "memfs"

    def __init__(self, url):
        Store.__init__(self, url)
        self.prefix = self.base_url[len("memfs://"):]

    def _key(self, relpath):
        return "%s/%s" % (self.prefix, relpath)

    def read(self, relpath):
        with _MEMFS_LOCK:
            if self._key(relpath) not in _MEMFS:
                raise NotFoundError("%s not found" % self.url(relpath))
            return _MEMFS[self._key(relpath)]

    def write(self, relpath, data):
        with _MEMFS_LOCK:
            _MEMFS[self._key(relpath)] = self._bytes(data)

    def delete(self, relpath):
        with _MEMFS_LOCK:
            _MEMFS.pop(self._key(relpath), None)

    def list(self, prefix=""):
        start = self._key(prefix)
        with _MEMFS_LOCK:
            return sorted(k[len(self.prefix) + 1:] for k in _MEMFS if k.startswith(start))


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
