"""cloud/gce.py and providers/gce/deletion.py on gcplocal (PyPI), for the Compute kinds it serves.

gcplocal 0.1.0 serves networks, subnetworks, firewalls, disks and instances (and IAM service accounts,
Resource Manager policies); what it lacks or does differently is in docs/gce-test-server.md, and the
rest of the GCE tests use tests/gce_server.py.  It runs here in a thread on 127.0.0.1.
"""

from __future__ import annotations

import threading

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import deletion
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import deletion as gce_deletion

gcplocal_server = pytest.importorskip("gcplocal.server", reason="gcplocal (requirements-test.txt) is not installed")

PROJECT = "gcplocal-project"
OURS, OTHER = "minimal.example.com", "other.example.com"


@pytest.fixture(scope="module")
def gcplocal_url():
    from werkzeug.serving import make_server
    server = make_server("127.0.0.1", 0, gcplocal_server.create_app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="gcplocal", daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_port
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def cloud(gcplocal_url, monkeypatch):
    import requests
    requests.post(gcplocal_url + "/reset", timeout=10).raise_for_status()
    monkeypatch.setenv("KOPS_GCE_ENDPOINT", gcplocal_url)
    return GceCloud(OURS, PROJECT, "us-central1")


def _network_objects(cloud, cluster):
    safe = cluster.replace(".", "-")
    network = cloud.insert("compute", "projects/%s/global/networks" % PROJECT, {"name": safe, "autoCreateSubnetworks": False})
    cloud.insert("compute", "projects/%s/regions/us-central1/subnetworks" % PROJECT, {
        "name": "us-central1-%s" % safe, "network": network["selfLink"], "ipCidrRange": "10.0.16.0/20"})
    cloud.insert("compute", "projects/%s/global/firewalls" % PROJECT, {
        "name": "ssh-external-to-node-%s" % safe, "network": network["selfLink"], "targetTags": ["%s-k8s-io-role-node" % safe],
        "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}]})
    return network


def test_client_on_gcplocal(cloud):
    network = _network_objects(cloud, OURS)
    assert network["kind"] == "compute#network" and network["name"] == "minimal-example-com"  # the resource, after its operation
    disk = cloud.insert("compute", "projects/%s/zones/us-central1-a/disks" % PROJECT,
                        {"name": "a-etcd-main-minimal-example-com", "sizeGb": "20", "labels": {"k8s-io-cluster-name": "minimal-example-com"}})
    assert disk["labels"] == {"k8s-io-cluster-name": "minimal-example-com"}
    for index in range(3):
        cloud.insert("compute", "projects/%s/global/networks" % PROJECT, {"name": "extra-%d" % index})
    assert len(cloud.list("compute", "projects/%s/global/networks" % PROJECT, params={"maxResults": 2})) == 4
    assert cloud.get("compute", "projects/%s/global/networks/nothing" % PROJECT) is None
    assert cloud.delete("compute", "projects/%s/zones/us-central1-a/disks/%s" % (PROJECT, disk["name"])) is True
    assert cloud.delete("compute", "projects/%s/zones/us-central1-a/disks/%s" % (PROJECT, disk["name"])) is False


def test_network_kinds_deleted_on_gcplocal_and_the_neighbours_kept(cloud):
    """Network, Subnet and FirewallRule (the kinds of providers/gce/deletion.py gcplocal serves) through the walker."""
    _network_objects(cloud, OURS)
    _network_objects(cloud, OTHER)
    scope = gce_deletion.Scope(cloud, {"project": PROJECT})
    resources = []
    for kind in ("Network", "Subnet", "FirewallRule"):
        scope.found[kind] = gce_deletion.KINDS_BY_NAME[kind].find(scope)
        resources.extend(scope.found[kind])
    assert sorted((r.kind, r.name) for r in resources) == [
        ("FirewallRule", "ssh-external-to-node-minimal-example-com"), ("Network", "minimal-example-com"),
        ("Subnet", "us-central1-minimal-example-com")]
    report = deletion.Walker(cloud, gce_deletion.KINDS_BY_NAME, resources, sleep=lambda _s: None, interval=0).run()
    assert {r["result"] for r in report} == {"deleted"}

    def names(path):
        return sorted(i["name"] for i in cloud.list("compute", "projects/%s/%s" % (PROJECT, path)))
    assert names("global/networks") == ["other-example-com"]
    assert names("regions/us-central1/subnetworks") == ["us-central1-other-example-com"]
    assert names("global/firewalls") == ["ssh-external-to-node-other-example-com"]
