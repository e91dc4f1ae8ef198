"""The cluster module: create from options, replace from YAML, delete; check, diff, idempotence."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module

from tests.unit.modules.conftest import store_files

HA_OPTIONS = {
    "cluster_name": "ha.example.com",
    "cloud_provider": "aws",
    "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
    "control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
    "networking": "cni",
    "kubernetes_version": "v1.34.2",
}


def test_create_writes_kops_layout_and_is_idempotent(run_module, store_url):
    first = run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    assert first["changed"] is True
    files = store_files(store_url)
    assert sorted(files) == [
        # The spec's history (statestore/history.py): revision 1, the create; kops ignores it.
        "ha.example.com/.kubeops-history/index.json",
        "ha.example.com/.kubeops-history/r00000001.json",
        "ha.example.com/config",
        "ha.example.com/instancegroup/control-plane-us-east-1a",
        "ha.example.com/instancegroup/control-plane-us-east-1b",
        "ha.example.com/instancegroup/control-plane-us-east-1c",
        "ha.example.com/instancegroup/nodes-us-east-1a",
        "ha.example.com/instancegroup/nodes-us-east-1b",
        "ha.example.com/instancegroup/nodes-us-east-1c",
    ]
    stored = yaml.safe_load(files["ha.example.com/config"])
    assert stored["spec"]["subnets"][1]["cidr"] == "172.20.64.0/18"
    assert first["cluster"]["spec"]["configBase"] == store_url + "/ha.example.com"
    assert first["completed_spec"]["spec"]["kubernetesVersion"] == "1.34.2"
    # AWS machine type defaults without cloud lookups: kops' first choice.
    assert {ig["spec"]["machineType"] for ig in first["instance_groups"]} == {"t3.medium"}

    second = run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    assert second["changed"] is False
    assert second["changed_paths"] == []
    assert store_files(store_url) == files


def test_check_mode_writes_nothing_and_diff_shows_the_spec(run_module, store_url):
    result = run_module(cluster_module, check_mode=True, diff=True, state_store=store_url, options=HA_OPTIONS)
    assert result["changed"] is True
    assert store_files(store_url) == {}
    assert result["diff"]["before"] == ""
    assert "name: control-plane-us-east-1b" in result["diff"]["after"]
    assert "kind: Cluster" in result["diff"]["after"]


def test_existing_cluster_with_other_options_is_refused_and_untouched(run_module, store_url):
    run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    before = store_files(store_url)
    result = run_module(cluster_module, state_store=store_url, options=dict(HA_OPTIONS, node_count=6))
    assert result["failed"] is True
    assert "already exists" in result["msg"] and "replace_cluster.yml" in result["msg"]
    assert store_files(store_url) == before
    forced = run_module(cluster_module, state_store=store_url, options=dict(HA_OPTIONS, node_count=6), overwrite=True)
    assert forced["changed"] is True
    assert [ig["spec"]["minSize"] for ig in forced["instance_groups"] if ig["spec"]["role"] == "Node"] == [2, 2, 2]


def test_replace_from_yaml_changes_one_group_and_keeps_timestamps(run_module, store_url):
    created = run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    documents = [created["cluster"]] + created["instance_groups"]
    nodes_b = next(d for d in documents if d["metadata"]["name"] == "nodes-us-east-1b")
    nodes_b["spec"]["machineType"] = "c5.large"
    text = "\n---\n".join(yaml.safe_dump(d) for d in documents)

    check = run_module(cluster_module, check_mode=True, diff=True, state_store=store_url, definition=text)
    assert check["changed_paths"] == ["instancegroup/nodes-us-east-1b"]
    assert "-  machineType: t3.medium" not in check["diff"]["after"]
    assert "machineType: c5.large" in check["diff"]["after"]

    replaced = run_module(cluster_module, state_store=store_url, definition=text)
    assert replaced["changed_paths"] == ["instancegroup/nodes-us-east-1b"]
    stored = yaml.safe_load(store_files(store_url)["ha.example.com/instancegroup/nodes-us-east-1b"])
    assert stored["spec"]["machineType"] == "c5.large"
    assert stored["metadata"]["creationTimestamp"] == nodes_b["metadata"]["creationTimestamp"]
    assert stored["metadata"]["generation"] == 1
    again = run_module(cluster_module, state_store=store_url, definition=text)
    assert again["changed"] is False


def test_invalid_definition_fails_with_field_path_and_writes_nothing(run_module, store_url):
    created = run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    before = store_files(store_url)
    cluster = created["cluster"]
    cluster["spec"]["subnets"][0]["cidr"] = "10.99.0.0/16"  # outside networkCIDR 172.20.0.0/16
    nodes = created["instance_groups"][-1]
    nodes["spec"]["machineType"] = "c5.large"  # a valid change in the same request
    text = "\n---\n".join(yaml.safe_dump(d) for d in (cluster, nodes))
    result = run_module(cluster_module, state_store=store_url, definition=text)
    assert result["failed"] is True
    assert "\n  - spec.subnets[0].cidr" in result["msg"], result["msg"]
    assert "errors" not in result  # each problem once: in msg
    assert store_files(store_url) == before


def test_unknown_field_in_definition_is_named(run_module, store_url):
    created = run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    cluster = created["cluster"]
    cluster["spec"]["kubelet"]["maxPodz"] = 10
    result = run_module(cluster_module, state_store=store_url, definition=yaml.safe_dump(cluster))
    assert result["failed"] is True
    assert "spec.kubelet.maxPodz" in result["msg"], result


def test_replace_of_missing_cluster_needs_force(run_module, store_url, tmp_path):
    other = "file://%s" % (tmp_path / "other")
    created = run_module(cluster_module, state_store=other, options=HA_OPTIONS)
    text = "\n---\n".join(yaml.safe_dump(d) for d in [created["cluster"]] + created["instance_groups"])
    refused = run_module(cluster_module, state_store=store_url, definition=text)
    assert refused["failed"] is True and "force" in refused["msg"]
    assert store_files(store_url) == {}
    made = run_module(cluster_module, state_store=store_url, definition=text, force=True)
    assert made["changed"] is True
    assert len(store_files(store_url)) == 9  # config, 6 groups, the history's index and first snapshot


def test_delete_removes_everything_and_is_idempotent(run_module, store_url, aws):
    run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    check = run_module(cluster_module, check_mode=True, state_store=store_url, name="ha.example.com", state="absent")
    assert check["changed"] is True and len(store_files(store_url)) == 9
    gone = run_module(cluster_module, state_store=store_url, name="ha.example.com", state="absent")
    assert gone["changed"] is True
    assert store_files(store_url) == {}
    again = run_module(cluster_module, state_store=store_url, name="ha.example.com", state="absent")
    assert again["changed"] is False


def test_bad_option_names_the_option(run_module, store_url):
    result = run_module(cluster_module, state_store=store_url, options=dict(HA_OPTIONS, topology="hybrid"))
    assert result["failed"] is True
    assert result["msg"].startswith("topology:")
    assert store_files(store_url) == {}


def test_state_store_from_environment(run_module, store_url, monkeypatch):
    monkeypatch.setenv("KOPS_STATE_STORE", store_url)
    result = run_module(cluster_module, options=HA_OPTIONS)
    assert result["config_base"] == store_url + "/ha.example.com"
    assert "ha.example.com/config" in store_files(store_url)


@pytest.mark.parametrize("options, message", [
    ({"node_counts": 3}, "unknown create-cluster option node_counts (did you mean node_count?)"),
    ({"networkin": "calico", "zone": "us-east-1a"}, "networkin (did you mean networking?), zone (did you mean zones?)"),
    ({"node_count": "many"}, "argument 'node_count' is of type str"),
    ({"node_count": -1}, "node_count: must be 0 or more, not -1"),
    ({"zones": 5}, "zones: zone '5' is not an AWS availability zone"),
    ({"cluster_name": "nodot"}, "cluster_name: 'nodot' must be a fully-qualified DNS name, e.g. nodot.example.com"),
    ({"cluster_name": "a" * 250 + ".com"}, "is not a DNS name; use at most 253"),
])
def test_bad_option_values_fail_in_one_line_naming_the_option(run_module, store_url, options, message):
    result = run_module(cluster_module, state_store=store_url, options=dict(HA_OPTIONS, **options))
    assert result["failed"] is True
    assert message in result["msg"] and "\n" not in result["msg"], result["msg"]
    assert store_files(store_url) == {}


def test_options_are_documented_as_the_argument_spec_checks_them():
    from ansible_collections.kubeops.kops.plugins.module_utils.completion import new_cluster

    documented = yaml.safe_load(cluster_module.DOCUMENTATION)["options"]["options"]["suboptions"]
    assert list(documented) == list(new_cluster.OPTION_SPEC)
    for name, spec in new_cluster.OPTION_SPEC.items():
        assert {k: v for k, v in documented[name].items() if k != "description"} == spec, name


def test_a_file_as_state_store_is_named_and_nothing_is_written(run_module, tmp_path):
    stray = tmp_path / "notes.txt"
    stray.write_text("mine")
    for store in ("file://%s" % stray, "file://%s/state" % stray):
        result = run_module(cluster_module, state_store=store, options=HA_OPTIONS)
        assert result["msg"] == ("state_store: %s is a file, not a directory; give a directory (file://DIR) "
                                 "or an s3:// store" % stray)
    assert stray.read_text() == "mine"


def test_names_too_long_for_a_store_path_are_refused(run_module, store_url):
    from ansible_collections.kubeops.kops.plugins.modules import cluster_info, instance_group

    run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    before = store_files(store_url)
    info = run_module(cluster_info, state_store=store_url, name="x" * 300 + ".com")
    assert info["msg"].startswith("cluster_name: 'xxx") and "is not a DNS name" in info["msg"]
    group = run_module(instance_group, state_store=store_url, cluster_name="ha.example.com", name="n" * 300,
                       spec={"role": "Node", "subnets": ["us-east-1a"]})
    assert group["msg"].startswith("instance group name: 'nnn") and "at most 253" in group["msg"]
    assert store_files(store_url) == before


def test_keypair_refuses_a_keyset_the_cluster_does_not_have(run_module, store_url):
    from ansible_collections.kubeops.kops.plugins.modules import keypair

    run_module(cluster_module, state_store=store_url, options=HA_OPTIONS)
    before = store_files(store_url)
    result = run_module(keypair, state_store=store_url, cluster_name="ha.example.com", keysets=["kubernetes-cas"])
    assert result["failed"] is True
    assert result["msg"].startswith("keysets: kubernetes-cas (did you mean kubernetes-ca?) is no keyset of cluster "
                                    "ha.example.com; its keysets are kubernetes-ca, ")
    assert store_files(store_url) == before
