"""With the cloud answering (moto): a bad zone is reported as the zone, not as the machine type picked in it; an
unknown region before any call; a machine type must be offered in its group's zones (DescribeInstanceTypeOfferings,
moto's per-zone offerings); a definition's invalid YAML names its file, line and column."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module

from tests.unit.modules.conftest import store_files

BASE = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "networking": "cni"}


@pytest.mark.parametrize("zone, says", [
    ("eu-west-1z", 'zone "eu-west-1z" is not an availability zone of eu-west-1 (its zones: eu-west-1a, eu-west-1b, '
                   'eu-west-1c); check zones'),
    ("eu-west-9a", 'zone "eu-west-9a": eu-west-9 is not an AWS region; check zones'),
])
def test_a_bad_zone_without_sizes_is_named_as_a_zone(run_module, store_url, aws, zone, says):
    result = run_module(cluster_module, state_store=store_url, options=dict(BASE, zones=[zone]))
    assert result["failed"] is True
    assert says in result["msg"], result["msg"]
    assert "machineType" not in result["msg"] and "offered" not in result["msg"], result["msg"]
    assert store_files(store_url) == {}


def test_a_machine_type_not_offered_in_the_zone_is_refused(run_module, store_url, aws):
    # moto's offerings (as AWS's): x2iezn.2xlarge is offered in eu-west-1b, not in eu-west-1a.
    result = run_module(cluster_module, state_store=store_url,
                        options=dict(BASE, zones=["eu-west-1a"], node_sizes=["x2iezn.2xlarge"]))
    assert result["failed"] is True
    assert ('instancegroup[nodes-eu-west-1a].spec.machineType: Invalid value: "x2iezn.2xlarge": is not offered in '
            'eu-west-1a') in result["msg"], result["msg"]
    assert store_files(store_url) == {}
    offered = run_module(cluster_module, state_store=store_url,
                         options=dict(BASE, zones=["eu-west-1b"], node_sizes=["x2iezn.2xlarge"]))
    assert offered["changed"] is True, offered


def test_offerings_are_not_claimed_without_the_cloud(run_module, store_url):
    # Offline (no credentials): only the instance type enum is checked; x2iezn.2xlarge is a type.
    result = run_module(cluster_module, state_store=store_url, cloud_lookup=False,
                        options=dict(BASE, zones=["eu-west-1a"], node_sizes=["x2iezn.2xlarge"]))
    assert result["changed"] is True, result


def test_invalid_yaml_names_the_file_line_and_column(run_module, store_url):
    text = "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: a\nspec:\n  foo: ["  # as lookup(file) gives it
    result = run_module(cluster_module, state_store=store_url, definition=text, definition_source="clusters/a.yaml")
    assert result["failed"] is True
    assert ("clusters/a.yaml: Invalid value: not valid YAML: line 6, column 9: while parsing a flow node; expected "
            "the node content, but found '<stream end>'") in result["msg"], result["msg"]
    assert "<unicode string>" not in result["msg"]
