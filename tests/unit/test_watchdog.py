"""module_utils/watchdog.py: a module stops as soon as the ansible controller that started it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from ansible_collections.kubeops.kops.plugins.module_utils import watchdog

# A stand-in for ansible-playbook with ansible's own process shape: the controller forks a worker that calls
# setsid() and starts the module through /bin/sh; the module starts the watchdog and would run forever.
CONTROLLER = textwrap.dedent("""\
    import os, subprocess, sys, time
    module, state = sys.argv[1], sys.argv[2]
    if os.fork() == 0:
        os.setsid()
        with open(os.path.join(state, "module.err"), "wb") as err:
            subprocess.call(["/bin/sh", "-c", "%s %s %s; true" % (sys.executable, module, state)], stderr=err)
        os._exit(0)
    time.sleep(3600)
""")
MODULE = textwrap.dedent("""\
    import os, sys, time
    from ansible_collections.kubeops.kops.plugins.module_utils import watchdog
    state = sys.argv[1]
    thread = watchdog.start("test_module", interval=0.1)
    with open(os.path.join(state, "module.pid"), "w") as out:
        out.write("%d %d %s" % (os.getpid(), os.getppid(), "watching" if thread else "none"))
    while True:
        with open(os.path.join(state, "beat"), "a") as beat:
            beat.write(".")
        time.sleep(0.05)
""")


def _alive(pid):
    stat = watchdog._stat(pid)
    return stat is not None and not open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z"


def _wait(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_the_module_stops_when_the_controller_is_killed(tmp_path):
    controller = tmp_path / "ansible-playbook"
    controller.write_text(CONTROLLER)
    module = tmp_path / "AnsiballZ_test.py"
    module.write_text(MODULE)
    proc = subprocess.Popen([sys.executable, str(controller), str(module), str(tmp_path)], env=dict(os.environ))
    try:
        assert _wait(lambda: (tmp_path / "module.pid").exists() and (tmp_path / "beat").exists(), 10)
        pid, shell, mode = (tmp_path / "module.pid").read_text().split()
        pid, shell = int(pid), int(shell)
        worker = watchdog._stat(shell)[0]
        assert mode == "watching"
        time.sleep(0.3)
        assert _alive(pid), "the module stopped while its controller was running"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.monotonic()
        assert _wait(lambda: not _alive(pid), 2), "the module outlived its controller by 2 s"
        assert time.monotonic() - killed < 1.5
        beats = (tmp_path / "beat").read_text()
        time.sleep(0.3)
        assert (tmp_path / "beat").read_text() == beats  # nothing ran after the exit
        assert _wait(lambda: not _alive(worker) and not _alive(shell), 2), "the orphaned worker was left behind"
        err = (tmp_path / "module.err").read_text()
        assert "the ansible controller (pid %d) that started this module is gone" % proc.pid in err
        assert "test_module" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_nothing_to_watch_without_an_ansible_controller():
    if watchdog.controller_chain():
        return  # this test session itself runs under an ansible-* program (ansible-test): covered above
    assert watchdog.start() is None


def test_chain_reads_this_process_ancestors():
    stat = watchdog._stat(os.getpid())
    assert stat[0] == os.getppid()
    assert watchdog._stat(2 ** 22 + 12345) is None
