"""Fields kops' v1alpha2 decoder reads and drops (its own minimal_gce_plb fixture has them): accepted, removed,
and each named in a warning; any other unknown field is still refused."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects
from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module

from tests.conformance import kops_fixtures
from tests.unit.modules.conftest import run_module  # noqa: F401 pylint: disable=unused-import

SPEC = """
apiVersion: kops.k8s.io/v1alpha2
kind: Cluster
metadata:
  name: plb.example.com
spec:
  cloudProvider: gce
  kubernetesVersion: v1.34.0
  etcdClusters:
  - name: main
    etcdMembers:
    - instanceGroup: master-us-test1-a
      name: a
    volumeIops: 6000
    volumeThroughput: 1000
    type: hyperdisk-balanced
---
apiVersion: kops.k8s.io/v1alpha2
kind: InstanceGroup
metadata:
  name: nodes
  labels:
    kops.k8s.io/cluster: plb.example.com
spec:
  role: Node
  rootVolume:
    size: 100
    type: hyperdisk-balanced
"""


def test_ignored_fields_are_dropped_and_named():
    warnings = []
    cluster, group = objects.load_objects(SPEC, source="definition", warnings=warnings)
    assert cluster["spec"]["etcdClusters"][0] == {"name": "main", "etcdMembers": [
        {"instanceGroup": "master-us-test1-a", "name": "a"}]}
    assert "rootVolume" not in group["spec"]
    named = sorted(w.split(": ", 1)[1].split(" ", 1)[0] for w in warnings)
    assert named == ["spec.etcdClusters[0].type", "spec.etcdClusters[0].volumeIops",
                     "spec.etcdClusters[0].volumeThroughput", "spec.rootVolume"]
    assert all(w.startswith("definition[") for w in warnings)


def test_other_unknown_fields_are_still_refused():
    with pytest.raises(errors.ValidationError) as raised:
        objects.load_objects(SPEC.replace("volumeIops: 6000", "volumeIops: 6000\n    volumeIopz: 1"))
    assert "spec.etcdClusters[0].volumeIopz" in str(raised.value)


def test_the_cluster_module_warns(run_module, tmp_path):  # noqa: F811
    """kops' minimal_gce with the fields minimal_gce_plb adds: stored, with a warning naming each."""
    documents = [d for d in yaml.safe_load_all((kops_fixtures.UPDATE_CLUSTER / "minimal_gce" / "in-v1alpha2.yaml")
                                               .read_text()) if d]
    documents[0]["spec"]["etcdClusters"][0].update(volumeIops=6000, type="hyperdisk-balanced")
    next(d for d in documents if d["kind"] == "InstanceGroup")["spec"]["rootVolume"] = {"size": 100}
    result = run_module(cluster_module, definition=documents, force=True, state_store="file://%s" % tmp_path,
                        cloud_lookup=False)
    assert not result.get("failed"), result
    # ansible-core 2.19 returns each warning as a WarningSummary (its message under event.msg)
    said = [w["event"]["msg"] if isinstance(w, dict) else w for w in result.get("warnings", [])]
    assert [w.split(": ", 1)[1].split(" ", 1)[0] for w in said] == [
        "spec.etcdClusters[0].type", "spec.etcdClusters[0].volumeIops", "spec.rootVolume"]
    assert "rootVolume" not in str(result["instance_groups"])
