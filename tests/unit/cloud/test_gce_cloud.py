"""cloud/gce.py against tests/gce_server.py: paging, operations, errors as GceError, retries, credentials."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import gce as gce_cloud
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud, GceError

PROJECT = "test-project"
NETWORKS = "projects/%s/global/networks" % PROJECT


@pytest.fixture
def cloud(gce):
    made = GceCloud("minimal.example.com", PROJECT, "us-test1")
    made.sleeps = []
    made.sleep = made.sleeps.append
    return made


@pytest.fixture
def no_google_credentials():
    """Nothing for google.auth.default() to find: tests/conftest.py's _no_ambient_gce (autouse) sees to it."""


def service_account_file(path, project="key-project"):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.write_text(json.dumps({
        "type": "service_account", "project_id": project, "private_key_id": "0123456789abcdef",
        "private_key": pem.decode(), "client_email": "kops@%s.iam.gserviceaccount.com" % project,
        "client_id": "1234567890", "token_uri": "https://oauth2.googleapis.com/token"}))
    return str(path)


def test_list_follows_next_page_token(cloud, gce):
    for index in range(5):
        gce.seed(NETWORKS, {"name": "net-%d" % index})
    names = [n["name"] for n in cloud.list("compute", NETWORKS, params={"maxResults": 2})]
    assert names == ["net-0", "net-1", "net-2", "net-3", "net-4"]
    assert gce.requests == [("GET", "/compute/v1/" + NETWORKS)] * 3


def test_insert_waits_for_the_operation_and_returns_the_resource(cloud, gce):
    gce.operation_polls = 3
    network = cloud.insert("compute", NETWORKS, {"name": "net", "autoCreateSubnetworks": False})
    assert network["kind"] == "compute#network" and network["selfLink"].endswith("/global/networks/net")
    methods = [m for m, p in gce.requests]
    operation_polls = [p for m, p in gce.requests if "/operations/" in p]
    assert methods == ["POST", "GET", "GET", "GET", "GET"] and len(operation_polls) == 3
    assert all("/global/operations/" in p for p in operation_polls)
    assert cloud.sleeps == list(gce_cloud.POLL_DELAYS[:3])


def test_zonal_and_regional_operations_are_polled_in_their_scope(cloud, gce):
    gce.seed(NETWORKS, {"name": "net"})
    cloud.insert("compute", "projects/%s/regions/us-test1/subnetworks" % PROJECT,
                 {"name": "sub", "network": "global/networks/net", "ipCidrRange": "10.0.16.0/20"})
    cloud.insert("compute", "projects/%s/zones/us-test1-a/disks" % PROJECT, {"name": "d1", "sizeGb": 20})
    polls = [p for m, p in gce.requests if "/operations/" in p]
    assert "/regions/us-test1/operations/" in polls[0] and "/zones/us-test1-a/operations/" in polls[1]
    subnet = cloud.get("compute", "projects/%s/regions/us-test1/subnetworks/sub" % PROJECT)
    assert subnet["network"] == gce.url + "/compute/v1/" + NETWORKS + "/net"  # stored as Google does: a full URL


def test_missing_is_none_and_deleting_it_is_false(cloud, gce):
    assert cloud.get("compute", NETWORKS + "/nothing") is None
    assert cloud.delete("compute", NETWORKS + "/nothing") is False
    gce.seed(NETWORKS, {"name": "net"})
    assert cloud.delete("compute", NETWORKS + "/net") is True
    assert gce.names(NETWORKS) == []


def test_already_exists_is_a_gce_error_with_a_readable_failure(cloud, gce):
    gce.seed(NETWORKS, {"name": "net"})
    with pytest.raises(GceError) as caught:
        cloud.insert("compute", NETWORKS, {"name": "net"})
    assert (caught.value.status, caught.value.reason, caught.value.method) == (409, "alreadyExists", "POST")
    assert caught.value.path == NETWORKS
    assert str(cloud.failure(caught.value)) == (
        "alreadyExists: POST %s: The resource '%s/net' already exists" % (NETWORKS, NETWORKS))
    assert not cloud.retryable(caught.value)


def test_a_429_is_retried_with_backoff(cloud, gce):
    gce.seed(NETWORKS, {"name": "net"})
    gce.inject("GET", "/global/networks", 429, "rateLimitExceeded")
    assert [n["name"] for n in cloud.list("compute", NETWORKS)] == ["net"]
    assert len(gce.requests) == 2 and cloud.sleeps == [gce_cloud.RETRY_DELAYS[0]]


