"""One error base: every error class of the collection that is a ValueError is a KopsError, through its layer's
class; a module reports one as a single fail_json (message and fix once, no traceback)."""

from __future__ import annotations

import ast
import pathlib

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import errors
from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors
from ansible_collections.kubeops.kops.plugins.module_utils.api.errors import ValidationError, required
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import TaskFailed
from ansible_collections.kubeops.kops.plugins.module_utils.statestore.vfs import NotFoundError

MODULE_UTILS = pathlib.Path(__file__).resolve().parents[2] / "plugins" / "module_utils"


def _classes_based_on_value_error():
    found = []
    for path in sorted(MODULE_UTILS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "ValueError" for b in node.bases):
                found.append("%s:%s" % (path.relative_to(MODULE_UTILS), node.name))
    return found


def test_only_kops_error_subclasses_value_error_directly():
    assert _classes_based_on_value_error() == ["errors.py:KopsError"]


@pytest.mark.parametrize("error, layer", [
    (ValidationError([required("spec.cloudProvider")]), errors.SpecError),
    (NotFoundError("memfs://x: not found"), errors.StateStoreError),
    (TaskFailed([("SecurityGroup/nodes", "refused")]), errors.TaskError),
])
def test_layer_errors_are_kops_errors_and_value_errors(error, layer):
    assert isinstance(error, layer) and isinstance(error, errors.KopsError) and isinstance(error, ValueError)


def test_the_fix_is_part_of_the_message_once():
    error = errors.StateStoreError("s3://bucket: access denied", fix="give the role s3:GetObject")
    assert error.fix == "give the role s3:GetObject"
    assert str(error) == "s3://bucket: access denied; give the role s3:GetObject"
    assert error.result() == {"msg": str(error)}
    assert errors.KopsError("no fix known").fix is None


class FakeModule(object):
    fail_from = KopsModule.fail_from

    def __init__(self):
        self.failed = None

    def fail_json(self, **result):
        self.failed = result
        raise SystemExit(1)


def _run(decorator, error):
    @decorator
    def run(module):
        raise error
    module = FakeModule()
    with pytest.raises(SystemExit):
        run(module)
    return module.failed


def test_a_kops_module_reports_a_kops_error_without_traceback():
    error = TaskFailed([("SecurityGroup/nodes", "InvalidGroup.NotFound: gone (run update again)")])
    assert _run(reports_errors, error) == {"msg": str(error)}


def test_a_kops_module_reports_another_value_error_with_its_traceback():
    failed = _run(reports_errors, ValueError("invalid literal for int() with base 10: 'x'"))
    assert failed["msg"] == "invalid literal for int() with base 10: 'x'" and "Traceback" in failed["exception"]


@pytest.mark.parametrize("error", [errors.NodeError("etcd: member main-a is not healthy", fix="look at its log"),
                                   ValueError("bad input")])
def test_other_modules_report_value_errors_as_their_message(error):
    assert _run(errors.reported, error) == {"msg": str(error)}


def test_other_errors_are_not_caught():
    @errors.reported
    def run(module):
        raise KeyError("a bug")
    with pytest.raises(KeyError):
        run(FakeModule())
