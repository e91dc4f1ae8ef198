"""Run our modules in-process, the way ansible-core 2.19 unit tests do."""

from __future__ import annotations

import json

import pytest
from ansible.module_utils.testing import patch_module_args


@pytest.fixture
def run_module(capsys, monkeypatch):
    # A module runs in a process of its own, where ansible-core's is_controller is False; a test of a controller
    # plugin earlier in this worker sets it True, and module.warn() would then go to the Display, not the result.
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings as module_warnings
    monkeypatch.setattr(_internal, "is_controller", False)

    def run(module, check_mode=False, diff=False, **args):
        # A module's process starts with no warnings: drop what earlier code in this worker left in ansible-core's
        # global lists (they would be returned with this module's result).
        module_warnings._global_warnings.clear()  # pylint: disable=protected-access
        module_warnings._global_deprecations.clear()  # pylint: disable=protected-access
        args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                module.main()
        return json.loads(capsys.readouterr().out)
    return run


@pytest.fixture
def store_url(tmp_path):
    return "file://%s" % (tmp_path / "state")


def store_files(store_url):
    """{relative path: bytes} of everything in a file:// store."""
    import pathlib
    root = pathlib.Path(store_url[len("file://"):])
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