def test_a_500_on_an_operation_poll_is_retried(cloud, gce):
    gce.inject("GET", "/global/operations/", 500, "backendError", times=2)
    assert cloud.insert("compute", NETWORKS, {"name": "net"})["name"] == "net"
    polls = [p for m, p in gce.requests if "/operations/" in p]
    assert len(polls) == 3 and cloud.sleeps == [0.0, gce_cloud.RETRY_DELAYS[0], gce_cloud.RETRY_DELAYS[1]]


def test_5xx_for_ever_gives_up_with_the_error(cloud, gce):
    gce.inject("GET", "/global/networks", 503, "backendError", times=99)
    with pytest.raises(GceError) as caught:
        cloud.list("compute", NETWORKS)
    assert caught.value.status == 503 and len(gce.requests) == len(gce_cloud.RETRY_DELAYS) + 1


def test_an_operation_error_is_raised_and_in_use_is_retryable(cloud, gce):
    gce.seed(NETWORKS, {"name": "net"})
    gce.seed("projects/%s/global/firewalls" % PROJECT, {"name": "ssh", "network": "global/networks/net"})
    with pytest.raises(GceError) as caught:
        cloud.delete("compute", NETWORKS + "/net")
    assert caught.value.reason == "resourceInUseByAnotherResource" and caught.value.status == 400
    assert "firewalls/ssh" in caught.value.message
    assert cloud.retryable(caught.value)
    assert "retried until the deadline" in str(cloud.failure(caught.value))


def test_zones_are_looked_up_once(cloud, gce):
    assert cloud.zones == ["us-test1-a", "us-test1-b", "us-test1-c"]
    assert cloud.zones == ["us-test1-a", "us-test1-b", "us-test1-c"]
    assert gce.requests == [("GET", "/compute/v1/projects/%s/regions/us-test1" % PROJECT)]


def test_aggregated_lists_are_flattened(cloud, gce):
    for zone in ("us-test1-a", "us-test1-b"):
        gce.seed("projects/%s/zones/%s/disks" % (PROJECT, zone), {"name": "d-" + zone, "labels": {"k8s-io-cluster-name": "c"}})
    disks = cloud.list("compute", "projects/%s/aggregated/disks" % PROJECT, params={"filter": "labels.k8s-io-cluster-name = c"})
    assert sorted(d["name"] for d in disks) == ["d-us-test1-a", "d-us-test1-b"]


def test_iam_crm_and_dns_answers(cloud, gce):
    account = cloud.insert("iam", "projects/%s/serviceAccounts" % PROJECT,
                           {"accountId": "control-plane-minimal", "serviceAccount": {"displayName": "cp"}})
    assert account["email"] == "control-plane-minimal@%s.iam.gserviceaccount.com" % PROJECT
    with pytest.raises(GceError) as caught:
        cloud.insert("iam", "projects/%s/serviceAccounts" % PROJECT, {"accountId": "control-plane-minimal"})
    assert (caught.value.status, caught.value.reason) == (409, "alreadyExists")
    assert cloud.get("iam", "projects/%s/serviceAccounts/nobody@x.iam.gserviceaccount.com" % PROJECT) is None
    policy = cloud.call("crm", "POST", "projects/%s:getIamPolicy" % PROJECT)
    policy["bindings"].append({"role": "roles/compute.viewer", "members": ["serviceAccount:" + account["email"]]})
    cloud.call("crm", "POST", "projects/%s:setIamPolicy" % PROJECT, {"policy": policy})
    with pytest.raises(GceError) as stale:  # the etag read before is spent
        cloud.call("crm", "POST", "projects/%s:setIamPolicy" % PROJECT, {"policy": policy})
    assert stale.value.status == 409
    zone = cloud.insert("dns", "projects/%s/managedZones" % PROJECT, {"name": "example", "dnsName": "example.com."})
    assert zone["kind"] == "dns#managedZone"
    gce.operation_polls = 2
    change = cloud.call("dns", "POST", "projects/%s/managedZones/example/changes" % PROJECT, {
        "additions": [{"name": "api.minimal.example.com.", "type": "A", "ttl": 60, "rrdatas": ["203.0.113.9"]}]})
    assert change["status"] == "done"
    records = cloud.list("dns", "projects/%s/managedZones/example/rrsets" % PROJECT, key="rrsets")
    assert {(r["name"], r["type"]) for r in records} == {
        ("example.com.", "NS"), ("example.com.", "SOA"), ("api.minimal.example.com.", "A")}


