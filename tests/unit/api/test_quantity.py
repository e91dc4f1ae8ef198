"""resource.Quantity written canonically, as kops writes the quantities of the specs it stores (api/quantity.py)."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import quantity, schema

# (as written, as kops writes it back): apimachinery's CanonicalizeBytes on each.
CANONICAL = [
    (3.14, "3140m"), ("3.14", "3140m"), (0.5, "500m"), ("100m", "100m"), ("0.1", "100m"), (2, "2"), ("10", "10"),
    (1000, "1k"), (1500, "1500"), ("2000k", "2M"), (0, "0"), ("0.0", "0"), (-2.5, "-2500m"),
    ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"), ("512Ki", "512Ki"), ("1Gi", "1Gi"),
    ("1023Ki", "1023Ki"), ("0.5Ki", "512"),  # binary under 1024 bytes is written decimal
    (1048576, "1048576"), ("1e3", "1e3"), ("1.5e3", "1500"), ("12e6", "12e6"), ("0.0001n", "1n"),
]


@pytest.mark.parametrize("given, written", CANONICAL)
def test_canonical_quantity(given, written):
    assert quantity.canonical(given) == written
    assert quantity.canonical(written) == written  # canonical is a fixed point


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "5Xi", True, None, [1]])
def test_not_a_quantity_is_named(bad):
    with pytest.raises(ValueError, match="is not a quantity"):
        quantity.canonical(bad)


def test_canonical_values_walk_the_spec_by_type():
    cluster = {"kind": "Cluster", "spec": {
        "kubeAPIServer": {"auditWebhookBatchThrottleQps": 3.14, "cpuRequest": "0.2"},
        "kubeScheduler": {"qps": 3, "burst": 100},
        "kubelet": {"maxPods": 110},
        "etcdClusters": [{"name": "main", "cpuRequest": "0.5", "memoryRequest": "1024Mi"}],
        "serviceOIDCProvider": {"issuerURL": "https://x"},  # retired, not typed: left alone
    }}
    spec = schema.canonical_values(cluster)["spec"]
    assert spec["kubeAPIServer"] == {"auditWebhookBatchThrottleQps": "3140m", "cpuRequest": "200m"}
    assert spec["kubeScheduler"] == {"qps": "3", "burst": 100}  # burst is an int32, not a quantity
    assert spec["kubelet"] == {"maxPods": 110}
    assert spec["etcdClusters"] == [{"name": "main", "cpuRequest": "500m", "memoryRequest": "1Gi"}]
    assert spec["serviceOIDCProvider"] == {"issuerURL": "https://x"}


def test_map_keys_are_strings_as_go_decodes_them():
    cluster = {"kind": "Cluster", "spec": {"clusterAutoscaler": {"customPriorityExpanderConfig": {100: ["a"], 0: ["b"]}},
                                           "cloudLabels": {"on": "x", True: "y"}}}
    spec = schema.canonical_values(cluster)["spec"]
    assert spec["clusterAutoscaler"]["customPriorityExpanderConfig"] == {"100": ["a"], "0": ["b"]}
    assert spec["cloudLabels"] == {"on": "x", "true": "y"}
