# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Run a task graph: find every object, compare with what is wanted, apply, then delete
what the cluster owns and no longer wants.

Like kops' executor: a task starts as soon as every task it refers to is done,
independent ones in parallel on a thread pool; a task whose cloud says "not
yet" (eventual consistency: a group or profile just created and not visible,
kops' TryAgainLater) is tried again with backoff until the run's deadline.
Every failure is reported, one line each; tasks that depend on a failed one
are not attempted.  A dry run (check mode) only finds and compares, so it
makes no mutating call; its plan lists each object as create / update /
delete / unchanged with the field changes, deletions included.
"""

from __future__ import annotations

import concurrent.futures
import time

from ansible_collections.kubeops.kops.plugins.module_utils import waits
from ansible_collections.kubeops.kops.plugins.module_utils.engine import graph
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

CREATE, UPDATE, DELETE, UNCHANGED = "create", "update", "delete", "unchanged"
ACTIONS = (CREATE, UPDATE, DELETE, UNCHANGED)
DEFAULT_DEADLINE = 600.0


class PlanEntry(object):
    """One object of a plan.  shared: the cluster uses it but does not own it (an image, a VPC or subnet given by
    id): found, never created, updated or deleted.  restarts: its kind's Task.restarts_instances."""
    __slots__ = ("kind", "name", "action", "changes", "id", "shared", "restarts")

    def __init__(self, kind, name, action, changes=None, object_id=None, shared=False, restarts=False):
        self.kind = kind
        self.name = name
        self.action = action
        self.changes = changes or {}
        self.id = object_id
        self.shared = shared
        self.restarts = restarts

    def as_dict(self):
        entry = {"kind": self.kind, "name": self.name, "action": self.action,
                 "changes": {field: {"before": old, "after": new} for field, (old, new) in sorted(self.changes.items())}}
        if self.id:
            entry["id"] = self.id
        if self.shared:
            entry["shared"] = True
        return entry


class TaskFailed(TaskError):
    """One or more tasks failed; the message has one line per failure (kind/name: code: message (what to do))."""

    def __init__(self, failures, plan=None):
        self.failures = failures  # [(task key, str)]
        self.plan = plan or []
        self.errors = ["%s: %s" % (key, text) for key, text in failures]
        TaskError.__init__(self, "%d cloud object%s failed:\n%s" % (
            len(failures), "" if len(failures) == 1 else "s", "\n".join(self.errors)))


class Backoff(object):
    """Delays between tries of one task: 1, 2, 4, 8, then 10 s, never past the deadline."""

    def __init__(self, deadline, first=1.0, cap=10.0, sleep=time.sleep, clock=time.monotonic):
        self.deadline = deadline
        self.delay = first
        self.cap = cap
        self.sleep = sleep
        self.clock = clock

    def wait(self):
        """Sleep before the next try; False when the deadline leaves no time for one."""
        remaining = self.deadline - self.clock()
        if remaining <= 0:
            return False
        self.sleep(min(self.delay, remaining))
        self.delay = min(self.delay * 2, self.cap)
        return True


def run(tasks, cloud, dry_run=False, workers=8, deadline=DEFAULT_DEADLINE, progress=None, kinds=(),
        sleep=time.sleep):
    """Reconcile every task, then delete orphans; return the plan (list of PlanEntry).

    Each kind's objects are looked up once, by the first task of the kind that
    asks (cloud.lookup caches the paginated describe for the others).
    progress: called with each PlanEntry as it is done (long runs report as they go).
    kinds: the provider's task classes, asked for orphans even when no task of theirs is wanted
    any more (the last lifecycle hook removed from the spec still has to go).
    Raises TaskFailed with every failure (and the plan of what was done) if any task failed.
    """
    end = time.monotonic() + deadline
    deps = graph.dependency_map(tasks)
    # Refuses a cycle before anything runs; the plan is reported in this order, whatever order tasks finished in.
    position = {task.key: i for i, task in enumerate(t for level in graph.levels(tasks) for t in level)}
    by_key = {t.key: t for t in tasks}
    dependents = {key: [] for key in deps}
    for key, wanted in deps.items():
        for dep in wanted:
            dependents[dep].append(key)
    waiting = {key: set(wanted) for key, wanted in deps.items()}
    plan, failures, blocked, created = [], [], set(), set()

    def report(entry):
        plan.append(entry)
        if entry.action == CREATE:
            created.add("%s/%s" % (entry.kind, entry.name))
        if progress:
            progress(entry)

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        running = {}

        def start_ready():
            for key in sorted(k for k, w in waiting.items() if not w):
                del waiting[key]
                new_parent = any(dep in created for dep in deps[key])
                running[pool.submit(_reconcile_until, by_key[key], cloud, dry_run, end, sleep, new_parent)] = key

        start_ready()
        while running:
            done, _pending = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                key = running.pop(future)
                try:
                    report(future.result())
                except Exception as exc:  # every failure is collected and reported, not only the first
                    failures.append((key, str(cloud.failure(exc))))
                    _block(key, dependents, waiting, blocked)
                    continue
                for child in dependents[key]:
                    if child in waiting:
                        waiting[child].discard(key)
            start_ready()
    plan.sort(key=lambda e: position["%s/%s" % (e.kind, e.name)])
    for key in sorted(blocked):
        failures.append((key, "not attempted: it depends on an object that failed"))
    if failures:
        raise TaskFailed(failures, plan)
    _delete_orphans(tasks, kinds, cloud, dry_run, end, sleep, report, failures)
    if failures:
        raise TaskFailed(failures, plan)
    return plan


