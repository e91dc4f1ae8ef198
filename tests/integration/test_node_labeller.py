"""The node labeller (nodeup/node_labeller.py) against a real kube-apiserver (tests/realk8s/apiserver.py:
`--authorization-mode=Node,RBAC`, the NodeRestriction admission plugin), with its cloud lookups going to moto (EC2)
and tests/gce_server.py (Compute), its groups' labels read from nodeup configs the controller built
(nodeconfig/config.py) in a file:// state store, and its own credential (CN kubeops:node-labeller) allowed only by
the node-labeller addon's RBAC.

Nodes register as a kubelet would: with its own credential (system:node:<name>, O=system:nodes), only the
labels the NodeRestriction admission plugin lets a kubelet set, and a providerID.  What was written, and by whom,
is read from the API server's audit log.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
import urllib.error
import urllib.request

import boto3
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import gce as gce_cloud
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config, node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_labeller
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from tests.unit.nodeconfig.test_node_labels import _completed

REGION = "us-east-1"  # moto knows real regions only (its spot market)
CONTROL_PLANE_LABELS = {"kops.k8s.io/instancegroup": "master-us-test-1a", "kops.k8s.io/kops-controller-pki": "",
                        "node-role.kubernetes.io/control-plane": "",
                        "node.kubernetes.io/exclude-from-external-load-balancers": ""}
NODE_LABELS = {"kops.k8s.io/instancegroup": "nodes", "node-role.kubernetes.io/node": ""}


# ---------------------------------------------------------------- helpers
def _write_credentials(server, directory, user, groups):
    certificate, key = server.client_credentials(user, groups)
    paths = {}
    for name, data in (("ca", server.ca_pem), ("cert", certificate), ("key", key)):
        paths[name] = str(directory / ("%s-%s.pem" % (user.replace(":", "_"), name)))
        with open(paths[name], "wb") as handle:
            handle.write(data)
    return paths


def _nodes_client(server, directory, user, groups=()):
    paths = _write_credentials(server, directory, user, groups)
    return node_labeller.KubeNodes(server.url, paths["ca"], paths["cert"], paths["key"])


def _kubelet_request(server, directory, name, method, path, body=None, content_type="application/json"):
    """What the kubelet of node `name` sends with its own credential: (status, answer)."""
    paths = _write_credentials(server, directory, "system:node:%s" % name, ("system:nodes",))
    context = ssl.create_default_context(cafile=paths["ca"])
    context.load_cert_chain(paths["cert"], paths["key"])
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode() if body is not None else None,
                                     method=method,
                                     headers={"Content-Type": content_type, "User-Agent": "kubelet/v1.34"})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _register(server, directory, name, provider_id, labels=None):
    """A kubelet registering its Node: the labels a kubelet sets itself, no role labels."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict({
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "t3.medium", "topology.kubernetes.io/zone": "us-test-1a"},
        **(labels or {}))},
        "spec": {"providerID": provider_id}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    status, answer = _kubelet_request(server, directory, name, "POST", "/api/v1/nodes", node)
    assert status == 201, answer
    return answer


def _apply_rbac(server):
    for obj in node_labeller_addon.rbac_objects():
        server.create(obj["apiVersion"], obj["kind"], obj)


def _write_store(tmp_path, completed, groups):
    """The nodeup configs update cluster writes, in a file:// store; returns the config base."""
    base = tmp_path / "store" / completed["metadata"]["name"]
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    for group in groups.values():
        document = nodeup_config.build_config(completed, group, keysets, "file://%s" % base)
        path = base / nodeup_config.config_path(group)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(document))
    return "file://%s" % base


def _instance(ec2, cluster, group, spot=False):
    tags = [{"Key": "KubernetesCluster", "Value": cluster}]
    if group:
        tags.append({"Key": "kops.k8s.io/instancegroup", "Value": group})
    extra = {"InstanceMarketOptions": {"MarketType": "spot"}} if spot else {}
    instance = ec2.run_instances(ImageId="ami-00000001", MinCount=1, MaxCount=1, InstanceType="t3.medium",
                                 TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
                                 **extra)["Instances"][0]
    return instance["InstanceId"], "aws:///us-test-1a/%s" % instance["InstanceId"]


