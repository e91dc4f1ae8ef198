"""validate_cluster.yml and export_kubeconfig.yml as a user runs them: a cluster built on moto (autoscaling
groups with instances), its Nodes and Pods on a real kube-apiserver (tests/realk8s/apiserver.py) serving with, and
trusting only, the cluster's CA."""

from __future__ import annotations

import os
import stat
import subprocess
import time

import boto3
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from tests.integration.conftest import REPO, task_results
from tests.integration.test_aws_update import ADMIN_KEY, _service, _update

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")

CLUSTER = "k8s.example.com"
PLAYBOOKS = REPO / "playbooks"
ROLE_LABELS = {"ControlPlane": "node-role.kubernetes.io/control-plane", "Node": "node-role.kubernetes.io/node"}


@pytest.fixture
def cluster_store(aws, tmp_path):
    """A cluster on moto: (store URL, ClusterService)."""
    store = "file://%s" % (tmp_path / "state")
    service = _service(store)
    _update(service, ssh_public_key=ADMIN_KEY)
    return store, service


@pytest.fixture
def cluster(cluster_store, start_real_kube_api):
    """The cluster on moto, and a real kube-apiserver serving with (and trusting) the cluster's kubernetes-ca."""
    store, service = cluster_store
    keyset = keystore.load(service.cluster_store(CLUSTER), "kubernetes-ca")
    return store, start_real_kube_api(ca=keystore.primary(keyset))


def _instances():
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    ec2 = boto3.client("ec2", region_name="us-east-1")
    found = []
    for group in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]:
        role = "ControlPlane" if "masters" in group["AutoScalingGroupName"] else "Node"
        for member in group["Instances"]:
            detail = ec2.describe_instances(InstanceIds=[member["InstanceId"]])["Reservations"][0]["Instances"][0]
            found.append((role, member["InstanceId"], detail["PrivateDnsName"], member["AvailabilityZone"]))
    return found


