"""Every file path and module_utils symbol that docs/*.md names in a code span exists.

What counts as ours (kops' paths, state store keys and node paths are also written in code spans, and are not
checked here):
- a path under one of the repository's own top-level directories (``plugins/...``, ``tests/...``, ``roles/...``);
- a module_utils path: ``<package>/<module>.py`` or ``<package>/<module>`` for a module or package of
  plugins/module_utils (``engine/task.py``, ``addons/generated/image_data``);
- a symbol in one: ``<package>/<module>.<name>[.<attribute>]`` (``cloud/aws.create_once``,
  ``statestore/layout.ClusterStore.apply``), or ``tests/<module>.<name>``: the module must define it.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULE_UTILS = REPO / "plugins" / "module_utils"
DOCS = sorted((REPO / "docs").glob("*.md"))
TOP = ("plugins", "tests", "roles", "playbooks", "hack", "docs", "bench", "changelogs", "meta")
PACKAGES = tuple(sorted(p.name for p in MODULE_UTILS.iterdir() if p.is_dir() and not p.name.startswith("_")))
SPAN = re.compile(r"`([^`\n]+)`")
# Spans shaped like ours that name something else, each with what it is.
NOT_OURS = {
    "tests/integration/update_cluster": "kops' own fixture directory",
    "roles/kubespray_defaults/vars/main/checksums.yml": "a file of kubespray's",
    "roles/container.serviceAgent": "a GCP IAM role",
    "pki/private/": "a state store prefix",
}
NOT_PYTHON = ("yml", "yaml", "json", "txt", "go", "md", "sh", "j2", "cfg", "tf", "ini", "toml", "py")
REPO_PATH = re.compile(r"^(?:%s)/[\w./-]*$" % "|".join(TOP))
UTILS_PATH = re.compile(r"^(?:%s)(?:/\w+)+(?:\.py)?/?$" % "|".join(PACKAGES))
UTILS_SYMBOL = re.compile(r"^((?:%s)(?:/\w+)+)\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$" % "|".join(PACKAGES + ("tests",)))


def _defines(path, chain):
    """Whether the Python file defines chain (name, or Class.attribute)."""
    body = ast.parse(path.read_text()).body
    for name in chain.split("."):
        found = None
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for element in (target.elts if isinstance(target, ast.Tuple) else [target]):
                        if isinstance(element, ast.Name) and element.id == name:
                            found = node
            elif isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
                found = node
        if found is None:
            return False
        body = getattr(found, "body", [])
    return True


def _module_file(relative, root):
    """The .py file (or package __init__) of a slash-separated module path under root, or None."""
    for candidate in (root / (relative + ".py"), root / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def claims(text):
    """[(kind, span)] of the spans checked in a page's text."""
    found = []
    for span in SPAN.findall(text):
        span = span.strip()
        if span in NOT_OURS:
            continue
        symbol = UTILS_SYMBOL.match(span)
        if symbol and symbol.group(2).split(".")[0] not in NOT_PYTHON:
            found.append(("symbol", span))
        elif REPO_PATH.match(span):
            found.append(("repo path", span))
        elif UTILS_PATH.match(span):
            found.append(("module_utils path", span))
    return found


def problem(kind, span):
    """Why a claim is false, or None."""
    if kind == "repo path":
        return None if (REPO / span).exists() else "no such file or directory"
    if kind == "module_utils path":
        relative = span.rstrip("/")
        if relative.endswith(".py"):
            return None if (MODULE_UTILS / relative).is_file() else "no such module_utils file"
        return None if _module_file(relative, MODULE_UTILS) or (MODULE_UTILS / relative).is_dir() \
            else "no such module_utils module or package"
    module, chain = UTILS_SYMBOL.match(span).groups()
    root = REPO if module.startswith("tests/") else MODULE_UTILS
    path = _module_file(module, root)
    if path is None:
        return "no such module"
    return None if _defines(path, chain) else "%s defines no %s" % (path.relative_to(REPO), chain)


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_path_and_symbol_a_page_names_exists(doc):
    false = []
    for lineno, line in enumerate(doc.read_text().splitlines(), 1):
        for kind, span in claims(line):
            why = problem(kind, span)
            if why:
                false.append("docs/%s:%d: %s `%s`: %s" % (doc.name, lineno, kind, span, why))
    assert false == []


def test_the_checker_tells_true_claims_from_false_ones():
    text = ("`engine/task.py` `engine/runner.py` `tasks/base.py` `cloud/aws.create_once` `cloud/aws.no_such_thing` "
            "`statestore/layout.ClusterStore.apply` `tests/faults.py` `roles/nodeup/` `pkg/model/iam/iam_builder.go` "
            "`addons/bootstrap-channel.yaml` `/etc/kubernetes`")
    found = [(span, problem(kind, span)) for kind, span in claims(text)]
    assert found == [("engine/task.py", None), ("engine/runner.py", None), ("tasks/base.py", "no such module_utils file"),
                     ("cloud/aws.create_once", None),
                     ("cloud/aws.no_such_thing", "plugins/module_utils/cloud/aws.py defines no no_such_thing"),
                     ("statestore/layout.ClusterStore.apply", None), ("tests/faults.py", None), ("roles/nodeup/", None)]


def test_the_layers_table_lists_every_module_utils_package_and_no_other():
    """docs/architecture.md's table of packages: each row's first cell names packages of plugins/module_utils."""
    text = (REPO / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| ((?:`[\w/]+`(?:, )?)+) \|", text, re.M)
    listed = [name.strip("/").split("/")[0] for row in rows for name in re.findall(r"`([\w/]+)`", row)]
    assert sorted(set(listed)) == sorted(PACKAGES), "listed: %s" % sorted(set(listed))
