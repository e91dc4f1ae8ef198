"""plugin_utils/in_process.python_interpreter: the Python a module would run under, read through ansible-core's
public configuration API and the task's Templar (module_common._get_shebang, which decides it for a packaged run,
is private).  A module runs in the worker only when this is the worker's own Python."""

from __future__ import annotations

import types

import pytest
from ansible.template import Templar, trust_as_template

from ansible_collections.kubeops.kops.plugins.plugin_utils import in_process

PLAYBOOK_PYTHON = "/opt/venv/bin/python3"


def _action(variables):
    return types.SimpleNamespace(_templar=Templar(variables=variables))


@pytest.mark.parametrize("task_vars, expected", [
    # The playbooks' own setting, a template of a variable: rendered (a value made plain by a str method first would
    # stay the template text, and no module would run in the worker).
    ({"ansible_python_interpreter": trust_as_template("{{ ansible_playbook_python }}"),
      "ansible_playbook_python": PLAYBOOK_PYTHON}, PLAYBOOK_PYTHON),
    ({"ansible_python_interpreter": " /usr/bin/python3 "}, "/usr/bin/python3"),
    # Discovery asked for (the default) and already made: its answer.
    ({"ansible_python_interpreter": "auto_silent",
      "ansible_facts": {"discovered_interpreter_python": "/usr/bin/python3.11"}}, "/usr/bin/python3.11"),
    # Discovery asked for and not made yet: None, so the module runs the normal way (Ansible discovers).
    ({"ansible_python_interpreter": "auto"}, None),
])
def test_the_interpreter_is_the_one_ansible_would_use(task_vars, expected):
    assert in_process.python_interpreter(_action(task_vars), task_vars) == expected
