"""Issue 20 item 2: the spec's history through the modules and the playbooks.

bench/spec_history.py's measure() (100 replaces and a rollback to 50 there) on a smaller count, on moto's S3: the
rollback's spec equals the revision byte for byte, check mode writes nothing, a second rollback changes nothing,
kops' files keep their names and format.  Then the playbooks: get_cluster.yml's revision line, history and diff,
replace_cluster.yml's rollback in check/diff mode and for real.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import yaml

from tests.integration.conftest import task_results

REPO = pathlib.Path(__file__).resolve().parents[2]
PLAYBOOKS = REPO / "playbooks"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_spec_history", REPO / "bench" / "spec_history.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rollback_through_the_modules_equals_the_revision_byte_for_byte(aws):
    import boto3
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-history")
    bench = _bench()
    results = bench.measure("s3://kops-history/state", "kops-history", "state/", replaces=11, rollback_to=5,
                            report=lambda text: None)
    assert results["rollback_equal_bytes"] is True and results["kops_layout_unchanged"] is True
    # Each replace adds its one snapshot; the rollback adds none (revision 5's snapshot is the spec it writes).
    assert results["objects_added_per_write"] == {1: 11} and results["rollback_objects_added"] == 0
    assert results["rollback_check_changed_paths"] == ["config", "instancegroup/nodes-us-east-1b"]
    assert results["listed_revisions"] == 13  # the create, 11 replaces, the rollback
    last = results["last_entries"][-1]
    assert (last["revision"], last["operation"], last["restores"], last["cause"]) == (13, "rollback", 5, "bench: rollback")


def test_the_playbooks_list_diff_and_roll_back_revisions(playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    options = {"cluster_name": "pb.example.com", "cloud_provider": "aws", "networking": "cni",
               "zones": ["us-east-1a"], "kubernetes_version": "v1.34.2"}
    name = ["-e", "cluster_name=pb.example.com"]
    assert playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", json.dumps({"cluster_options": options}))[0] == 0
    exported = tmp_path / "c.yaml"
    assert playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, "-e", "output=%s" % exported)[0] == 0
    text = exported.read_text()
    assert next(yaml.safe_load_all(text))["metadata"]["annotations"] == {"kubeops.kops/revision": "1"}
    exported.write_text(text.replace("sshAccess:\n  - 0.0.0.0/0", "sshAccess:\n  - 10.0.0.0/8", 1))
    code, replaced = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=%s" % exported,
                              "-e", json.dumps({"change_cause": "ssh from the office only"}))
    assert code == 0 and task_results(replaced, "Replace the cluster spec with %s" % exported)["revision"] == "2"

    code, listed = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, "-e", "history=true", json_output=False)
    assert code == 0, listed
    rows = [line.split() for line in listed.splitlines() if line[:1].isdigit()]
    assert [row[:2] for row in rows] == [["1", "create"], ["2", "replace"]], listed
    assert "create_cluster.yml:" in listed, listed  # which playbook made each revision, after the cause given
    assert "ssh from the office only; %s/replace_cluster.yml:" % PLAYBOOKS in listed, listed
    code, diffed = playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, *name, "-e", "compare_to=1", json_output=False)
    assert code == 0 and "--- pb.example.com revision 1" in diffed and "+++ pb.example.com revision 2" in diffed
    assert "-  - 0.0.0.0/0" in diffed and "+  - 10.0.0.0/8" in diffed, diffed

    config = tmp_path / "state" / "pb.example.com" / "config"
    at_two = config.read_bytes()
    code, checked = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, *name, "-e", "revision=1", "--check", "--diff")
    result = task_results(checked, "Roll the cluster spec back to revision 1")
    assert code == 0 and result["changed"] is True and result["changed_paths"] == ["config"]
    assert "10.0.0.0/8" in result["diff"]["before"] and "0.0.0.0/0" in result["diff"]["after"]
    assert config.read_bytes() == at_two  # check mode writes nothing
    code, rolled = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, *name, "-e", "revision=1")
    result = task_results(rolled, "Roll the cluster spec back to revision 1")
    assert code == 0 and result["changed"] is True and (result["revision"], result["restored"]) == ("3", 1)
    code, again = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, *name, "-e", "revision=1")
    assert code == 0 and task_results(again, "Roll the cluster spec back to revision 1")["changed"] is False
    code, both = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, *name, "-e", "revision=1",
                          "-e", "spec_file=%s" % exported, json_output=False)
    assert code != 0 and "takes spec_file (the YAML to replace the spec with, e.g. -e spec_file=k8s.example.com.yaml), " \
        "or cluster_name and revision" in both, both
