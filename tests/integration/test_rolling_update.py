"""rolling_update on moto's server: real autoscaling groups and instances, a launch template change, kops' table,
order and surge; the Kubernetes side (cordon, drain by eviction with PodDisruptionBudgets, validation) on a real
kube-apiserver and kube-controller-manager (tests/realk8s/apiserver.py) trusting the cluster's CA.

tests/moto_server.py makes moto launch from, tag and report the group's version of the template as AWS does
(issue 22 item 8).  Neither moto nor the API server has kubelets, a scheduler or a cloud controller: a thread plays
them (tests/integration/rolling_fleet.py): a Node for each running instance of the cluster, its pods run and
removed once evicted, Pending pods bound, the Node of a terminated instance removed.
"""

from __future__ import annotations

import base64
import collections
import json
import threading
import time
import urllib.parse
import urllib.request

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import planner
from tests.integration import rolling_fleet
from tests.integration.conftest import REPO, assert_kops_table, task_results
from tests.integration.test_aws_update import ADMIN_KEY, READ_ONLY, _service, _update

CLUSTER = "k8s.example.com"
NODES = "nodes-us-east-1a"
CONTROL_PLANE = "control-plane-us-east-1a"
NODES_ASG = "%s.%s" % (NODES, CLUSTER)
CP_ASG = "%s.masters.%s" % (CONTROL_PLANE, CLUSTER)
PLAYBOOK = REPO / "playbooks" / "rolling_update.yml"
TASK = "Rolling update of %s" % CLUSTER
ADMIN = "admin"  # the user of the certificate the roll mints from the cluster's CA (kube/credentials.py)
PAUSE = rolling_fleet.PAUSE


def _clients():
    return boto3.client("ec2", region_name="us-east-1"), boto3.client("autoscaling", region_name="us-east-1")


def _make_cluster(store, node_count=3):
    """A cluster whose node group has node_count instances, built on moto; then its machine type changes and
    the update makes a new launch template version of both groups."""
    service = _service(store)
    cluster, igs = service.read(CLUSTER)
    nodes = next(g for g in igs if g["metadata"]["name"] == NODES)
    nodes["spec"]["minSize"] = nodes["spec"]["maxSize"] = node_count
    service.execute(service.plan_replace([cluster] + igs))
    _update(service, ssh_public_key=ADMIN_KEY)
    return service


def _change_machine_type(service):
    cluster, igs = service.read(CLUSTER)
    for group in igs:
        group["spec"]["machineType"] = "t3.large"
    service.execute(service.plan_replace([cluster] + igs))
    _counts, plan, calls = _update(service)
    assert calls["CreateLaunchTemplateVersion"] == 2
    ec2, _autoscaling = _clients()
    for template in ec2.describe_launch_templates()["LaunchTemplates"]:
        # The groups launch from $Latest, the new version (made by CreateLaunchTemplateVersion, with UserData).
        data = ec2.describe_launch_template_versions(LaunchTemplateId=template["LaunchTemplateId"], Versions=[
            "$Latest"])["LaunchTemplateVersions"][0]["LaunchTemplateData"]
        assert data["InstanceType"] == "t3.large" and data["UserData"]


def _members(group_name):
    _ec2, autoscaling = _clients()
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[group_name])["AutoScalingGroups"][0]
    return [m["InstanceId"] for m in group["Instances"] if m["LifecycleState"] == "InService"]


@pytest.fixture
def moto_requests(aws):
    """The AWS requests the collection makes (user agent kubeops.kops), as (service action, params), through moto's
    recorder: it sees the requests of an ansible-playbook subprocess too.  The recorder writes to the server's own
    file (tests/servers.py MotoServer.recording), so parallel test workers do not see each other's requests."""
    def call(path):
        request = urllib.request.Request(aws.url + "/moto-api/recorder/" + path, method="POST" if "download" not in path
                                         else "GET")
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback only
            return response.read().decode()

    def read():
        found = []
        for line in call("download-recording").splitlines():
            entry = json.loads(line)
            agent = {k.lower(): v for k, v in entry["headers"].items()}.get("user-agent", "")
            if "kubeops.kops" not in agent:
                continue
            body = entry.get("body") or ""
            if entry.get("body_encoded"):
                body = base64.b64decode(body).decode("utf-8", "replace")
            params = dict(urllib.parse.parse_qsl(body))
            params.update(urllib.parse.parse_qsl(urllib.parse.urlsplit(entry["url"]).query))
            found.append((params.get("Action", "%s %s" % (entry["method"], entry["url"])), params))
        return found

    call("reset-recording")
    call("start-recording")
    read.reset = lambda: call("reset-recording")
    yield read
    call("stop-recording")
    call("reset-recording")


