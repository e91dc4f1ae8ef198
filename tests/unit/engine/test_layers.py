"""The layers import in one direction (docs/architecture.md): checked on the source, so a new import that
breaks the seam fails here rather than in review."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3] / "plugins" / "module_utils"
IMPORT = re.compile(r"^\s*(?:from|import) ansible_collections\.kubeops\.kops\.plugins\.module_utils\.?([\w.]*)"
                    r"(?: import ([\w, ]+))?", re.M)

# package (or module) -> what it must never import
FORBIDDEN = {
    "api": ("completion", "statestore", "model", "tasks", "engine", "cloud", "providers", "updates"),
    "engine": ("model", "cloud.aws", "tasks", "providers", "updates", "api", "completion"),
    "engine/task.py": ("model", "tasks", "cloud.aws", "providers"),
    "cloud/base.py": ("cloud.aws", "model", "tasks", "engine", "providers"),
    "updates.py": ("model", "tasks.aws", "cloud.aws"),
    "completion": ("model", "tasks", "engine", "cloud.aws", "providers", "statestore"),
    # The model and the addons are handed what a driver asked the cloud (providers/<cloud>/), never a cloud client;
    # the addons and the node configs read names from cloud_names/, not from the tasks or the model.
    "model": ("cloud", "providers", "updates"),
    "addons": ("cloud", "tasks", "model", "providers", "engine", "updates"),
    "nodeconfig": ("cloud", "tasks", "model", "providers", "engine", "updates"),
}


def _imports(path):
    found = set()
    for package, names in IMPORT.findall(path.read_text()):
        found.add(package)
        for name in (names or "").replace(" ", "").split(","):
            if name:
                found.add("%s.%s" % (package, name) if package else name)
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_downstream(layer):
    paths = [ROOT / layer] if layer.endswith(".py") else sorted((ROOT / layer).rglob("*.py"))
    assert paths
    bad = []
    for path in paths:
        for imported in _imports(path):
            if any(imported == f or imported.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append("%s imports %s" % (path.relative_to(ROOT), imported))
    assert bad == []


# A cloud library, or a call through a cloud client: what only a driver (providers/<cloud>/) or a task (tasks/) may do.
CLOUD_CALL = re.compile(r"^\s*(?:from|import) (?:boto3|botocore|google\.auth|google\.oauth2)\b"
                        r"|\.client\(|\.get_paginator\(|\.tagged_resources\(|\.find\(cloud\b"
                        r"|\bAuthorizedSession\b", re.M)
NO_CLOUD_CALLS = ("model", "addons")


def cloud_calls(source):
    """The lines of source that import a cloud library or call through a cloud client."""
    return [line.strip() for line in source.splitlines() if CLOUD_CALL.search(line)]


@pytest.mark.parametrize("layer", NO_CLOUD_CALLS)
def test_model_and_addons_call_no_cloud(layer):
    bad = ["%s: %s" % (path.relative_to(ROOT), line) for path in sorted((ROOT / layer).rglob("*.py"))
           for line in cloud_calls(path.read_text())]
    assert bad == []


def test_the_cloud_call_rule_finds_what_it_forbids():
    """What model/aws/lookalike.py, model/aws/kops_controller.py, model/aws/karpenter.py and addons/channel.py did
    before their lookups moved to providers/aws/update_facts.py: each is found."""
    for line in ('    elbv2 = cloud.client("elbv2")', "    import botocore.exceptions",
                 "    from botocore.exceptions import BotoCoreError, ClientError",
                 '    pages = cloud.client("ec2").get_paginator("describe_network_interfaces").paginate(',
                 "    tagged = cloud.tagged_resources() if wanted else None", "            task.find(cloud)",
                 '    return cloud.lookup("account", lambda: cloud.client("sts").get_caller_identity()["Account"])'):
        assert cloud_calls(line) == [line.strip()], line
    assert cloud_calls('    """the cloud\'s client is the driver\'s"""\n    found = tasks.get(name)') == []


# Every import of module_utils by module_utils, wherever it is written (a function-level import is an import too).
ANY_IMPORT = re.compile(r"^\s*(?:from|import) ansible_collections\.kubeops\.kops\.plugins\.module_utils\.?([\w.]*)"
                        r"(?: import (?:\(([^)]*)\)|([\w, ]+)))?", re.M)


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph():
    """{module: modules it imports} over plugins/module_utils (a package is its __init__)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for base, parenthesised, plain in ANY_IMPORT.findall(path.read_text()):
            names = [n for n in (parenthesised or plain).replace("\n", "").replace(" ", "").split(",") if n]
            submodules = {"%s.%s" % (base, n) if base else n for n in names} & set(modules)
            imported |= submodules
            if base in modules and (base or not submodules):
                imported.add(base)
        imported.discard(name)
        graph[name] = imported
    return graph


def package_graph(graph):
    """{top-level package or module: those it imports}, from the module graph."""
    packages = {}
    for name, imported in graph.items():
        packages.setdefault(name.split(".")[0], set()).update(i.split(".")[0] for i in imported)
    for name, imported in packages.items():
        imported.discard(name)
    return packages


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _explain(graph, component):
    return ["%s -> %s" % (a, b) for a in component for b in sorted(graph[a]) if b in component]


def test_no_package_imports_itself_through_another():
    packages = package_graph(module_graph())
    assert "engine" in packages and "tasks" in packages["model"]
    found = cycles(packages)
    assert found == [], [_explain(packages, c) for c in found]


def test_no_module_imports_itself_through_another():
    graph = module_graph()
    assert "engine.task" in graph["tasks.aws.ec2"]  # function-level and parenthesised imports are read too
    found = cycles(graph)
    assert found == [], [_explain(graph, c) for c in found]


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert package_graph({"x.one": {"y.two"}, "y.two": {"x.three"}, "x.three": set()}) == {"x": {"y"}, "y": {"x"}}


def test_generated_tables_import_nothing():
    """Each layer's generated/ (hack/gen_*.py's output) is data: it imports nothing, so a table never carries an
    import past the layer rules above, and the layer's hand-written code is all that reads it."""
    paths = sorted(ROOT.glob("*/generated/*.py"))
    assert len(paths) > 5
    bad = ["%s imports %s" % (p.relative_to(ROOT), ast.dump(node)) for p in paths for node in ast.walk(ast.parse(p.read_text()))
           if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and node.module != "__future__"]
    assert bad == []


def test_a_generated_table_is_read_only_by_its_own_layer():
    """api/generated/ is read by api/, nodeup/generated/ by nodeup/ (the node side ships its own tables): a table
    another layer needs is asked of its layer's code, so the layer rules above also hold for the data."""
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        layer = path.relative_to(ROOT).parts[0]
        for imported in _imports(path):
            parts = imported.split(".")
            if "generated" in parts and parts[0] != layer:
                bad.append("%s imports %s" % (path.relative_to(ROOT), imported))
    assert bad == []
