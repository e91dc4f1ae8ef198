"""The node side runs without the controller side: nodeup/ imports nothing from nodeconfig/ (nor from the layers
that decide what a cluster is), and no module a node runs (those roles/ and playbooks/nodeup.yml call) ships any
of it.  Checked on the parsed source, function-level imports included, so a new import fails here."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
MODULE_UTILS = REPO / "plugins" / "module_utils"
PREFIX = "ansible_collections.kubeops.kops.plugins.module_utils"
# What decides what a cluster is, on the controller: the node side reads its decisions from the nodeup config.
CONTROLLER_ONLY = ("nodeconfig", "completion", "model", "tasks", "engine", "providers", "addons", "rolling",
                   "deletion", "updates", "clusters", "upgrade")


def imports(path):
    """The module_utils modules a file imports (dotted, relative to module_utils), wherever the import is."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # The collection's Python imports absolutely (ansible_collections...); a relative one would hide here.
            assert not node.level, "%s:%d: a relative import" % (path, node.lineno)
            names = [node.module] + ["%s.%s" % (node.module, alias.name) for alias in node.names]
        else:
            continue
        for name in names:
            if name == PREFIX or name.startswith(PREFIX + "."):
                found.add(name[len(PREFIX) + 1:])
    # "from pkg import name" names a module only when pkg/name.py (or pkg/name/) exists.
    return {name for name in found if name and _path_of(name)}


def _path_of(name):
    base = MODULE_UTILS.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def shipped(path):
    """Every module_utils module a file needs, transitively (what AnsiballZ puts in a module's payload)."""
    seen, todo = set(), sorted(imports(path))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(imports(_path_of(name)) - seen)
    return seen


def _forbidden(name):
    return any(name == layer or name.startswith(layer + ".") for layer in CONTROLLER_ONLY)


def node_modules():
    """The modules roles/ and playbooks/nodeup.yml call: they run on the nodes."""
    texts = [p.read_text() for p in sorted((REPO / "roles").rglob("*.yml"))]
    texts.append((REPO / "playbooks" / "nodeup.yml").read_text())
    names = set(re.findall(r"\bkubeops\.kops\.(\w+)\s*:", "\n".join(texts)))
    return sorted(name for name in names if (REPO / "plugins" / "modules" / (name + ".py")).is_file())


def test_imports_are_parsed():
    # The parser sees top-level, function-level and multi-name imports (the rules below rest on it).
    assert "nodeconfig.config" in imports(MODULE_UTILS / "nodeconfig" / "store.py")
    assert "nodeup.manifests" in imports(MODULE_UTILS / "nodeup" / "credentials.py")
    assert "nodeup.etcd_volume" in imports(MODULE_UTILS / "nodeup" / "etcd_peers.py")  # inside a function
    assert {"cloud.aws", "nodeup.etcd_peers", "nodeup.etcd_volume"} <= shipped(REPO / "plugins/modules/etcd_peers.py")
    assert "nodeconfig.config" in shipped(REPO / "plugins/modules/cluster_update.py")


@pytest.mark.parametrize("path", sorted((MODULE_UTILS / "nodeup").rglob("*.py")), ids=lambda p: p.name)
def test_node_side_imports_no_controller_side(path):
    assert sorted(name for name in imports(path) if _forbidden(name)) == []


def test_node_modules_are_known():
    # The roles call these; if the pattern stopped finding them, the test below would pass on nothing.
    assert {"node_files", "node_assets", "node_certificates", "node_bootstrap", "etcd_member", "etcd_backup", "etcd_volume",
            "api_dns"} <= set(node_modules())


@pytest.mark.parametrize("module", node_modules())
def test_modules_run_on_nodes_ship_no_controller_side(module):
    payload = shipped(REPO / "plugins" / "modules" / (module + ".py"))
    assert sorted(name for name in payload if name.startswith("nodeconfig")) == []
