"""A third cloud added as one package, registered without editing any existing file (issue 19's proof), which
answers the whole cloud contract of providers/base.py (issue 30).

A copy of the collection gets the toy cloud (tests/integration/toy_cloud/) as plugins/module_utils/providers/toy/;
the copy is then run as a user runs it (ansible-playbook, the modules by FQCN from another directory), against the
toy's own API (tests/integration/toy_api.py, on 127.0.0.1): create with the toy's defaults (no image nor machine
sizes given), update in check mode (a plan, and no mutating call to the API), update directly (the network, the
pools and their machines made), again (nothing changed), render Terraform, list the kops inventory (a day-2 verb
reading the machines), and delete (what the cluster's label marks in the API, then the store).  Every file of the
copy is hashed before the toy is added and after the run: the existing files the toy had to touch are listed, and
there must be none.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import re
import shutil
import subprocess

import pytest

from tests.integration.conftest import BIN, REPO, ansible_env, task_results
from tests.integration.toy_api import ToyApi, mutating

TOY = pathlib.Path(__file__).resolve().parent / "toy_cloud"
# What the copy leaves out: not the collection (history, build output, the tests themselves, caches).
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "build", "tests", "bench", "__pycache__", "*.pyc", ".pytest_cache")
CLUSTER = "toy.example.com"

CREATE = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubeops.kops.kops:
      state_store: "{{ store }}"
  tasks:
    - name: create
      kubeops.kops.cluster:
        options:
          cluster_name: toy.example.com
          cloud_provider: toy
          zones: [toy-1a]
          networking: cni
          kubernetes_version: v1.32.0
"""
UPDATE = """
    - name: plan
      kubeops.kops.cluster_update:
        cluster_name: toy.example.com
      check_mode: true
    - name: mark applied
      ansible.builtin.uri:
        url: "{{ toy_api }}/_mark/apply"
    - name: apply
      kubeops.kops.cluster_update:
        cluster_name: toy.example.com
    - name: mark again
      ansible.builtin.uri:
        url: "{{ toy_api }}/_mark/again"
    - name: again
      kubeops.kops.cluster_update:
        cluster_name: toy.example.com
    - name: terraform
      kubeops.kops.cluster_update:
        cluster_name: toy.example.com
        target: terraform
        out_dir: "{{ out }}"
"""
DELETE = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: delete
      kubeops.kops.cluster_delete:  # not in the module_defaults group: a delete names its store
        state_store: "{{ store }}"
        cluster_name: toy.example.com
        "yes": true
"""
PLAYBOOK = CREATE + UPDATE


@pytest.fixture
def toy_api():
    api = ToyApi()
    api.url = api.start()
    yield api
    api.stop()


def _digests(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _copy_with_toy(tmp_path):
    """(collection root of a copy with the toy added, digests of the copy's files before the toy was added)."""
    root = tmp_path / "collections" / "ansible_collections" / "kubeops" / "kops"
    shutil.copytree(REPO, root, ignore=NOT_COPIED, symlinks=True)
    before = _digests(root)
    shutil.copytree(TOY, root / "plugins" / "module_utils" / "providers" / "toy", ignore=NOT_COPIED)
    return root, before


def _play(tmp_path, playbook, extra=(), **environment):
    (tmp_path / "toy.yml").write_text(playbook)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = ansible_env(tmp_path / "collections")
    env.update(ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_STDOUT_CALLBACK="test_json", PYTHONDONTWRITEBYTECODE="1")
    env.pop("KUBEOPS_COLLECTION_DIR", None)  # the action plugins hand the copy's own directory to the modules
    env.update(environment)
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(tmp_path / "toy.yml"),
                           "-e", "store=file://%s/store" % tmp_path, "-e", "out=%s/tf" % tmp_path] + list(extra),
                          cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False)
    try:
        return proc, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON:\n%s\n%s" % (proc.stdout, proc.stderr))


def _inventory(tmp_path, toy_api):
    """The kops inventory plugin's hosts of the cluster (ansible-inventory, as a user lists them)."""
    config = tmp_path / "work" / "toy.kops.yml"
    config.write_text("plugin: kubeops.kops.kops\nstate_store: file://%s/store\ncluster_name: %s\n"
                      % (tmp_path, CLUSTER))
    env = ansible_env(tmp_path / "collections")
    env.update(TOY_API_URL=toy_api.url, ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(config), "--list"], cwd=config.parent, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _failures(run):
    return [(t["hosts"]["localhost"].get("msg"), t["hosts"]["localhost"].get("exception", "")[-1500:])
            for p in run["plays"] for t in p["tasks"]]


