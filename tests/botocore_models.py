"""botocore's service models and endpoint data loaded once per test process, not once per boto3 session.

cloud/aws.client makes a boto3 session per call site and run, as a module does in its own process.  In the test
process, where the integration tests run hundreds of creates and updates in-process, each new session's Loader
parses the same JSON again (ec2's model alone is megabytes; endpoints.json for every session's resolver): about 1 s
per session on an idle core, most of a faults-test run.  botocore already shares what one Loader loaded between
every client of its session (botocore.loaders.instance_cache); this shares it between Loaders with the same search
paths, the same objects botocore would hand every client of one session.  No code of the collection is changed and
nothing it asks for is answered differently: only the parse is not repeated.
"""

from __future__ import annotations

import functools
import threading

SHARED_METHODS = ("load_service_model", "load_data", "load_data_with_path", "list_available_services",
                  "determine_latest_version", "list_api_versions")

_LOCK = threading.Lock()
_CACHE = {}


def _shared(name, method):
    @functools.wraps(method)
    def load(self, *args, **kwargs):
        key = (name, tuple(self.search_paths), args, tuple(sorted(kwargs.items())))
        with _LOCK:
            if key in _CACHE:
                return _CACHE[key]
        value = method(self, *args, **kwargs)
        with _LOCK:
            return _CACHE.setdefault(key, value)
    load.shared_between_loaders = True
    return load


def share_between_sessions():
    """Make every botocore Loader of this process share what any of them loaded (idempotent)."""
    from botocore import loaders
    for name in SHARED_METHODS:
        method = getattr(loaders.Loader, name)
        if not getattr(method, "shared_between_loaders", False):
            setattr(loaders.Loader, name, _shared(name, method))
