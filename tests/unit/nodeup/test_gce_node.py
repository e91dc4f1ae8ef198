"""The GCE node side on the in-memory stand-in of GceCloud (tests/unit/cloud/gce_fake): protokube's etcd disk
finder (kops' labels, the member's own disk among the others, attach once, never a disk in use elsewhere) and
api.internal in Cloud DNS (only this cluster's running control plane, one change, unchanged the second time)."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import api_dns, etcd_volume
from tests.unit.cloud.gce_fake import FakeGce

CLUSTER = "k8s.example.com"
ZONE = "us-test1-a"


def _disk(cloud, name, member, zone=ZONE, etcd="main", cluster="k8s-example-com"):
    return cloud.add("compute", "projects/p1/zones/%s/disks/%s" % (zone, name), {"labels": {
        "k8s-io-cluster-name": cluster, "k8s-io-role-master": "master",
        "k8s-io-etcd-%s" % etcd: etcd_volume_label(member)}})


def etcd_volume_label(member):
    """kops' EncodeGCELabel("<member>/<member>"): "/" is -2f."""
    return "%s-2f%s" % (member, member)


@pytest.fixture
def cloud():
    fake = FakeGce(CLUSTER)
    _disk(fake, "a-etcd-main-k8s-example-com", "a")
    _disk(fake, "b-etcd-main-k8s-example-com", "b")  # another member's
    _disk(fake, "a-etcd-events-k8s-example-com", "a", etcd="events")  # another etcd cluster's
    _disk(fake, "a-etcd-main-other-example-com", "a", cluster="other-example-com")  # another cluster's
    _disk(fake, "a-etcd-main-k8s-example-com-b", "a", zone="us-test1-b")  # another zone's
    return fake


def test_decodes_kops_labels():
    assert etcd_volume.decode_gce_label("a-2fa-2cb-2cc") == "a/a,b,c"


def test_attaches_the_members_disk_once(cloud):
    disk, changed = etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "a", "master-a-0000", ZONE, dry_run=True)
    assert (disk, changed) == ("a-etcd-main-k8s-example-com", True)
    assert [m for m, _p in cloud.calls] == ["GET"]  # check mode: reads only
    disk, changed = etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "a", "master-a-0000", ZONE)
    assert changed and cloud.calls[-1] == ("POST", "projects/p1/zones/us-test1-a/instances/master-a-0000/attachDisk")
    assert cloud.resources[("compute", "projects/p1/zones/us-test1-a/disks/%s" % disk)]["users"][0].endswith(
        "/instances/master-a-0000")
    assert etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "a", "master-a-0000", ZONE) == (disk, False)
    assert etcd_volume.gce_device(disk) == "/dev/disk/by-id/google-a-etcd-main-k8s-example-com"


def test_refuses_a_disk_in_use_elsewhere_and_names_the_labels(cloud):
    etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "a", "master-a-0000", ZONE)
    with pytest.raises(etcd_volume.GceVolumeError, match="attached to master-a-0000, not to this instance master-a-0001"):
        etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "a", "master-a-0001", ZONE)
    with pytest.raises(etcd_volume.GceVolumeError, match=r"no disks in us-test1-a carry .*k8s-io-etcd-main=<z/...>"):
        etcd_volume.gce_ensure_attached(cloud, CLUSTER, "main", "z", "master-a-0000", ZONE)


def _control_plane(cloud):
    control = cloud.template("master-a", "master-us-test1-a", labels={"k8s-io-role-master": "master",
                                                                      "k8s-io-role-control-plane": "control-plane"})
    nodes = cloud.template("nodes", "nodes", labels={"k8s-io-role-node": "node"})
    other = cloud.template("other-master", "master-us-test1-a", cluster="other.example.com",
                           labels={"k8s-io-role-master": "master"})
    cloud.instance("us-test1-a", "master-a", control, address="10.0.1.2")
    cloud.instance("us-test1-b", "master-b", control, address="10.0.2.2")
    cloud.instance("us-test1-b", "master-c", control, address="10.0.2.3", status="TERMINATED")
    cloud.instance("us-test1-a", "nodes-a", nodes, address="10.0.1.9")
    cloud.instance("us-test1-a", "other-master", other, address="10.0.1.7")


def test_api_internal_follows_the_control_plane(cloud):
    _control_plane(cloud)
    cloud.add("dns", "projects/p1/managedZones/example-private", {"dnsName": "example.com.", "visibility": "private"})
    cloud.add("dns", "projects/p1/managedZones/example-com", {"dnsName": "example.com.", "visibility": "public"})
    zone = api_dns.gce_managed_zone(cloud, "example.com")
    assert zone == "example-com" and api_dns.gce_managed_zone(cloud, "example-com") == "example-com"
    addresses = api_dns.gce_control_plane_addresses(cloud)
    assert addresses == ["10.0.1.2", "10.0.2.2"]
    name = "api.internal.%s" % CLUSTER
    assert api_dns.gce_current_record(cloud, zone, name) is None
    api_dns.gce_replace(cloud, zone, name, addresses, 60)
    record = api_dns.gce_current_record(cloud, zone, name)
    assert record["rrdatas"] == addresses and record["ttl"] == 60
    # A control-plane instance goes: one change takes the old record set out and puts the new one in.
    cloud.resources[("compute", "projects/p1/zones/us-test1-b/instances/master-b")]["status"] = "STOPPING"
    assert api_dns.gce_control_plane_addresses(cloud) == ["10.0.1.2"]
    api_dns.gce_replace(cloud, zone, name, ["10.0.1.2"], 60, record)
    assert api_dns.gce_current_record(cloud, zone, name)["rrdatas"] == ["10.0.1.2"]


def test_no_managed_zone_is_a_clear_error(cloud):
    with pytest.raises(api_dns.CloudDnsError, match="no Cloud DNS managed zones are for nowhere.example."):
        api_dns.gce_managed_zone(cloud, "nowhere.example")


def test_etcd_peers_by_attached_disk_then_by_instance_group(cloud):
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_peers
    templates = {z: cloud.template("master-%s" % z, "master-us-test1-%s" % z, labels={"k8s-io-role-master": "master"})
                 for z in "ab"}
    cloud.instance("us-test1-a", "master-a-0000", templates["a"], address="10.0.1.2")
    cloud.instance("us-test1-b", "master-b-0000", templates["b"], address="10.0.2.2")
    cloud.instance("us-test1-b", "master-b-0001", templates["b"], address="10.0.2.3")  # two in b: ambiguous
    etcd = {"name": "main", "members": [{"name": n, "instanceGroup": "master-us-test1-%s" % n} for n in "abc"]}
    assert etcd_peers.gce_member_addresses(cloud, etcd) == {"a": "10.0.1.2"}
    # b's disk attached to one of b's instances settles it; c has no instance yet.
    cloud.resources[("compute", "projects/p1/zones/us-test1-a/disks/b-etcd-main-k8s-example-com")]["users"] = [
        "https://x/compute/v1/projects/p1/zones/us-test1-b/instances/master-b-0001"]
    assert etcd_peers.gce_member_addresses(cloud, etcd) == {"a": "10.0.1.2", "b": "10.0.2.3"}
    assert {m for m, _p in cloud.calls} == {"GET"}
