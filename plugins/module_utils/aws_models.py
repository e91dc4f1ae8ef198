# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""botocore's data loader, one per process, with the models it parses kept on disk between runs.

botocore reads each service's API model from JSON when a client of that service is first made: EC2's is 4 MB,
about 0.1 s to parse, the largest single cost of a small cluster's render (docs/performance.md), and a loader of
its own parses it again.  So every session of a run (cloud/aws.py) and the machine-type table
(api/validation_aws.py) share one loader, and that loader keeps what it parsed as marshal data under the user's
cache directory (user_cache.py): read back in a fifth of the time or less (docs/performance.md).

- marshal holds plain dicts, lists, strings and numbers: reading it runs no code.
- A cache directory is named by the Python, botocore and boto3 versions, so an upgrade reads botocore's JSON again.
- Models a user keeps outside the installed packages (~/.aws/models, AWS_DATA_PATH) change without a version: when
  such a directory exists, every model is read as botocore reads it.
- A cache that cannot be read is read from JSON again and rewritten; one that cannot be written is not used (a
  read-only home costs time, not a result).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import marshal
import os
import sys
import threading

from ansible_collections.kubeops.kops.plugins.module_utils import user_cache
from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write

_LOADERS = {}
_LOCK = threading.Lock()


def loader(data_path=None):
    """The process's botocore loader for data_path (botocore's data_path setting: AWS_DATA_PATH, os.pathsep-separated),
    made on first use."""
    with _LOCK:
        if data_path not in _LOADERS:
            _LOADERS[data_path] = _loader_class()(extra_search_paths=_search_paths(data_path))
        return _LOADERS[data_path]


def _search_paths(data_path):
    # As botocore.loaders.create_loader reads the setting.
    return [os.path.expanduser(os.path.expandvars(path)) for path in (data_path or "").split(os.pathsep) if path]


@functools.lru_cache(maxsize=None)
def _loader_class():
    """The loader class, defined once botocore is imported."""
    import botocore.loaders  # pylint: disable=import-outside-toplevel  # only AWS runs load it

    class CachingLoader(botocore.loaders.Loader):
        """botocore's Loader, reading what it parsed before from the cache when the cache applies."""

        @botocore.loaders.instance_cache
        def load_data_with_path(self, name):
            """(data, path) of a name such as ec2/2016-11-15/service-2 or endpoints: every model and table botocore
            reads goes through here."""
            return self._through_disk(super().load_data_with_path, name)

        def _through_disk(self, parse, name):
            directory = cache_directory(self.search_paths)
            if directory is None:
                return parse(name)
            path = os.path.join(directory, name.replace("/", "_") + ".marshal")
            try:
                with open(path, "rb") as handle:
                    return _unmarshal(handle.read())  # marshal.load(handle) reads in small pieces: 5 times slower
            except (OSError, EOFError, ValueError, TypeError):  # not cached yet, or a file another writer broke
                pass
            parsed = parse(name)
            try:  # atomic: writers in other threads and processes replace the file whole, readers see one or another
                atomic_write(path, 0o644, marshal.dumps(_plain(parsed)), dir_mode=0o700)
            except (OSError, ValueError):  # a read-only cache, or a value marshal cannot hold: parsed each run
                pass
            return parsed

    return CachingLoader


def cache_directory(search_paths):
    """Where the parsed data of a loader with these search paths is kept, or None when it may not be cached: a
    search path outside botocore's and boto3's installed data exists (its files change without a version)."""
    import botocore  # pylint: disable=import-outside-toplevel
    packages = [sys.modules.get("boto3"), botocore]
    installed = {os.path.join(os.path.dirname(package.__file__), "data"):
                 "%s %s" % (package.__name__, package.__version__) for package in packages if package is not None}
    if any(path not in installed and os.path.isdir(path) for path in search_paths):
        return None
    versions = ["python %d.%d marshal %d" % (sys.version_info[0], sys.version_info[1], marshal.version)]
    versions += sorted(installed[path] for path in set(search_paths) & set(installed))
    return str(user_cache.root() / "botocore" / hashlib.sha256("; ".join(versions).encode("ascii")).hexdigest()[:16])


def _unmarshal(data):
    """marshal.loads with the garbage collector paused: EC2's model is some 23,000 dicts and lists, and every 700 new
    ones start a collection, which in a task's worker walks Ansible's objects too (0.057 s for EC2's model there,
    0.016 s paused); the model holds no cycles to collect."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return marshal.loads(data)
    finally:
        if enabled:
            gc.enable()


def _plain(value):
    """value with botocore's OrderedDicts as dicts (marshal holds only built-in types; a dict keeps its order)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item) for item in value)
    return value
