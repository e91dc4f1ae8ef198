# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What the engine needs of a cloud, whichever it is (kops' fi.Cloud).

A provider's cloud (cloud/aws.py's AwsCloud, later GCE's) subclasses Cloud and
fills in how its errors read and which of them mean "try again later".  The
engine (engine/runner.py) and the task contract (engine/task.py) use nothing
else, so they never import a provider's module.
"""

from __future__ import annotations

import threading


class TryAgain(Exception):
    """Raised by a task when what it needs is not there yet (kops' TryAgainLaterError):
    the runner retries the task until the run's deadline."""


class Failure(object):
    """One failed cloud call, as the user reads it: the provider's error code, its message and what to do."""

    __slots__ = ("code", "message", "hint")

    def __init__(self, code, message, hint=""):
        self.code = code
        self.message = message
        self.hint = hint

    def __str__(self):
        text = "%s: %s" % (self.code, self.message) if self.code else self.message
        return "%s (%s)" % (text, self.hint) if self.hint else text


class Cloud(object):
    """One cluster's view of its cloud: identity, ownership, a per-run lookup cache and error semantics."""

    provider = None

    def __init__(self, cluster_name, region):
        self.cluster_name = cluster_name
        self.region = region
        self._cache = {}
        self._key_locks = {}
        self._lock = threading.Lock()

    # -- ownership ---------------------------------------------------------------------------------
    def ownership_tags(self):
        """The tags (labels) that mark an object as this cluster's own."""
        raise NotImplementedError

    def owns(self, tags):
        """Whether an object with these tags is this cluster's own (never a shared or a foreign one)."""
        wanted = self.ownership_tags()
        return all((tags or {}).get(k) == v for k, v in wanted.items())

    # -- errors --------------------------------------------------------------------------------------
    def retryable(self, exc):
        """Whether exc is the cloud's eventual consistency ("not found" just after create, a dependency
        still going away): the runner tries the task again until the deadline."""
        return isinstance(exc, TryAgain)

    def failure(self, exc):
        """exc as a Failure (code, message, what to do)."""
        if isinstance(exc, TryAgain):
            return Failure("", "not ready by the deadline: %s" % exc, "give the run a longer timeout, or see why it is stuck")
        return Failure(type(exc).__name__ if not isinstance(exc, ValueError) else "", str(exc))

    def why_not_yet(self, exc):
        """A retryable exc as the line that says the run tries again reads it: the cloud's code and message, without
        the fix a final failure names (it is not one yet)."""
        if isinstance(exc, TryAgain):
            return str(exc)
        failure = self.failure(exc)
        return "%s: %s" % (failure.code, failure.message) if failure.code else failure.message

    # -- one lookup per key and run ------------------------------------------------------------------
    def lookup(self, key, fetch):
        """fetch() once per key (e.g. a kind), then the cached result.

        Tasks of one kind run side by side; a per-key lock makes the others
        wait for the first one's call instead of repeating it.
        """
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            value = fetch()
            with self._lock:
                self._cache[key] = value
            return value

    def remember(self, key, value):
        """A fact gathered before the run (a driver's, from the state store): lookup(key) answers it."""
        with self._lock:
            self._cache[key] = value

    def forget(self, key):
        with self._lock:
            self._cache.pop(key, None)
