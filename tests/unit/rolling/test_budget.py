"""The cluster-wide budget for node groups (rolling/budget.py) and the roll in waves (Roller.roll_in_waves), on fakes:
the schedule's arithmetic, the pending-pods rule, and the roll's order, concurrency and stops."""

from __future__ import annotations

import threading

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import progress
from ansible_collections.kubeops.kops.plugins.module_utils.rolling import budget, planner, roller

AWS = {"spec": {"cloudProvider": "aws"}}


def _status(name, size, rolling=None, detached=0):
    spec = {"role": "Node", "minSize": size, "maxSize": size}
    if rolling:
        spec["rollingUpdate"] = rolling
    instances = [{"id": "%s-%d" % (name, n), "needs_update": True} for n in range(size - detached)]
    instances += [{"id": "%s-d%d" % (name, n), "needs_update": True, "detached": True} for n in range(detached)]
    nodes = {i["id"]: {"metadata": {"name": "node-%s" % i["id"]}} for i in instances}
    cloud = {"group_name": name, "min": size, "desired": size - detached, "max": size, "instances": instances}
    return planner.GroupStatus({"metadata": {"name": name}, "spec": spec}, cloud, nodes)


def _plans(groups):
    return [planner.group_plan(AWS, g, False, False) for g in groups]


def _check_waves(node_schedule, allowed):
    """Every instance exactly once, and no wave beyond the budget."""
    seen = [i["id"] for w in node_schedule["waves"] for _p, instances in w["groups"] for i in instances]
    assert len(seen) == len(set(seen))
    assert all(w["unavailable"] <= allowed for w in node_schedule["waves"])
    return seen


def test_four_groups_of_five_roll_in_three_waves_at_four_unavailable():
    groups = [_status("nodes-%s" % z, 5, {"maxSurge": 1, "maxUnavailable": 1}) for z in "abcd"]
    limits = budget.parse("20%", None, 20)
    assert limits == {"max_unavailable": 4, "max_surge": None, "nodes": 20}
    node_schedule = budget.schedule(_plans(groups), limits)
    assert [len(p["detach"]) for p in node_schedule["plans"]] == [1, 1, 1, 1]
    assert [(p["group"].name, [i["id"] for i in i_]) for p, i_ in node_schedule["surge"]] == [
        ("nodes-%s" % z, ["nodes-%s-4" % z]) for z in "abcd"]
    assert len(node_schedule["waves"]) == 3 and node_schedule["peak_unavailable"] == 4
    assert len(_check_waves(node_schedule, 4)) == 20
    # Each group: its surge plus its maxUnavailable per wave, the surged instance last.
    first = node_schedule["waves"][0]["groups"]
    assert [[i["id"] for i in instances] for _p, instances in first][0] == ["nodes-a-0", "nodes-a-1"]
    assert [i["id"] for i in node_schedule["waves"][2]["groups"][0][1]] == ["nodes-a-4"]
    text = budget.describe(node_schedule)
    assert text[0] == ("Schedule of the node groups (budget: max unavailable 4, max surge each group's own, "
                       "of 20 node(s)):")
    assert text[-1] == "  peak unavailable: 4 of 4 allowed; 3 wave(s)"


def test_budget_bounds_groups_that_could_go_faster():
    groups = [_status("nodes-%s" % z, 5, {"maxSurge": 0, "maxUnavailable": 5}) for z in "ab"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(3, None, 10))
    assert _check_waves(node_schedule, 3) and node_schedule["peak_unavailable"] == 3
    assert len(node_schedule["waves"]) == 4  # 10 instances, 3 at a time, the longest group first


def test_kops_defaults_surge_one_per_group_nothing_unavailable():
    groups = [_status("nodes-%s" % z, 3) for z in "abc"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 9))
    assert len(node_schedule["waves"]) == 3 and node_schedule["peak_unavailable"] == 0
    assert all(len(w["groups"]) == 3 for w in node_schedule["waves"])  # the three groups side by side


def test_surge_budget_goes_to_the_smallest_group_first():
    groups = [_status("big", 4), _status("single", 1)]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, 1, 5))
    by_name = {p["group"].name: p for p in node_schedule["plans"]}
    assert [i["id"] for i in by_name["single"]["detach"]] == ["single-0"] and by_name["big"]["detach"] == []
    assert by_name["big"]["max_unavailable"] == 1  # no surge: kops' rule, one unavailable at a time
    assert node_schedule["notes"] == ["big: surge 1 cut to 0 by budget_max_surge",
                                      "big: no surge left in the budget, so one instance at a time is unavailable"]
    assert _check_waves(node_schedule, 1) and node_schedule["peak_unavailable"] == 1
    assert not any("0 nodes" in note for note in node_schedule["notes"])  # the single node group keeps its node


