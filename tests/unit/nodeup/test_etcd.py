"""The etcd clusters handed to roles/protokube, from kops' fixtures' completed specs."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd

from tests.unit.nodeup.test_config import _completed


def test_ha_members_ports_store_and_volume_tags():
    completed, groups = _completed("ha")
    group = next(g for g in groups if g["metadata"]["name"] == "master-us-test-1b")
    clusters = etcd.etcd_clusters(completed, group, "s3://state/ha.example.com")
    main, events = clusters
    assert (main["name"], main["clientPort"], main["peerPort"]) == ("main", 4001, 2380)
    assert (events["name"], events["clientPort"], events["peerPort"]) == ("events", 4002, 2381)
    assert [m["name"] for m in main["members"]] == ["a", "b", "c"]
    assert main["members"][1]["instanceGroup"] == "master-us-test-1b"
    assert main["members"][1]["volumeTags"]["k8s.io/etcd/main"] == "b/a,b,c"
    assert main["backupStore"] == "s3://state/ha.example.com/backups/etcd/main"
    assert main["dnsSuffix"] == ".internal.ha.example.com"
    assert main["version"] == completed["spec"]["etcdClusters"][0]["version"]


def test_unknown_etcd_cluster_name_is_refused():
    completed, groups = _completed("minimal-aws")
    completed["spec"]["etcdClusters"][0]["name"] = "extra"
    with pytest.raises(ValueError, match="extra.*main"):
        etcd.etcd_clusters(completed, groups[0], "file:///s/c")
