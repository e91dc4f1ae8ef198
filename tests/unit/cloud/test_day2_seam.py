"""The day-2 cloud seam (kube/clouds.py, and deletion.DRIVERS for `delete cluster`): one row per cloud, the same clouds as the build drivers, and a cloud
without a row refused by every day-2 verb with one line naming the clouds that have one."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import deletion, providers
from ansible_collections.kubeops.kops.plugins.module_utils.kube import clouds


def test_every_buildable_cloud_has_its_day2_row_and_no_other():
    assert set(clouds.DAY2) == set(providers.DRIVERS) == set(deletion.DRIVERS)


@pytest.mark.parametrize("provider", sorted(clouds.DAY2))
def test_a_row_has_what_the_verbs_call(provider):
    row = clouds.day2_for(provider)
    for function in ("cloud", "cloud_groups", "api_endpoint"):
        assert callable(getattr(row.reader, function)), (provider, function)
    deleter = deletion.driver_module(provider)
    for function in ("cloud", "discover", "any_owned"):
        assert callable(getattr(deleter, function)), (provider, function)
    assert deleter.KINDS_BY_NAME
    assert isinstance(row.rolling, type)


def test_a_cloud_without_a_row_is_refused_naming_those_with_one():
    with pytest.raises(clouds.CloudReaderError, match=r"built for aws, gce, not 'azure'"):
        clouds.cloud_for({"metadata": {"name": "c.example.com"}, "spec": {"cloudProvider": "azure"}})
    with pytest.raises(deletion.DeletionError, match=r"deleting a cluster's objects is built for aws, gce, not 'azure'"):
        deletion.driver_module("azure")