def test_a_one_node_group_goes_to_zero_only_when_the_budget_allows_it():
    groups = [_status("single", 1, {"maxSurge": 0})]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 1))
    assert node_schedule["notes"] == [
        "wave 1 takes single to 0 nodes (no surge for it; budget_max_unavailable allows it)"]
    with pytest.raises(planner.PlanError, match="budget_max_unavailable 0 leaves single no room"):
        budget.schedule(_plans(groups), budget.parse(0, 1, 1))


def test_already_detached_instances_count_as_surge():
    groups = [_status("nodes", 4, detached=1)]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, 0, 3))
    plan = node_schedule["plans"][0]
    assert plan["detach"] == [] and plan["max_surge"] == 1  # kept, though the surge budget is 0: it already runs
    assert [i["id"] for i in node_schedule["waves"][-1]["groups"][0][1]][-1] == "nodes-d0"


def test_no_surge_where_the_cloud_cannot_detach():
    groups = [_status("nodes-%s" % z, 2) for z in "ab"]  # kops' AWS default asks for a surge of 1
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 4), can_surge=False)
    assert node_schedule["surge"] == [] and [p["max_unavailable"] for p in node_schedule["plans"]] == [1, 1]
    assert node_schedule["notes"][0] == "nodes-a: maxSurge 1 impossible on this cloud, no surge"
    assert len(node_schedule["waves"]) == 4 and node_schedule["peak_unavailable"] == 1


def test_a_failed_surge_stops_before_any_drain():
    groups = [_status("nodes-%s" % z, 2) for z in "ab"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 4))
    runner, cloud, _drainer = _roller()

    def refuse(group, instance):
        raise ValueError("DetachInstances: throttled")
    cloud.detach = refuse
    with pytest.raises(roller.RollError, match="pre-scaling: failed to detach nodes-a-1 from nodes-a: DetachInstances: "
                                               "throttled; nothing was drained"):
        runner.run([("node", node_schedule["plans"])], node_schedule)
    assert [c for c in cloud.calls if c[0] in ("cordon", "terminate")] == []
    assert set(runner.outcome.values()) == {"failed: pre-scaling: failed to detach nodes-a-1 from nodes-a: "
                                            "DetachInstances: throttled; nothing was drained"}


