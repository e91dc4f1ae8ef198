"""The cloud contract (providers/base.py): every registered cloud answers every method the update pipeline, day 2,
deletion and the node side call, and a package that leaves one out is told which, before anything runs."""

from __future__ import annotations

import types

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.providers import base, contract, registry


@pytest.mark.parametrize("name", provider_names.names())
def test_every_registered_cloud_answers_the_contract(name):
    assert contract.unanswered_contract(name) == []


def test_the_clouds_checked_are_the_packages_on_disk():
    assert provider_names.names() == ["aws", "gce", "metal"]


def test_the_contract_names_what_the_update_pipeline_calls():
    # updates.py's calls on its driver (grep 'driver\\.' plugins/module_utils/updates.py): the ones every cloud must
    # answer are abstract, the others have a default a cloud without the feature keeps.
    assert base.Driver.__abstractmethods__ == {"cloud", "task_classes", "build_tasks", "boot_environment",
                                               "control_plane_addresses", "terraform_providers"}
    for optional in ("choose_names", "recorded_names", "made_control_plane_endpoint", "discovery_objects",
                     "store_objects", "karpenter_nodes", "recall_made_objects", "record_made_objects"):
        assert optional in vars(base.Driver) and optional not in base.Driver.__abstractmethods__
    assert base.Provider.__abstractmethods__ == {"driver", "reader", "inventory_hosts"}
    assert base.ReaderPart.__abstractmethods__ == {"cloud", "cloud_groups", "api_endpoint"}
    assert base.RollingSide.__abstractmethods__ == {"cloud_groups", "detach", "deregister", "terminate",
                                                    "wait_in_service"}
    assert base.DeletionPart.__abstractmethods__ == {"cloud", "discover", "any_owned"}


def test_a_provider_that_leaves_a_method_out_cannot_be_made_and_is_named():
    class NoInventory(base.Provider):
        name = "partial"

        def driver(self):
            return None

        def reader(self):
            return None

    assert base.unanswered(NoInventory, base.Provider) == ["inventory_hosts"]
    with pytest.raises(TypeError, match="inventory_hosts"):
        NoInventory()  # pylint: disable=abstract-class-instantiated  # the refusal is what is tested


def test_a_driver_that_leaves_a_method_out_is_named():
    aws_driver = registry.provider("aws").driver()
    assert base.unanswered(aws_driver, base.Driver) == []

    class NoTerraform(type(aws_driver)):
        terraform_providers = None  # a subclass that takes the method away

    assert base.unanswered(NoTerraform, base.Driver) == ["terraform_providers"]


def test_a_part_module_that_leaves_a_function_out_is_named(monkeypatch):
    # A cloud's parts are modules: a reader without api_endpoint, a deletion module without any_owned.
    reader = types.SimpleNamespace(cloud=lambda *a, **k: None, cloud_groups=lambda cloud: {})
    assert base.unanswered(reader, base.ReaderPart) == ["api_endpoint"]
    metal = registry.provider("metal")
    monkeypatch.setattr(type(metal), "reader", lambda self: reader)
    assert contract.unanswered_contract("metal") == ["ReaderPart.api_endpoint"]


def test_a_cloud_with_node_functions_must_define_all_three(monkeypatch):
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import node
    monkeypatch.delattr(node, "api_dns")
    assert contract.unanswered_contract("gce") == ["NodePart.api_dns"]


def test_a_package_whose_provider_cannot_be_made_is_refused_naming_the_method(monkeypatch):
    class NoInventory(base.Provider):
        name = "partial"
        driver = reader = registry.provider("metal").driver  # anything callable: not the contract's own

    def declared(name):
        del name
        return NoInventory()  # pylint: disable=abstract-class-instantiated  # what importing providers/partial/provider.py runs: PROVIDER = NoInventory()

    monkeypatch.setattr(provider_names, "discovered", lambda: {"partial": "/nowhere"})
    monkeypatch.setattr(provider_names, "declared", declared)
    with pytest.raises(registry.DriverError, match=r"^providers/partial/provider\.py: .*inventory_hosts.*; define it"):
        registry.provider("partial")


def test_a_built_in_cloud_the_module_zip_lacks_is_said_in_one_line(monkeypatch):
    # A module packaged without providers/aws/provider.py, run where no collection directory was handed over.
    import importlib

    def missing(name):
        raise ImportError("No module named %r" % name)

    monkeypatch.setattr(importlib, "import_module", missing)
    refusal = (r"^the aws cloud's package \(providers/aws/provider\.py\) is not in this module's zip .*; "
               r"run the module on the controller")
    with pytest.raises(provider_names.NotShipped, match=refusal):
        provider_names.declared_value("aws", "surges_by_default", False)


def test_the_node_side_reads_an_aws_or_gce_cluster_without_their_packages(monkeypatch):
    # channel_apply and node_certificates load the cluster on a node, whose zip holds no cloud package.
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    def not_on_a_node(name):
        raise AssertionError("asked for the %s package" % name)

    monkeypatch.setattr(provider_names, "declared", not_on_a_node)
    cluster = {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "Cluster", "metadata": {"name": "c.example.com"},
               "spec": {"cloudProvider": "gce"}}
    assert objects.with_cloud_from_label(cluster)["spec"]["cloudProvider"] == "gce"
