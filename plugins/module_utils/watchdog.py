# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Stop a long-running module when the ansible controller that started it is gone.

ansible-playbook runs each task in a worker process that calls setsid(), so killing
ansible-playbook (SIGKILL, a closed terminal, a CI job cancelled) leaves the worker and
the module running: measured, 153 more mutating cloud calls after the kill, and the
orphaned workers waiting forever.  A module that calls start() gets a daemon thread
that watches the process chain from the module up to the controller (the top-most
consecutive ancestor running an ansible-* program) and, as soon as any process of
that chain is gone, replaced (pid reused) or reparented, writes one line to stderr,
ends the ansible processes between the module and the controller, and exits the
module at once with os._exit: no further cloud call is made.

Linux /proc only; elsewhere, or when no ansible controller is among the ancestors
(the module run by hand, over SSH on a remote host, in a unit test), start() does
nothing and returns None.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

EXIT_STATUS = 3
CHECK_INTERVAL = 0.5


def _stat(pid):
    """(ppid, start time in clock ticks) of a process, or None if it does not exist."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # After "pid (comm)": state ppid pgrp session ... starttime is field 22 of the whole line.
    return int(fields[1]), int(fields[19])


def _is_ansible_program(pid):
    """True if the process runs an ansible-* program (ansible-playbook, ansible, ansible-runner...)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as cmdline:
            argv = cmdline.read().split(b"\0")[:2]
    except OSError:
        return False
    # argv[0] is the program, or the interpreter with the program in argv[1]; AnsiballZ_*.py (the module) is not one.
    return any(os.path.basename(arg.decode("utf-8", "replace")).startswith("ansible") for arg in argv)


def controller_chain(pid=None):
    """[(pid, ppid, start time)] from this process's parent up to the ansible controller, or [] if there is none.

    The controller is the top-most of the consecutive ancestors that run an ansible-* program: a task's worker is
    a fork of ansible-playbook (same command line) and sits below it."""
    chain = []
    pid = os.getppid() if pid is None else pid
    seen_ansible = False
    while pid > 1:
        stat = _stat(pid)
        if stat is None:
            break
        ansible = _is_ansible_program(pid)
        if seen_ansible and not ansible:
            break
        seen_ansible = seen_ansible or ansible
        chain.append((pid, stat[0], stat[1]))
        pid = stat[0]
    return chain if seen_ansible else []


def _broken(chain):
    """The first (pid, why) of the chain that is gone, replaced or reparented; None while the chain holds."""
    for pid, ppid, started in chain:
        stat = _stat(pid)
        if stat is None or stat[1] != started:
            return pid, "is gone"
        if stat[0] != ppid:
            return pid, "was reparented (its parent %d is gone)" % ppid
    return None


def _stop(chain, pid, why, module_name):
    controller = chain[-1][0]
    sys.stderr.write("kubeops.kops %s: the ansible controller (pid %d) that started this module is gone (process %d %s); "
                     "stopping now so that no further cloud call is made. Run the playbook again to finish.\n"
                     % (module_name, controller, pid, why))
    sys.stderr.flush()
    # The worker (and its shell) between this module and the controller only wait for this module: end them too,
    # else they sleep forever as orphans.
    for ancestor, _ppid, started in chain[:-1]:
        stat = _stat(ancestor)
        if stat is not None and stat[1] == started:
            try:
                os.kill(ancestor, signal.SIGKILL)
            except OSError:
                pass
    os._exit(EXIT_STATUS)


def start(module_name="module", interval=CHECK_INTERVAL):
    """Watch the controller from a daemon thread; returns the thread, or None when there is nothing to watch."""
    if not os.path.isdir("/proc/self"):
        return None
    chain = controller_chain()
    if not chain:
        return None

    def watch():
        while True:
            time.sleep(interval)
            broken = _broken(chain)
            if broken:
                _stop(chain, broken[0], broken[1], module_name)

    thread = threading.Thread(target=watch, name="kubeops-kops-watchdog", daemon=True)
    thread.start()
    return thread
