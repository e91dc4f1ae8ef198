# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Print text to the controller's stdout as it is, whatever the stdout callback.

The playbooks use it to show YAML (get_cluster.yml without `output`): the
debug module's message goes through the callback, which outside this
repository (Ansible's default result format) prints it as one JSON-escaped
string. Controller-only; no module runs.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(("text",))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        text = self._task.args.get("text")
        if not isinstance(text, str):
            result.update(failed=True, msg="text must be a string, not %s" % type(text).__name__)
            return result
        display.display(text.rstrip("\n"))
        result["changed"] = False
        return result
