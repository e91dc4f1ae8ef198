"""What roles/protokube used to work out in Jinja, now in the nodeup config (nodeconfig/etcd.py): member names, URLs,
paths, the certificates each member needs, and on the node the members with addresses and the restart set."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config, etcd
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_members
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

from tests.unit.nodeconfig.test_config import _completed

HA_PEERS = {"a": "10.0.1.10", "b": "10.0.2.10", "c": "10.0.3.10"}


def _clusters(fixture, group_name, config_base):
    completed, groups = _completed(fixture)
    group = next(g for g in groups if g["metadata"]["name"] == group_name)
    return etcd.etcd_clusters(completed, group, config_base)


def _by_name(clusters):
    return {c["name"]: c for c in clusters}


def test_one_member_cluster_names_urls_and_paths():
    clusters = _by_name(_clusters("minimal-aws", "master-us-test-1a", "s3://state/minimal-aws.example.com"))
    main, events = clusters["main"], clusters["events"]
    assert (main["unit"], main["mountPath"], main["dataDir"], main["pkiDir"]) == (
        "etcd-main", "/mnt/etcd-main", "/mnt/etcd-main/data", "/etc/kubernetes/pki/etcd-main")
    assert (events["unit"], events["mountPath"], events["dataDir"], events["pkiDir"]) == (
        "etcd-events", "/mnt/etcd-events", "/mnt/etcd-events/data", "/etc/kubernetes/pki/etcd-events")
    # kops' minimal fixture names its one member after its zone
    assert main["localMember"] == events["localMember"] == "us-test-1a"
    assert [(m["memberName"], m["fqdn"], m["peerURL"], m["clientURL"]) for m in main["members"]] == [
        ("etcd-us-test-1a", "etcd-us-test-1a.internal.minimal-aws.example.com",
         "https://etcd-us-test-1a.internal.minimal-aws.example.com:2380",
         "https://etcd-us-test-1a.internal.minimal-aws.example.com:4001")]
    assert [(m["memberName"], m["fqdn"], m["peerURL"], m["clientURL"]) for m in events["members"]] == [
        ("etcd-events-us-test-1a", "etcd-events-us-test-1a.internal.minimal-aws.example.com",
         "https://etcd-events-us-test-1a.internal.minimal-aws.example.com:2381",
         "https://etcd-events-us-test-1a.internal.minimal-aws.example.com:4002")]


def test_three_member_cluster_names_urls_and_the_groups_own_member():
    for group, own in (("master-us-test-1a", "a"), ("master-us-test-1b", "b"), ("master-us-test-1c", "c")):
        clusters = _by_name(_clusters("ha", group, "s3://state/ha.example.com"))
        assert clusters["main"]["localMember"] == clusters["events"]["localMember"] == own
    events = _by_name(_clusters("ha", "master-us-test-1b", "s3://state/ha.example.com"))["events"]
    assert [m["memberName"] for m in events["members"]] == ["etcd-events-a", "etcd-events-b", "etcd-events-c"]
    assert [m["peerURL"] for m in events["members"]] == [
        "https://etcd-events-%s.internal.ha.example.com:2381" % m for m in "abc"]
    assert [m["clientURL"] for m in events["members"]] == [
        "https://etcd-events-%s.internal.ha.example.com:4002" % m for m in "abc"]


def test_certificates_of_a_member_sans_and_paths():
    main = _by_name(_clusters("ha", "master-us-test-1c", "s3://state/ha.example.com"))["main"]
    fqdn = "etcd-c.internal.ha.example.com"
    assert main["certificates"] == [
        {"signer": "etcd-peers-ca-main", "common_name": "etcd-c", "usages": ["client", "server"],
         "dns_names": [fqdn], "ip_addresses": [etcd_members.MEMBER_ADDRESS],
         "cert_path": "/etc/kubernetes/pki/etcd-main/peer.crt", "key_path": "/etc/kubernetes/pki/etcd-main/peer.key",
         "ca_path": "/etc/kubernetes/pki/etcd-main/peers-ca.crt"},
        {"signer": "etcd-clients-ca", "common_name": "etcd-c", "usages": ["client", "server"],
         "dns_names": [fqdn, "localhost"], "ip_addresses": [etcd_members.MEMBER_ADDRESS, "127.0.0.1"],
         "cert_path": "/etc/kubernetes/pki/etcd-main/server.crt",
         "key_path": "/etc/kubernetes/pki/etcd-main/server.key",
         "ca_path": "/etc/kubernetes/pki/etcd-main/clients-ca.crt"},
        {"signer": "etcd-clients-ca", "common_name": "kubeops-etcdctl", "usages": ["client"],
         "cert_path": "/etc/kubernetes/pki/etcd-main/etcdctl.crt",
         "key_path": "/etc/kubernetes/pki/etcd-main/etcdctl.key"},
    ]
    events = _by_name(_clusters("ha", "master-us-test-1c", "s3://state/ha.example.com"))["events"]
    assert [(c["signer"], c["common_name"], c.get("dns_names")) for c in events["certificates"]] == [
        ("etcd-peers-ca-events", "etcd-events-c", ["etcd-events-c.internal.ha.example.com"]),
        ("etcd-clients-ca", "etcd-events-c", ["etcd-events-c.internal.ha.example.com", "localhost"]),
        ("etcd-clients-ca", "kubeops-etcdctl", None)]


def test_a_group_without_a_member_gets_no_local_member_nor_certificates():
    completed, groups = _completed("ha")
    group = next(g for g in groups if g["metadata"]["name"] == "master-us-test-1a")
    group = dict(group, metadata=dict(group["metadata"], name="master-spare"))
    for cluster in etcd.etcd_clusters(completed, group, "s3://state/ha.example.com"):
        assert (cluster["localMember"], cluster["certificates"]) == (None, [])
    assert etcd_members.node_clusters({"etcdClusters": etcd.etcd_clusters(completed, group, "s3://s/ha")}, HA_PEERS) == []


def test_node_clusters_three_members_with_addresses():
    kubeops = {"etcdClusters": _clusters("ha", "master-us-test-1b", "s3://state/ha.example.com")}
    main, events = etcd_members.node_clusters(kubeops, HA_PEERS)
    assert (main["unit"], main["member"], main["member_key"]) == ("etcd-main", "etcd-b", "b")
    assert (events["unit"], events["member"], events["member_key"]) == ("etcd-events", "etcd-events-b", "b")
    assert (main["client_port"], main["peer_port"], events["client_port"], events["peer_port"]) == (4001, 2380, 4002, 2381)
    assert (main["mount"], main["data_dir"], main["pki"]) == (
        "/mnt/etcd-main", "/mnt/etcd-main/data", "/etc/kubernetes/pki/etcd-main")
    assert main["peer_url"] == "https://etcd-b.internal.ha.example.com:2380"
    assert main["client_url"] == "https://etcd-b.internal.ha.example.com:4001"
    assert main["peer_urls"] == {"etcd-%s" % m: "https://etcd-%s.internal.ha.example.com:2380" % m for m in "abc"}
    assert main["other_client_urls"] == ["https://etcd-a.internal.ha.example.com:4001",
                                         "https://etcd-c.internal.ha.example.com:4001"]
    assert events["initial_cluster"] == ",".join(
        "etcd-events-%s=https://etcd-events-%s.internal.ha.example.com:2381" % (m, m) for m in "abc")
    assert [(m["name"], m["address"], m["local"]) for m in main["members"]] == [
        ("etcd-a", "10.0.1.10", False), ("etcd-b", "10.0.2.10", True), ("etcd-c", "10.0.3.10", False)]
    assert main["volume_tags"]["k8s.io/etcd/main"] == "b/a,b,c"
    # the member's own address goes into its peer and serving certificates, nowhere else
    assert [c.get("ip_addresses") for c in main["certificates"]] == [["10.0.2.10"], ["10.0.2.10", "127.0.0.1"], None]
    assert main["backup_store"] == "s3://state/ha.example.com/backups/etcd/main"
    assert (main["backup_interval_minutes"], main["backup_retention_days"]) == (15, 90)


def test_node_clusters_one_member_and_a_missing_address():
    kubeops = {"etcdClusters": _clusters("minimal-aws", "master-us-test-1a", "file:///srv/kops/minimal-aws.example.com")}
    main, events = etcd_members.node_clusters(kubeops, {"us-test-1a": "192.168.7.2"})
    assert (main["member"], events["member"]) == ("etcd-us-test-1a", "etcd-events-us-test-1a")
    assert main["other_client_urls"] == events["other_client_urls"] == []
    assert main["peer_urls"] == {"etcd-us-test-1a": "https://etcd-us-test-1a.internal.minimal-aws.example.com:2380"}
    assert events["initial_cluster"] == ("etcd-events-us-test-1a="
                                         "https://etcd-events-us-test-1a.internal.minimal-aws.example.com:2381")
    assert events["certificates"][1]["ip_addresses"] == ["192.168.7.2", "127.0.0.1"]
    # no address: left empty for the role's check, which names the member and protokube_etcd_peers
    missing = etcd_members.node_clusters(kubeops, {})
    assert [m["address"] for c in missing for m in c["members"]] == ["", ""]


def test_a_config_written_before_the_layout_is_refused_with_the_fix():
    kubeops = {"etcdClusters": _clusters("minimal-aws", "master-us-test-1a", "file:///s/c")}
    for key in ("unit", "mountPath", "dataDir", "pkiDir", "certificates"):
        kubeops["etcdClusters"][0].pop(key)
    with pytest.raises(ValueError, match="cluster_update"):
        etcd_members.node_clusters(kubeops, {"us-test-1a": "192.168.7.2"})


@pytest.mark.parametrize("changed_units, changed_certs, active, expected", [
    ([], [], ["active", "active"], []),
    (["etcd-events"], [], ["active", "active"], ["etcd-events"]),
    # a certificate change restarts the member whose PKI directory holds it
    ([], ["/etc/kubernetes/pki/etcd-main/server.crt"], ["active", "active"], ["etcd-main"]),
    ([], ["/etc/kubernetes/pki/etcd-main/peer.key", "/etc/kubernetes/pki/etcd-events/etcdctl.crt"],
     ["active", "active"], ["etcd-main", "etcd-events"]),
    # both the unit and its certificates changed: restarted once
    (["etcd-main", "etcd-main"], ["/etc/kubernetes/pki/etcd-main/peer.crt"], ["active", "active"], ["etcd-main"]),
    # a member not running before this run is started, not restarted
    (["etcd-main", "etcd-events"], [], ["inactive", "active"], ["etcd-events"]),
    (["etcd-main", "etcd-events"], ["/etc/kubernetes/pki/etcd-events/server.crt"], ["unknown", "failed"], []),
    # a changed file elsewhere under the PKI root is nobody's
    ([], ["/etc/kubernetes/pki/etcd-main-old/server.crt"], ["active", "active"], []),
])
def test_restart_units_two_clusters(changed_units, changed_certs, active, expected):
    clusters = etcd_members.node_clusters({"etcdClusters": _clusters("ha", "master-us-test-1a", "s3://s/ha")}, HA_PEERS)
    assert [c["unit"] for c in clusters] == ["etcd-main", "etcd-events"]
    assert etcd_members.restart_units(clusters, changed_units, changed_certs, active) == expected


def test_the_stored_nodeup_config_carries_the_layout():
    completed, groups = _completed("ha")
    group = next(g for g in groups if g["metadata"]["name"] == "master-us-test-1c")
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    document = config.build_config(completed, group, keysets, "s3://state/ha.example.com")
    main = document["kubeops"]["etcdClusters"][0]
    assert (main["localMember"], main["unit"], main["members"][2]["peerURL"]) == (
        "c", "etcd-main", "https://etcd-c.internal.ha.example.com:2380")


@pytest.mark.parametrize("group, role, expected", [
    ("nodes", "Node", "igconfig/node/nodes/nodeupconfig.yaml"),
    ("master-us-test-1a", "Master", "igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml"),
    ("master-us-test-1a", "ControlPlane", "igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml"),
    ("apiservers", "APIServer", "igconfig/apiserver/apiservers/nodeupconfig.yaml"),
    ("bastions", "Bastion", "igconfig/bastion/bastions/nodeupconfig.yaml"),
])
def test_config_path_of_a_host(group, role, expected):
    assert config.config_path_of(group, role) == expected


@pytest.mark.parametrize("group, role", [("", "Node"), ("a/b", "Node"), ("nodes", "Worker")])
def test_config_path_of_refuses_what_names_no_config(group, role):
    with pytest.raises(ValueError, match="kops_instance_group.*kops_role"):
        config.config_path_of(group, role)
