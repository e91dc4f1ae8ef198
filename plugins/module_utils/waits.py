# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Notices while a module waits: a wait that lasts longer than NOTICE_AFTER seconds says what it waits for.

An Ansible module prints nothing until it returns, so a module that waits on an endpoint, a download or the
cloud would be silent for as long as it waits.  Here a wait is registered (waiting(), or the AWS clients'
request hooks in cloud/aws.py); one watcher thread writes a line for each wait that has lasted NOTICE_AFTER
seconds, then every REPEAT_EVERY seconds, to the file named by KUBEOPS_NOTICE_FILE.  The collection's action
plugins (plugins/plugin_utils/notices.py) set that variable and print each line as it is written.  Without it
(a module run by hand) nothing is written.  notice() writes a line at once (what a download fetches).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

NOTICE_ENV = "KUBEOPS_NOTICE_FILE"
NOTICE_AFTER = 10.0
REPEAT_EVERY = 30.0
_TICK = 0.5


class _Watcher(object):
    def __init__(self, path, clock=time.monotonic):
        self.path = path
        self.clock = clock
        self.waits = {}  # key -> [what, started, gives up after (s) or None, next notice at]
        self.lock = threading.Lock()
        self.thread = None

    def write(self, line):
        try:
            with open(self.path, "a", encoding="utf-8") as stream:
                stream.write(line.rstrip("\n") + "\n")
        except OSError:
            pass  # a notice is a courtesy; the run's own result still reports

    def start(self, key, what, gives_up=None):
        now = self.clock()
        with self.lock:
            self.waits[key] = [what, now, gives_up, now + NOTICE_AFTER]
            if self.thread is None:
                self.thread = threading.Thread(target=self._watch, name="kubeops-waits", daemon=True)
                self.thread.start()

    def stop(self, key):
        with self.lock:
            self.waits.pop(key, None)

    def due(self):
        """The notices due now (and when each is next due)."""
        now = self.clock()
        lines = []
        with self.lock:
            for entry in self.waits.values():
                what, started, gives_up, next_at = entry
                if now >= next_at:
                    entry[3] = now + REPEAT_EVERY
                    lines.append(describe(what, now - started, gives_up))
        return lines

    def _watch(self):
        while True:
            time.sleep(_TICK)
            for line in self.due():
                self.write(line)


def describe(what, elapsed, gives_up=None):
    line = "waiting for %s: %d s so far" % (what, elapsed)
    if gives_up:
        line += "; gives up after %d s" % gives_up
    return line


_WATCHERS = {}


def watcher():
    """The watcher of this process (None when no notice file is set)."""
    path = os.environ.get(NOTICE_ENV)
    if not path:
        return None
    if path not in _WATCHERS:
        _WATCHERS[path] = _Watcher(path)
    return _WATCHERS[path]


def notice(line):
    """Write a line now (e.g. what a download fetches and its size)."""
    current = watcher()
    if current is not None:
        current.write(line)


def start(key, what, gives_up=None):
    current = watcher()
    if current is not None:
        current.start(key, what, gives_up)


def stop(key):
    current = watcher()
    if current is not None:
        current.stop(key)


@contextlib.contextmanager
def waiting(what, gives_up=None):
    """Register a wait for the duration of the block: past NOTICE_AFTER seconds it is announced."""
    key = object()
    start(key, what, gives_up)
    try:
        yield
    finally:
        stop(key)
