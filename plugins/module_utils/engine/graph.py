# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Dependency order of tasks, derived from the references between them."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError


class CycleError(TaskError):
    pass


def dependency_map(tasks):
    """{task key: set of keys it depends on}, only among the given tasks."""
    by_key = {t.key: t for t in tasks}
    deps = {}
    for task in tasks:
        wanted = {d.key for d in task.dependencies()}
        missing = wanted - set(by_key)
        if missing:
            raise TaskError("%s depends on %s, which is not part of the cluster's tasks"
                            % (task.key, ", ".join(sorted(missing))))
        deps[task.key] = wanted
    return deps


def levels(tasks):
    """Tasks grouped into levels: every task's dependencies are in earlier levels."""
    by_key = {t.key: t for t in tasks}
    remaining = dependency_map(tasks)
    done = set()
    result = []
    while remaining:
        ready = sorted(k for k, deps in remaining.items() if deps <= done)
        if not ready:
            raise CycleError("dependency cycle among: %s" % ", ".join(sorted(remaining)))
        result.append([by_key[k] for k in ready])
        done.update(ready)
        for key in ready:
            del remaining[key]
    return result
