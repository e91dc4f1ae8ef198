# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A module's live lines on the console: each step as it happens, and what it waits for while it waits.

An Ansible module prints nothing until it returns, so a module that rolls instances, deletes a cluster in rounds or
waits on an endpoint would be silent for as long as it works.  Here notice() writes a line at once (a step of a
roll, a delete round, a download), and a wait is registered (waiting(), or the AWS clients' request hooks in
cloud/aws.py); one watcher thread writes a line for each wait that has lasted NOTICE_AFTER seconds, then every
REPEAT_EVERY seconds, and, when nothing at all was written for QUIET seconds, one saying what the module is still
at (its oldest wait, or its last step).  So a module is never silent for more than 10 s.  The lines go to the file named by
KUBEOPS_NOTICE_FILE; the collection's action plugins (plugins/plugin_utils/notices.py) set that variable and print
each line as it is written (on the console, and in an AWX job's log).  Without it (a module run by hand) nothing is
written.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

NOTICE_ENV = "KUBEOPS_NOTICE_FILE"
# The longest silence is 10 s as the user sees it: the line is written half a second early, for the watcher's tick
# and the action's poll (plugins/plugin_utils/notices.py) to print it within the 10 s.
NOTICE_AFTER = 9.5
REPEAT_EVERY = 9.5
QUIET = 9.5  # no line for this long: the oldest wait is said again, or else what the module is still at
_TICK = 0.25


class _Watcher(object):
    def __init__(self, path, clock=time.monotonic):
        self.path = path
        self.clock = clock
        self.waits = {}  # key -> [what, started, gives up after (s) or None, next notice at]
        self.lock = threading.Lock()
        self.thread = None
        self.started = clock()
        self.last_step = None  # (when, line): the last line notice() wrote
        self.last_written = self.started

    def write(self, line, step=False):
        now = self.clock()
        with self.lock:
            self.last_written = now
            if step:
                self.last_step = (now, line)
        try:
            with open(self.path, "a", encoding="utf-8") as stream:
                stream.write(line.rstrip("\n") + "\n")
        except OSError:
            pass  # a notice is a courtesy; the run's own result still reports
        self.watch()

    def watch(self):
        """Start the watcher thread (once): from the first wait or line on, silences are broken."""
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._watch, name="kubeops-waits", daemon=True)
                self.thread.start()

    def start(self, key, what, gives_up=None):
        now = self.clock()
        with self.lock:
            self.waits[key] = [what, now, gives_up, now + NOTICE_AFTER]
        self.watch()

    def stop(self, key):
        with self.lock:
            self.waits.pop(key, None)

    def due(self):
        """The notices due now (and when each is next due); with none due after QUIET seconds of silence, the line
        that says what the module is still at."""
        now = self.clock()
        lines = []
        with self.lock:
            for entry in self.waits.values():
                what, started, gives_up, next_at = entry
                if now >= next_at:
                    entry[3] = now + REPEAT_EVERY
                    lines.append(describe(what, now - started, gives_up))
            if not lines and now - self.last_written >= QUIET:
                if self.waits:  # a wait begun since the last line: said now, not only NOTICE_AFTER after it began
                    oldest = min(self.waits.values(), key=lambda entry: entry[1])
                    oldest[3] = now + REPEAT_EVERY
                    lines.append(describe(oldest[0], now - oldest[1], oldest[2]))
                else:
                    lines.append(still_at(self.last_step, now, now - self.started))
            if lines:
                self.last_written = now
        return lines

    def _watch(self):
        while True:
            time.sleep(_TICK)
            for line in self.due():
                self.write(line)


def describe(what, elapsed, gives_up=None):
    line = "waiting for %s: %d s so far" % (what, round(elapsed))
    if gives_up:
        line += "; gives up after %d s" % gives_up
    return line


def still_at(last_step, now, elapsed):
    """The line for a silence: the last step and how long ago it was written (or how long the module has run)."""
    if last_step is None:
        return "still working: %d s so far" % round(elapsed)
    return "still working, %d s since: %s" % (round(now - last_step[0]), last_step[1])


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
    """Write a line now: a step as it happens (what a download fetches, an instance drained, a delete round)."""
    current = watcher()
    if current is not None:
        current.write(line, step=True)


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
