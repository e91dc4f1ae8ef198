# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Run a task graph: find every object, compare with what is wanted, apply.

Like kops' executor: tasks run as soon as what they reference exists,
independent ones in parallel on a thread pool.  A dry run (check mode) only
finds and compares, so it makes no mutating call; its plan lists each object
as create / update / unchanged with the field changes.
"""

from __future__ import annotations

import concurrent.futures

from ansible_collections.kubeops.kops.plugins.module_utils.engine import graph

CREATE, UPDATE, UNCHANGED = "create", "update", "unchanged"


class PlanEntry(object):
    __slots__ = ("kind", "name", "action", "changes")

    def __init__(self, kind, name, action, changes=None):
        self.kind = kind
        self.name = name
        self.action = action
        self.changes = changes or {}

    def as_dict(self):
        return {"kind": self.kind, "name": self.name, "action": self.action,
                "changes": {field: {"before": old, "after": new} for field, (old, new) in sorted(self.changes.items())}}


class TaskFailed(RuntimeError):
    def __init__(self, task, exc):
        RuntimeError.__init__(self, "%s %s: %s" % (task.kind, task.name, exc))
        self.task = task
        self.cause = exc


def run(tasks, cloud, dry_run=False, workers=8):
    """Reconcile every task; return the plan (list of PlanEntry, in dependency order).

    Each kind's objects are looked up once, by the first task of the kind that
    asks (cloud.lookup caches the paginated describe for the others).
    """
    plan = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for level in graph.levels(tasks):
            futures = [(task, pool.submit(_reconcile, task, cloud, dry_run)) for task in level]
            failures = []
            for task, future in futures:
                try:
                    plan.append(future.result())
                except Exception as exc:  # collected so the whole level reports, then stop
                    failures.append(TaskFailed(task, exc))
            if failures:
                raise failures[0]
    return plan


def _reconcile(task, cloud, dry_run):
    if dry_run and any(not dep.outputs.get("id") for dep in task.dependencies()):
        # Something it refers to does not exist yet, so neither can this: no need to ask.
        return PlanEntry(task.kind, task.name, CREATE, task.desired_fields())
    actual = task.find(cloud)
    if actual is None:
        if not dry_run:
            task.create(cloud)
        return PlanEntry(task.kind, task.name, CREATE, task.desired_fields())
    changes = task.compare(actual)
    if changes and not dry_run:
        task.update(cloud, actual, changes)
    return PlanEntry(task.kind, task.name, UPDATE if changes else UNCHANGED, changes)