def _mutating(requests):
    return [(action, params) for action, params in requests if not action.startswith(READ_ONLY)]


def test_cloud_only_roll_replaces_every_instance_in_kops_order(aws, tmp_path, playbook, moto_requests):
    store = "file://%s" % (tmp_path / "state")
    service = _make_cluster(store)
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "cloud_only=true",
            "-e", "interval=0", "-e", "progress_file=%s" % (tmp_path / "roll.log"))
    old_nodes, old_cp = set(_members(NODES_ASG)), set(_members(CP_ASG))
    assert len(old_nodes) == 3 and len(old_cp) == 1

    moto_requests.reset()
    code, run = playbook(PLAYBOOK, *args)
    assert code == 0, (task_results(run, TASK)["msg"], task_results(run, TASK).get("log"))
    result = task_results(run, TASK)
    assert result["changed"] is False
    assert result["lines"][-1] == "No rolling-update required."
    assert result["lines"][0].split() == ["NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX"]
    assert [line.split() for line in result["lines"][1:3]] == [
        [CONTROL_PLANE, "Ready", "0", "1", "1", "1", "1"], [NODES, "Ready", "0", "3", "3", "3", "3"]]
    assert _mutating(moto_requests()) == []

    _change_machine_type(service)
    moto_requests.reset()
    code, run = playbook(PLAYBOOK, *args, "--check")
    assert code == 0, (task_results(run, TASK)["msg"], task_results(run, TASK).get("log"))
    result = task_results(run, TASK)
    assert [line.split()[:3] for line in result["lines"][1:3]] == [
        [CONTROL_PLANE, "NeedsUpdate", "1"], [NODES, "NeedsUpdate", "3"]]
    # As printed: kops' table, its columns aligned on kops' tab stops, then the plan after a blank line.
    printed = task_results(run, "Print the table and what was done")["msg"]
    assert assert_kops_table(printed, ["NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX"]) == [
        [CONTROL_PLANE, "NeedsUpdate", "1", "0", "1", "1", "1"], [NODES, "NeedsUpdate", "3", "0", "3", "3", "3"]]
    assert [g["status"] for g in result["groups"]] == ["NeedsUpdate", "NeedsUpdate"]
    assert result["log"] == [] and not (tmp_path / "roll.log").exists()
    check_requests = moto_requests()
    assert _mutating(check_requests) == [] and check_requests  # the plan was read from the cloud, nothing changed
    assert set(_members(NODES_ASG)) == old_nodes

    moto_requests.reset()
    started = time.monotonic()
    code, run = playbook(PLAYBOOK, *args)
    seconds = time.monotonic() - started
    assert code == 0, (task_results(run, TASK)["msg"], task_results(run, TASK).get("log"))
    result = task_results(run, TASK)
    assert result["changed"] is True
    requests = moto_requests()
    mutating = _mutating(requests)
    # cloud_only never surges (kops detaches only with the Kubernetes API): one termination at a time, control
    # plane first, each keeping the desired capacity so the group replaces the instance.
    assert [a for a, _p in mutating] == ["TerminateInstanceInAutoScalingGroup"] * 4
    assert all(p["ShouldDecrementDesiredCapacity"] == "false" for _a, p in mutating)
    terminated = [p["InstanceId"] for _a, p in mutating]
    assert terminated[0] in old_cp and set(terminated[1:]) == old_nodes
    new_nodes, new_cp = set(_members(NODES_ASG)), set(_members(CP_ASG))
    assert len(new_nodes) == 3 and not new_nodes & old_nodes and len(new_cp) == 1 and not new_cp & old_cp
    log = (tmp_path / "roll.log").read_text().splitlines()
    assert log == result["log"] and any("%s %s terminate" % (NODES, i) in line for line in log for i in old_nodes)
    assert [g["outcome"] for g in result["groups"]] == ["rolled", "rolled"]
    counts = collections.Counter(a for a, _p in requests)
    print("cloud-only roll on moto: 4 instances replaced in %.1fs (ansible-playbook included), %d AWS requests: %s"
          % (seconds, len(requests), dict(counts)))

    moto_requests.reset()
    code, run = playbook(PLAYBOOK, *args)
    result = task_results(run, TASK)
    assert code == 0 and result["changed"] is False and result["lines"][-1] == "No rolling-update required."
    assert _mutating(moto_requests()) == []


