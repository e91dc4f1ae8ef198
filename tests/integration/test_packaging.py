"""The collection installed the Ansible way: galaxy build + install, FQCNs, ansible-doc."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.integration.conftest import BIN, REPO, ansible_env

MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
# Modules meta/runtime.yml deprecates: ansible-doc says so, with Ansible's hint on turning such warnings off.
DEPRECATED = sorted((yaml.safe_load((REPO / "meta" / "runtime.yml").read_text()).get("plugin_routing") or {})
                    .get("modules", {}))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("galaxy")
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(work), str(REPO)],
                           capture_output=True, text=True, check=False, env=ansible_env(work / "none"))
    assert build.returncode == 0, build.stderr
    tarball = next(work.glob("kubeops-kops-*.tar.gz"))
    target = work / "collections"
    install = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "-p", str(target),
                              str(tarball)], capture_output=True, text=True, check=False, env=ansible_env(target))
    assert install.returncode == 0, install.stderr
    return target


# What the tarball holds at its top (galaxy.yml's build_ignore): the collection, its docs and changelog, and
# tests/sanity (ansible-test sanity of the installed collection reads its ignore files); no developer files.
TOP_LEVEL = ["CHANGELOG.md", "FILES.json", "LICENSE", "MANIFEST.json", "README.md", "changelogs", "docs", "meta",
             "playbooks", "plugins", "requirements.txt", "roles", "tests"]


def test_tarball_holds_only_the_collection(installed):
    root = installed / "ansible_collections" / "kubeops" / "kops"
    assert sorted(p.name for p in root.iterdir()) == TOP_LEVEL
    assert sorted(str(p.relative_to(root / "tests")) for p in (root / "tests").rglob("*")) == [
        "config.yml", "sanity", "sanity/ignore-2.19.txt"]
    assert sorted(p.name for p in (root / "changelogs").iterdir()) == ["changelog.yaml", "config.yaml"]
    assert (root / "plugins" / "modules" / "cluster.py").exists()
    assert (root / "plugins" / "action" / "print_text.py").exists()
    assert (root / "playbooks" / "create_cluster.yml").exists()
    listed = json.loads((root / "FILES.json").read_text())["files"]
    assert not [f["name"] for f in listed if f["name"].split("/")[0] in ("bench", "hack", "build", "Makefile",
                                                                         "ansible.cfg", "pytest.ini")]


@pytest.mark.parametrize("module", MODULES)
def test_module_documentation_renders(installed, module):
    proc = subprocess.run([str(BIN / "ansible-doc"), "kubeops.kops.%s" % module], capture_output=True, text=True, check=False,
                          env=ansible_env(installed))
    assert proc.returncode == 0, proc.stderr
    assert "EXAMPLES" in proc.stdout and "RETURN VALUES" in proc.stdout
    if module in DEPRECATED:  # exactly the deprecation, naming what replaces it
        assert "[DEPRECATION WARNING]: kubeops.kops.%s has been deprecated. Use kubeops.kops.%s" \
            % (module, module.replace("gce_", "")) in proc.stderr, proc.stderr
        warnings = [line for line in proc.stderr.splitlines() if "WARNING]" in line and "DEPRECATION" not in line
                    and "Deprecation warnings can be disabled" not in line]
        assert not warnings, proc.stderr
    else:
        assert "[WARNING]" not in proc.stderr, proc.stderr


def test_playbook_by_fqcn_from_installed_collection(installed, playbook, tmp_path):
    store = "state_store=file://%s" % (tmp_path / "state")
    options = {"cluster_name": "fqcn.example.com", "cloud_provider": "gce", "zones": ["europe-west1-b"],
               "networking": "cni", "project": "my-project"}
    code, run = playbook("kubeops.kops.create_cluster", "-e", store, "-e", json.dumps({"cluster_options": options}),
                         collections=installed)
    assert code == 0, run
    assert (tmp_path / "state" / "fqcn.example.com" / "config").exists()