def test_managed_instance_group_keeps_its_instances(cloud, gce):
    zone = "projects/%s/zones/us-test1-a" % PROJECT
    gce.seed(NETWORKS, {"name": "net"})
    cloud.insert("compute", "projects/%s/global/instanceTemplates" % PROJECT, {"name": "nodes-1", "properties": {
        "machineType": "e2-medium", "labels": {"k8s-io-cluster-name": "minimal-example-com"},
        "metadata": {"items": [{"key": "cluster-name", "value": "minimal.example.com"}]},
        "disks": [{"boot": True, "autoDelete": True, "initializeParams": {"diskSizeGb": 128}}],
        "networkInterfaces": [{"network": "global/networks/net", "accessConfigs": [{"type": "ONE_TO_ONE_NAT"}]}]}})
    cloud.insert("compute", zone + "/instanceGroupManagers", {
        "name": "a-nodes", "baseInstanceName": "nodes", "targetSize": 2, "instanceTemplate": "global/instanceTemplates/nodes-1"})
    managed = cloud.call("compute", "POST", zone + "/instanceGroupManagers/a-nodes/listManagedInstances")["managedInstances"]
    instances = [cloud.get("compute", m["instance"]) for m in managed]
    assert len(instances) == 2 and all(i["name"].startswith("nodes-") and len(i["name"]) == 10 for i in instances)
    assert all(i["labels"] == {"k8s-io-cluster-name": "minimal-example-com"} for i in instances)
    assert sorted(gce.names(zone + "/disks")) == sorted(i["name"] for i in instances)  # boot disks
    cloud.call("compute", "POST", zone + "/instanceGroupManagers/a-nodes/resize", params={"size": 1})
    assert len(gce.names(zone + "/instances")) == 1
    with pytest.raises(GceError) as caught:  # the group still uses its template
        cloud.delete("compute", "projects/%s/global/instanceTemplates/nodes-1" % PROJECT)
    assert caught.value.reason == "resourceInUseByAnotherResource"
    assert cloud.delete("compute", zone + "/instanceGroupManagers/a-nodes")
    assert gce.names(zone + "/instances") == [] and gce.names(zone + "/disks") == []
    assert cloud.delete("compute", "projects/%s/global/instanceTemplates/nodes-1" % PROJECT)


def test_labels_need_the_current_fingerprint(cloud, gce):
    path = "projects/%s/zones/us-test1-a/disks/d1" % PROJECT
    disk = gce.seed("projects/%s/zones/us-test1-a/disks" % PROJECT, {"name": "d1", "labels": {"a": "1"}})
    with pytest.raises(GceError) as caught:
        cloud.call("compute", "POST", path + "/setLabels", {"labels": {"a": "2"}, "labelFingerprint": "stale"})
    assert (caught.value.status, caught.value.reason) == (412, "conditionNotMet")
    cloud.call("compute", "POST", path + "/setLabels", {"labels": {"a": "2"}, "labelFingerprint": disk["labelFingerprint"]})
    assert cloud.get("compute", path)["labels"] == {"a": "2"}


@pytest.mark.parametrize("how", ["nothing", "a missing key file"])
def test_no_credentials_says_what_to_do(no_google_credentials, tmp_path, monkeypatch, how):
    if how == "a missing key file":
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(GceError) as caught:
        GceCloud("minimal.example.com", PROJECT, "us-test1").list("compute", NETWORKS)
    failure = str(GceCloud.failure(GceCloud.__new__(GceCloud), caught.value))
    assert caught.value.reason == "noCredentials"
    for text in (str(caught.value), failure):  # the module's message (str) and the engine's (failure) say it once
        assert text.count("set GOOGLE_APPLICATION_CREDENTIALS") == 1 and "gcloud auth application-default login" in text


def test_credentials_from_a_key_file_or_google_application_credentials(no_google_credentials, tmp_path, monkeypatch):
    key = service_account_file(tmp_path / "key.json")
    from_file = GceCloud("minimal.example.com", None, "us-test1", credentials_file=key)
    assert from_file.project == "key-project" and not from_file.anonymous
    assert type(from_file.session.credentials).__name__ == "Credentials"
    assert from_file.session.credentials.service_account_email == "kops@key-project.iam.gserviceaccount.com"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
    from_adc = GceCloud("minimal.example.com", None, "us-test1")
    assert from_adc.project == "key-project"
    assert from_adc.session.credentials.service_account_email == "kops@key-project.iam.gserviceaccount.com"
    assert from_adc.endpoints["compute"] == "https://compute.googleapis.com/compute/v1/"


