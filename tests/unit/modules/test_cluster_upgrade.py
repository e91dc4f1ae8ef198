"""cluster_upgrade on a file:// store: check mode writes nothing, diff shows the change, a second run changes nothing."""

from __future__ import annotations

import yaml

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_upgrade

from tests.unit.modules.conftest import store_files

NAME = "up.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.35.2"}
NOBLE_AMD64 = "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20260714"


def stored(store_url, path):
    return yaml.safe_load(store_files(store_url)["%s/%s" % (NAME, path)])


def test_upgrade_check_diff_apply_and_second_run(run_module, store_url):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    before = store_files(store_url)
    created = stored(store_url, "config")
    assert created["spec"]["kubernetesVersion"] == "v1.35.2"

    check = run_module(cluster_upgrade, check_mode=True, diff=True, state_store=store_url, cluster_name=NAME)
    assert check["changed"] is True
    assert store_files(store_url) == before, "check mode wrote to the store"
    assert check["kubernetes_version"] == {"before": "v1.35.2", "after": "1.36.3"}
    assert check["changed_paths"] == ["config"]
    assert "kubernetesVersion: v1.35.2" in check["diff"]["before"]
    assert "kubernetesVersion: 1.36.3" in check["diff"]["after"]
    assert check["table"][1].split() == ["Cluster", "KubernetesVersion", "v1.35.2", "1.36.3"]

    done = run_module(cluster_upgrade, state_store=store_url, cluster_name=NAME)
    assert done["changed"] is True, done
    config = stored(store_url, "config")
    assert config["spec"]["kubernetesVersion"] == "1.36.3"
    assert config["metadata"].get("generation", 0) == created["metadata"].get("generation", 0) + 1
    assert stored(store_url, "instancegroup/nodes-us-east-1a")["spec"]["image"] == NOBLE_AMD64

    again = run_module(cluster_upgrade, check_mode=True, diff=True, state_store=store_url, cluster_name=NAME)
    assert again["changed"] is False and again["actions"] == [] and again["table"] == ["No upgrade required"]
    written = store_files(store_url)
    run_module(cluster_upgrade, state_store=store_url, cluster_name=NAME)
    assert store_files(store_url) == written


def test_channel_image_is_swapped_and_written(run_module, store_url):
    options = dict(OPTIONS, kubernetes_version="v1.34.2")
    run_module(cluster_module, state_store=store_url, options=options)
    path = "%s/instancegroup/nodes-us-east-1a" % NAME
    ig = yaml.safe_load(store_files(store_url)[path])
    old_image = "099720109477/ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20240101"
    ig["spec"]["image"] = old_image
    with open(store_url[len("file://"):] + "/" + path, "w") as handle:
        handle.write(yaml.safe_dump(ig))

    result = run_module(cluster_upgrade, diff=True, state_store=store_url, cluster_name=NAME, kubernetes_version="1.35.7")
    assert result["changed"] is True
    rows = [(a["item"], a["property"], a["old"], a["new"]) for a in result["actions"]]
    assert ("InstanceGroup/nodes-us-east-1a", "Image", old_image, NOBLE_AMD64) in rows
    assert ("Cluster", "KubernetesVersion", "v1.34.2", "1.35.7") in rows
    assert result["changed_paths"] == ["config", "instancegroup/nodes-us-east-1a"]
    assert old_image in result["diff"]["before"] and NOBLE_AMD64 in result["diff"]["after"]
    assert yaml.safe_load(store_files(store_url)[path])["spec"]["image"] == NOBLE_AMD64
    again = run_module(cluster_upgrade, state_store=store_url, cluster_name=NAME, kubernetes_version="1.35.7")
    assert again["changed"] is False


def test_skipping_a_minor_fails_and_writes_nothing(run_module, store_url):
    run_module(cluster_module, state_store=store_url, options=dict(OPTIONS, kubernetes_version="v1.33.1"))
    before = store_files(store_url)
    result = run_module(cluster_upgrade, state_store=store_url, cluster_name=NAME, kubernetes_version="1.35.7")
    assert result["failed"] is True
    assert "skips 1.34" in result["msg"] and "kubernetes_version=1.34.10" in result["msg"]
    assert "Traceback" not in result["msg"]
    assert store_files(store_url) == before


def test_missing_cluster_is_named(run_module, store_url):
    result = run_module(cluster_upgrade, state_store=store_url, cluster_name="nope.example.com")
    assert result["failed"] is True and "nope.example.com" in result["msg"] and "does not exist" in result["msg"]
