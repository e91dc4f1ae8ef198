"""The layers import in one direction (docs/architecture.md): checked on the source, so a new import that
breaks the seam fails here rather than in review."""

from __future__ import annotations

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
