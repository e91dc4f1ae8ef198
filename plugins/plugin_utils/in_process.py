# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Run one of this collection's modules inside the task's worker process, when it would run on this controller anyway.

Ansible runs a module by packaging it (AnsiballZ: a scan of its imports and a zip of every module_utils it reaches,
about 200 files here, redone on every ansible-playbook run), starting a new interpreter that unzips it and compiles
every imported file from source (a zip has no bytecode), and parsing the JSON the module prints.  On a small
cluster that is about half of a run's CPU (docs/performance.md).  The playbooks run these modules on localhost with
the playbook's own Python, so the same code can run in the worker that ansible-playbook has already forked for the
task:

- the arguments are the ones Ansible would send (ActionBase._update_module_args: check mode, diff, no_log,
  verbosity, the temporary directory), encoded with the module's serialization profile;
- the module runs through ansible-core's own AnsiballZ entry point (module_utils/_internal/_ansiballz/_loader.py:
  runpy as __main__, the same handling of an uncaught exception), with the task's environment applied;
- its printed result is parsed and cleaned by the same ActionBase methods as a packaged module's output;
- the collection's files are imported by Python's path finder from the collection's directory, so their bytecode is
  cached in __pycache__ (Ansible's collection loader compiles each file from source on every import).

Anything else runs the normal way (ActionBase._execute_module): another connection or interpreter, become, async,
an ansible-core without this module protocol (before 2.19), AnsiballZ extensions (ansible-test's coverage, a
debugger), module metadata profiles, or KUBEOPS_IN_PROCESS=0 (the switch to compare or to debug).

ansible-core has no public API to run a module in a process it did not start, so a few of its private names are
used; each use says why, and PROTOCOL checks they are there (a core without them runs modules the normal way).
Public API is used wherever there is one: the configuration (C.config.get_config_value) and the task's Templar for
the interpreter, module_utils.common.json for the encoding, vars.clean for the result.  The underscored methods of
the action (_execute_module, _update_module_args, _parse_returned_data, _task, _connection, ...) are ActionBase's
interface to its subclasses, what every action plugin calls; they are not counted here as private.
"""

from __future__ import annotations

import collections.abc
import contextlib
import importlib.machinery
import io
import json
import os
import sys
import warnings

from ansible import constants as C
from ansible.utils.display import Display

try:  # ansible-core 2.19's module protocol; older cores run modules the normal way
    from ansible.module_utils import basic
    # Private: the AnsiballZ wrapper's entry point (runpy as __main__, an uncaught exception turned into the
    # result Ansible expects) is the only code that runs a module as a packaged run does; no public equivalent.
    from ansible.module_utils._internal._ansiballz import _loader
    from ansible.module_utils.common import warnings as module_warnings
    from ansible.module_utils.common.json import Direction, get_module_encoder
    from ansible.vars.clean import remove_internal_keys
    # Private, read and restored only: basic._ANSIBLE_ARGS/_ANSIBLE_PROFILE (the arguments _loader hands the module)
    # and module_warnings._global_warnings/_global_deprecations (what a module warned of, module-level state that a
    # new interpreter starts empty: the public get_warning_messages() reads it but nothing public clears it).
    PROTOCOL = hasattr(basic, "_ANSIBLE_PROFILE") and hasattr(module_warnings, "_global_deprecations")
except ImportError:
    PROTOCOL = False

SWITCH_ENV = "KUBEOPS_IN_PROCESS"
COLLECTION_PACKAGE = "ansible_collections.kubeops.kops"
# The packages whose files the module imports; anything else (ansible's own files, other collections) is left to
# the finders in place.
BYTECODE_PACKAGES = (COLLECTION_PACKAGE + ".plugins.module_utils", COLLECTION_PACKAGE + ".plugins.modules")
LEGACY_PROFILE = "legacy"  # the profile of a module without METADATA (module_common._DEFAULT_LEGACY_METADATA)
# INTERPRETER_PYTHON values that ask Ansible to discover the interpreter (module_common._get_shebang's list).
DISCOVERY_MODES = ("auto", "auto_legacy", "auto_silent", "auto_legacy_silent")
display = Display()


class _CollectionPathFinder(object):
    """Imports the collection's modules and module_utils from their files with Python's source loader, which caches
    their bytecode.  (Not through sys.path_hooks: Ansible's hook there hands collection paths to its own loader.)
    A directory without __init__.py is left to Ansible's loader: it has no code."""

    def __init__(self):
        self.finders = {}

    def find_spec(self, fullname, path=None, target=None):
        if path is None or not _ours(fullname):
            return None
        for entry in path:
            finder = self.finders.get(entry)
            if finder is None:
                finder = self.finders[entry] = importlib.machinery.FileFinder(
                    entry, (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES))
            spec = finder.find_spec(fullname, target)
            if spec is not None and spec.loader is not None:
                return spec
        return None

    def invalidate_caches(self):
        for finder in self.finders.values():
            finder.invalidate_caches()


def _ours(name):
    return any(name == p or name.startswith(p + ".") for p in BYTECODE_PACKAGES)


@contextlib.contextmanager
def _fresh_imports():
    """The module imports the collection's files afresh, as in a new interpreter (none of the module-level state of
    the copies the controller's plugins loaded), through the path finder; the controller's copies are put back."""
    saved = dict((name, module) for name, module in sys.modules.items() if _ours(name))
    parent = sys.modules.get(COLLECTION_PACKAGE + ".plugins")
    saved_attributes = dict((leaf, getattr(parent, leaf)) for leaf in ("module_utils", "modules") if hasattr(parent, leaf))
    for name in saved:
        del sys.modules[name]
    finder = _CollectionPathFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        for leaf in ("module_utils", "modules"):
            if leaf in saved_attributes:
                setattr(parent, leaf, saved_attributes[leaf])
            elif parent is not None and hasattr(parent, leaf):
                delattr(parent, leaf)


@contextlib.contextmanager
def _process_state(environment):
    """The task's environment, fresh warning lists and captured stdio for the module; all restored afterwards."""
    saved_environ = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdout, sys.stderr
    saved_params = basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE  # private, set by _loader: put back (see the imports)
    os.environ.update((str(k), str(v)) for k, v in environment.items())
    # Private (see the imports): the module starts with no warnings, as in a new interpreter.
    module_warnings._global_warnings.clear()
    module_warnings._global_deprecations.clear()
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        with warnings.catch_warnings():
            yield out, err
    finally:
        sys.stdout, sys.stderr = saved_streams
        basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = saved_params
        module_warnings._global_warnings.clear()
        module_warnings._global_deprecations.clear()
        os.environ.clear()
        os.environ.update(saved_environ)
        try:
            os.chdir(saved_cwd)
        except OSError:
            pass


def python_interpreter(action, task_vars):
    """The Python a module would run under, or None while Ansible would discover it first: INTERPRETER_PYTHON as
    the task's variables set it (ansible_python_interpreter, else the configuration), templated, else the
    interpreter discovery already found.  What module_common._get_shebang (private) decides for python, through
    the public configuration API and the task's Templar."""
    configured = C.config.get_config_value("INTERPRETER_PYTHON", variables=task_vars)
    # Templated as given: a str method (strip) would drop the value's trust, and the template would stay a string.
    interpreter = action._templar.template(configured) if isinstance(configured, str) else configured
    interpreter = interpreter.strip() if isinstance(interpreter, str) else interpreter
    if not interpreter or interpreter in DISCOVERY_MODES:
        return (task_vars.get("ansible_facts") or {}).get("discovered_interpreter_python")
    return interpreter


def _exit_status(code, err):
    """The process exit status a SystemExit(code) gives (as the interpreter reports it)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    err.write("%s\n" % code)
    return 1


class InProcess(object):
    """Runs an action's module in its worker when that is the same as running it on this controller."""

    def __init__(self, action):
        self.action = action

    def module_path(self, module_name):
        """The module's file in this collection, or None if Ansible would run another one (routing, a shadowing
        collection)."""
        package = sys.modules.get(COLLECTION_PACKAGE)
        if package is None or not module_name.startswith("kubeops.kops."):
            return None
        found = self.action._shared_loader_obj.module_loader.find_plugin_with_context(module_name,
                                                                                      collection_list=self.action._task.collections)
        expected = os.path.join(list(package.__path__)[0], "plugins", "modules", module_name.rsplit(".", 1)[-1] + ".py")
        if not found.resolved or not found.plugin_resolved_path:
            return None
        if os.path.realpath(found.plugin_resolved_path) != os.path.realpath(expected):
            return None
        return found.plugin_resolved_path

    def why_not(self, module_name, task_vars, wrap_async):
        """Why the module must run the normal way; None when it can run here."""
        action = self.action
        if os.environ.get(SWITCH_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
            return "%s is off" % SWITCH_ENV
        if not PROTOCOL:
            return "this ansible-core's module protocol is not the one this runs (2.19)"
        # _remote_is_local: ConnectionBase's flag for a "local" connection that runs elsewhere (network OSes),
        # which ActionBase itself reads; no public property says it.
        if action._connection.transport != "local" or getattr(action._connection, "_remote_is_local", False):
            return "the connection is not local"
        if wrap_async or action._task.async_val:
            return "async"
        if action._play_context.become:
            return "become"
        # A private setting (its name starts with _): the experimental switch that lets a module pick another
        # serialization profile; this runs the legacy profile only, and there is no public way to ask.
        if C.config.get_config_value("_MODULE_METADATA"):
            return "module metadata profiles are on"
        try:
            # Private: AnsiballZ's extension manager is the only place that knows whether coverage or a debugger
            # is wired into module runs (from private settings); a public way to ask does not exist.
            from ansible._internal._ansiballz import _builder
            if _builder.ExtensionManager.create(task_vars=task_vars).extension_names:
                return "AnsiballZ extensions (coverage, a debugger) are on"
        except Exception:  # pylint: disable=broad-except  # a core without them: the normal way, to be safe
            return "AnsiballZ extensions cannot be checked"
        interpreter = python_interpreter(action, task_vars)
        if interpreter is None:
            return "the interpreter needs discovery"
        if os.path.normpath(str(interpreter)) != os.path.normpath(sys.executable):
            return "the module's interpreter %s is not this Python" % interpreter
        if self.module_path(module_name) is None:
            return "%s is not this collection's file" % module_name
        return None

    def execute(self, module_name, module_args, task_vars):
        """The module's result, as ActionBase._execute_module returns it."""
        action = self.action
        module_args = dict(module_args)
        # As ActionBase._execute_module without pipelining: the module's tmpdir (the shell's tmpdir is where
        # ActionBase keeps it; no public accessor).
        if action._connection._shell.tmpdir is None:
            action._make_tmp_path()
        action._update_module_args(module_name, module_args, task_vars)
        encoder = get_module_encoder(LEGACY_PROFILE, Direction.CONTROLLER_TO_MODULE)
        params = json.dumps(dict(ANSIBLE_MODULE_ARGS=module_args), cls=encoder).encode()
        environment = {}
        action._compute_environment_string(environment)
        fqn = "ansible_collections.%s.plugins.modules.%s" % tuple(module_name.rsplit(".", 1))
        display.vvv("Running %s in this worker (plugin_utils/in_process.py)" % fqn)
        with _process_state(environment) as (out, err):
            try:
                with _fresh_imports():
                    _loader.run_module(json_params=params, profile=LEGACY_PROFILE, module_fqn=fqn,
                                       modlib_path=os.path.dirname(os.path.dirname(os.path.dirname(
                                           list(sys.modules[COLLECTION_PACKAGE].__path__)[0]))),
                                       extensions={})
                rc = 0  # run_module raises when the module did not exit; not reached
            except SystemExit as exc:
                rc = _exit_status(exc.code, err)
        stdout, stderr = out.getvalue(), err.getvalue()
        result = dict(rc=rc, stdout=stdout, stdout_lines=stdout.splitlines(), stderr=stderr, stderr_lines=stderr.splitlines())
        return finish(action, action._parse_returned_data(result, LEGACY_PROFILE))


def finish(action, data):
    """What ActionBase._execute_module does to a parsed module result (2.19), for a module run in the worker."""
    if data.pop("_ansible_suppress_tmpdir_delete", False):
        action._cleanup_remote_tmp = False
    if "results" in data and (not isinstance(data["results"], collections.abc.Sequence) or isinstance(data["results"], str)):
        data["ansible_module_results"] = data.pop("results")
        display.warning("Found internal 'results' key in module return, renamed to 'ansible_module_results'.")
    remove_internal_keys(data)
    for stream in ("stdout", "stderr"):
        if stream in data and stream + "_lines" not in data:
            data[stream + "_lines"] = (data.get(stream) or "").splitlines()
    return data


def execute_module(action, module_name, module_args, task_vars, wrap_async=False):
    """The module's result: run in this worker when that is the same as running it here, else Ansible's way."""
    runner = InProcess(action)
    reason = runner.why_not(module_name, task_vars, wrap_async)
    if reason is None:
        return runner.execute(module_name, module_args, task_vars)
    display.vvv("Running %s the normal way: %s" % (module_name, reason))
    return action._execute_module(module_name=module_name, module_args=module_args, task_vars=task_vars,
                                  wrap_async=wrap_async)
