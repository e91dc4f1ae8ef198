"""Issue 31 item 5: every error a user meets through the playbooks is one line naming its real cause."""

from __future__ import annotations

import pytest

from tests.integration.conftest import REPO

PLAYBOOKS = REPO / "playbooks"
NO_CLUSTER_NAME = "cluster_name is not set: name the cluster, e.g. -e cluster_name=k8s.example.com"
DAY2 = ("update_cluster.yml", "delete_cluster.yml", "export_kubeconfig.yml", "get_cluster.yml", "rolling_update.yml",
        "upgrade_cluster.yml", "validate_cluster.yml")
# What Ansible prints when a module's argument names a variable that is not set.
ANSIBLE_UNDEFINED = ("Finalization of task args", "is undefined")


@pytest.mark.parametrize("name", DAY2)
def test_a_day2_playbook_without_cluster_name_says_so_in_one_line(playbook, tmp_path, name):
    code, text = playbook(PLAYBOOKS / name, "-e", "state_store=file://%s" % (tmp_path / "state"), json_output=False)
    assert code != 0
    assert text.count("fatal:") == 1 and NO_CLUSTER_NAME in text, text
    assert not any(words in text for words in ANSIBLE_UNDEFINED), text


def test_missing_variables_are_named_together(playbook):
    code, text = playbook(PLAYBOOKS / "validate_cluster.yml", json_output=False)
    assert code != 0
    assert ("%s; no state store: set state_store (e.g. -e state_store=s3://my-kops-state) or KOPS_STATE_STORE"
            % NO_CLUSTER_NAME) in text, text


def test_replace_names_what_it_takes_and_a_missing_file(playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, json_output=False)
    assert code != 0 and "replace_cluster.yml takes spec_file (the YAML to replace the spec with, e.g. " \
        "-e spec_file=k8s.example.com.yaml), or cluster_name and revision" in text, text
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=missing.yaml",
                          json_output=False)
    assert code != 0 and "spec_file %s is not a file" % (tmp_path / "missing.yaml") in text, text
    assert "lookup" not in text


def test_delete_names_a_confirmation_of_another_cluster(playbook, tmp_path):
    code, text = playbook(PLAYBOOKS / "delete_cluster.yml", "-e", "cluster_name=a.example.com",
                          "-e", "confirm_cluster_name=b.example.com", json_output=False)
    assert code != 0
    assert "confirm_cluster_name b.example.com is not the cluster to delete (a.example.com); nothing was deleted" in text


def test_a_rollback_prints_no_template_warning(playbook, tmp_path):
    """The task that replaces from spec_file is skipped by a rollback; its name must still render."""
    store = "state_store=file://%s" % (tmp_path / "state")
    options = '{"cluster_options": {"cluster_name": "r.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"]}}'
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", options, "-e", "cloud_lookup=false")[0] == 0
    code, text = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "cluster_name=r.example.com",
                          "-e", "revision=1", "--check", json_output=False)
    assert code == 0, text
    assert "is undefined" not in text and "template error" not in text, text
    assert "TASK [Roll the cluster spec back to revision 1]" in text


def test_zones_in_two_regions_are_named_as_such(playbook, tmp_path, aws):
    """With the cloud answering (moto), not as the other region's machine types not being offered."""
    options = ('{"cluster_options": {"cluster_name": "z.example.com", "cloud_provider": "aws", '
               '"zones": ["us-east-1a", "eu-west-1a"], "image": "ami-1e749f67"}}')
    code, text = playbook(PLAYBOOKS / "create_cluster.yml", "-e", "state_store=file://%s" % (tmp_path / "state"),
                          "-e", options, json_output=False)
    assert code != 0
    assert ("zones: eu-west-1a, us-east-1a are in 2 regions (eu-west-1: eu-west-1a; us-east-1: us-east-1a); a cluster "
            "lives in one region: use zones of one region") in text, text
    assert "offered" not in text and "machineType" not in text
    assert not (tmp_path / "state").exists()