class _Lines(list):
    def __call__(self, line):
        self.append(line)


@pytest.fixture
def aws_cluster(aws, real_kube_api, tmp_path):
    completed, groups = _completed("minimal-aws")
    settings = node_labels.labeller_settings(completed, groups["master-us-test-1a"])
    paths = _write_credentials(real_kube_api, tmp_path, node_labeller.USER, ())
    settings.update(configBase=_write_store(tmp_path, completed, groups), apiServer=real_kube_api.url,
                    caCert=paths["ca"], clientCert=paths["cert"], clientKey=paths["key"], ec2Endpoint=aws.url,
                    region=REGION)
    _apply_rbac(real_kube_api)
    ec2 = boto3.client("ec2", region_name=REGION, endpoint_url=aws.url)
    return completed["metadata"]["name"], settings, ec2


def _labeller(settings, log):
    labeller = node_labeller.from_config(settings)
    labeller.log = log
    return labeller


def _labels(server, name):
    return server.get("v1", "Node", name)["metadata"].get("labels") or {}


def _patches(server, mark):
    """The PATCH requests (anyone's but the test setup's) since the audit log's mark."""
    return [r for r in server.mutations_since(mark) if r[0] == "patch"]


# ---------------------------------------------------------------- NodeRestriction and RBAC
def test_a_nodes_own_credential_is_refused_role_labels_and_the_labellers_is_not(real_kube_api, tmp_path):
    _apply_rbac(real_kube_api)
    status, answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "POST", "/api/v1/nodes", {
        "metadata": {"name": "i-0001", "labels": {"node-role.kubernetes.io/control-plane": ""}}})
    assert status == 403
    assert answer["message"] == ('nodes "i-0001" is forbidden: node "i-0001" is not allowed to set the following '
                                 'labels: node-role.kubernetes.io/control-plane')
    _register(real_kube_api, tmp_path, "i-0001", "aws:///us-test-1a/i-0001")
    _register(real_kube_api, tmp_path, "i-0002", "aws:///us-test-1a/i-0002")
    patch = "application/strategic-merge-patch+json"
    for labels, expected in (
            ({"node-role.kubernetes.io/node": ""}, "node-role.kubernetes.io/node"),
            # kops.k8s.io is under k8s.io: a kubelet may not set kops' own labels either
            ({"kops.k8s.io/instancegroup": "nodes", "k8s.io/x": "1"}, "k8s.io/x, kops.k8s.io/instancegroup"),
            ({"node-restriction.kubernetes.io/pool": "a"}, "node-restriction.kubernetes.io/pool"),
            ({"kubernetes.io/hostname": None}, None)):  # removing a kubelet label is the kubelet's right
        status, answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "PATCH", "/api/v1/nodes/i-0001",
                                          {"metadata": {"labels": labels}}, patch)
        if expected is None:
            assert status == 200, answer
        else:
            assert status == 403, answer
            assert answer["message"].endswith("is not allowed to modify labels: %s" % expected), answer
    # what a kubelet may set: its own namespaces and the well-known list, and any label outside kubernetes.io / k8s.io
    status, answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "PATCH", "/api/v1/nodes/i-0001", {"metadata": {
        "labels": {"kubelet.kubernetes.io/x": "1", "example.node.kubernetes.io/y": "2", "team": "a",
                   "kubernetes.io/hostname": "i-0001", "topology.kubernetes.io/region": "us-test-1"}}}, patch)
    assert status == 200, answer
    status, answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "PATCH", "/api/v1/nodes/i-0002",
                                      {"metadata": {"labels": {"team": "a"}}}, patch)
    assert status == 403 and 'node "i-0001" is not allowed to modify node "i-0002"' in answer["message"]
    status, answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "PATCH", "/api/v1/nodes/i-0001",
                                      {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}, patch)
    assert status == 403 and "is not allowed to modify taints" in answer["message"]
    status, _answer = _kubelet_request(real_kube_api, tmp_path, "i-0001", "DELETE", "/api/v1/nodes/i-0002")
    assert status == 403
    # the labeller's credential (RBAC from the node-labeller addon) sets what the node may not
    labeller = _nodes_client(real_kube_api, tmp_path, node_labeller.USER)
    labeller.patch_labels("i-0001", {"node-role.kubernetes.io/node": "", "node-restriction.kubernetes.io/pool": "a"})
    assert _labels(real_kube_api, "i-0001")["node-role.kubernetes.io/node"] == ""
    with pytest.raises(node_labeller.KubeError, match="HTTP 403 .*cannot delete resource"):
        labeller._call("DELETE", "/api/v1/nodes/i-0002")  # get/list/watch/patch only
    with pytest.raises(node_labeller.KubeError, match="HTTP 403 .*cannot list resource \"pods\""):
        labeller._call("GET", "/api/v1/pods")