def test_filters_force_and_errors(aws, tmp_path, playbook):
    store = "file://%s" % (tmp_path / "state")
    _make_cluster(store, node_count=2)
    args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "cloud_only=true",
            "-e", "interval=0")
    old_cp, old_nodes = set(_members(CP_ASG)), set(_members(NODES_ASG))
    code, run = playbook(PLAYBOOK, *args, "-e", '{"instance_groups": ["%s"], "force": true}' % NODES)
    result = task_results(run, TASK)
    assert code == 0 and result["changed"] is True
    assert [g["name"] for g in result["groups"]] == [NODES]
    assert not set(_members(NODES_ASG)) & old_nodes and set(_members(CP_ASG)) == old_cp

    code, run = playbook(PLAYBOOK, *args, "-e", '{"instance_group_roles": ["ControlPlane"], "force": true}', "--check")
    result = task_results(run, TASK)
    assert [g["name"] for g in result["groups"]] == [CONTROL_PLANE] and set(_members(CP_ASG)) == old_cp
    assert result["lines"][-1].startswith("%s: 1 instance(s) to replace" % CONTROL_PLANE)

    code, run = playbook(PLAYBOOK, *args, "-e", '{"instance_groups": ["nope"]}')
    result = task_results(run, TASK)
    assert code != 0 and "InstanceGroup 'nope' not found" in result["msg"] and "Traceback" not in result["msg"]
    code, run = playbook(PLAYBOOK, *args, "-e", "instance_group_roles=Workers")
    assert code != 0 and "invalid instance group role 'Workers'" in task_results(run, TASK)["msg"]


def _group(name, role="Node", size=4, rolling=None):
    spec = {"role": role, "minSize": size, "maxSize": size}
    if rolling:
        spec["rollingUpdate"] = rolling
    return {"metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize("group_rolling, cluster_rolling, provider, size, expected", [
    (None, None, "aws", 4, (1, 0)),               # kops' AWS default: surge 1, nothing unavailable
    (None, None, "gce", 4, (0, 1)),               # elsewhere: no surge, one unavailable
    ({"maxSurge": "30%"}, None, "aws", 4, (2, 0)),  # percentages of the group, surge rounded up
    ({"maxUnavailable": "30%"}, {"maxSurge": 0}, "aws", 4, (0, 1)),  # unavailable rounded down
    ({"maxUnavailable": "10%"}, {"maxSurge": 0}, "aws", 4, (0, 1)),  # ... but at least 1
    (None, {"maxSurge": 3, "maxUnavailable": 2}, "aws", 4, (3, 2)),  # the cluster's, when the group sets none
    ({"maxSurge": 0}, {"maxSurge": 3}, "aws", 4, (0, 1)),  # the group's over the cluster's
])
def test_settings_resolve_as_kops(group_rolling, cluster_rolling, provider, size, expected):
    cluster = {"spec": {"cloudProvider": provider, "rollingUpdate": cluster_rolling}}
    resolved = planner.settings(cluster, _group("nodes", size=size, rolling=group_rolling), size)
    assert (resolved["max_surge"], resolved["max_unavailable"]) == expected


def _status(name, role, ready=0, need=0, detached=0):
    instances = ([{"id": "i-r%d" % n} for n in range(ready)] + [{"id": "i-n%d" % n, "needs_update": True}
                                                                for n in range(need)]
                 + [{"id": "i-d%d" % n, "detached": True, "needs_update": True} for n in range(detached)])
    cloud = {"group_name": name, "min": 0, "desired": ready + need, "max": 9, "instances": instances}
    return planner.GroupStatus(_group(name, role), cloud, {})


