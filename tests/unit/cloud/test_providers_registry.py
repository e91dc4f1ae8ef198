"""The registry of clouds (providers/registry.py): every package under providers/ gives what every verb calls
through its Provider, and a cloud without a package is refused by every verb with one line naming those that
have one."""

from __future__ import annotations

import pathlib

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import deletion, provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider

PROVIDERS_DIR = pathlib.Path(providers.__file__).parent


def test_the_registry_lists_the_packages_on_disk():
    on_disk = sorted(p.parent.name for p in PROVIDERS_DIR.glob("*/provider.py"))
    assert providers.names() == on_disk == ["aws", "gce", "metal"]
    # metal is found on disk (provider_names.discovered): no registry names it.
    assert sorted(providers.BUILT_IN) == list(provider_names.BUILT_IN) == ["aws", "gce"]
    assert sorted(provider_names.discovered()) == ["metal"]


@pytest.mark.parametrize("name", ["aws", "gce"])
def test_a_package_has_what_the_verbs_call(name):
    cloud = providers.provider(name)
    assert isinstance(cloud, Provider) and cloud.name == name
    assert cloud.driver().provider == name
    reader = cloud.reader()
    for function in ("cloud", "cloud_groups", "api_endpoint"):
        assert callable(getattr(reader, function)), (name, function)
    deleter = deletion.driver_module(name)
    for function in ("cloud", "discover", "any_owned"):
        assert callable(getattr(deleter, function)), (name, function)
    assert deleter.KINDS_BY_NAME
    assert callable(getattr(cloud.rolling(object()), "cloud_groups"))


def test_module_options_come_from_the_clouds():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import module_options
    spec = module_options.argument_spec()
    assert {"region", "profile", "access_key"} <= set(spec)  # AWS's (doc fragment kubeops.kops.aws)


def test_a_cloud_without_a_package_is_refused_naming_those_with_one():
    with pytest.raises(providers.CloudReaderError, match=r"built for aws, gce, metal, not 'azure'"):
        providers.cloud_for({"metadata": {"name": "c.example.com"}, "spec": {"cloudProvider": "azure"}})
    with pytest.raises(deletion.DeletionError, match=r"deleting a cluster's objects is built for aws, gce, metal, not 'azure'"):
        deletion.driver_module("azure")
    with pytest.raises(providers.DriverError, match=r"cluster_update is built for aws, gce, metal, not 'azure'"):
        providers.driver_for({"cloudProvider": "azure"})


def test_a_part_a_cloud_lacks_is_refused_in_one_line():
    class Bare(Provider):  # what every cloud answers (providers/base.py), and no rolling update
        name = "bare"
        driver = reader = inventory_hosts = None

    with pytest.raises(providers.NotBuilt, match=r"^spec.cloudProvider: rolling update is not built for bare clusters$"):
        Bare().rolling(None)
