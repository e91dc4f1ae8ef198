"""One error path: every error plugins/ raises on purpose is a KopsError of its layer (plugins/module_utils/errors.py),
never a plain built-in exception a module would report with a traceback.  Parsed with ast, so a new
``raise ValueError(...)`` (or one built to be raised later: ``return ValueError(...)``) fails here by file and line."""

from __future__ import annotations

import ast
import pathlib

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import errors
from ansible_collections.kubeops.kops.plugins.module_utils.api import quantity
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeconfig_config, etcd_assets
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import hooks
from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import rolling as gce_rolling

PLUGINS = pathlib.Path(__file__).resolve().parents[2] / "plugins"

# The built-in exceptions an error raised on purpose used to be, instead of its layer's KopsError.
BUILT_INS = {"ValueError", "TypeError", "RuntimeError", "Exception"}

# "<path under plugins/>:<line>" -> why that built-in exception stays.  Empty: none is left.
ALLOWED = {}

# "<path under plugins/>:<class>" of an exception class not based on KopsError -> why it is not one.
OWN_CLASSES = {
    "module_utils/errors.py:KopsError": "the one base: a ValueError, so callers catching bad input keep working",
    "module_utils/nodeup/boot_fetch.py:Refused":
        "the boot script's downloader runs on the node's bare python3 before the collection is there (stdlib only); "
        "the script prints it",
    "module_utils/nodeup/node_labeller.py:NotIdentified": "the labeller daemon's signal for a Node it skips: caught "
                                                          "and logged in the same file, never a module's failure",
    "module_utils/nodeup/node_labeller.py:KubeError": "the labeller daemon's API answer (with its HTTP status): "
                                                      "caught, logged and retried in the same file",
    "module_utils/cloud/base.py:TryAgain": "a retry signal the engine and deletion catch (Cloud.retryable), never "
                                           "reported",
}


def built_in_errors_made(path):
    """(line, name) of each built-in exception the file constructs (raise X(...), return X(...), f(X(...)))."""
    tree = ast.parse(path.read_text(), str(path))
    return sorted((node.lineno, node.func.id) for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILT_INS)


def test_no_built_in_exception_is_raised_on_purpose():
    found = ["%s:%d: %s" % (path.relative_to(PLUGINS), line, name)
             for path in sorted(PLUGINS.rglob("*.py")) for line, name in built_in_errors_made(path)]
    unexplained = [f for f in found if f.rsplit(":", 1)[0] not in ALLOWED]
    assert unexplained == [], "raise the layer's KopsError (plugins/module_utils/errors.py) instead: %s" % unexplained


def exception_classes_on_built_ins(path):
    """Names of the classes the file bases directly on a built-in exception."""
    tree = ast.parse(path.read_text(), str(path))
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(base, ast.Name) and base.id in BUILT_INS for base in node.bases)]


def test_every_exception_class_is_a_kops_error_or_says_why_not():
    found = {"%s:%s" % (path.relative_to(PLUGINS), name)
             for path in sorted(PLUGINS.rglob("*.py")) for name in exception_classes_on_built_ins(path)}
    assert found == set(OWN_CLASSES), "base the class on its layer's KopsError (plugins/module_utils/errors.py)"


def test_the_check_finds_a_plain_value_error(tmp_path):
    """The scan is not vacuous: it sees the shapes a plain error is written in."""
    source = tmp_path / "layer.py"
    source.write_text("def f(x):\n    if x:\n        raise ValueError('bad %r' % x)\n    return TypeError('later')\n")
    assert built_in_errors_made(source) == [(3, "ValueError"), (4, "TypeError")]
    source.write_text("class Refusal(ValueError):\n    pass\n")
    assert exception_classes_on_built_ins(source) == ["Refusal"]


def _raised(call):
    try:
        call()
    except errors.KopsError as exc:
        return exc
    raise AssertionError("no KopsError raised")


@pytest.mark.parametrize("call, layer, message, fix", [
    (lambda: nodeconfig_config.config_path_of("", "Node"), errors.NodeConfigError,
     "no nodeup config for instance group '' with role 'Node'", "give the host kops_instance_group (a group name)"),
    (lambda: etcd_assets.install_plan("main", ""), errors.NodeConfigError,
     "etcd cluster main: no etcd version", "set spec.etcdClusters[].version (one of "),
    (lambda: hooks.hook_unit("bad", {"execContainer": {"image": " "}}), errors.NodeError,
     "hooks[bad].execContainer.image is empty", "name the image to run"),
    (lambda: gce_rolling.GceRolling(None).detach({"name": "nodes"}, {}), errors.CloudError,
     "GCE managed instance groups cannot surge (kops neither)", "set maxSurge to 0 for nodes"),
    (lambda: quantity.canonical("lots"), errors.SpecError, "'lots' is not a quantity", None),
])
def test_an_error_names_its_layer_and_keeps_its_fix_apart(call, layer, message, fix):
    """Raised through the layer's class; the fix (where the message had one) in its own field, said once after the
    message, as the message said it before."""
    error = _raised(call)
    assert isinstance(error, layer)
    if fix is None:
        assert error.fix is None and str(error).startswith(message)
    else:
        assert error.fix.startswith(fix) and str(error) == "%s; %s" % (message, error.fix)