def test_order_control_plane_never_surges_and_detached_go_last():
    cluster = {"spec": {"cloudProvider": "aws"}}
    groups = [_status("nodes-b", "Node", need=2), _status("bastions", "Bastion", need=1),
              _status("cp-b", "Master", need=1), _status("cp-a", "ControlPlane", need=1),
              _status("api", "APIServer", need=1), _status("nodes-a", "Node", ready=1, need=2, detached=1)]
    order = [(phase, [g.name for g in gs]) for phase, gs in planner.ordered(groups)]
    assert order == [("bastion", ["bastions"]), ("control-plane", ["cp-a", "cp-b"]), ("apiserver", ["api"]),
                     ("node", ["nodes-a", "nodes-b"])]
    cp = planner.group_plan(cluster, groups[3], False, False)
    assert (cp["max_surge"], cp["concurrency"], cp["detach"]) == (0, 1, [])
    nodes = planner.group_plan(cluster, groups[5], False, False, max_surge=2)
    # The detached instance is already a surge: it goes last and counts as one of the two; one more is detached.
    assert [i["id"] for i in nodes["update"]] == ["i-n0", "i-n1", "i-d0"]
    assert [i["id"] for i in nodes["detach"]] == ["i-n1"] and nodes["concurrency"] == 2
    forced = planner.group_plan(cluster, groups[5], True, True, max_surge=2)
    assert len(forced["update"]) == 4 and forced["detach"] == []  # cloud_only: no surge
    assert planner.group_plan(cluster, _status("x", "Node", ready=2), False, False) is None


def test_needs_update_annotation_and_table():
    cloud = {"group_name": "g", "min": 2, "desired": 2, "max": 3,
             "instances": [{"id": "i-1"}, {"id": "i-2"}]}
    node = {"metadata": {"name": "n1", "annotations": {"kops.k8s.io/needs-update": ""}},
            "spec": {"providerID": "aws:///us-east-1a/i-1"}}
    status = planner.statuses([_group("nodes-us-east-1a")], {"nodes-us-east-1a": cloud}, [node])[0]
    assert [i["id"] for i in status.need_update] == ["i-1"] and status.nodes() == 1
    assert planner.table([status], cloud_only=False) == [
        "NAME\t\t\tSTATUS\t\tNEEDUPDATE\tREADY\tMIN\tTARGET\tMAX\tNODES".expandtabs(8),
        "nodes-us-east-1a\tNeedsUpdate\t1\t\t1\t2\t2\t3\t1".expandtabs(8)]


class Kubelets(rolling_fleet.Fleet):
    """rolling_fleet.Fleet's kubelets, scheduler, DaemonSet and cloud controller, every Node Ready as soon as its
    instance runs, and no apps of its own: the test places its pods (test_day2_chain.py uses it too).  `peak` counts
    each group's running instances (members and detached surge) at most."""

    def __init__(self, server):
        rolling_fleet.Fleet.__init__(self, server, boot=0, replicas=0, period=0.1)


def _wait_for(what, condition, seconds=60):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within %ds: %s" % (seconds, what)
        time.sleep(0.2)


class _WhenRefused(threading.Thread):
    """The operator's part: once the API server's audit log shows an eviction of `pod` refused (429), `action()`."""

    def __init__(self, server, mark, pod, action):
        threading.Thread.__init__(self, daemon=True)
        self.server, self.mark, self.pod, self.action = server, mark, pod, action
        self.stopping = threading.Event()
        self.seen = False
        self.error = None

    def run(self):
        try:
            while not self.stopping.is_set() and not self.seen:
                if any(verb == "create" and uri.split("?")[0].endswith("/pods/%s/eviction" % self.pod) and code == 429
                       for verb, uri, code, _user in self.server.requests_since(self.mark, users=[ADMIN])):
                    self.action()
                    self.seen = True
                self.stopping.wait(0.5)
        except Exception as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def stop(self):
        self.stopping.set()
        self.join(10)
        assert self.error is None, repr(self.error)


def _requests(server, mark):
    """The roll's requests (its admin certificate's), from the API server's audit log."""
    return [(verb, uri.split("?")[0], code) for verb, uri, code, _user in server.requests_since(mark, users=[ADMIN])]


