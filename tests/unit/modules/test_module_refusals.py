"""The cluster and rolling_update modules refuse contradictory options in one line, before reading anything: their
services (module_utils/cluster_writes.py, rolling/service.py) check the options first, so a run that can only fail
makes no state store read and no cloud call (the store below does not exist, and nothing creates it)."""

from __future__ import annotations

import pathlib

import pytest

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import rolling_update as rolling_update_module

DEFINITION = """apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: gone.example.com
spec: {}
"""


@pytest.mark.parametrize("args, message", [
    ({"name": "a.example.com", "options": {"cluster_name": "b.example.com", "zones": ["us-east-1a"]}},
     "name 'a.example.com' and options.cluster_name 'b.example.com' differ; give one of them"),
    ({"name": "a.example.com", "history_limit": 0, "definition": DEFINITION},
     "history_limit: 0 keeps no revision; give at least 1 (the revision the store is at)"),
    ({"state": "absent"}, "state=absent needs name (the cluster to delete)"),
    ({}, "state=present needs options (create-cluster options) or definition (Cluster/InstanceGroup YAML)"),
])
def test_cluster_refuses_in_one_line_without_touching_the_store(run_module, tmp_path, args, message):
    store = tmp_path / "state"
    result = run_module(cluster_module, state_store="file://%s" % store, cloud_lookup=False, **args)
    assert result["failed"] is True
    assert result["msg"] == message
    assert "exception" not in result
    assert not store.exists()


def test_cluster_warns_of_a_definition_without_revision_even_when_the_replace_then_fails(run_module, tmp_path):
    """The warning is the module's as it arises (ClusterWrite's warn), not lost with the failure after it."""
    result = run_module(cluster_module, state_store="file://%s" % (tmp_path / "state"), cloud_lookup=False,
                        definition=DEFINITION, definition_source="gone.yaml")
    assert result["failed"] is True
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in result.get("warnings", [])]  # 2.19: summaries
    assert any(w.startswith("gone.yaml names no revision it was read at") for w in warnings), warnings


@pytest.mark.parametrize("args, message", [
    ({"validate_count": -1}, "validate_count: must be 0 or more, got -1"),
    ({"budget_max_surge": 2}, "budget_max_surge: needs budget_max_unavailable (the budget), e.g. budget_max_unavailable: 1"),
    ({"drain_timeout": "ten minutes"},
     "drain_timeout: 'ten minutes' is not a duration; give plain seconds (600) or kops' form: 40s, 10m, 1h, 1h30m"),
])
def test_rolling_update_refuses_in_one_line_before_reading_anything(run_module, tmp_path, args, message):
    store = tmp_path / "state"
    result = run_module(rolling_update_module, state_store="file://%s" % store, cloud_lookup=False,
                        cluster_name="roll.example.com", cloud_only=True, **args)
    assert result["failed"] is True
    assert result["msg"] == message
    assert "exception" not in result
    assert not pathlib.Path(store).exists()
