"""The collection's modules run in the task's worker (plugin_utils/in_process.py) with the same results as Ansible's
packaged run (KUBEOPS_IN_PROCESS=0): changed, diff, check mode, no_log, warnings, a failure's message, the spec
written to the store, the change cause (the action's own argument) and an environment variable given to the task.
"""

from __future__ import annotations

import json
import pathlib
import re

from tests.integration.conftest import task_results

OPTIONS = {"cluster_name": "inproc.example.com", "cloud_provider": "aws", "networking": "cni", "zones": ["us-east-1a"],
           "kubernetes_version": "v1.34.2"}
PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  tasks:
    - name: Preview the create
      kubeops.kops.cluster: {state_store: "%(store)s", options: %(options)s}
      check_mode: true
      diff: true
      register: preview
    - name: Create
      kubeops.kops.cluster: {state_store: "%(store)s", options: %(options)s}
      environment: {KUBEOPS_TEST_MARK: "from the task"}
    - name: Create again
      kubeops.kops.cluster: {state_store: "%(store)s", options: %(options)s}
    - name: Read it
      kubeops.kops.cluster_info: {state_store: "%(store)s", name: inproc.example.com, history: true}
    - name: Read a secret without logging it
      kubeops.kops.cluster_info: {state_store: "%(store)s", name: inproc.example.com, history: true}
      no_log: true
    - name: An unknown option
      kubeops.kops.cluster: {state_store: "%(store)s", options: {cluster_name: x.example.com, zonez: [us-east-1a]}}
      ignore_errors: true
    - name: A revision that is not kept
      kubeops.kops.cluster_info: {state_store: "%(store)s", name: inproc.example.com, revision: 99}
      ignore_errors: true
"""
TASKS = ("Preview the create", "Create", "Create again", "Read it", "Read a secret without logging it",
         "An unknown option", "A revision that is not kept")


def _run(playbook, tmp_path, mode):
    work = tmp_path / mode
    work.mkdir()
    store = "file://%s/state" % work
    path = work / "play.yml"
    path.write_text(PLAYBOOK % {"store": store, "options": json.dumps(OPTIONS)})
    _code, run = playbook(path, cwd=work)  # two tasks fail on purpose (ignore_errors)
    results = {}
    for name in TASKS:
        text = json.dumps(task_results(run, name), sort_keys=True).replace(str(work), "WORK")
        text = re.sub(r'"pid": \d+', '"pid": 0', text)  # the history's writer: a process of each run
        results[name] = json.loads(re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "T", text))
    return results, work / "state"


def test_modules_in_the_worker_return_what_the_packaged_modules_return(playbook, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEOPS_IN_PROCESS", "0")
    packaged, packaged_store = _run(playbook, tmp_path, "packaged")
    monkeypatch.setenv("KUBEOPS_IN_PROCESS", "1")
    in_worker, worker_store = _run(playbook, tmp_path, "in-process")
    for name in TASKS:
        assert in_worker[name] == packaged[name], (name, in_worker[name], packaged[name])
    assert packaged["Preview the create"]["changed"] is True and packaged["Preview the create"]["diff"]
    assert packaged["Create again"]["changed"] is False
    assert packaged["An unknown option"]["failed"] is True and "zonez" in packaged["An unknown option"]["msg"]
    assert packaged["A revision that is not kept"]["failed"] is True and "99" in packaged["A revision that is not kept"]["msg"]
    assert packaged["Read a secret without logging it"]["censored"]
    # The store holds the same files (the history's cause names the playbook: same text in both runs).
    files = sorted(p.relative_to(packaged_store) for p in packaged_store.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(worker_store) for p in worker_store.rglob("*") if p.is_file())
    assert files


def test_the_worker_runs_the_module_itself_unless_switched_off(playbook, tmp_path, monkeypatch):
    work = tmp_path
    path = work / "play.yml"
    path.write_text(PLAYBOOK % {"store": "file://%s/state" % work, "options": json.dumps(OPTIONS)})
    monkeypatch.setenv("KUBEOPS_IN_PROCESS", "1")
    code, text = playbook(path, "-vvv", json_output=False, cwd=work)
    assert code == 0, text
    ran_here = re.findall(r"Running (\S+) in this worker", text)
    assert ran_here.count("ansible_collections.kubeops.kops.plugins.modules.cluster") == 4
    assert "AnsiballZ_cluster" not in text
    monkeypatch.setenv("KUBEOPS_IN_PROCESS", "0")
    code, text = playbook(path, "-vvv", json_output=False, cwd=work)
    assert "in this worker" not in text and "AnsiballZ_cluster.py" in text
    assert "Running kubeops.kops.cluster the normal way: KUBEOPS_IN_PROCESS is off" in text


def test_a_task_on_another_interpreter_runs_the_normal_way(playbook, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEOPS_IN_PROCESS", "1")
    path = tmp_path / "play.yml"
    other = pathlib.Path("/usr/bin/env")  # a different interpreter path: its python3 is not this venv's
    path.write_text(PLAYBOOK.replace('"{{ ansible_playbook_python }}"', "%s python3" % other)
                    % {"store": "file://%s/state" % tmp_path, "options": json.dumps(OPTIONS)})
    _code, text = playbook(path, "-vvv", json_output=False, cwd=tmp_path)
    assert "in this worker" not in text
    assert "the normal way: the module's interpreter" in text
