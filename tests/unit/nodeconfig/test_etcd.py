"""The etcd clusters handed to roles/protokube, from kops' fixtures' completed specs."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import etcd

from tests.unit.nodeconfig.test_config import _completed


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


FIXTURES_WITH_ETCD = ["complex", "existing_iam", "ha", "ha_gce", "minimal-aws", "minimal-dns-none", "minimal_gce",
                      "privatecalico", "shared_vpc"]


@pytest.mark.parametrize("name", FIXTURES_WITH_ETCD)
def test_every_fixture_member_has_its_volume_tags_and_etcd_manager_names(name):
    completed, groups = _completed(name)
    control_plane = [g for g in groups if g["spec"]["role"] in ("ControlPlane", "Master")]  # v1alpha2 spelling
    config_base = "file:///srv/kops/%s" % completed["metadata"]["name"]
    clusters = etcd.etcd_clusters(completed, control_plane[0], config_base)
    assert [c["name"] for c in clusters] == [e["name"] for e in completed["spec"]["etcdClusters"]]
    for cluster, spec in zip(clusters, completed["spec"]["etcdClusters"]):
        # etcd-manager's --cluster-name: etcd for main, etcd-events for events (member etcd-events-a)
        assert cluster["clusterName"] == {"main": "etcd", "events": "etcd-events"}[cluster["name"]]
        assert cluster["version"] == spec["version"]
        assert cluster["backupStore"] == "%s/backups/etcd/%s" % (config_base, cluster["name"])
        assert (cluster["backupIntervalMinutes"], cluster["backupRetentionDays"]) == (15, 90)
        names = ",".join(m["name"] for m in spec["etcdMembers"])
        for member in cluster["members"]:
            assert member["volumeTags"] == {
                "k8s.io/etcd/%s" % cluster["name"]: "%s/%s" % (member["name"], names),
                "k8s.io/role/control-plane": "1",
                "kubernetes.io/cluster/%s" % completed["metadata"]["name"]: "owned"}
        # every member's group is a control-plane group of the cluster
        assert {m["instanceGroup"] for m in cluster["members"]} <= {g["metadata"]["name"] for g in control_plane}


def test_volume_tags_match_the_ebs_volumes_the_aws_model_creates():
    from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import volumes
    completed, groups = _completed("ha")
    tasks = {}
    volumes.build_etcd_volumes(completed, groups, tasks)
    tags_by_volume = {t.name: t.fields["tags"] for t in tasks.values()}
    for cluster in etcd.etcd_clusters(completed, groups[0], "s3://state/ha.example.com"):
        for member in cluster["members"]:
            volume = "%s.etcd-%s.ha.example.com" % (member["name"], cluster["name"])
            for key, value in member["volumeTags"].items():
                assert tags_by_volume[volume][key] == value


def test_manager_interval_retention_and_custom_backup_store():
    completed, groups = _completed("minimal-aws")
    main = completed["spec"]["etcdClusters"][0]
    main["manager"] = {"backupInterval": "1h30m0s", "backupRetentionDays": 7}
    main["backups"] = {"backupStore": "s3://elsewhere/backups/main"}
    cluster = etcd.etcd_clusters(completed, groups[0], "s3://state/minimal-aws.example.com")[0]
    assert (cluster["backupIntervalMinutes"], cluster["backupRetentionDays"]) == (90, 7)
    assert cluster["backupStore"] == "s3://elsewhere/backups/main"


@pytest.mark.parametrize("text, minutes", [("15m", 15), ("1h0m0s", 60), ("30s", 1), ("2h", 120)])
def test_go_durations(text, minutes):
    assert etcd.go_duration_minutes(text) == minutes


def test_bad_duration_is_refused():
    with pytest.raises(ValueError, match="Go duration"):
        etcd.go_duration_minutes("15 minutes")