def test_without_the_addons_rbac_the_labeller_is_refused(real_kube_api, tmp_path):
    with pytest.raises(node_labeller.KubeError, match='HTTP 403 nodes is forbidden: User "kubeops:node-labeller" '
                                                      'cannot list resource "nodes"'):
        _nodes_client(real_kube_api, tmp_path, node_labeller.USER).list()


# ---------------------------------------------------------------- AWS
def test_registered_nodes_are_labelled_from_their_instance_groups(aws_cluster, real_kube_api, tmp_path):
    cluster, settings, ec2 = aws_cluster
    control, control_id = _instance(ec2, cluster, "master-us-test-1a")
    worker, worker_id = _instance(ec2, cluster, "nodes")
    spot, spot_id = _instance(ec2, cluster, "nodes", spot=True)
    log = _Lines()
    labeller = _labeller(dict(settings, intervalSeconds=0.2), log)
    stop = threading.Event()
    thread = threading.Thread(target=labeller.run, args=(0.2, stop), daemon=True)
    thread.start()
    try:
        registered = {}
        for name, provider_id in ((control, control_id), (worker, worker_id), (spot, spot_id)):
            registered[name] = time.monotonic()
            _register(real_kube_api, tmp_path, name, provider_id)
        waited = {}
        deadline = time.monotonic() + 15
        while len(waited) < 3 and time.monotonic() < deadline:
            for name in registered:
                if name not in waited and "kops.k8s.io/instancegroup" in _labels(real_kube_api, name):
                    waited[name] = time.monotonic() - registered[name]
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(5)
    assert set(waited) == {control, worker, spot}, log
    assert {k: v for k, v in _labels(real_kube_api, control).items()
            if k in CONTROL_PLANE_LABELS} == CONTROL_PLANE_LABELS
    assert _labels(real_kube_api, control)["kubernetes.io/hostname"] == control  # the kubelet's own labels stay
    assert {k: v for k, v in _labels(real_kube_api, worker).items() if "kops" in k or "role" in k} == NODE_LABELS
    assert _labels(real_kube_api, spot)["node-role.kubernetes.io/spot-worker"] == "true"  # kops' lifecycle label
    # what set them: a PATCH by the labeller's field manager, and the log says so
    managers = [f["manager"] for f in real_kube_api.get("v1", "Node", worker)["metadata"]["managedFields"]]
    assert node_labeller.FIELD_MANAGER in managers
    assert any(line.startswith("labelled node %s (instance group nodes)" % worker) for line in log), log
    print("\nregistration -> labelled (labeller polling every 0.2 s): %s" % ", ".join(
        "%s %.2f s" % (name, waited[name]) for name in sorted(waited)))
    assert max(waited.values()) < 5


