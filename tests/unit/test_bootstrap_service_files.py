"""roles/protokube copies the bootstrap service's modules to the control plane one by one (no collection there):
every collection module they import must be in that list, or the service dies at start with an ImportError and
workers find nothing listening (seen when the service took atomic_write from module_utils/atomic.py)."""

import ast
import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULE_UTILS = REPO / "plugins" / "module_utils"
PREFIX = "ansible_collections.kubeops.kops.plugins.module_utils."


def copied_files():
    tasks = yaml.safe_load((REPO / "roles" / "protokube" / "tasks" / "bootstrap_service.yml").read_text())
    install = next(t for t in tasks if t.get("name", "").startswith("Install the service ("))
    return set(install["loop"])


def collection_imports(relative):
    """module_utils-relative paths of the collection modules a file imports (at any level)."""
    found = set()
    for node in ast.walk(ast.parse((MODULE_UTILS / relative).read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith(PREFIX):
                path = name[len(PREFIX):].replace(".", "/") + ".py"
                if (MODULE_UTILS / path).is_file():
                    found.add(path)
    return found


def test_every_module_the_service_imports_is_copied():
    copied = copied_files()
    assert "nodeup/bootstrap_service.py" in copied
    needed = set()
    for relative in copied:
        needed |= collection_imports(relative)
    assert needed - copied == set()


def test_the_check_sees_an_import_missing_from_the_list():
    assert "atomic.py" in collection_imports("nodeup/bootstrap_service.py")
    assert "pki/certs.py" in collection_imports("nodeup/bootstrap_service.py")
