"""The runner on tasks of our own: ordering, retries until the deadline, every failure, deletions."""

from __future__ import annotations

import threading

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import Cloud, TryAgain
from ansible_collections.kubeops.kops.plugins.module_utils.engine import runner
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion, Field, Ref, Task


class FakeCloud(Cloud):
    provider = "fake"

    def __init__(self):
        Cloud.__init__(self, "c.example.com", "nowhere-1")
        self.objects = {}      # name -> fields
        self.calls = []
        self.lock = threading.Lock()
        self.not_yet = {}      # name -> how many more finds say "not yet"

    def ownership_tags(self):
        return {"cluster": self.cluster_name}

    def call(self, what):
        with self.lock:
            self.calls.append(what)


class Thing(Task):
    kind = "thing"
    FIELDS = (Field("size", api="Size", read="size", cfn="Size", mutable=True), Field("parent", api="Parent"))

    def find(self, cloud):
        cloud.call(("find", self.name))
        if cloud.not_yet.get(self.name):
            cloud.not_yet[self.name] -= 1
            raise TryAgain("%s not visible yet" % self.name)
        found = cloud.objects.get(self.name)
        if found is None:
            return None
        self.outputs["id"] = "id-" + self.name
        return self.read_actual(found)

    def create(self, cloud):
        args = self.create_args()
        if args.get("Size") == "boom":
            raise ValueError("size boom is not a size")
        cloud.call(("create", self.name, tuple(sorted(args.items()))))
        cloud.objects[self.name] = {"size": args.get("Size"), "owner": cloud.cluster_name}
        self.outputs["id"] = "id-" + self.name

    def update(self, cloud, actual, changes):
        cloud.call(("update", self.name))
        cloud.objects[self.name]["size"] = self.desired()["size"]

    @classmethod
    def orphans(cls, cloud, wanted):
        names = {t.name for t in wanted}
        return [Deletion(cls.kind, name, "id-" + name, lambda c, n=name: (c.call(("delete", n)), c.objects.pop(n)),
                         order=1 if name.startswith("child") else 2)
                for name, obj in sorted(cloud.objects.items()) if name not in names and obj["owner"] == cloud.cluster_name]


def _graph():
    root = Thing("root", size=1)
    child = Thing("child", size=2, parent=Ref(root))
    return [child, root]


def test_create_in_dependency_order_then_nothing_changes():
    cloud = FakeCloud()
    plan = runner.run(_graph(), cloud)
    creates = [c for c in cloud.calls if c[0] == "create"]
    assert [c[1] for c in creates] == ["root", "child"]
    assert ("Parent", "id-root") in creates[1][2]  # the reference resolved to what the first create made
    assert [(e.name, e.action) for e in plan] == [("root", "create"), ("child", "create")]
    cloud.calls.clear()
    again = runner.run(_graph(), cloud)
    assert {e.action for e in again} == {"unchanged"} and all(c[0] == "find" for c in cloud.calls)


def test_check_mode_lists_deletions_first_and_calls_nothing_mutating():
    cloud = FakeCloud()
    runner.run(_graph(), cloud)
    cloud.objects["child-old"] = {"size": 1, "owner": cloud.cluster_name}
    cloud.objects["foreign"] = {"size": 1, "owner": "other.example.com"}
    cloud.calls.clear()
    plan = runner.run(_graph(), cloud, dry_run=True)
    assert [(e.name, e.action) for e in plan if e.action == "delete"] == [("child-old", "delete")]
    assert all(c[0] == "find" for c in cloud.calls)
    runner.run(_graph(), cloud)
    assert "child-old" not in cloud.objects and "foreign" in cloud.objects


def test_not_yet_is_retried_until_it_works():
    cloud = FakeCloud()
    cloud.not_yet["child"] = 3
    sleeps = []
    plan = runner.run(_graph(), cloud, sleep=sleeps.append)
    assert [e.action for e in plan] == ["create", "create"] and sleeps == [1.0, 2.0, 4.0]


def test_not_yet_past_the_deadline_fails_naming_the_object():
    cloud = FakeCloud()
    cloud.not_yet["root"] = 10 ** 6
    with pytest.raises(runner.TaskFailed) as failed:
        runner.run(_graph(), cloud, deadline=0.05, sleep=lambda s: None)
    assert failed.value.errors == ["thing/root: not ready by the deadline: root not visible yet (give the run a longer timeout, "
                                   "or see why it is stuck)",
                                   "thing/child: not attempted: it depends on an object that failed"]


def test_every_failure_is_reported_and_independent_work_goes_on():
    cloud = FakeCloud()
    tasks = [Thing("a", size="boom"), Thing("b", size="boom"), Thing("c", size=3)]
    with pytest.raises(runner.TaskFailed) as failed:
        runner.run(tasks, cloud)
    assert sorted(failed.value.errors) == ["thing/a: size boom is not a size", "thing/b: size boom is not a size"]
    assert "c" in cloud.objects
    assert "2 cloud objects failed" in str(failed.value)


def test_field_table_drives_create_compare_and_cloudformation():
    cloud = FakeCloud()
    runner.run(_graph(), cloud)
    cloud.objects["root"]["size"] = 5
    plan = runner.run(_graph(), cloud, dry_run=True)
    assert [(e.name, e.action, e.changes) for e in plan if e.action != "unchanged"] == [("root", "update", {"size": (5, 1)})]
    assert Thing("x", size=4).render_cloudformation() == {"Size": 4}