@pytest.mark.parametrize("unavailable, surge, nodes, message", [
    ("10%", None, 5, "budget_max_unavailable: '10%' of 5 node(s) is 0 and budget_max_surge gives no surge"),
    ("lots", None, 5, "budget_max_unavailable: 'lots' is not a number or a percentage like 25%"),
    (1, "x%", 5, "budget_max_surge: 'x%' is not a number or a percentage"),
    (-1, None, 5, "must be 0 or more"),
])
def test_bad_budgets_name_the_option(unavailable, surge, nodes, message):
    with pytest.raises(planner.PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        budget.parse(unavailable, surge, nodes)


def _node(name, ready=True, cordoned=False, cpu="2", memory="4Gi", pods="110", allocatable=True):
    node = {"metadata": {"name": name}, "spec": {"unschedulable": cordoned},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if allocatable:
        node["status"]["allocatable"] = {"cpu": cpu, "memory": memory, "pods": pods}
    return node


def _pod(name, node=None, cpu="0", memory="0", phase="Running", owner=None):
    meta = {"name": name, "namespace": "default"}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "controller": True}]
    return {"metadata": meta, "spec": {"nodeName": node, "containers": [
        {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}, "status": {"phase": phase}}


def test_pending_pods_wait_only_when_the_other_nodes_have_no_room():
    nodes = [_node("a"), _node("b")]
    running = [_pod("on-a", "a", cpu="1500m", memory="1Gi"), _pod("on-b", "b", cpu="500m")]
    assert budget.waiting_for_capacity(nodes, running, "b") == []  # nothing Pending
    fits = running + [_pod("new", None, cpu="400m", memory="512Mi", phase="Pending")]
    assert budget.waiting_for_capacity(nodes, fits, "b") == []  # a has 500m and 3Gi left
    too_big = running + [_pod("big", None, cpu="1", phase="Pending")]
    assert budget.waiting_for_capacity(nodes, too_big, "b") == ["default/big"]  # only b had room for it
    assert budget.waiting_for_capacity(nodes + [_node("c")], too_big, "b") == []  # a new node came up
    assert budget.waiting_for_capacity(nodes + [_node("c", ready=False)], too_big, "b") == ["default/big"]
    assert budget.waiting_for_capacity(nodes + [_node("c", cordoned=True)], too_big, "b") == ["default/big"]
    daemon = running + [_pod("ds", None, cpu="9", phase="Pending", owner="DaemonSet")]
    assert budget.waiting_for_capacity(nodes, daemon, "b") == []  # a DaemonSet pod waits for its own node
    unknown = [_node("a", allocatable=False), _node("b")]
    assert budget.waiting_for_capacity(unknown, fits, "b") == ["default/new"]  # room unknown: it counts
    assert budget.quantity("1.5Gi") == 1.5 * 2 ** 30 and budget.quantity("250m") == 0.25
    with pytest.raises(ValueError, match="not a Kubernetes quantity"):
        budget.quantity("1.5 cores")


class FakeClock(object):
    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self.lock:
            self.now += seconds


class FakeCloud(object):
    provider = "aws"

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()

    def _record(self, *call):
        with self.lock:
            self.calls.append(call)

    def detach(self, group, instance):
        self._record("detach", instance["id"])
        instance["detached"], instance["status"] = True, "Detached"

    def terminate(self, group, instance):
        self._record("terminate", instance["id"])

    def wait_in_service(self, group, timeout):
        return ["x"] * group["desired"]

    def deregister(self, group, instance):
        self._record("deregister", instance["id"])


class FakeDrainer(object):
    TAINT = "kops.k8s.io/scheduled-for-update"

    def __init__(self, cloud):
        self.cloud = cloud
        self.in_flight = 0
        self.peak = 0

    def taint(self, node_name):
        return True

    def cordon_and_label(self, node_name):
        self.cloud._record("cordon", node_name)
        return True

    def drain(self, node_name, timeout, report=None):
        with self.cloud.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        threading.Event().wait(0.05)  # long enough for a wave's drains to overlap
        with self.cloud.lock:
            self.in_flight -= 1
        return 0


def _roller(validator=lambda: [], capacity=None, **options):
    cloud, clock = FakeCloud(), FakeClock()
    drainer = FakeDrainer(cloud)
    options = dict({"interval": 0, "post_drain_delay": 0, "validate_count": 1, "validate_retry_interval": 10,
                    "validation_timeout": 60, "pending_pods_timeout": 20}, **options)
    runner = roller.Roller(cloud, progress.Progress(clock=clock), options, drainer=drainer, validator=validator,
                           sleep=clock.sleep, clock=clock, capacity=capacity)
    return runner, cloud, drainer


def test_roll_in_waves_surges_everywhere_first_and_keeps_to_the_schedule():
    groups = [_status("nodes-%s" % z, 3, {"maxSurge": 1, "maxUnavailable": 1}) for z in "ab"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(2, None, 6))
    runner, cloud, drainer = _roller()
    runner.run([("node", node_schedule["plans"])], node_schedule)
    kinds = [c[0] for c in cloud.calls]
    assert kinds[:2] == ["detach", "detach"] and "detach" not in kinds[2:]  # pre-scaling: before the first drain
    assert sorted(c[1] for c in cloud.calls if c[0] == "terminate") == sorted(
        i["id"] for g in groups for i in g.need_update)
    assert drainer.peak == 4  # wave 1: two per group (surge + one unavailable), both groups at once
    waves = [line for line in runner.progress.lines if " wave: wave " in line and "done" not in line]
    assert len(waves) == 2 and "(unavailable 2 of 2)" in waves[0]
    assert runner.outcome == {"nodes-a": "rolled", "nodes-b": "rolled"}


def test_an_instance_never_ready_stops_the_roll_at_the_validation_timeout_with_no_new_wave():
    groups = [_status("nodes-%s" % z, 3, {"maxSurge": 0, "maxUnavailable": 1}) for z in "ab"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(2, None, 6))
    assert len(node_schedule["waves"]) == 3
    validated = []

    def validator():
        validated.append(1)
        # Fine until the first wave's replacements are meant to be up; then one never becomes Ready.
        return [] if len(validated) == 1 else [{"instance_group": "nodes-b", "message": 'node "new" is not ready'}]
    # fail_on_validate_error false goes on in kops' serial roll; under a budget the next wave would exceed it.
    runner, cloud, _drainer = _roller(validator=validator, fail_on_validate_error=False)
    with pytest.raises(roller.ValidationTimeout, match="after wave 1/3: cluster did not validate within 60s"):
        runner.run([("node", node_schedule["plans"])], node_schedule)
    assert len([c for c in cloud.calls if c[0] == "terminate"]) == 2  # wave 1 only
    assert runner.clock() <= 60 + 10  # within its timeout (one retry interval of slack)
    assert runner.outcome["nodes-a"].startswith("failed: error validating cluster after wave 1/3")
    assert runner.outcome["nodes-b"].startswith("failed: error validating cluster after wave 1/3")


def test_a_failed_drain_stops_after_its_wave_and_every_group_says_so():
    groups = [_status("nodes-%s" % z, 3, {"maxSurge": 0, "maxUnavailable": 1}) for z in "abc"]
    node_schedule = budget.schedule(_plans(groups), budget.parse(2, None, 9))
    runner, cloud, drainer = _roller()
    drained = drainer.drain

    def drain(node_name, timeout, report=None):
        if node_name == "node-nodes-b-0":
            raise ValueError("drain did not complete within 5s: "
                             "a disruption budget still refuses to evict default/db-0")
        return drained(node_name, timeout, report)
    drainer.drain = drain
    with pytest.raises(roller.RollError, match="wave 1/5: nodes-b nodes-b-0: failed to drain node node-nodes-b-0"):
        runner.run([("node", node_schedule["plans"])], node_schedule)
    assert [c[1] for c in cloud.calls if c[0] == "terminate"] == ["nodes-a-0"]  # its wave-mate finished; no wave 2
    assert runner.outcome["nodes-b"].startswith("failed: failed to drain node node-nodes-b-0")
    assert runner.outcome["nodes-a"].startswith("stopped: wave 1/5") and runner.outcome["nodes-c"].startswith("stopped")


def test_pending_pods_hold_the_drain_then_stop_it():
    groups = [_status("nodes", 2, {"maxSurge": 0, "maxUnavailable": 1})]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 2))
    nodes = [_node("node-nodes-0", cpu="1"), _node("node-nodes-1", cpu="1")]
    # node-nodes-1 is full, so the Pending pod could only go where node-nodes-0's pods would go.
    pending = [_pod("busy", "node-nodes-1", cpu="1"), _pod("web", None, cpu="1", phase="Pending")]
    calls = []

    def capacity():
        calls.append(1)
        return nodes, pending if len(calls) < 3 else pending[:1]  # scheduled after two looks (a new node took it)
    runner, cloud, _drainer = _roller(capacity=capacity)
    runner.run([("node", node_schedule["plans"])], node_schedule)
    assert any("1 Pending pod(s) may need node node-nodes-0's capacity (default/web)" in line
               for line in runner.progress.lines)
    runner, cloud, _drainer = _roller(capacity=lambda: (nodes, pending))
    with pytest.raises(roller.PendingPods, match="not draining node node-nodes-0: 1 Pending pod.s. still need capacity "
                                                 "after 20s .default/web.; add capacity or raise pending_pods_timeout"):
        runner.run([("node", node_schedule["plans"])], node_schedule)
    assert [c for c in cloud.calls if c[0] in ("cordon", "terminate")] == []