# The modules run in the task's worker from the collection's files (plugin_utils/in_process.py), or packaged by
# Ansible (KUBEOPS_IN_PROCESS=0: the zip lacks the toy, which the module imports from the handed-over directory).
@pytest.mark.parametrize("in_process", ["1", "0"], ids=["in-process", "packaged"])
def test_a_third_cloud_is_one_new_package(tmp_path, in_process, toy_api):
    root, before = _copy_with_toy(tmp_path)
    proc, run = _play(tmp_path, PLAYBOOK, KUBEOPS_IN_PROCESS=in_process, TOY_API_URL=toy_api.url,
                      extra=["-e", "toy_api=%s" % toy_api.url])
    assert proc.returncode == 0, _failures(run)
    steps = toy_api.steps()

    # Created with the toy's defaults (Provider.default_image, default_machine_types): no image nor size given.
    assert task_results(run, "create")["changed"] is True
    groups = {g["metadata"]["name"]: g["spec"] for g in task_results(run, "create")["instance_groups"]}
    assert {name: (spec["image"], spec["machineType"]) for name, spec in groups.items()} == {
        "control-plane-toy-1a": ("toy-os-2026", "toy.medium"), "nodes-toy-1a": ("toy-os-2026", "toy.small")}

    # Check mode: the plan of what the apply then does, and only reads sent to the toy's API.
    plan = task_results(run, "plan")
    assert plan["changed"] is True and plan["summary"] == {"create": 3, "update": 0, "delete": 0, "unchanged": 0}
    assert sorted((e["kind"], e["action"]) for e in plan["plan"]) == [
        ("toy_machine_pool", "create"), ("toy_machine_pool", "create"), ("toy_network", "create")]
    assert steps["start"] and mutating(steps["start"]) == [], steps["start"]

    # Direct: the network, then the pools (each with its machines), as the plan said; again: nothing to do.
    applied = task_results(run, "apply")
    assert applied["changed"] is True and applied["summary"] == plan["summary"]
    assert sorted(mutating(steps["apply"])) == [("POST", "/networks"), ("POST", "/pools"), ("POST", "/pools")]
    network, = toy_api.objects["networks"].values()
    pools = {p["name"]: p for p in toy_api.objects["pools"].values()}
    assert sorted(pools) == ["control-plane-toy-1a-toy-example-com", "nodes-toy-1a-toy-example-com"]
    assert all(p["network_id"] == network["id"] and p["labels"] == {"kubernetes-cluster": CLUSTER}
               for p in pools.values())
    assert pools["nodes-toy-1a-toy-example-com"]["machine_type"] == "toy.small"
    again = task_results(run, "again")
    assert again["changed"] is False and again["summary"]["unchanged"] == 3, again.get("lines")
    assert mutating(steps["again"]) == []

    text = (tmp_path / "tf" / "kubernetes.tf").read_text()
    assert 'provider "toy"' in text and "example.com/kubeops/toy" in text
    assert 'resource "toy_network" "toy-example-com"' in text
    rendered = sorted(line.split('"')[3] for line in text.splitlines()
                      if line.startswith('resource "toy_machine_pool"'))
    assert rendered == sorted(pools), rendered
    # The pools refer to the network by a Terraform reference (the engine's Ref), one per pool.
    assert len(re.findall(r"\n  network_id +=  *toy_network\.toy-example-com\.id\n", text)) == 2
    assert not any(word in text for word in ('resource "aws_', 'resource "google_'))

    # Day 2: the kops inventory lists the pools' machines, by instance group and role.
    inventory = _inventory(tmp_path, toy_api)
    machines = {m["name"] for m in toy_api.objects["machines"].values()}
    assert len(machines) == sum(p["min_size"] for p in pools.values()) == 2  # kops create's one per group
    assert set(inventory["kops_toy_example_com"]["hosts"]) == machines
    assert inventory["role_control_plane"]["hosts"] == ["control-plane-toy-1a-toy-example-com-0"]
    assert inventory["ig_nodes_toy_1a"]["hosts"] == ["nodes-toy-1a-toy-example-com-0"]

    # The copy's toy answers the whole contract (what the unit test checks for aws, gce and metal).
    check = subprocess.run([str(BIN / "python"), "-c", "from ansible_collections.kubeops.kops.plugins.module_utils."
                            "providers import contract; print(contract.unanswered_contract('toy'))"],
                           env=dict(ansible_env(tmp_path / "collections"), PYTHONPATH=str(tmp_path / "collections")),
                           capture_output=True, text=True, check=False)
    assert check.stdout.strip() == "[]", check.stderr

    # Delete: what the cluster's label marks in the toy's API (pools before their network), then the store.
    mark = len(toy_api.requests)
    proc, run = _play(tmp_path, DELETE, KUBEOPS_IN_PROCESS=in_process, TOY_API_URL=toy_api.url)
    assert proc.returncode == 0, _failures(run)
    deleted = task_results(run, "delete")
    assert deleted["changed"] is True and deleted["store_deleted"] is True
    assert sorted(mutating(toy_api.requests[mark:])) == sorted(
        [("DELETE", "/networks/" + network["id"])] + [("DELETE", "/pools/" + p["id"]) for p in pools.values()])
    assert toy_api.objects == {"networks": {}, "pools": {}, "machines": {}}
    assert not (tmp_path / "store" / CLUSTER).exists()

    after = _digests(root)
    touched = sorted(path for path, digest in before.items() if after.get(path) != digest)
    added = sorted(set(after) - set(before))
    print("existing files touched:", touched)
    print("files added:", added)
    assert touched == []
    assert added and all(path.startswith("plugins/module_utils/providers/toy/") for path in added), added


def test_the_module_finds_the_package_in_the_directory_its_action_hands_over(tmp_path):
    """The modules run from Ansible's zip, which holds aws and gce (imported by name) but not the toy: a module
    finds it in the collection directory (KUBEOPS_COLLECTION_DIR) only.  A user's value is kept; pointed at a
    directory without the toy, the same create is refused naming the clouds there are."""
    _copy_with_toy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "plugins" / "module_utils" / "providers").mkdir(parents=True)
    # Packaged (KUBEOPS_IN_PROCESS=0): a module run in the worker imports the collection's own files, toy included.
    proc, run = _play(tmp_path, CREATE, KUBEOPS_COLLECTION_DIR=str(elsewhere),
                      KUBEOPS_IN_PROCESS="0")
    assert proc.returncode != 0
    assert task_results(run, "create")["msg"] == "cloud_provider: 'toy' is not supported (use one of: aws, gce)"
