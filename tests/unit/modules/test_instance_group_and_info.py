"""instance_group and cluster_info modules."""

from __future__ import annotations

import yaml

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_info
from ansible_collections.kubeops.kops.plugins.modules import instance_group

from tests.unit.modules.conftest import store_files

OPTIONS = {"cluster_name": "ig.example.com", "cloud_provider": "aws", "zones": ["us-east-1a", "us-east-1b"],
           "networking": "cni", "kubernetes_version": "v1.34.2"}


def _create(run_module, store_url):
    return run_module(cluster_module, state_store=store_url, options=OPTIONS)


def test_new_group_gets_kops_defaults(run_module, store_url):
    _create(run_module, store_url)
    result = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch",
                        spec={"role": "Node", "machineType": "c5.xlarge"})
    assert result["changed"] is True
    spec = result["instance_group"]["spec"]
    assert spec["minSize"] == 2 and spec["maxSize"] == 2
    assert spec["subnets"] == ["us-east-1a", "us-east-1b"]
    assert spec["image"].startswith("099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64")
    assert spec["nodeLabels"] == {"kops.k8s.io/instancegroup": "batch"}
    assert result["instance_group"]["metadata"]["labels"] == {"kops.k8s.io/cluster": "ig.example.com"}
    assert "ig.example.com/instancegroup/batch" in store_files(store_url)


def test_update_is_idempotent_and_check_mode_writes_nothing(run_module, store_url):
    _create(run_module, store_url)
    spec = {"role": "Node", "machineType": "c5.xlarge", "minSize": 1, "maxSize": 3, "subnets": ["us-east-1a"],
            "image": "ami-12345678"}
    check = run_module(instance_group, check_mode=True, diff=True, state_store=store_url,
                       cluster_name="ig.example.com", name="batch", spec=spec)
    assert check["changed"] is True and "ig.example.com/instancegroup/batch" not in store_files(store_url)
    assert "maxSize: 3" in check["diff"]["after"]
    run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch", spec=spec)
    again = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch", spec=spec)
    assert again["changed"] is False


def test_group_in_unknown_subnet_is_refused(run_module, store_url):
    _create(run_module, store_url)
    before = store_files(store_url)
    result = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch",
                        spec={"role": "Node", "subnets": ["eu-west-9z"], "minSize": 1, "maxSize": 1})
    assert result["failed"] is True
    assert any("subnets" in line and "eu-west-9z" in line for line in result["msg"].splitlines()), result
    assert store_files(store_url) == before


def test_deleting_the_only_control_plane_group_is_refused(run_module, store_url):
    _create(run_module, store_url)
    result = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com",
                        name="control-plane-us-east-1a", state="absent")
    assert result["failed"] is True
    assert "ig.example.com/instancegroup/control-plane-us-east-1a" in store_files(store_url)


def test_delete_group(run_module, store_url):
    _create(run_module, store_url)
    run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch",
               spec={"role": "Node"})
    gone = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch",
                      state="absent")
    assert gone["changed"] is True and gone["changed_paths"] == ["instancegroup/batch"]
    assert "ig.example.com/instancegroup/batch" not in store_files(store_url)
    again = run_module(instance_group, state_store=store_url, cluster_name="ig.example.com", name="batch",
                       state="absent")
    assert again["changed"] is False


def test_cluster_info_lists_and_exports(run_module, store_url):
    _create(run_module, store_url)
    listed = run_module(cluster_info, state_store=store_url)
    assert listed["clusters"] == ["ig.example.com"]
    info = run_module(cluster_info, state_store=store_url, name="ig.example.com", full=True)
    assert info["exists"] is True
    documents = list(yaml.safe_load_all(info["yaml"]))
    assert [d["kind"] for d in documents] == ["Cluster", "InstanceGroup", "InstanceGroup", "InstanceGroup"]
    assert info["completed_spec"]["spec"]["serviceClusterIPRange"] == "100.64.0.0/13"
    missing = run_module(cluster_info, state_store=store_url, name="nope.example.com")
    assert missing["exists"] is False
