"""Run the collection's playbooks with the venv's ansible-playbook."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def ansible_env(collections_path):
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": str(collections_path),
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_NOCOLOR": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
    })
    env.pop("KOPS_STATE_STORE", None)
    # Ansible must find the collection only where collections_path says, not
    # through the test process's own PYTHONPATH (which holds build/collections).
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture
def playbook(tmp_path):
    """playbook(name, *args, check=False) -> (returncode, json result of the run)."""
    def run(path, *args, collections=REPO / "build" / "collections", json_output=True, cwd=None):
        env = ansible_env(collections)
        if json_output:
            env["ANSIBLE_CALLBACK_PLUGINS"] = str(REPO / "tests" / "integration" / "callback_plugins")
            env["ANSIBLE_STDOUT_CALLBACK"] = "test_json"
        proc = subprocess.run([str(BIN / "ansible-playbook"), str(path), *args], env=env, cwd=cwd or tmp_path,
                              capture_output=True, text=True, timeout=300, check=False)
        if not json_output:
            return proc.returncode, proc.stdout + proc.stderr
        try:
            return proc.returncode, json.loads(proc.stdout)
        except ValueError:
            raise AssertionError("ansible-playbook printed no JSON:\n%s\n%s" % (proc.stdout, proc.stderr))
    return run


def task_results(run, task_name):
    """The localhost result of the task called task_name in a json-callback run."""
    for play in run["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == task_name:
                return task["hosts"]["localhost"]
    raise AssertionError("no task %r in run" % task_name)


def assert_kops_table(lines, header):
    """lines open with kops' table whose header is `header` (column names): every row's cells start where the
    header's do, on kops' tab stops (multiples of 8), and the rows are sorted as kops sorts them.  Returns the rows
    (the lines up to the first blank one after the header), as lists of cells."""
    assert lines[0].split() == header, lines[:2]
    starts = [lines[0].index(" " + name) + 1 if i else 0 for i, name in enumerate(header)]
    assert all(start % 8 == 0 for start in starts), (lines[0], starts)
    rows = []
    for line in lines[1:]:
        if not line:
            break
        for start in starts[1:]:
            assert line[start - 1] == " " and line[start:start + 1].strip(), "column not at %d: %r" % (start, line)
        rows.append([line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])])
    assert rows == sorted(rows), rows
    return rows
