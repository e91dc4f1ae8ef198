"""kops create cluster conformance: options.yaml -> expected-v1alpha2.yaml, field for field."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, new_cluster

from tests.conformance import kops_fixtures

# kops' integration harness uses this store and freezes timestamps.
KOPS_TEST_STORE = "memfs://tests"
IGNORED = (("metadata", "creationTimestamp"), ("spec", "configBase"))


def _strip_ignored(obj):
    obj = dict(obj)
    for section, key in IGNORED:
        if isinstance(obj.get(section), dict):
            obj[section] = {k: v for k, v in obj[section].items() if k != key}
    return obj


@pytest.mark.parametrize("case", kops_fixtures.create_cluster_cases())
def test_create_cluster_matches_kops(case):
    options = kops_fixtures.load_create_options(case)
    cluster, groups = new_cluster.new_cluster(options, state_store=KOPS_TEST_STORE,
                                              facts=cloudfacts.kops_test_cloud())
    expected = [_strip_ignored(o) for o in kops_fixtures.load_expected(case)]
    actual = [_strip_ignored(o) for o in [cluster] + groups]
    assert [o["metadata"]["name"] for o in actual] == [o["metadata"]["name"] for o in expected]
    for got, want in zip(actual, expected):
        assert got == want, "%s %s differs" % (want["kind"], want["metadata"]["name"])


def test_every_option_in_the_map_is_accepted():
    mapped = set(kops_fixtures.options_map().values())
    unknown = mapped - set(new_cluster.OPTION_DEFAULTS)
    assert not unknown, "options-map.yaml names options new_cluster does not accept: %s" % sorted(unknown)
