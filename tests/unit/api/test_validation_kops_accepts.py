"""Specs kops accepts (IPv6 without podCIDR, amazonvpc's service range, an API securityGroupOverride) and
values it refuses (zones a region lacks, Kubernetes newer than kOps, a region other than the zones')."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation, validation_aws
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate

from tests.conformance import kops_fixtures


def _completed(case):
    cluster, groups = objects.split_objects(kops_fixtures.load_expected(case))
    return populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())


def _problems(cluster, **kwargs):
    return [str(p) for p in validation.validate_cluster(cluster, **kwargs)]


def test_completed_ipv6_cluster_needs_no_pod_cidr():
    completed = _completed("ipv6")
    assert completed["spec"]["nonMasqueradeCIDR"] == "::/0" and "podCIDR" not in completed["spec"]
    assert _problems(completed, strict=True) == []
    ipv4 = _completed("minimal-1.35")
    del ipv4["spec"]["podCIDR"]
    assert [p.path for p in validation.validate_cluster(ipv4, strict=True)] == ["spec.podCIDR"]


def test_amazonvpc_service_range_may_lie_outside_the_non_masquerade_cidr():
    """kops' many-addons: amazonvpc makes the VPC CIDR the nonMasqueradeCIDR; services keep 100.64.0.0/13."""
    completed = _completed("minimal-1.35")
    completed["spec"].update(networking={"amazonvpc": {}}, nonMasqueradeCIDR="172.20.0.0/16", podCIDR="172.20.0.0/16",
                             serviceClusterIPRange="100.64.0.0/13")
    completed["spec"]["kubeControllerManager"]["clusterCIDR"] = "172.20.0.0/16"
    assert _problems(completed, strict=True) == []


def test_api_security_group_override_is_a_group_id():
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("minimal-1.35"))
    cluster["spec"]["api"]["loadBalancer"]["securityGroupOverride"] = "sg-elb"
    assert _problems(cluster) == []
    cluster["spec"]["api"]["loadBalancer"]["securityGroupOverride"] = " "
    assert [p.path for p in validation.validate_cluster(cluster)] == ["spec.api.loadBalancer.securityGroupOverride"]


def _with_zone(zone):
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("minimal-1.35"))
    cluster = copy.deepcopy(cluster)
    cluster["spec"]["subnets"][0]["zone"] = zone
    return cluster


@pytest.mark.parametrize("zone, message", [
    ("eu-west-1a", None),
    ("us-east-1f", None),
    ("eu-west-1z", 'spec.subnets[0].zone: Invalid value: "eu-west-1z": region eu-west-1 has the zones eu-west-1a, '
                   'eu-west-1b, eu-west-1c'),
    ("xx-nowhere-1a", 'spec.subnets[0].zone: Invalid value: "xx-nowhere-1a": xx-nowhere-1 is not a known AWS region'),
    ("eu-west-1", 'spec.subnets[0].zone: Invalid value: "eu-west-1": is not an AWS availability zone'),
])
def test_zone_must_be_one_its_region_has(zone, message):
    problems = _problems(_with_zone(zone))
    if message is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(message), problems


class _FactsWithZones(cloudfacts.StaticCloudFacts):
    """Cloud facts that know the zones of a region (as a lookup in the account would)."""

    def availability_zones(self, region):
        return {"eu-west-1": ["eu-west-1a", "eu-west-1b", "eu-west-1c", "eu-west-1d"]}.get(region)


def test_cloud_facts_win_over_the_static_zone_table():
    assert _problems(_with_zone("eu-west-1d")) != []
    assert _problems(_with_zone("eu-west-1d"), facts=_FactsWithZones()) == []
    assert _problems(_with_zone("eu-west-1z"), facts=_FactsWithZones())[0].endswith(
        "eu-west-1a, eu-west-1b, eu-west-1c, eu-west-1d")


@pytest.mark.parametrize("version, valid", [("1.37.3", True), ("v1.38.0", False), ("1.99.0", False),
                                            ("2.0.0", False), ("1.31.9", False)])
def test_kubernetes_version_within_what_kops_supports(version, valid):
    cluster, _groups = objects.split_objects(kops_fixtures.load_expected("minimal-1.35"))
    cluster["spec"]["kubernetesVersion"] = version
    assert (_problems(cluster) == []) is valid


def test_region_must_be_the_zones_region():
    validation_aws.check_region(None, "eu-west-1")
    validation_aws.check_region("eu-west-1", "eu-west-1")
    with pytest.raises(errors.ValidationError) as error:
        validation_aws.check_region("us-west-2", "eu-west-1")
    assert 'region: Invalid value: "us-west-2": the cluster\'s zones are in eu-west-1; omit region or give eu-west-1' \
        in str(error.value)