def test_a_hand_changed_label_is_put_back_and_others_labels_stay(aws_cluster, real_kube_api, tmp_path):
    cluster, settings, ec2 = aws_cluster
    mark = real_kube_api.audit_mark()
    worker, worker_id = _instance(ec2, cluster, "nodes")
    _register(real_kube_api, tmp_path, worker, worker_id, labels={"team": "payments"})
    log = _Lines()
    labeller = _labeller(settings, log)
    labeller.pass_once()
    admin = _nodes_client(real_kube_api, tmp_path, "admin", ("system:masters",))
    admin.patch_labels(worker, {"kops.k8s.io/instancegroup": "other", "node-role.kubernetes.io/node": None,
                                "node-role.kubernetes.io/control-plane": "", "example.com/owner": "ops"})
    results = labeller.pass_once()
    assert results[worker] == ("nodes", {"kops.k8s.io/instancegroup": "nodes", "node-role.kubernetes.io/node": "",
                                         "node-role.kubernetes.io/control-plane": None})
    labels = _labels(real_kube_api, worker)
    assert labels["kops.k8s.io/instancegroup"] == "nodes" and labels["node-role.kubernetes.io/node"] == ""
    assert "node-role.kubernetes.io/control-plane" not in labels  # a role label kops prunes
    assert labels["team"] == "payments" and labels["example.com/owner"] == "ops"  # others' labels stay
    assert labeller.pass_once()[worker] == ("nodes", {})  # nothing more to do: no write
    patches = _patches(real_kube_api, mark)
    # the labeller's two and the admin's; the third pass wrote nothing
    assert [user for _verb, _uri, _code, user in patches] == [node_labeller.USER, "admin", node_labeller.USER]


def test_a_node_whose_group_cannot_be_found_is_reported_not_guessed(aws_cluster, real_kube_api, tmp_path):
    cluster, settings, ec2 = aws_cluster
    mark = real_kube_api.audit_mark()
    untagged, untagged_id = _instance(ec2, cluster, None)
    foreign, foreign_id = _instance(ec2, "other.example.com", "nodes")
    unknown, unknown_id = _instance(ec2, cluster, "gpu-nodes")  # a group without a nodeup config
    _register(real_kube_api, tmp_path, untagged, untagged_id)
    _register(real_kube_api, tmp_path, foreign, foreign_id)
    _register(real_kube_api, tmp_path, unknown, unknown_id)
    _register(real_kube_api, tmp_path, "i-0badc0de", "")
    _register(real_kube_api, tmp_path, "i-0000dead", "aws:///us-test-1a/i-0000dead")
    log = _Lines()
    labeller = _labeller(settings, log)
    results = labeller.pass_once()
    assert all(isinstance(r, node_labeller.NotIdentified) for r in results.values()), results
    text = "\n".join(log)
    assert "has no valid kops.k8s.io/instancegroup tag" in text and "is not in cluster %s" % cluster in text
    assert "instance group gpu-nodes has no nodeup config in the state store" in text
    assert "providerID is not set for node i-0badc0de" in text and "i-0000dead" in text
    for name in (untagged, foreign, unknown, "i-0badc0de"):
        assert not any(k.startswith(("kops.k8s.io/", "node-role.")) for k in _labels(real_kube_api, name)), name
    assert _patches(real_kube_api, mark) == []
    labeller.pass_once()
    assert len(log) == 5  # each node's reason is logged once, not every pass


def test_a_cloud_failure_on_one_node_leaves_the_others_labelled(aws_cluster, real_kube_api, tmp_path):
    cluster, settings, ec2 = aws_cluster
    worker, worker_id = _instance(ec2, cluster, "nodes")
    other, other_id = _instance(ec2, cluster, "nodes")
    _register(real_kube_api, tmp_path, worker, worker_id)
    _register(real_kube_api, tmp_path, other, other_id)
    log = _Lines()
    labeller = _labeller(settings, log)
    identify = labeller.identifier.identify

    def flaky(node):  # EC2 unreachable for one instance, as botocore raises it
        if node["metadata"]["name"] == other:
            raise ConnectionError("Could not connect to the endpoint URL")
        return identify(node)
    labeller.identifier.identify = flaky
    results = labeller.pass_once()
    assert results[worker] == ("nodes", dict(NODE_LABELS))
    assert "looking it up failed: ConnectionError" in str(results[other])
    assert any(line.startswith("node %s not labelled: looking it up failed" % other) for line in log), log
    labeller.identifier.identify = identify  # EC2 is back: the next pass labels it
    assert labeller.pass_once()[other] == ("nodes", dict(NODE_LABELS))


