# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs a module that writes the cluster spec (cluster, instance_group, cluster_upgrade, keypair) with the
playbook, line and task that ran it added to its change_cause: the spec's history (docs/state-store.md) records
which playbook made each revision.  Only the controller knows that; the module, run in a temporary directory,
cannot.  A change_cause the task gives comes first.  What the module waits for is printed as it waits
(plugin_utils/notices.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.plugin_utils.notices import NoticesAction


def task_cause(task, given=None):
    """'[<given>; ]<playbook path>:<line> (<task name>)' of a task (its name alone when it came from no file)."""
    where = task.get_path() or ""
    name = task.get_name() or ""
    origin = "%s (%s)" % (where, name) if where else name
    return "%s; %s" % (given, origin) if given else origin


class ActionModule(NoticesAction):

    MODULE = "kubeops.kops.cluster"

    def module_arguments(self):
        args = dict(self._task.args)
        args["change_cause"] = task_cause(self._task, args.get("change_cause"))
        return args
