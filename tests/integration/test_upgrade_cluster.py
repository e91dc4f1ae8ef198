"""upgrade_cluster.yml from a temporary working directory, with a relative file:// store and out_dir."""

from __future__ import annotations

import json
import pathlib

import yaml

from tests.integration.conftest import REPO, task_results

PLAYBOOKS = REPO / "playbooks"
OPTIONS = {"cluster_name": "up.example.com", "cloud_provider": "aws", "networking": "cni", "zones": ["us-east-1a"],
           "kubernetes_version": "v1.34.2"}
STORE = ["-e", "state_store=file://state", "-e", "cluster_name=up.example.com"]
UPGRADE = "Upgrade the cluster spec of up.example.com"


def _files(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _version(tmp_path):
    return yaml.safe_load((tmp_path / "state" / "up.example.com" / "config").read_text())["spec"]["kubernetesVersion"]


def test_upgrade_check_then_apply_then_unchanged(playbook, tmp_path):
    code, run = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://state",
                         "-e", json.dumps({"cluster_options": OPTIONS}))
    assert code == 0, run
    written = _files(tmp_path / "state")

    code, check = playbook(PLAYBOOKS / "upgrade_cluster.yml", *STORE, "--check", "--diff", "-e", "then_update=true")
    assert code == 0, check
    result = task_results(check, UPGRADE)
    assert result["changed"] is True and result["kubernetes_version"] == {"before": "v1.34.2", "after": "1.35.7"}
    assert "kubernetesVersion: 1.35.7" in (result["diff"][0] if isinstance(result["diff"], list) else result["diff"])["after"]
    assert task_results(check, "Update the cluster with target direct").get("skipped") is True
    assert _files(tmp_path / "state") == written, "check mode wrote to the store"

    code, skip = playbook(PLAYBOOKS / "upgrade_cluster.yml", *STORE, "-e", "kubernetes_version=1.36.3")
    assert code != 0
    assert "skips 1.35" in task_results(skip, UPGRADE)["msg"]
    assert _files(tmp_path / "state") == written

    code, run = playbook(PLAYBOOKS / "upgrade_cluster.yml", *STORE, "-e", "kubernetes_version=1.35.7",
                         "-e", "then_update=true", "-e", "target=terraform", "-e", "out_dir=out/tf")
    assert code == 0, run
    assert _version(tmp_path) == "1.35.7"
    printed = task_results(run, "Print the upgrade")["msg"]
    assert printed[0].split() == ["ITEM", "PROPERTY", "OLD", "NEW"]
    assert ["Cluster", "KubernetesVersion", "v1.34.2", "1.35.7"] in [line.split() for line in printed]
    terraform = (tmp_path / "out" / "tf" / "kubernetes.tf").read_text()
    assert "aws_launch_template" in terraform
    nodeup = _files(tmp_path / "state")["up.example.com/cluster-completed.spec"].decode()
    assert "kubernetesVersion: 1.35.7" in nodeup

    code, again = playbook(PLAYBOOKS / "upgrade_cluster.yml", *STORE, "-e", "kubernetes_version=1.35.7")
    assert code == 0, again
    assert again["stats"]["localhost"]["changed"] == 0
    assert task_results(again, "Print the upgrade")["msg"] == ["No upgrade required"]


def test_roll_needs_a_direct_update(playbook, tmp_path):
    code, text = playbook(PLAYBOOKS / "upgrade_cluster.yml", *STORE, "-e", "then_roll=true", json_output=False)
    assert code != 0 and "then_roll needs then_update=true with target=direct" in text, text
