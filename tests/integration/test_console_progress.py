"""What a kops user sees on the console while the long playbooks run (issue 31): each step on its own line as it
happens, never a silence of more than 10 s, every retry saying what it waits for and for how long; and durations
in kops' form (40s, 10m) where the playbooks take one.

The playbooks run as a user runs them (ansible-playbook from a directory of the user's, the default stdout
callback, a moto cluster), their stdout read line by line as it comes, each line timed on arrival.  A line that
came only when the module returned would arrive with the task's result: the tests check the steps arrive spread
over the task's run, in order, before its end.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time

from ansible_collections.kubeops.kops.plugins.module_utils import updates

from tests.integration.conftest import BIN, REPO, ansible_env
from tests.integration.test_aws_update import ADMIN_KEY, _service
from tests.integration.test_rolling_update import CLUSTER, NODES, _change_machine_type, _make_cluster, _members

PLAYBOOKS = REPO / "playbooks"
QUIET = 10  # module_utils/waits.py: the longest silence
SLACK = 2.5  # the watcher's tick (0.5 s), the action's poll (0.25 s), a busy 2-core machine


def streamed(playbook, *args, cwd):
    """Run a playbook as a user does; [(seconds since start, line)] as they arrived on its stdout, and its code."""
    env = ansible_env(REPO / "build" / "collections")
    started = time.monotonic()
    proc = subprocess.Popen([str(BIN / "ansible-playbook"), str(PLAYBOOKS / playbook), *args], env=env, cwd=str(cwd),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [(time.monotonic() - started, line.rstrip("\n")) for line in proc.stdout]
    return proc.wait(timeout=600), lines


def task_window(lines, task):
    """The lines from the task's header to the next task's (or the recap): what the task printed while it ran."""
    begin = next(i for i, (_at, line) in enumerate(lines) if line.startswith("TASK [%s]" % task))
    end = next(i for i in range(begin + 1, len(lines)) if lines[i][1].startswith(("TASK [", "PLAY RECAP")))
    return lines[begin:end + 1]


def longest_silence(window):
    return max(later[0] - earlier[0] for earlier, later in zip(window, window[1:]))


def text(lines):
    return "\n".join("%6.1f %s" % (at, line) for at, line in lines)


def test_a_roll_prints_each_step_as_it_happens(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    service = _make_cluster(store)
    _change_machine_type(service)
    old_nodes = set(_members("%s.%s" % (NODES, CLUSTER)))
    # interval in kops' form: 4 s after each of the 4 terminations.
    code, lines = streamed("rolling_update.yml", "-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER,
                           "-e", "cloud_only=true", "-e", "interval=4s", cwd=tmp_path)
    assert code == 0, text(lines)
    window = task_window(lines, "Rolling update of %s" % CLUSTER)
    steps = [(at, line) for at, line in window if line.startswith("rolling_update: [")]
    # The table and the plan first, as kops prints them, then each step with its elapsed time.
    assert any(line.split()[1:3] == ["NAME", "STATUS"] for _at, line in window), text(window)
    terminations = [(at, line) for at, line in steps if re.search(r" i-\w+ terminate: terminating$", line)]
    assert len(terminations) == 4, text(window)
    assert {re.search(r" (i-\w+) terminate", line).group(1) for _at, line in terminations[1:]} == old_nodes
    waits = [line for _at, line in steps if " wait: for the group's instances to be InService (gives up after 900s)"
             in line]
    assert len(waits) == 4, text(window)
    assert any(line.endswith("done: completed rolling update of instance groups control-plane-us-east-1a, %s"
                             % NODES) for _at, line in steps), text(window)
    # Each termination is printed when it happens: at least one interval (4 s) after the one before, and the first
    # well before the task ends (three more intervals follow it).
    times = [at for at, _line in terminations]
    assert all(later - earlier >= 3.5 for earlier, later in zip(times, times[1:])), text(window)
    assert window[-1][0] - times[0] >= 12, text(window)
    assert longest_silence(window) <= QUIET + SLACK, text(window)


def test_a_direct_create_prints_its_phases_and_objects_as_they_are_made(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    _service(store)
    (tmp_path / "admin.pub").write_text(ADMIN_KEY)
    code, lines = streamed("update_cluster.yml", "-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER,
                           "-e", "ssh_public_key_file=admin.pub", cwd=tmp_path)
    assert code == 0, text(lines)
    window = task_window(lines, "Update the cluster with target direct")
    live = [(at, line) for at, line in window if line.startswith("cluster_update: ")]
    reconciling = [at for at, line in live if re.match(r"cluster_update: reconciling \d+ cloud object\(s\), 8 at a "
                                                       r"time \(gives up after 600 s\)$", line)]
    created = [(at, line) for at, line in live if re.match(r"cluster_update: \[ *[\d.]+s\] \S+ - create: \S+", line)]
    assert reconciling and len(created) > 30, text(window)
    assert any(" aws_vpc - create: %s" % CLUSTER in line for _at, line in created), text(window)
    assert not any(" unchanged: " in line for _at, line in live), text(window)  # the console shows changes only
    # The objects came while the module ran, not with its result.
    assert reconciling[0] <= created[0][0] < created[-1][0] < window[-1][0]
    assert longest_silence(window) <= QUIET + SLACK, text(window)
    print("direct create on moto: %.1f s, %d live lines, longest silence %.1f s"
          % (window[-1][0] - window[0][0], len(live), longest_silence(window)))


def test_a_delete_prints_each_round(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    updates.apply_direct(_service(store), CLUSTER, False, ssh_public_key=ADMIN_KEY)
    code, lines = streamed("delete_cluster.yml", "-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER,
                           "-e", "confirm_cluster_name=%s" % CLUSTER, "-e", "delete_timeout=10m", cwd=tmp_path)
    assert code == 0, text(lines)
    window = task_window(lines, "Delete cluster %s" % CLUSTER)
    live = [(at, line) for at, line in window if line.startswith("cluster_delete: ")]
    assert re.match(r"cluster_delete: deleting \d+ cloud object\(s\) of %s \(gives up after 10m0s\)$"
                    % re.escape(CLUSTER), live[0][1]), text(window)
    deleted = [line for _at, line in live if re.match(r"cluster_delete: [\w-]+:\S+\tok$", line)]
    assert len(deleted) > 20, text(window)
    # Between rounds: what is left, and whether the next round waits (and how long) or starts at once.
    rounds = [line for _at, line in live if line.startswith("cluster_delete: Not all resources deleted; ")]
    assert rounds, text(window)
    assert all(re.search(r"; (waiting \d+s before reattempting deletion|reattempting deletion now) \(gives up in "
                         r"\d+m\d+s\): \d+ left$", line) for line in rounds), rounds
    assert live[-1][1] == "cluster_delete: removing %s from the state store" % CLUSTER, text(window)
    assert longest_silence(window) <= QUIET + SLACK, text(window)
    print("delete on moto: %.1f s, %d live lines, %d rounds, longest silence %.1f s"
          % (window[-1][0] - window[0][0], len(live), len(rounds), longest_silence(window)))


def _closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_validate_wait_retries_an_unreachable_api_until_the_deadline(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    updates.apply_direct(_service(store), CLUSTER, False, ssh_public_key=ADMIN_KEY)  # the cloud groups and the CA
    api = "https://127.0.0.1:%d" % _closed_port()  # nothing listens: connection refused at once, every time
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % api)
    code, lines = streamed("validate_cluster.yml", *args, "-e", "wait=15s", "-e", "interval=4s", cwd=tmp_path)
    assert code != 0
    window = task_window(lines, "Validate cluster %s" % CLUSTER)
    attempts = [(at, line) for at, line in window if line.startswith("cluster_validate: validation ")]
    assert len(attempts) >= 4, text(lines)
    first = attempts[0][1]
    assert re.match(r"cluster_validate: validation 1: failed: cannot reach the Kubernetes API at %s to list nodes: "
                    r".*; again in 4s \(gives up in 1?\ds\)$" % re.escape(api), first), first
    assert re.search(r"; the wait of 15s is over$", attempts[-1][1]), attempts[-1][1]
    # It waited the 15 s, each attempt printed when it happened.
    assert attempts[-1][0] - window[0][0] >= 15 and attempts[1][0] - attempts[0][0] >= 3.5, text(window)
    assert "cannot reach the Kubernetes API" in "\n".join(line for _at, line in lines if "Validation" in line)

    # Without a wait, the same failure is the answer at once.
    code, lines = streamed("validate_cluster.yml", *args, cwd=tmp_path)
    assert code != 0 and not [line for _at, line in lines if line.startswith("cluster_validate: validation ")]


def test_a_duration_in_neither_form_is_refused_in_one_line(aws, tmp_path):
    store = "file://%s" % (tmp_path / "state")
    _service(store)
    code, lines = streamed("validate_cluster.yml", "-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER,
                           "-e", "wait=10x", cwd=tmp_path)
    assert code != 0
    failed = [line for _at, line in lines if "is not a duration" in line]
    assert failed and "wait: '10x' is not a duration; give plain seconds (600) or kops' form: 40s, 10m, 1h, 1h30m" \
        in failed[0], text(lines)
    assert "Traceback" not in text(lines)


def test_under_a_json_stdout_callback_the_lines_go_to_stderr(aws, tmp_path):
    """A stdout callback that prints the run as one JSON document keeps it parseable: the live lines go to stderr."""
    import json
    store = "file://%s" % (tmp_path / "state")
    updates.apply_direct(_service(store), CLUSTER, False, ssh_public_key=ADMIN_KEY)
    env = ansible_env(REPO / "build" / "collections")
    env["ANSIBLE_CALLBACK_PLUGINS"] = str(REPO / "tests" / "integration" / "callback_plugins")
    env["ANSIBLE_STDOUT_CALLBACK"] = "test_json"
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(PLAYBOOKS / "validate_cluster.yml"), "-e",
                           "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e",
                           "api_server=https://127.0.0.1:%d" % _closed_port(), "-e", "wait=2s", "-e", "interval=1s"],
                          env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    run = json.loads(proc.stdout)
    assert run["stats"]["localhost"]["failures"] == 1
    assert re.search(r"^cluster_validate: validation 1: failed: cannot reach the Kubernetes API", proc.stderr, re.M), \
        proc.stderr
