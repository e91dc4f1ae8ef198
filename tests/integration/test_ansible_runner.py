"""The collection under AWX's engine: ansible-runner runs a job as AWX / Automation Controller does, from a private
data dir (project/ with the job template's playbook, env/extravars with the survey's answers, inventory/), with the
collection installed from its built tarball; and ansible-builder reads the collection's execution-environment
requirements (docs/awx.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
import yaml

from tests.integration.conftest import BIN, REPO, ansible_env

CLUSTER = "awx.example.com"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The collection as an EE or AWX project gets it: ansible-galaxy collection build, then install."""
    work = tmp_path_factory.mktemp("galaxy")
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(work), str(REPO)],
                           capture_output=True, text=True, check=False, env=ansible_env(work / "none"))
    assert build.returncode == 0, build.stderr
    target = work / "collections"
    install = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "-p", str(target),
                              str(next(work.glob("kubeops-kops-*.tar.gz")))],
                             capture_output=True, text=True, check=False, env=ansible_env(target))
    assert install.returncode == 0, install.stderr
    return target


SURVEY_PLAYBOOKS = {"create_cluster.yml": "create_cluster_from_survey"}


def private_data_dir(root, installed, playbook, extravars):
    """A runner private data dir as AWX lays it out for a job: project/<playbook> (the job template's playbook,
    importing the collection's), env/extravars (survey answers), env/envvars, inventory/hosts."""
    (root / "project").mkdir(parents=True)
    # create takes survey answers through its survey playbook (docs/awx.md, "Project").
    imported = SURVEY_PLAYBOOKS.get(playbook, playbook.removesuffix(".yml"))
    (root / "project" / playbook).write_text(
        "---\n- name: %s from kubeops.kops\n  ansible.builtin.import_playbook: kubeops.kops.%s\n"
        % (playbook, imported))
    (root / "env").mkdir()
    (root / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    # AWX points Ansible at the collections it installed for the project (collections/requirements.yml).
    (root / "env" / "envvars").write_text(yaml.safe_dump({"ANSIBLE_COLLECTIONS_PATH": str(installed)}))
    (root / "inventory").mkdir()
    (root / "inventory" / "hosts").write_text("localhost ansible_connection=local\n")
    return root


def run_job(data_dir, playbook, ident):
    """ansible-runner run, as AWX's worker starts it; returns the job's artifacts directory."""
    env = ansible_env(data_dir / "no-collections-here")
    # Only env/envvars says where the collection is, and no ansible.cfg of this repo applies.
    for name in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_CONFIG"):
        env.pop(name)
    env["PATH"] = "%s%s%s" % (BIN, os.pathsep, env.get("PATH", ""))
    proc = subprocess.run([str(BIN / "ansible-runner"), "run", str(data_dir), "-p", playbook, "--ident", ident],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    artifacts = data_dir / "artifacts" / ident
    assert artifacts.is_dir(), proc.stdout + proc.stderr
    return proc, artifacts


def job_events(artifacts):
    return [json.loads(path.read_text()) for path in sorted((artifacts / "job_events").glob("*.json"),
                                                            key=lambda p: int(p.name.split("-")[0]))]


def task_result(events, task):
    """The module result a runner_on_ok event of task reports (what AWX shows in the job's output)."""
    for event in events:
        if event["event"] == "runner_on_ok" and event["event_data"]["task"] == task:
            return event["event_data"]["res"]
    raise AssertionError("no runner_on_ok event for task %r in %s" % (task, sorted({e["event"] for e in events})))


def test_create_cluster_job_through_ansible_runner(installed, tmp_path):
    store = tmp_path / "state"
    # As AWX sends a survey's answers: a text question's comma-separated zones, an integer, a single choice, and
    # optional questions left blank (AWX versions differ: an empty string or null).
    survey = {"state_store": "file://%s" % store, "cluster_name": CLUSTER, "cloud_provider": "aws",
              "zones": "eu-west-1a,eu-west-1b", "node_count": 2, "networking": "calico",
              "kubernetes_version": "", "topology": None}
    data_dir = private_data_dir(tmp_path / "job", installed, "create_cluster.yml", survey)

    proc, artifacts = run_job(data_dir, "create_cluster.yml", "create-1")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (artifacts / "rc").read_text().strip() == "0"
    assert (artifacts / "status").read_text().strip() == "successful"
    events = job_events(artifacts)
    assert events[-1]["event"] == "playbook_on_stats" and events[-1]["event_data"]["failures"] == {}
    created = task_result(events, "Write the cluster spec to the state store")
    assert created["changed"] is True
    assert created["cluster"]["metadata"]["name"] == CLUSTER
    assert created["cluster"]["spec"]["networking"] == {"calico": {}}
    assert created["config_base"] == "file://%s/%s" % (store, CLUSTER)
    # The store holds what the job reported: the cluster and its instance groups, in kops' layout.
    stored = yaml.safe_load((store / CLUSTER / "config").read_text())
    assert stored["metadata"]["name"] == CLUSTER and stored["spec"]["networking"] == {"calico": {}}
    groups = sorted(path.name for path in (store / CLUSTER / "instancegroup").iterdir())
    assert groups == sorted(group["metadata"]["name"] for group in created["instance_groups"])
    assert "nodes-eu-west-1a" in groups and "nodes-eu-west-1b" in groups
    assert sum(group["spec"]["minSize"] for group in created["instance_groups"]
               if group["spec"]["role"] == "Node") == 2
    # Blank answers are defaults: the channel's Kubernetes version, public topology (public subnets).
    assert re.fullmatch(r"1\.\d+\.\d+", stored["spec"]["kubernetesVersion"])
    assert {subnet["type"] for subnet in stored["spec"]["subnets"]} == {"Public"}
    # AWX shows the job's stdout from the same events.
    assert "Write the cluster spec to the state store" in (artifacts / "stdout").read_text()


def test_rerun_of_the_job_changes_nothing(installed, tmp_path):
    """A job template relaunched with the same survey answers: the second job reports no change."""
    # zones from a multiple-select question: a list.
    survey = {"state_store": "file://%s" % (tmp_path / "state"), "cluster_name": CLUSTER, "cloud_provider": "aws",
              "zones": ["eu-west-1a"]}
    data_dir = private_data_dir(tmp_path / "job", installed, "create_cluster.yml", survey)
    first_proc, first = run_job(data_dir, "create_cluster.yml", "first")
    assert first_proc.returncode == 0, first_proc.stdout + first_proc.stderr
    second_proc, second = run_job(data_dir, "create_cluster.yml", "second")
    assert second_proc.returncode == 0, second_proc.stdout + second_proc.stderr
    assert (second / "status").read_text().strip() == "successful"
    assert task_result(job_events(first), "Write the cluster spec to the state store")["changed"] is True
    assert task_result(job_events(second), "Write the cluster spec to the state store")["changed"] is False


def test_failed_job_reports_failed_with_the_message(installed, tmp_path):
    """A survey answer the module refuses fails the job (status failed, rc 2) with the module's message."""
    survey = {"state_store": "file://%s" % (tmp_path / "state"), "cluster_name": CLUSTER, "cloud_provider": "aws",
              "zones": ["eu-west-1a"], "networking": "no-such-cni"}
    data_dir = private_data_dir(tmp_path / "job", installed, "create_cluster.yml", survey)
    proc, artifacts = run_job(data_dir, "create_cluster.yml", "bad")
    assert proc.returncode != 0
    assert (artifacts / "status").read_text().strip() == "failed"
    failed = [e for e in job_events(artifacts) if e["event"] == "runner_on_failed"]
    assert failed and "no-such-cni" in failed[0]["event_data"]["res"]["msg"]
    assert not (tmp_path / "state" / CLUSTER).exists()


def requirement_names(path):
    names = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names[re.split(r"[<>=!~ ;\[]", line, maxsplit=1)[0].lower()] = line
    return names


def test_execution_environment_requirements(installed):
    """ansible-builder finds the collection's Python requirements in the installed collection (so they are not
    build_ignore'd), and they are requirements.txt less ansible-core, which the EE provides."""
    definition = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    runtime = requirement_names(REPO / "requirements.txt")
    ee = requirement_names(REPO / definition["dependencies"]["python"])
    assert ee == {name: spec for name, spec in runtime.items() if name != "ansible-core"}
    assert not any(re.search(r"<|==", spec) for spec in ee.values()), "lower bounds only: the EE combines collections"
    proc = subprocess.run([str(BIN / "ansible-builder"), "introspect", str(installed)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = yaml.safe_load(proc.stdout)
    introspected = {line.split("#")[0].strip() for line in found["python"] if "from collection kubeops.kops" in line}
    # ansible-builder leaves out what every EE already has (PyYAML, with ansible-core).
    assert introspected == {spec for name, spec in ee.items() if name != "pyyaml"}
    assert found["system"] == []


def test_a_roll_job_logs_each_step_as_it_happens(installed, tmp_path, aws):
    """AWX's job log is the job's events: the roll's steps are events of their own, made while the roll task runs
    (timed before its result), in the job's stdout as on a console."""
    from datetime import datetime

    from tests.integration.test_rolling_update import CLUSTER as ROLLED, _change_machine_type, _make_cluster
    store = "file://%s" % (tmp_path / "state")
    _change_machine_type(_make_cluster(store, node_count=2))
    data_dir = private_data_dir(tmp_path / "job", installed, "rolling_update.yml",
                                {"state_store": store, "cluster_name": ROLLED, "cloud_only": True, "interval": "4s"})
    proc, artifacts = run_job(data_dir, "rolling_update.yml", "roll")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = job_events(artifacts)
    task = "Rolling update of %s" % ROLLED
    done = next(e for e in events if e["event"] == "runner_on_ok" and e["event_data"]["task"] == task)
    steps = [e for e in events if re.match(r"rolling_update: \[ *[\d.]+s\] \S+ i-\w+ terminate: terminating",
                                           e.get("stdout", ""))]
    assert len(steps) == 3, [e.get("stdout") for e in events]

    def created(event):
        return datetime.fromisoformat(event["created"])
    # Each termination logged when it happened: an interval (4 s) apart, all before the task's result.
    times = [created(e) for e in steps]
    assert all((later - earlier).total_seconds() >= 3.5 for earlier, later in zip(times, times[1:]))
    assert (created(done) - times[0]).total_seconds() >= 7
    assert all(e["counter"] < done["counter"] for e in steps)
    stdout = (artifacts / "stdout").read_text()
    assert all(e["stdout"] in stdout for e in steps)
