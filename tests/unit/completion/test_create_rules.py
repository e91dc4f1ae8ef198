"""create-cluster rules beyond the public fixtures: CIDR allocation, etcd names, sets, errors."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.completion import (
    cloudfacts, fieldpaths, new_cluster, subnets)
from ansible_collections.kubeops.kops.plugins.module_utils import semver


def _create(**options):
    base = {"cluster_name": "c.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
            "kubernetes_version": "v1.34.2"}
    base.update(options)
    return new_cluster.new_cluster(base, state_store="memfs://tests", facts=cloudfacts.StaticCloudFacts())


@pytest.mark.parametrize("names, members", [
    (["control-plane-us-test-1a", "control-plane-us-test-1b", "control-plane-us-test-1c"], ["a", "b", "c"]),
    (["control-plane-us-test-1a"], ["a"]),
    (["control-plane-us-test-1a-1", "control-plane-us-test-1a-2", "control-plane-us-test-1a-3"],
     ["etcd-1", "etcd-2", "etcd-3"]),
    (["control-plane-us-test-1a-1", "control-plane-us-test-1b-1", "control-plane-us-test-1a-2",
      "control-plane-us-test-1b-2", "control-plane-us-test-1a-3"], ["a-1", "b-1", "a-2", "b-2", "a-3"]),
])
def test_etcd_member_names(names, members):
    assert new_cluster.etcd_member_names(names) == members


def test_complex_private_cidr_allocation_matches_kops():
    """kops' complex-private fixture: utility /21s in zone order, privates /18, extras preset."""
    cluster, _groups = _create(zones=["us-test-1a", "us-test-1b", "us-test-1c"], topology="private", bastion=True,
                               network_cidrs=["10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16",
                                              "10.4.0.0/16"], control_plane_count=3)
    cidrs = {s["name"]: s["cidr"] for s in cluster["spec"]["subnets"]}
    assert cidrs["us-test-1a"] == "10.0.64.0/18" and cidrs["us-test-1c"] == "10.0.192.0/18"
    assert [cidrs[n] for n in ("utility-us-test-1a", "utility-us-test-1a-1", "utility-us-test-1a-4",
                               "utility-us-test-1b", "utility-us-test-1b-2", "utility-us-test-1c",
                               "utility-us-test-1c-3")] == ["10.0.%d.0/21" % (8 * i) for i in range(7)]
    assert cidrs["us-test-1a-4"] == "10.4.0.0/16"


def test_node_count_is_split_with_remainder_first():
    _cluster, groups = _create(zones=["us-east-1a", "us-east-1b", "us-east-1c"], node_count=10)
    assert [g["spec"]["minSize"] for g in groups if g["spec"]["role"] == "Node"] == [4, 3, 3]


def test_sets_and_unsets():
    cluster, _groups = _create(sets=["cluster.spec.kubelet.maxPods=200", "spec.networking.networkCIDR=10.10.0.0/16",
                                     "cluster.spec.api.access=10.0.0.0/8,192.168.0.0/16",
                                     "cluster.spec.iam.allowContainerRegistry=false"],
                               unsets=["cluster.spec.sshAccess"])
    spec = cluster["spec"]
    assert spec["kubelet"]["maxPods"] == 200
    assert spec["networkCIDR"] == "10.10.0.0/16" and spec["subnets"][0]["cidr"] == "10.10.0.0/16"
    assert spec["kubernetesApiAccess"] == ["10.0.0.0/8", "192.168.0.0/16"]
    assert spec["iam"]["allowContainerRegistry"] is False
    assert "sshAccess" not in spec


def test_bad_set_path_is_explained():
    with pytest.raises(fieldpaths.FieldPathError) as error:
        _create(sets=["kubelet.maxPods=200"])
    assert "cluster.spec." in str(error.value)


@pytest.mark.parametrize("options, message", [
    ({"zones": []}, "zones: must specify at least one zone"),
    ({"cloud_provider": "azure"}, "cloud_provider: 'azure' is not supported"),
    ({"networking": "weave"}, "networking: unknown networking mode 'weave'"),
    ({"topology": "private", "networking": "kubenet"}, "kubenet does not support private topology"),
    ({"bastion": True}, "bastion: a bastion needs topology: private"),
    ({"control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"], "control_plane_count": 2},
     "control_plane_count: specified 3 control-plane zones"),
    ({"kubernetes_version": "one.two"}, "kubernetes_version: cannot parse"),
    ({"zones": ["eu-west-1"]}, "is not an AWS availability zone"),
    ({"network_id": "vpc-404"}, "network_id: VPC 'vpc-404' not found"),
    ({"cloud_labels": 'a="unterminated'}, "cloud_labels:"),
    ({"instance_manager": "karpenter"}, "karpenter requires discovery_store"),
])
def test_bad_options_name_the_option(options, message):
    with pytest.raises((new_cluster.CreateClusterError, ValueError)) as error:
        _create(**options)
    assert message in str(error.value)


def test_unknown_option_is_refused():
    with pytest.raises(new_cluster.CreateClusterError) as error:
        _create(zonez=["us-east-1a"])
    assert "zonez" in str(error.value)


def test_default_version_and_arm_images():
    cluster, groups = _create(kubernetes_version=None, node_sizes=["m7g.large"])
    assert cluster["spec"]["kubernetesVersion"] == "1.36.3"
    nodes = next(g for g in groups if g["spec"]["role"] == "Node")
    assert "arm64" in nodes["spec"]["image"]


def test_cidr_allocation_runs_out_clearly():
    spec = {"networkCIDR": "10.0.0.0/24", "subnets": [
        {"name": "a", "type": "Public", "zone": "a", "cidr": "10.0.0.0/25"},
        {"name": "b", "type": "Public", "zone": "b", "cidr": "10.0.0.128/25"},
        {"name": "c", "type": "Public", "zone": "c"}]}
    with pytest.raises(subnets.AllocationError) as error:
        subnets.allocate_subnet_cidrs(spec)
    assert "give their cidr explicitly" in str(error.value)


def test_semver_ranges():
    assert semver.in_range("1.34.2", ">=1.32.0")
    assert not semver.in_range("1.31.9", ">=1.27.0 <1.31.0")
    assert semver.in_range("1.37.0-alpha.1", ">=1.36.0-alpha.1")
    assert semver.parse("1.37.0-alpha.1") < semver.parse("1.37.0")


@pytest.mark.parametrize("option, stored", [("gce", "gce"), ("gcp", "gce"), ("kube-router", "kuberouter"),
                                            ("amazonvpc", "amazonvpc")])
def test_networking_is_stored_under_its_v1alpha2_name_and_validates(option, stored):
    """kops' v1alpha2 names the fields gce, kuberouter, amazonvpc (its internal API: gcp, kubeRouter, amazonVPC);
    a stored cluster must read back and validate under the v1alpha2 schema."""
    from ansible_collections.kubeops.kops.plugins.module_utils.api import validation
    cloud = "gce" if option in ("gce", "gcp") else "aws"
    zone = "us-central1-a" if cloud == "gce" else "us-east-1a"
    cluster, groups = _create(cloud_provider=cloud, zones=[zone], networking=option,
                              **({"project": "p1"} if cloud == "gce" else {}))
    assert list(cluster["spec"]["networking"]) == [stored]
    assert validation.validate_cluster(cluster) == []