def test_roll_with_the_kubernetes_api_drains_surges_and_validates(aws, tmp_path, playbook, moto_requests,
                                                                  start_real_kube_api):
    """On a real kube-apiserver trusting the cluster's CA (the roll mints its admin certificate from the store, as
    without a kubeconfig in production), kube-controller-manager's ReplicaSet and disruption controllers keeping a
    PodDisruptionBudget that first refuses the eviction (429), until the operator adds a replica."""
    pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

    store = "file://%s" % (tmp_path / "state")
    service = _make_cluster(store)
    server = start_real_kube_api(ca=keystore.primary(keystore.load(service.cluster_store(CLUSTER), "kubernetes-ca")))
    kubelets = Kubelets(server)
    refused = None
    try:
        kubelets.sync()
        old_nodes, old_cp = _members(NODES_ASG), set(_members(CP_ASG))
        workers = [kubelets.registered[i][0] for i in old_nodes]
        # Two web pods (their ReplicaSet, made once they run, adopts them) behind a budget that allows no
        # disruption, and a pod no controller owns; all with emptyDir data, which the drain lets go.
        kubelets.pod("default", "web-1", workers[0], {"app": "web"}, empty_dir=True)
        kubelets.pod("default", "web-2", workers[1], {"app": "web"}, empty_dir=True)
        kubelets.pod("default", "lonely", workers[2], {"app": "lonely"}, empty_dir=True)
        kubelets.start()

        def pods(selector):
            return server.request("GET", "/api/v1/namespaces/default/pods", query={"labelSelector": selector})["items"]
        _wait_for("the pods run", lambda: all(p["status"].get("phase") == "Running" for p in pods("app")))
        server.create("apps/v1", "ReplicaSet", {"metadata": {"name": "web"}, "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": PAUSE}]}}}},
            namespace="default")
        server.create("policy/v1", "PodDisruptionBudget", {"metadata": {"name": "web"}, "spec": {
            "minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}, namespace="default")

        def settled():
            status = server.get("policy/v1", "PodDisruptionBudget", "web", namespace="default").get("status") or {}
            owners = {p["metadata"]["name"]: [o["name"] for o in p["metadata"].get("ownerReferences") or []]
                      for p in pods("app=web")}
            return (status.get("currentHealthy"), status.get("disruptionsAllowed")) == (2, 0) and owners == {
                "web-1": ["web"], "web-2": ["web"]}
        _wait_for("the ReplicaSet adopts web-1 and web-2 and the budget allows no disruption", settled)
        args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % server.url,
                "-e", "interval=0", "-e", "post_drain_delay=0", "-e", "validate_retry_interval=1",
                "-e", "validate_recheck_interval=0", "-e", "drain_timeout=60", "-e", "validation_timeout=60",
                "-e", "progress_file=%s" % (tmp_path / "roll.log"))

        _change_machine_type(service)
        mark = server.audit_mark()
        code, run = playbook(PLAYBOOK, *args, "--check")
        result = task_results(run, TASK)
        assert code == 0 and result["changed"] is False
        assert [line.split() for line in result["lines"][1:3]] == [
            [CONTROL_PLANE, "NeedsUpdate", "1", "0", "1", "1", "1", "1"],
            [NODES, "NeedsUpdate", "3", "0", "3", "3", "3", "3"]]
        check = _requests(server, mark)
        assert ("list", "/api/v1/nodes", 200) in check and [r for r in check if r[0] != "list"] == []  # reads only

        moto_requests.reset()
        mark = server.audit_mark()
        # The operator adds a web replica once the budget refused web-1: the ReplicaSet makes a pod, it runs on
        # a node not about to go, and the disruption controller then allows one disruption.
        refused = _WhenRefused(server, mark, "web-1", lambda: server.request(
            "PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale", {"spec": {"replicas": 3}},
            content_type="application/merge-patch+json"))
        refused.start()
        started = time.monotonic()
        code, run = playbook(PLAYBOOK, *args)
        seconds = time.monotonic() - started
        result = task_results(run, TASK)
        assert code == 0, (result["msg"], result.get("log"))
        requests = moto_requests()
        mutating = [(a, p.get("InstanceId") or p.get("InstanceIds.member.1") or p.get("ResourceId.1")
                     or p.get("InstanceId.1")) for a, p in _mutating(requests)]
        # kops' order: the control plane (never surged) first; then the nodes: the last one detached (tagged first so
        # a later run still knows it), the group launches its replacement, then one at a time, the detached one last.
        surged = mutating[2][1]
        assert mutating[0] == ("TerminateInstanceInAutoScalingGroup", next(iter(old_cp)))
        assert [a for a, _i in mutating[1:]] == ["CreateTags", "DetachInstances", "TerminateInstanceInAutoScalingGroup",
                                                 "TerminateInstanceInAutoScalingGroup", "TerminateInstances"]
        assert surged == old_nodes[-1] and mutating[-1][1] == surged
        assert {i for _a, i in mutating[3:5]} == set(old_nodes[:2])
        assert kubelets.peak[NODES_ASG] == 4 and kubelets.peak[CP_ASG] == 1  # surge 1; the control plane never

        kube = _requests(server, mark)
        writes = [r for r in kube if r[0] not in ("get", "list", "watch")]
        evictions = [(path.split("/")[-2], status) for verb, path, status in writes if path.endswith("/eviction")]
        assert refused.seen and ("web-1", 429) in evictions and ("web-1", 201) in evictions  # honoured, then allowed
        assert {name for name, status in evictions if status == 201} == {"web-1", "web-2", "lonely"}
        assert not any(name.startswith(("cilium", "kube-")) for name, _s in evictions)  # DaemonSet and static pods stay
        cordons = {path.split("/")[-1] for verb, path, _s in writes if verb == "patch" and "/nodes/" in path}
        assert set(workers) <= cordons
        assert not [p for p in pods("app") if p["metadata"]["name"] in ("web-1", "web-2", "lonely")]  # gone
        log = (tmp_path / "roll.log").read_text()
        assert "a disruption budget refuses to evict default/web-1" in log and "cluster validated" in log
        print("roll with drain on moto + a real kube-apiserver: 4 instances in %.1fs, %d AWS requests (%s), "
              "%d Kubernetes API requests (%d writes)" % (seconds, len(requests), dict(collections.Counter(
                  a for a, _p in requests)), len(kube), len(writes)))

        code, run = playbook(PLAYBOOK, *args)
        result = task_results(run, TASK)
        assert code == 0 and result["changed"] is False and result["lines"][-1] == "No rolling-update required."
    finally:
        refused.stop() if refused is not None else None
        kubelets.stop() if kubelets.is_alive() else None


def test_budget_rolls_node_groups_side_by_side_and_stops_on_a_node_never_ready(aws, tmp_path, playbook, moto_requests,
                                                                               start_real_kube_api):
    """Three node groups of two nodes under budget_max_unavailable 2: check mode prints the schedule and changes
    nothing; the roll surges in every group before the first drain, then runs the groups side by side, and the
    Nodes, as a watch on a real kube-apiserver reports them, are never more than 2 short.  Then a new launch
    template whose instances never become Ready: the roll stops at validation_timeout after its first wave, with
    every group at its desired size and still within the budget.  kube-controller-manager keeps each app's
    ReplicaSet and PodDisruptionBudget."""
    pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

    store = "file://%s" % (tmp_path / "state")
    service = rolling_fleet.make_cluster(store, groups=3, size=2, rolling={"maxSurge": 1, "maxUnavailable": 1})
    server = start_real_kube_api(ca=keystore.primary(keystore.load(service.cluster_store(CLUSTER), "kubernetes-ca")))
    broken = {"from": None, "seen": []}

    def never_ready(instance):
        """Once broken: the first three new instances (the surge's replacements) come up, the next never do."""
        if broken["from"] is None:
            return False
        broken["seen"].append(instance["InstanceId"])
        return len(broken["seen"]) > 3
    fleet = rolling_fleet.Fleet(server, boot=0.5, replicas=2, never_ready=never_ready)
    nodes = rolling_fleet.NodeWatch(server)
    try:
        nodes.start()
        fleet.sync()
        fleet.start()
        args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER, "-e", "api_server=%s" % server.url,
                "-e", "interval=0", "-e", "post_drain_delay=0", "-e", "validate_retry_interval=1",
                "-e", "validate_recheck_interval=0", "-e", "validate_count=1", "-e", "drain_timeout=60",
                "-e", "validation_timeout=60", "-e", "progress_file=%s" % (tmp_path / "roll.log"),
                "-e", "budget_max_unavailable=2", "-e", "instance_group_roles=Node")
        rolling_fleet.change_machine_type(service)

        moto_requests.reset()
        mark = server.audit_mark()
        code, run = playbook(PLAYBOOK, *args, "--check")
        result = task_results(run, TASK)
        assert code == 0 and result["changed"] is False, result.get("msg")
        assert _mutating(moto_requests()) == [] and not (tmp_path / "roll.log").exists()
        assert [r for r in _requests(server, mark) if r[0] != "list"] == []  # the API too: reads only
        schedule = result["schedule"]
        assert (schedule["max_unavailable"], schedule["nodes"], schedule["peak_unavailable"]) == (2, 6, 2)
        assert [s["group"] for s in schedule["surge"]] == ["nodes-a", "nodes-b", "nodes-c"]
        # Wave 1: nodes-a and nodes-b two each (a surge and one unavailable), nodes-c one (its surge: the budget
        # is spent); wave 2: nodes-c's detached instance.
        assert [w["unavailable"] for w in schedule["waves"]] == [2, 0]
        assert [[len(g["instances"]) for g in w["groups"]] for w in schedule["waves"]] == [[2, 2, 1], [1]]
        at = result["lines"].index(next(line for line in result["lines"]
                                        if line.startswith("Schedule of the node groups")))
        assert result["lines"][at + 1].startswith("  pre-scale: nodes-a: i-")
        assert result["lines"][at + 2].startswith("  wave 1: nodes-a: i-") and result["lines"][at + 2].endswith(
            "(unavailable 2)")
        assert result["lines"][-1] == "  peak unavailable: 2 of 2 allowed; 2 wave(s)"

        moto_requests.reset()
        since = time.monotonic()
        code, run = playbook(PLAYBOOK, *args)
        until = time.monotonic()
        result = task_results(run, TASK)
        assert code == 0, (result["msg"], result.get("log"))
        mutating = [a for a, _p in _mutating(moto_requests())]
        # Pre-scaling: the three surges (tag, then detach) before any termination.
        assert mutating[:6] == ["CreateTags", "DetachInstances"] * 3
        assert mutating.count("TerminateInstanceInAutoScalingGroup") == 3 and mutating.count("TerminateInstances") == 3
        record = list(nodes.record)
        peak = rolling_fleet.peak_unavailable(record, 6, since, until)
        assert 0 < peak <= 2, peak  # nodes were cordoned side by side, never more than the budget
        print("budget roll on moto + a real kube-apiserver: %.1fs, peak unavailable %d of 2 (%d Node changes watched)"
              % (until - since, peak, len(record)))
        log = (tmp_path / "roll.log").read_text()
        assert "node-groups - wave: wave 1/2: nodes-a: i-" in log and "wave 2/2 done" in log
        assert [g["outcome"] for g in result["groups"]] == ["rolled"] * 3
        sizes = rolling_fleet.group_sizes()
        assert all(sizes["%s.%s" % (n, CLUSTER)] == (2, 2, 0) for n in ("nodes-a", "nodes-b", "nodes-c")), sizes

        # Now the instances that replace drained ones never become Ready.
        broken["from"] = time.monotonic()
        rolling_fleet.change_machine_type(service, "t3.xlarge")
        moto_requests.reset()
        since = time.monotonic()
        code, run = playbook(PLAYBOOK, *args[:-4], "-e", "validation_timeout=8", "-e", "budget_max_unavailable=2",
                             "-e", "instance_group_roles=Node")
        until = time.monotonic()
        result = task_results(run, TASK)
        assert code != 0 and "after wave 1/2: cluster did not validate within 8s" in result["msg"], result["msg"]
        assert "is not ready" in result["msg"] and "Traceback" not in result["msg"]
        steps = result["steps"]
        stopped = next(s for s in steps if s["phase"] == "validate" and "did not validate" in s["message"])
        started = next(s for s in steps if s["phase"] == "wave")
        assert stopped["elapsed"] - started["elapsed"] < 8 + 15  # the timeout, and one wave's replacements
        assert not any(s["phase"] == "wave" and s["message"].startswith("wave 2/2") for s in steps)
        terminated = [a for a, _p in _mutating(moto_requests()) if a.startswith("Terminate")]
        assert len(terminated) == 5  # wave 1 only
        sizes = rolling_fleet.group_sizes()
        # Desired sizes kept, every member InService; nodes-a and nodes-b replaced their surge in wave 1, nodes-c's
        # detached instance (wave 2's) still runs, for the next run to replace last.
        assert [sizes["%s.%s" % (n, CLUSTER)] for n in ("nodes-a", "nodes-b", "nodes-c")] == [(2, 2, 0), (2, 2, 0),
                                                                                              (2, 2, 1)], sizes
        assert rolling_fleet.peak_unavailable(nodes.stop(), 6, since, until) <= 2
    finally:
        fleet.stop() if fleet.is_alive() else None
        nodes.stop() if nodes.is_alive() else None
