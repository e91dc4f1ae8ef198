"""A third cloud added as one package, registered without editing any existing file (issue 19's proof).

A copy of the collection gets the toy cloud (tests/integration/toy_cloud/) as plugins/module_utils/providers/toy/;
the copy is then run as a user runs it (ansible-playbook, the modules by FQCN from another directory): create
(target none: the cluster module stores the spec), update with target terraform (the toy's own two kinds in
kubernetes.tf) and delete.  Every file of the copy is hashed before the toy is added and after the run: the
existing files the toy had to touch are listed, and there must be none.
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

TOY = pathlib.Path(__file__).resolve().parent / "toy_cloud"
# What the copy leaves out: not the collection (history, build output, the tests themselves, caches).
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "build", "tests", "bench", "__pycache__", "*.pyc", ".pytest_cache")

PLAYBOOK = """
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
          image: toy-os-2026
          node_sizes: [toy.small]
          control_plane_sizes: [toy.medium]
    - name: terraform
      kubeops.kops.cluster_update:
        cluster_name: toy.example.com
        target: terraform
        out_dir: "{{ out }}"
    - name: delete
      kubeops.kops.cluster_delete:  # not in the module_defaults group: a delete names its store
        state_store: "{{ store }}"
        cluster_name: toy.example.com
        "yes": true
"""


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


def _play(tmp_path, playbook, **environment):
    (tmp_path / "toy.yml").write_text(playbook)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = ansible_env(tmp_path / "collections")
    env.update(ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_STDOUT_CALLBACK="test_json", PYTHONDONTWRITEBYTECODE="1")
    env.pop("KUBEOPS_COLLECTION_DIR", None)  # the action plugins hand the copy's own directory to the modules
    env.update(environment)
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(tmp_path / "toy.yml"),
                           "-e", "store=file://%s/store" % tmp_path, "-e", "out=%s/tf" % tmp_path],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False)
    try:
        return proc, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON:\n%s\n%s" % (proc.stdout, proc.stderr))


# The modules run in the task's worker from the collection's files (plugin_utils/in_process.py), or packaged by
# Ansible (KUBEOPS_IN_PROCESS=0: the zip lacks the toy, which the module imports from the handed-over directory).
@pytest.mark.parametrize("in_process", ["1", "0"], ids=["in-process", "packaged"])
def test_a_third_cloud_is_one_new_package(tmp_path, in_process):
    root, before = _copy_with_toy(tmp_path)
    proc, run = _play(tmp_path, PLAYBOOK, KUBEOPS_IN_PROCESS=in_process)
    assert proc.returncode == 0, [(t["hosts"]["localhost"].get("msg"), t["hosts"]["localhost"].get("exception", "")[-1500:])
                                  for p in run["plays"] for t in p["tasks"]]

    created = task_results(run, "create")
    assert created["changed"] is True
    text = (tmp_path / "tf" / "kubernetes.tf").read_text()
    assert 'provider "toy"' in text and "example.com/kubeops/toy" in text
    assert 'resource "toy_network" "toy-example-com"' in text
    pools = sorted(line.split('"')[3] for line in text.splitlines() if line.startswith('resource "toy_machine_pool"'))
    assert pools == ["control-plane-toy-1a-toy-example-com", "nodes-toy-1a-toy-example-com"], pools
    # The pools refer to the network by a Terraform reference (the engine's Ref), one per pool.
    assert len(re.findall(r"\n  network_id +=  *toy_network\.toy-example-com\.id\n", text)) == 2
    assert not any(word in text for word in ('resource "aws_', 'resource "google_'))

    deleted = task_results(run, "delete")
    assert deleted["changed"] is True and deleted["store_deleted"] is True
    assert not (tmp_path / "store" / "toy.example.com").exists()

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
    proc, run = _play(tmp_path, PLAYBOOK.split("    - name: terraform", maxsplit=1)[0], KUBEOPS_COLLECTION_DIR=str(elsewhere),
                      KUBEOPS_IN_PROCESS="0")
    assert proc.returncode != 0
    assert task_results(run, "create")["msg"] == "cloud_provider: 'toy' is not supported (use one of: aws, gce)"
