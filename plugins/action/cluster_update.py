# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.cluster_update with the directory of the collection it comes from.

The module puts this collection on the nodes (nodeconfig/boot_artifacts.py).  Where Ansible found it (an
ansible.cfg's relative collections_path, ANSIBLE_COLLECTIONS_PATH, ~/.ansible/collections, a virtualenv) is known
here, on the controller, from this plugin's own location; the module, running in a temporary directory, could
only guess.  It is handed over in KUBEOPS_COLLECTION_DIR when the module runs on this controller (connection
local, as the playbooks run it); a value the user set is kept.
"""

from __future__ import annotations

import os

from ansible.plugins.action import ActionBase

COLLECTION_ENV = "KUBEOPS_COLLECTION_DIR"
# plugins/action/cluster_update.py -> the collection's root
COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        if self._connection.transport == "local" and not os.environ.get(COLLECTION_ENV):
            # The task's environment is applied to the module's process (a copy: the task is not changed).
            self._task.environment = list(self._task.environment or []) + [{COLLECTION_ENV: COLLECTION_DIR}]
        result.update(self._execute_module(module_name="kubeops.kops.cluster_update", module_args=self._task.args,
                                           task_vars=task_vars))
        return result
