# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A long run's log (a roll, an apply): one line per step, kept for the result and, as it happens, printed on the
console (module_utils/waits.py's notices, which the action prints while the module runs) and appended to a file a
user can `tail -f` (an Ansible module prints nothing until it returns, and a roll takes an hour)."""

from __future__ import annotations

import threading
import time

from ansible_collections.kubeops.kops.plugins.module_utils import waits


class Progress(object):
    """Lines "[  12.3s] group instance phase: message"; thread-safe (drains run side by side)."""

    def __init__(self, path=None, clock=time.monotonic, console=True):
        self.path = path
        self.console = console
        self.clock = clock
        self.started = clock()
        self.lines = []
        self.steps = []
        self._lock = threading.Lock()
        if path:
            with open(path, "a", encoding="utf-8"):  # fail early, before anything moves, if it cannot be written
                pass

    def elapsed(self):
        return self.clock() - self.started

    def step(self, phase, message, group="-", instance="-", console=None):
        """Log a step; console: whether the console shows it too (default, the log's own setting)."""
        elapsed = self.elapsed()
        line = "[%7.1fs] %s %s %s: %s" % (elapsed, group, instance, phase, message)
        with self._lock:
            self.lines.append(line)
            self.steps.append({"elapsed": round(elapsed, 1), "group": group, "instance": instance, "phase": phase,
                               "message": message})
            if self.path:
                with open(self.path, "a", encoding="utf-8") as stream:
                    stream.write(line + "\n")
        if self.console if console is None else console:
            waits.notice(line)
        return line
