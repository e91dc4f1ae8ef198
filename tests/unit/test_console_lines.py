"""The live lines of the long operations, each said as it happens through module_utils/waits.py's notice file:
a delete's rounds (kops' "still has dependencies, will retry", what is left and how long the next round waits), a
cloud task's "not ready yet" with its next try and deadline, and validate --wait's attempts whatever the failure."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import deletion, waits
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, TryAgain
from ansible_collections.kubeops.kops.plugins.module_utils.engine import runner
from ansible_collections.kubeops.kops.plugins.modules import cluster_validate


@pytest.fixture
def console(tmp_path, monkeypatch):
    """The lines a module writes for the action to print (what the console shows)."""
    path = tmp_path / "notices"
    monkeypatch.setenv(waits.NOTICE_ENV, str(path))
    monkeypatch.setattr(waits, "_WATCHERS", {})
    return lambda: path.read_text().splitlines() if path.exists() else []


class Kind(object):
    """A kind whose delete says "not yet" (a dependency still going away) `refusals` times."""

    after = ()

    def __init__(self, refusals):
        self.refusals = refusals

    def delete(self, cloud, resources):
        if self.refusals:
            self.refusals -= 1
            return {r.id: TryAgain("DependencyViolation: the group is still used by a network interface")
                    for r in resources}
        return {r.id: None for r in resources}


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_each_delete_round_says_what_is_left_and_how_long_it_waits(console):
    clock = Clock()
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        clock.sleep(seconds)
    resources = [deletion.Resource("security-group", "sg-1", "nodes")]
    walker = deletion.Walker(Cloud("k8s.example.com", "us-east-1"), {"security-group": Kind(refusals=2)}, resources,
                             deadline=1200, interval=10, sleep=sleep, clock=clock)
    reports = walker.run()
    assert [r["result"] for r in reports] == ["deleted"]
    assert slept == [10, 10]
    assert console() == walker.log == [
        "security-group:sg-1\tstill has dependencies, will retry",
        "Not all resources deleted; waiting 10s before reattempting deletion (gives up in 20m0s): 1 left",
        "\tsecurity-group:sg-1\tDependencyViolation: the group is still used by a network interface",
        "security-group:sg-1\tstill has dependencies, will retry",
        "Not all resources deleted; waiting 10s before reattempting deletion (gives up in 19m50s): 1 left",
        "\tsecurity-group:sg-1\tDependencyViolation: the group is still used by a network interface",
        "security-group:sg-1\tok",
    ]


def test_a_round_never_sleeps_past_the_deadline(console):
    clock = Clock()
    resources = [deletion.Resource("security-group", "sg-1")]
    walker = deletion.Walker(Cloud("k8s.example.com", "us-east-1"), {"security-group": Kind(refusals=99)}, resources,
                             deadline=25, interval=10, sleep=clock.sleep, clock=clock)
    reports = walker.run()
    assert reports[0]["result"] == "not deleted"
    waits_said = [line for line in console() if line.startswith("Not all resources deleted")]
    assert [line.split("; ", 1)[1] for line in waits_said] == [
        "waiting 10s before reattempting deletion (gives up in 25s): 1 left",
        "waiting 10s before reattempting deletion (gives up in 15s): 1 left",
        "waiting 5s before reattempting deletion (gives up in 5s): 1 left"]


class Task(object):
    kind, name = "aws_iam_instance_profile", "nodes.k8s.example.com"

    def __init__(self):
        self.tries = 0
        self.outputs = {}

    def find(self, cloud):
        self.tries += 1
        if self.tries < 3:
            raise TryAgain("NoSuchEntity: instance profile not visible yet")
        return None

    def create(self, cloud):
        self.outputs["id"] = "AIPA1"

    def dependencies(self):
        return []

    def desired_fields(self):
        return {}


def test_a_task_that_is_not_ready_says_when_it_tries_again(console, monkeypatch):
    clock = Clock()
    real_backoff = runner.Backoff
    monkeypatch.setattr(runner, "Backoff", lambda end, sleep: real_backoff(end, sleep=sleep, clock=clock))
    task = Task()
    entry = runner._reconcile_until(task, Cloud("k8s.example.com", "us-east-1"), False, 600, clock.sleep, False)
    assert entry.action == "create" and task.tries == 3
    assert console() == [
        "aws_iam_instance_profile nodes.k8s.example.com: not ready yet (NoSuchEntity: instance profile not visible "
        "yet); trying again in 1 s (gives up in 600 s)",
        "aws_iam_instance_profile nodes.k8s.example.com: not ready yet (NoSuchEntity: instance profile not visible "
        "yet); trying again in 2 s (gives up in 599 s)"]


class Attempts(object):
    """A validation that cannot reach the API twice, then finds a node not ready, then passes."""

    completed = {"metadata": {"name": "k8s.example.com"}}

    def __init__(self, answers):
        self.answers = list(answers)

    def once(self):
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_validate_wait_goes_on_whatever_the_failure(console):
    from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError
    clock = Clock()
    unreachable = KubeError("cannot reach the Kubernetes API at https://api.k8s.example.com to list nodes: refused")
    not_ready = {"nodes": [], "failures": [{"type": "Node", "name": "n1", "message": 'node "n1" is not ready'}]}
    ready = {"nodes": [{"name": "n1"}], "failures": []}
    attempt = Attempts([unreachable, unreachable, not_ready, ready, ready])
    result, attempts, passed = cluster_validate.wait_until_ready(
        attempt, {"wait": 600, "interval": 10, "count": 2}, clock=clock, sleep=clock.sleep)
    assert passed and attempts == 5 and result is ready
    assert console() == [
        "validation 1: failed: %s; again in 10s (gives up in 10m0s)" % unreachable,
        "validation 2: failed: %s; again in 10s (gives up in 9m50s)" % unreachable,
        'validation 3: did not pass: node "n1" is not ready; again in 10s (gives up in 9m40s)',
        "validation 4: passed (1 of 2 consecutive passes); again in 10s (gives up in 9m30s)",
        "validation 5 passed: the cluster is ready"]


def test_validate_wait_ends_at_the_deadline_with_the_last_failure(console):
    clock = Clock()
    unreachable = ValueError("cannot reach the Kubernetes API at https://127.0.0.1:1 to list nodes: refused")
    attempt = Attempts([unreachable] * 10)
    result, attempts, passed = cluster_validate.wait_until_ready(
        attempt, {"wait": 25, "interval": 10, "count": 1}, clock=clock, sleep=clock.sleep)
    assert not passed and attempts == 4  # at 0, 10, 20 and the deadline, 25
    assert result["failures"] == [{"type": "error", "name": "k8s.example.com", "message": str(unreachable),
                                   "instance_group": None}]
    assert console()[-2:] == ["validation 3: failed: %s; again in 5s (gives up in 5s)" % unreachable,
                              "validation 4: failed: %s; the wait of 25s is over" % unreachable]


def test_channel_apply_says_each_addon_as_it_is_applied(console):
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels

    def update(name, action, addon_id="k8s-1.12"):
        return {"name": name, "namespace": "kube-system", "action": action, "current": None, "manifest": name,
                "wanted": {"id": addon_id} if addon_id else {}}

    class Runner(channels.ChannelRunner):
        def __init__(self):  # the plan as data: no API, no channel to read
            self.warnings = []

        def plan(self):
            return [update("coredns.addons.k8s.io", "install"), update("dns-controller", "unchanged"),
                    update("kops-controller.addons.k8s.io", "update", None), update("broken", "install")]

        def ensure(self, update):
            if update["name"] == "broken":
                raise channels.ChannelError("applying Deployment kube-system/broken: HTTP 422")
            return {"applied": ["ServiceAccount kube-system/x", "Deployment kube-system/x"], "pruned": [],
                    "nodes_annotated": [], "pki": []}

    result = Runner().run()
    assert result["errors"] == ["addon broken: applying Deployment kube-system/broken: HTTP 422"]
    assert console() == [
        "addon coredns.addons.k8s.io: install, id k8s-1.12",
        "addon coredns.addons.k8s.io: applied 2 object(s), pruned 0",
        "addon kops-controller.addons.k8s.io: update",
        "addon kops-controller.addons.k8s.io: applied 2 object(s), pruned 0",
        "addon broken: install, id k8s-1.12",
        "addon broken: failed: applying Deployment kube-system/broken: HTTP 422"]

    class Preview(Runner):
        def preview(self, update):
            return {"applied": [], "pruned": []}
    said = console()
    Preview().run(check_mode=True)
    assert console() == said  # check mode plans: nothing is applied, nothing said