def _block(key, dependents, waiting, blocked):
    """Take everything that depends on a failed task out of the run."""
    for child in dependents[key]:
        if child in waiting:
            del waiting[child]
            blocked.add(child)
            _block(child, dependents, waiting, blocked)


def _reconcile_until(task, cloud, dry_run, end, sleep, new_parent):
    backoff = Backoff(end, sleep=sleep)
    while True:
        try:
            return _reconcile(task, cloud, dry_run, new_parent)
        except Exception as exc:
            if not cloud.retryable(exc):
                raise
            _say_retry("%s %s" % (task.kind, task.name), cloud.why_not_yet(exc), backoff)
            if not backoff.wait():
                raise


def _say_retry(what, why, backoff):
    """A "not yet" from the cloud, on the console: what, why, when the next try is and when the run gives up."""
    left = backoff.deadline - backoff.clock()
    if left > 0:
        waits.notice("%s: not ready yet (%s); trying again in %.0f s (gives up in %.0f s)"
                     % (what, why, min(backoff.delay, left), left))


def _reconcile(task, cloud, dry_run, new_parent=False):
    """One task's PlanEntry.  An object that came into being with a parent created in this run (a
    security group's default egress rule, a new VPC's DHCP association) is reported as created, as
    the dry run, which cannot look inside parents that do not exist yet, reports it."""
    if dry_run and any(not dep.outputs.get("id") for dep in task.dependencies()):
        # Something it refers to does not exist yet, so neither can this: no need to ask.
        return PlanEntry(task.kind, task.name, CREATE, task.desired_fields())
    actual = task.find(cloud)
    if actual is None:
        if not dry_run:
            task.create(cloud)
        return PlanEntry(task.kind, task.name, CREATE, task.desired_fields(), task.outputs.get("id"))
    changes = task.compare(actual)
    if changes and not dry_run:
        task.update(cloud, actual, changes)
    if new_parent:
        return PlanEntry(task.kind, task.name, CREATE, task.desired_fields(), task.outputs.get("id"))
    return PlanEntry(task.kind, task.name, UPDATE if changes else UNCHANGED, changes, task.outputs.get("id"),
                     task.shared, task.restarts_instances)


def orphans(tasks, cloud, kinds=()):
    """Every Deletion the kinds report: owned objects of the cluster that no task asks for, in delete order."""
    by_class = {kind_class: [] for kind_class in kinds}
    for task in tasks:
        by_class.setdefault(type(task), []).append(task)
    found = []
    for kind_class in sorted(by_class, key=lambda c: c.kind):
        found.extend(kind_class.orphans(cloud, by_class[kind_class]))
    return sorted(found, key=lambda d: (d.order, d.kind, d.name))


def _delete_orphans(tasks, kinds, cloud, dry_run, end, sleep, report, failures):
    deletions = orphans(tasks, cloud, kinds)
    for order in sorted({d.order for d in deletions}):
        for deletion in (d for d in deletions if d.order == order):
            changes = {"id": (deletion.id, None)}
            if deletion.detail:
                changes["what"] = (deletion.detail, None)
            if not dry_run:
                backoff = Backoff(end, sleep=sleep)
                while True:
                    try:
                        deletion.delete(cloud)
                        break
                    except Exception as exc:
                        if cloud.retryable(exc):
                            _say_retry("deleting %s %s" % (deletion.kind, deletion.name), cloud.why_not_yet(exc),
                                       backoff)
                            if backoff.wait():
                                continue
                        failures.append(("%s/%s" % (deletion.kind, deletion.name), str(cloud.failure(exc))))
                        break
            report(PlanEntry(deletion.kind, deletion.name, DELETE, changes, deletion.id))
        if failures:
            return
