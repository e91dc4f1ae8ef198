# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The controller side of module notices (module_utils/waits.py): while a module runs, print each line it writes.

A module prints nothing until it returns; a wait of a minute (an endpoint that does not answer, the nodes' wheels
downloading) would be a minute of silence.  When the module runs on this controller (connection local, as the
playbooks run them), the action gives it a notice file in KUBEOPS_NOTICE_FILE and prints each line written there
as it appears (within POLL seconds), then removes the file (to stderr under a stdout callback that prints JSON).

It also hands the module the directory of the collection it comes from, in KUBEOPS_COLLECTION_DIR (a value the
user set is kept).  Where Ansible found the collection is known here, from this file's own location; the module,
running from Ansible's zip in a temporary directory, could only guess.  cluster_update puts the collection on the
nodes from there (nodeconfig/boot_artifacts.py), and every module finds there the cloud packages the zip does not
hold (provider_names.py: a cloud added as providers/<cloud>/).

With a local connection the module itself runs in the task's worker process (plugin_utils/in_process.py: no
AnsiballZ packaging, no new interpreter), with the same result.
"""

from __future__ import annotations

import os
import tempfile
import threading

from ansible import constants as C
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.kubeops.kops.plugins.plugin_utils import in_process

NOTICE_ENV = "KUBEOPS_NOTICE_FILE"
COLLECTION_ENV = "KUBEOPS_COLLECTION_DIR"
# plugins/plugin_utils/notices.py -> the collection's root
COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
POLL = 0.2  # with module_utils/waits.py's early notices, a silence the user sees stays within 10 s
display = Display()


def to_stderr():
    """Whether the lines go to stderr: when the stdout callback prints the run as one document (ansible.posix.json,
    jsonl...), whose readers a line in between would break; there they go beside Ansible's warnings.  Otherwise they
    go where the task's own output goes (a console, an AWX job's events, a log of stdout)."""
    name = C.config.get_config_value("DEFAULT_STDOUT_CALLBACK") or ""
    return "json" in name.rsplit(".", 1)[-1]


class _Follower(object):
    """Prints the lines appended to a file, from a thread, until stopped (then the rest)."""

    def __init__(self, path, prefix):
        self.path = path
        self.prefix = prefix
        self.stderr = to_stderr()
        self.offset = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="kubeops-notices", daemon=True)

    def _print_new(self):
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self.offset)
                data = stream.read()
        except OSError:
            return
        complete = data.rfind(b"\n") + 1
        self.offset += complete
        for line in data[:complete].decode("utf-8", "replace").splitlines():
            display.display("%s%s" % (self.prefix, line), stderr=self.stderr)

    def _run(self):
        while not self.done.wait(POLL):
            self._print_new()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self._print_new()
        return False


class NoticesAction(ActionBase):
    """Runs the module of the same name with a notice file followed while it runs (local connection only)."""

    MODULE = None  # kubeops.kops.<name>: the module this action runs
    _supports_check_mode = True
    _supports_async = True  # as the module alone (ansible's normal action); an async run prints no notices

    def module_environment(self):
        """Variables the module needs besides the notice file: the collection's directory (a subclass adds its own)."""
        return {} if os.environ.get(COLLECTION_ENV) else {COLLECTION_ENV: COLLECTION_DIR}

    def module_arguments(self):
        """The module's arguments: the task's (a subclass adds what only the controller knows)."""
        return self._task.args

    def run(self, tmp=None, task_vars=None):
        result = super(NoticesAction, self).run(tmp, task_vars)
        del tmp
        module = self.MODULE
        wrap_async = self._task.async_val and not self._connection.has_native_async
        if self._connection.transport != "local" or wrap_async:  # the file would be on another host, or read later
            result.update(self._execute_module(module_name=module, module_args=self.module_arguments(), task_vars=task_vars,
                                               wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        handle, path = tempfile.mkstemp(prefix="kubeops-notices-", suffix=".log")
        os.close(handle)
        environment = dict(self.module_environment())
        environment[NOTICE_ENV] = path
        # The task's environment is applied to the module's process (a copy: the task is not changed).
        self._task.environment = list(self._task.environment or []) + [environment]
        prefix = "%s: " % module.rsplit(".", 1)[-1]
        try:
            with _Follower(path, prefix):
                result.update(in_process.execute_module(self, module, self.module_arguments(), task_vars))
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