def _register(server, instances):
    """Each instance as a Ready Node under its private DNS name and provider ID; control-plane pods on the CP."""
    for role, instance_id, dns_name, zone in instances:
        server.create("v1", "Node", {
            "metadata": {"name": dns_name, "labels": {ROLE_LABELS[role]: "", "topology.kubernetes.io/zone": zone}},
            "spec": {"providerID": "aws:///%s/%s" % (zone, instance_id)},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        if role == "ControlPlane":
            for app in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
                _critical_pod(server, "%s-%s" % (app, dns_name), dns_name, app)


def _critical_pod(server, name, node, app, phase="Running", ready=True):
    """A pod bound to node, its status as its kubelet would report it (through the status subresource)."""
    server.create("v1", "Pod", {"metadata": {"name": name, "labels": {"k8s-app": app}}, "spec": {
        "nodeName": node, "priorityClassName": "system-cluster-critical",
        "containers": [{"name": app, "image": "registry.k8s.io/%s:v1.34.2" % app}]}}, namespace="kube-system")
    server.set_status("v1", "Pod", name, {"phase": phase, "containerStatuses": [
        {"name": app, "ready": ready, "restartCount": 0, "image": "x", "imageID": "x"}]}, namespace="kube-system")


def test_validate_passes_then_reports_kops_failures(cluster, playbook, tmp_path):
    store, server = cluster
    instances = _instances()
    assert len(instances) == 2  # one control-plane and one node instance launched by moto's autoscaling
    _register(server, instances)
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % server.url)

    mark = server.audit_mark()
    started = time.monotonic()
    code, run = playbook(PLAYBOOKS / "validate_cluster.yml", *args, "-e", "wait=10", "-e", "count=2",
                         "-e", "interval=1")
    validate_seconds = time.monotonic() - started
    assert code == 0, task_results(run, "Validate cluster %s" % CLUSTER)
    result = task_results(run, "Validate cluster %s" % CLUSTER)
    assert result["ready"] is True and result["failures"] == [] and result["attempts"] == 2
    assert sorted(n["role"] for n in result["nodes"]) == ["control-plane", "node"]
    assert result["lines"][0] == "Validating cluster %s" % CLUSTER
    assert result["lines"][-1] == "Your cluster %s is ready" % CLUSTER
    assert any(line.split()[:3] == ["control-plane-us-east-1a", "ControlPlane", "t3.medium"]
               for line in result["lines"]), result["lines"]
    # Validation only reads (the audit log: the module's credential listed nodes and pods, and wrote nothing).
    requests = server.requests_since(mark)
    assert {(verb, uri.split("?")[0], user) for verb, uri, _code, user in requests} >= {
        ("list", "/api/v1/nodes", "admin"), ("list", "/api/v1/pods", "admin")}, requests
    assert server.mutations_since(mark) == []
    print("server start %.2fs, validate run (2 passes, 1 s apart) %.1fs" % (server.start_seconds, validate_seconds))

    control_plane = next(i for i in instances if i[0] == "ControlPlane")
    worker = next(i for i in instances if i[0] == "Node")
    server.set_status("v1", "Node", worker[2], {"conditions": [{"type": "Ready", "status": "False"}]})
    server.delete("v1", "Pod", "kube-scheduler-%s" % control_plane[2], namespace="kube-system", grace_seconds=0)
    _critical_pod(server, "coredns-1", worker[2], "kube-dns", phase="Pending")
    _critical_pod(server, "cilium-1", worker[2], "cilium", ready=False)
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    autoscaling.set_desired_capacity(AutoScalingGroupName="nodes-us-east-1a.%s" % CLUSTER, DesiredCapacity=2)
    autoscaling.set_desired_capacity(AutoScalingGroupName="control-plane-us-east-1a.masters.%s" % CLUSTER,
                                     DesiredCapacity=2)  # moto launches one; we stop it before it "joins"
    code, run = playbook(PLAYBOOKS / "validate_cluster.yml", *args)
    assert code != 0
    result = task_results(run, "Validate cluster %s" % CLUSTER)
    messages = {f["message"] for f in result["failures"]}
    joined = {i[1] for i in instances}
    new = [i for i in _instances() if i[1] not in joined]
    assert len(new) == 2
    assert {'machine "%s" has not yet joined cluster' % i[1] for i in new} <= messages
    assert 'node "%s" of role "node" is not ready' % worker[2] in messages
    assert 'control-plane node "%s" is missing kube-scheduler pod' % control_plane[2] in messages
    assert 'system-cluster-critical pod "coredns-1" is pending' in messages
    assert 'system-cluster-critical pod "cilium-1" is not ready (cilium)' in messages
    assert "VALIDATION ERRORS" in result["lines"] and result["lines"][-1] == "Validation Failed"
    assert task_results(run, "Fail when the cluster is not ready")["failed"] is True

    # A tolerated unready worker (kops' --max-unready-nodes) is not a failure by itself.
    code, run = playbook(PLAYBOOKS / "validate_cluster.yml", *args, "-e", "max_unready_nodes=1")
    messages = {f["message"] for f in task_results(run, "Validate cluster %s" % CLUSTER)["failures"]}
    assert 'node "%s" of role "node" is not ready' % worker[2] not in messages


def test_enough_nodes_is_checked_against_the_groups_desired_size(cluster, playbook, monkeypatch):
    store, server = cluster
    instances = _instances()
    _register(server, instances)
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    worker = next(i for i in instances if i[0] == "Node")
    # The group's only instance is on its way out: the group has 0 of its 1 wanted nodes.
    autoscaling.detach_instances(InstanceIds=[worker[1]], AutoScalingGroupName="nodes-us-east-1a.%s" % CLUSTER,
                                 ShouldDecrementDesiredCapacity=False)
    autoscaling.update_auto_scaling_group(AutoScalingGroupName="nodes-us-east-1a.%s" % CLUSTER, MaxSize=1,
                                          DesiredCapacity=1)
    groups = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["nodes-us-east-1a.%s" % CLUSTER])
    members = [i["InstanceId"] for i in groups["AutoScalingGroups"][0]["Instances"]]
    if members:  # moto replaced it at once: stop the replacement from counting by stopping its launch
        autoscaling.set_desired_capacity(AutoScalingGroupName="nodes-us-east-1a.%s" % CLUSTER, DesiredCapacity=1)
    code, run = playbook(PLAYBOOKS / "validate_cluster.yml", "-e", "state_store=%s" % store,
                         "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % server.url)
    result = task_results(run, "Validate cluster %s" % CLUSTER)
    if not members:
        assert 'InstanceGroup "nodes-us-east-1a" did not have enough nodes 0 vs 1' in {
            f["message"] for f in result["failures"]}
    else:
        assert {'machine "%s" has not yet joined cluster' % m for m in members} <= {
            f["message"] for f in result["failures"]}
    assert code != 0


def test_export_kubeconfig_merges_then_is_stable_and_works_with_real_clients(cluster, playbook, tmp_path, kubectl):
    store, server = cluster
    _register(server, _instances())
    work = tmp_path / "work"
    (work / "kube").mkdir(parents=True)
    config = work / "kube" / "config"
    other = {"apiVersion": "v1", "kind": "Config", "current-context": "other",
             "clusters": [{"name": "other", "cluster": {"server": "https://other.example.com"}}],
             "users": [{"name": "other", "user": {"token": "abc"}}],
             "contexts": [{"name": "other", "context": {"cluster": "other", "user": "other"}}]}
    config.write_text(yaml.safe_dump(other))
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % server.url,
            "-e", "path=kube/config", "-e", "lifetime=2h")

    code, run = playbook(PLAYBOOKS / "export_kubeconfig.yml", *args, "--check", cwd=work)
    assert code == 0, run
    assert task_results(run, "Export the admin kubeconfig of %s" % CLUSTER)["changed"] is True
    assert yaml.safe_load(config.read_text()) == other

    code, run = playbook(PLAYBOOKS / "export_kubeconfig.yml", *args, cwd=work)
    assert code == 0, run
    result = task_results(run, "Export the admin kubeconfig of %s" % CLUSTER)
    assert result["changed"] is True and result["path"] == str(config) and result["server"] == server.url
    assert "client-key-data" not in str(run) and "PRIVATE KEY" not in str(run)
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o600
    written = yaml.safe_load(config.read_text())
    assert written["current-context"] == CLUSTER
    assert {c["name"] for c in written["contexts"]} == {"other", CLUSTER}
    assert next(u for u in written["users"] if u["name"] == "other") == other["users"][0]

    code, again = playbook(PLAYBOOKS / "export_kubeconfig.yml", *args, cwd=work)
    assert code == 0 and task_results(again, "Export the admin kubeconfig of %s" % CLUSTER)["changed"] is False
    assert yaml.safe_load(config.read_text()) == written

    # The certificate is the store CA's, for a system:masters user: the API (trusting only that CA) accepts it.
    api = kubernetes.config.new_client_from_config(config_file=str(config))
    names = [n.metadata.name for n in kubernetes.client.CoreV1Api(api).list_node().items]
    assert len(names) == 2
    listed = subprocess.run([kubectl, "--kubeconfig", str(config), "get", "nodes", "-o", "name"], capture_output=True,
                            text=True, timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == sorted("node/" + n for n in names)


def test_export_kubeconfig_finds_the_api_load_balancer_by_tags(cluster_store, playbook, tmp_path):
    store, _service = cluster_store
    code, run = playbook(PLAYBOOKS / "export_kubeconfig.yml", "-e", "state_store=%s" % store,
                         "-e", "cluster_name=%s" % CLUSTER, "-e", "path=%s" % (tmp_path / "lb-config"))
    assert code == 0, run
    balancers = boto3.client("elbv2", region_name="us-east-1").describe_load_balancers()["LoadBalancers"]
    api = next(b for b in balancers if b["LoadBalancerName"].startswith("api-"))
    assert task_results(run, "Export the admin kubeconfig of %s" % CLUSTER)["server"] == "https://" + api["DNSName"]