def test_the_unit_started_before_its_rbac_labels_once_the_channel_applied_it(aws, real_kube_api, tmp_path):
    """On a new control plane the unit starts before protokube's channel applies the node-labeller addon."""
    completed, groups = _completed("minimal-aws")
    settings = node_labels.labeller_settings(completed, groups["master-us-test-1a"])
    paths = _write_credentials(real_kube_api, tmp_path, node_labeller.USER, ())
    settings.update(configBase=_write_store(tmp_path, completed, groups), apiServer=real_kube_api.url,
                    caCert=paths["ca"], clientCert=paths["cert"], clientKey=paths["key"], ec2Endpoint=aws.url,
                    region=REGION)
    ec2 = boto3.client("ec2", region_name=REGION, endpoint_url=aws.url)
    control, control_id = _instance(ec2, completed["metadata"]["name"], "master-us-test-1a")
    _register(real_kube_api, tmp_path, control, control_id)
    log = _Lines()
    labeller = _labeller(settings, log)
    stop = threading.Event()
    thread = threading.Thread(target=labeller.run, args=(0.1, stop), daemon=True)
    thread.start()
    try:
        time.sleep(0.5)
        assert "node-role.kubernetes.io/control-plane" not in _labels(real_kube_api, control)
        _apply_rbac(real_kube_api)
        deadline = time.monotonic() + 10
        while ("node-role.kubernetes.io/control-plane" not in _labels(real_kube_api, control)
               and time.monotonic() < deadline):
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(5)
    assert _labels(real_kube_api, control)["node-role.kubernetes.io/control-plane"] == ""
    refused = [line for line in log if line.startswith("cannot list nodes")]
    assert len(refused) == 1 and "HTTP 403" in refused[0], log  # said once, not every pass


def test_wait_group_is_protokubes_early_step(aws_cluster, real_kube_api, tmp_path, capsys):
    cluster, settings, ec2 = aws_cluster
    control, control_id = _instance(ec2, cluster, "master-us-test-1a")
    path = tmp_path / "labeller.json"
    path.write_text(json.dumps(settings))
    assert node_labeller.main([str(path), "wait-group", "master-us-test-1a", "0.1"]) == 1  # not registered yet
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(dict(settings, clientCert=str(tmp_path / "none.crt"))))
    assert node_labeller.main([str(missing)]) == 1  # one line naming the file, no traceback (the unit restarts)
    said = capsys.readouterr().err
    assert "cannot start from %s: FileNotFoundError" % missing in said and "Traceback" not in said
    assert node_labeller.main([str(path), "wait-group"]) == 2
    _register(real_kube_api, tmp_path, control, control_id)
    assert node_labeller.main([str(path), "wait-group", "master-us-test-1a", "5"]) == 0
    assert _labels(real_kube_api, control)["node-role.kubernetes.io/control-plane"] == ""


