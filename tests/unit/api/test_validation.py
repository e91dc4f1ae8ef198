"""kops' validation rules: every kops fixture passes; every spec in bad_specs/ fails with its one message."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects, validation

from tests.conformance import kops_fixtures

BAD_SPECS = sorted((pathlib.Path(__file__).parent / "bad_specs").glob("*.yaml"))


def _documents(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


GOOD_USER_SPECS = sorted(list(kops_fixtures.CREATE_CLUSTER.glob("*/expected-v1alpha2.yaml"))
                         + list(kops_fixtures.UPDATE_CLUSTER.glob("*/in-v1alpha2.yaml")))
COMPLETED_SPECS = sorted(kops_fixtures.UPDATE_CLUSTER.glob("*/data/*completed.spec*"))


@pytest.mark.parametrize("path", GOOD_USER_SPECS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_kops_fixtures_are_valid(path):
    cluster, groups = objects.split_objects(_documents(path))
    assert [str(p) for p in validation.deep_validate(cluster, groups)] == []


@pytest.mark.parametrize("path", COMPLETED_SPECS, ids=lambda p: p.parts[-3])
def test_kops_completed_specs_are_valid_strictly(path):
    assert [str(p) for p in validation.validate_cluster(_documents(path)[0], strict=True)] == []


def _bad_case(path):
    """A corpus file: {expect: {paths, message}, documents: [Cluster, InstanceGroup...]}."""
    case = yaml.safe_load(path.read_text())
    return case["expect"], case["documents"]


def test_the_corpus_is_large_and_distinct():
    assert len(BAD_SPECS) >= 30
    expectations = [(tuple(e["paths"]), e["message"]) for e, _docs in map(_bad_case, BAD_SPECS)]
    assert len(set(expectations)) == len(expectations)


@pytest.mark.parametrize("path", BAD_SPECS, ids=lambda p: p.stem)
def test_bad_spec_fails_with_one_clear_message(path):
    expect, documents = _bad_case(path)
    cluster, groups = objects.split_objects(documents)
    problems = validation.deep_validate(cluster, groups)
    # One mistake, one message; a mistake repeated in both etcd clusters lists both paths.
    assert [p.path for p in problems] == expect["paths"], [str(p) for p in problems]
    assert all(expect["message"] in str(p) for p in problems)


def test_strict_requires_completed_fields():
    cluster, groups = objects.split_objects(kops_fixtures.load_expected("minimal-1.35"))
    paths = {p.path for p in validation.validate_cluster(cluster, strict=True)}
    assert {"spec.kubeAPIServer", "spec.podCIDR", "spec.serviceClusterIPRange"} <= paths


def test_cluster_update_rules():
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("ha"))
    changed = yaml.safe_load(yaml.safe_dump(cluster))
    changed["spec"]["etcdClusters"] = changed["spec"]["etcdClusters"][:1]
    changed["spec"]["etcdClusters"][0]["etcdMembers"][0]["instanceGroup"] = "control-plane-us-test-1b"
    messages = [str(p) for p in validation.validate_cluster_update(cluster, changed)]
    assert any("events cannot be removed" in m for m in messages)
    assert any("etcdMembers[0].instanceGroup" in m and "cannot change" in m for m in messages)
    assert validation.validate_cluster_update(cluster, cluster) == []


def test_cluster_update_refuses_reserved_cloud_labels():
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("ha"))
    changed = yaml.safe_load(yaml.safe_dump(cluster))
    changed["spec"]["cloudLabels"] = {"kubernetes.io/cluster/other": "owned", "team": "infra"}
    assert [p.path for p in validation.validate_cluster_update(cluster, changed)] == [
        "spec.cloudLabels[kubernetes.io/cluster/other]"]


@pytest.mark.parametrize("rolling, control_plane, expected", [
    ({"maxSurge": "25%", "maxUnavailable": 0}, False, []),
    ({"maxSurge": 0, "maxUnavailable": "0%"}, False, ["spec.rollingUpdate.maxSurge"]),
    ({"maxSurge": 0}, True, []),
    ({"maxSurge": "-1"}, False, ["spec.rollingUpdate.maxSurge"]),
    ({"maxUnavailable": True}, False, ["spec.rollingUpdate.maxUnavailable"]),
])
def test_rolling_update_rules(rolling, control_plane, expected):
    problems = validation.check_rolling_update("spec.rollingUpdate", rolling, control_plane=control_plane)
    assert [p.path for p in problems] == expected


def test_ipv6_subnet_shorthand_and_public_ipv6_egress_are_valid():
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("ipv6"))
    assert all(s["ipv6CIDR"].startswith("/64#") for s in cluster["spec"]["subnets"])
    public = {"name": "public-v6", "type": "Public", "zone": "us-test-1a", "egress": "nat-0123",
              "cidr": "172.20.32.0/21", "ipv6CIDR": "/64#3"}
    cluster["spec"]["subnets"].append(public)
    assert [str(p) for p in validation.validate_cluster(cluster)] == []
    del public["ipv6CIDR"]
    assert [p.path for p in validation.validate_cluster(cluster)] == ["spec.subnets[3].egress"]


def test_a_local_zone_is_in_its_region():
    """A subnet's region is its zone's by the cloud's pattern: us-west-2-lax-1a is in us-west-2, as us-west-2a is."""
    spec = {"cloudProvider": "aws", "subnets": [{"name": "a", "zone": "us-west-2a", "type": "Public"},
                                                {"name": "b", "zone": "us-west-2-lax-1a", "type": "Public"}]}
    problems = []
    validation._check_subnets(spec, problems, False)
    assert [str(p) for p in problems] == []
    spec["subnets"][1]["zone"] = "us-east-1a"
    validation._check_subnets(spec, problems, False)
    assert [str(p) for p in problems] == ["spec.subnets: Forbidden: clusters cannot span regions (found us-east-1, "
                                          "us-west-2); use subnets of one region"]