def test_pending_pods_read_through_the_kubernetes_client(real_kube_api):
    """The wait reads the cluster as the module does (KubeClient's nodes() and pods() JSON from a real kube-apiserver):
    a Pending pod that only the drained node has room for holds the drain until the scheduler places it."""
    pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
    from ansible_collections.kubeops.kops.plugins.module_utils.kube.client import KubeClient

    for name in ("node-nodes-0", "node-nodes-1"):
        real_kube_api.create("v1", "Node", _node(name, cpu="1"))  # a Node's status may be set when it registers
    for pod in (_pod("busy", "node-nodes-1", cpu="1"), _pod("web", None, cpu="500m", phase="Pending")):
        pod["metadata"].pop("namespace")
        pod["spec"]["containers"][0]["image"] = "registry.k8s.io/pause:3.10"
        status = pod.pop("status")  # the API makes every new pod Pending; the kubelet's report makes busy Running
        real_kube_api.create("v1", "Pod", pod, namespace="default")
        if status["phase"] != "Pending":
            real_kube_api.set_status("v1", "Pod", pod["metadata"]["name"], status, namespace="default")
    api = KubeClient.from_kubeconfig(real_kube_api.kubeconfig_path)
    assert budget.waiting_for_capacity(api.nodes(), api.pods(), "node-nodes-0") == ["default/web"]
    assert budget.waiting_for_capacity(api.nodes(), api.pods(), "node-nodes-1") == []  # node-nodes-0 has room

    groups = [_status("nodes", 2, {"maxSurge": 0, "maxUnavailable": 1})]
    node_schedule = budget.schedule(_plans(groups), budget.parse(1, None, 2))
    looks = []

    def capacity():
        looks.append(1)
        if len(looks) == 2:  # the scheduler places the pod on a node that just came up
            real_kube_api.create("v1", "Node", _node("node-new", cpu="1"))
        return api.nodes(), api.pods()
    runner, cloud, _drainer = _roller(capacity=capacity)
    runner.run([("node", node_schedule["plans"])], node_schedule)
    waits = [line for line in runner.progress.lines if "Pending pod" in line]
    assert len(waits) == 1 and "may need node node-nodes-0's capacity (default/web)" in waits[0]
    assert len([c for c in cloud.calls if c[0] == "terminate"]) == 2