def test_endpoint_override_uses_anonymous_credentials(gce):
    cloud = GceCloud("minimal.example.com", PROJECT, "us-test1")
    assert cloud.anonymous and type(cloud.session.credentials).__name__ == "AnonymousCredentials"
    assert cloud.endpoints == {"compute": gce.url + "/compute/v1/", "iam": gce.url + "/v1/",
                               "dns": gce.url + "/dns/v1/", "crm": gce.url + "/v1/"}
    assert cloud.ownership_tags() == {"k8s-io-cluster-name": "minimal-example-com"}


def test_module_utils_import_without_google_auth():
    """module_utils must import without optional libraries; using the client then names what to install."""
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('google', 'requests'):
            raise ImportError('blocked ' + name)
sys.meta_path.insert(0, Block())
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import gce
cloud = gce.GceCloud('c.example.com', 'p', 'us-test1', endpoints={'compute': 'http://127.0.0.1:9/compute/v1/'})
try:
    cloud.get('compute', 'projects/p/global/networks/n')
except gce.GceError as exc:
    print(exc.reason, exc)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ), timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("missingLibrary") and "pip install google-auth requests" in done.stdout


@pytest.mark.parametrize("api,path,body,status,reason", [
    ("compute", NETWORKS, {"name": "Bad_Name"}, 400, "invalid"),
    ("compute", "projects/%s/global/firewalls" % PROJECT, {"name": "fw", "network": "global/networks/missing"}, 404, "notFound"),
    ("compute", "projects/%s/zones/us-test1-a/disks" % PROJECT, {"name": "d", "labels": {"Cluster": "x"}}, 400, "invalid"),
    ("compute", "projects/%s/regions/nowhere1/subnetworks" % PROJECT, {"name": "s"}, 404, "notFound"),
    ("iam", "projects/%s/serviceAccounts" % PROJECT, {"accountId": "control-plane-a-rather-long-cluster-name"}, 400,
     "invalidArgument"),
])
def test_the_server_refuses_what_google_refuses(cloud, api, path, body, status, reason):
    with pytest.raises(GceError) as caught:
        cloud.insert(api, path, body)
    assert (caught.value.status, caught.value.reason) == (status, reason)


def test_the_server_rejects_a_filter_it_does_not_understand_and_a_non_empty_zone(cloud, gce):
    with pytest.raises(GceError) as caught:
        cloud.list("compute", NETWORKS, params={"filter": "labels.a:*"})
    assert caught.value.status == 400
    cloud.insert("dns", "projects/%s/managedZones" % PROJECT, {"name": "example", "dnsName": "example.com."})
    cloud.call("dns", "POST", "projects/%s/managedZones/example/changes" % PROJECT, {
        "additions": [{"name": "api.example.com.", "type": "A", "ttl": 60, "rrdatas": ["203.0.113.9"]}]})
    with pytest.raises(GceError) as caught:
        cloud.delete("dns", "projects/%s/managedZones/example" % PROJECT)
    assert (caught.value.status, caught.value.reason) == (400, "containerNotEmpty")


def test_an_html_page_is_said_by_its_title_not_its_body():
    """A proxy's or load balancer's page answering a Google API call: one line, the page's title and where from."""
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import gce as gce_cloud

    class Page(object):
        status_code = 502
        reason = "Bad Gateway"
        url = "https://compute.googleapis.com/compute/v1/projects/p/global/networks"
        headers = {"content-type": "text/html; charset=UTF-8"}
        text = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>" + "x" * 500 + "</body></html>"

        def json(self):
            raise ValueError("not JSON")

    error = gce_cloud._error_of(Page(), "GET", "projects/p/global/networks")
    assert str(error) == ('GET projects/p/global/networks: HTTP 502 with an HTML page ("502 Bad Gateway") from '
                          'https://compute.googleapis.com, not a Google API answer: the endpoint or a proxy before it '
                          'failed; try again, or check the endpoint')


def test_an_unreachable_endpoint_says_its_innermost_cause_once(monkeypatch):
    # A closed port on 127.0.0.1: requests nests urllib3's text (pool, URL, "Max retries exceeded", the socket's
    # error) in its own; the error says the call, the tries and only the socket's reason.
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(gce_cloud.ENDPOINT_ENV, "http://127.0.0.1:%d" % port)
    cloud = GceCloud("minimal.example.com", PROJECT, "us-test1")
    cloud.sleep = lambda _seconds: None
    with pytest.raises(gce_cloud.GceError) as caught:
        cloud.list("compute", NETWORKS)
    assert str(caught.value) == "GET %s: connectionError: Connection refused (after %d tries)" % (
        NETWORKS, len(gce_cloud.RETRY_DELAYS) + 1)