# ---------------------------------------------------------------- GCE
def test_gce_nodes_are_identified_by_their_managed_instance_group(gce, real_kube_api, tmp_path):
    completed, groups = _completed("minimal_gce")
    project = completed["spec"]["project"]
    zone = "us-test1-a"
    cloud = gce_cloud.GceCloud(completed["metadata"]["name"], project, "us-test1")
    for group in ("nodes", "master-us-test1-a"):
        cloud.insert("compute", "projects/%s/global/instanceTemplates" % project, {
            "name": "%s-template" % group, "properties": {"machineType": "e2-medium", "metadata": {"items": [
                {"key": node_labeller.GCE_INSTANCE_GROUP_METADATA, "value": group}]}}})
        cloud.insert("compute", "projects/%s/zones/%s/instanceGroupManagers" % (project, zone), {
            "name": "a-%s" % group, "baseInstanceName": group, "targetSize": 1, "instanceTemplate": cloud.url(
                "compute", "projects/%s/global/instanceTemplates/%s-template" % (project, group))})
    instances = cloud.list("compute", "projects/%s/zones/%s/instances" % (project, zone))
    assert len(instances) == 2
    settings = node_labels.labeller_settings(completed, groups["master-us-test1-a"])
    assert settings["cloud"] == "gce" and settings["project"] == project
    paths = _write_credentials(real_kube_api, tmp_path, node_labeller.USER, ())
    settings.update(configBase=_write_store(tmp_path, completed, groups), apiServer=real_kube_api.url,
                    caCert=paths["ca"], clientCert=paths["cert"], clientKey=paths["key"], gceEndpoint=gce.url)
    _apply_rbac(real_kube_api)
    for instance in instances:
        _register(real_kube_api, tmp_path, instance["name"], "gce://%s/%s/%s" % (project, zone, instance["name"]))
    # an instance that claims a group in its own metadata but no MIG manages: not labelled
    cloud.insert("compute", "projects/%s/zones/%s/instances" % (project, zone), {
        "name": "rogue", "machineType": "zones/%s/machineTypes/e2-medium" % zone, "metadata": {"items": [
            {"key": node_labeller.GCE_INSTANCE_GROUP_METADATA, "value": "master-us-test1-a"},
            {"key": "created-by", "value": "projects/%s/zones/%s/instanceGroupManagers/a-nodes" % (project, zone)}]}})
    gce.store["compute:projects/%s/zones/%s/instances" % (project, zone)]["rogue"]["status"] = "RUNNING"  # it booted
    _register(real_kube_api, tmp_path, "rogue", "gce://%s/%s/rogue" % (project, zone))
    log = _Lines()
    results = _labeller(settings, log).pass_once()
    by_group = {r[0]: name for name, r in results.items() if isinstance(r, tuple)}
    assert set(by_group) == {"nodes", "master-us-test1-a"}, log
    labels = _labels(real_kube_api, by_group["master-us-test1-a"])
    assert {k: labels.get(k) for k in CONTROL_PLANE_LABELS} == dict(CONTROL_PLANE_LABELS, **{
        "kops.k8s.io/instancegroup": "master-us-test1-a"})
    assert _labels(real_kube_api, by_group["nodes"])["node-role.kubernetes.io/node"] == ""
    assert isinstance(results["rogue"], node_labeller.NotIdentified)
    assert "not managed by a-nodes" in str(results["rogue"])
    assert "node-role.kubernetes.io/control-plane" not in _labels(real_kube_api, "rogue")


def test_the_control_plane_config_carries_the_labellers_settings_and_credential():
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import credentials
    completed, groups = _completed("minimal-aws")
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    control = nodeup_config.build_config(completed, groups["master-us-test-1a"], keysets, "s3://b/c")
    worker = nodeup_config.build_config(completed, groups["nodes"], keysets, "s3://b/c")
    assert "nodeLabeller" not in worker["kubeops"]
    settings = control["kubeops"]["nodeLabeller"]
    assert settings["apiServer"] == "https://127.0.0.1:443" and settings["cloud"] == "aws"
    requests = [r for r in credentials.control_plane_requests(control, "i-1") if r["common_name"] == node_labeller.USER]
    assert requests == [{"signer": "kubernetes-ca", "common_name": "kubeops:node-labeller", "usages": ["client"],
                         "organizations": [], "dns_names": [], "ip_addresses": [], "cert_path": settings["clientCert"],
                         "key_path": settings["clientKey"], "ca_path": settings["caCert"]}]
