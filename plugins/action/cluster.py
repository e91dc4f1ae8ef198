# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs a module that writes the cluster spec (cluster, instance_group, cluster_upgrade, keypair) with the
playbook, line and task that ran it added to its change_cause: the spec's history (docs/state-store.md) records
which playbook made each revision.  Only the controller knows that; the module, run in a temporary directory,
cannot.  A change_cause the task gives comes first.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase


def task_cause(task, given=None):
    """'[<given>; ]<playbook path>:<line> (<task name>)' of a task (its name alone when it came from no file)."""
    where = task.get_path() or ""
    name = task.get_name() or ""
    origin = "%s (%s)" % (where, name) if where else name
    return "%s; %s" % (given, origin) if given else origin


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        args["change_cause"] = task_cause(self._task, args.get("change_cause"))
        module = getattr(self._task, "resolved_action", None) or self._task.action
        result.update(self._execute_module(module_name=module, module_args=args, task_vars=task_vars))
        return result
