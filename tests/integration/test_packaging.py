"""The collection installed the Ansible way: galaxy build + install, FQCNs, ansible-doc."""

from __future__ import annotations

import json
import subprocess
import tarfile

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


# What the tarball holds at its top (galaxy.yml's manifest): the collection, its docs and changelog, and
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


# docs/ in two: what a user of the collection reads (shipped), and how its tests, benchmarks and generators work
# (not shipped). galaxy.yml's manifest lists the first by name.
USER_DOCS = ["addons.md", "awx.md", "aws-model.md", "bootstrap-service.md", "create-cluster-options.md",
             "delete-cluster.md", "gce-model.md", "inventory.md", "kubeconfig.md", "kubespray.md", "metal.md", "node-labels.md",
             "nodeup-config.md", "nodeup.md", "performance.md", "playbooks.md", "protokube.md", "rolling-update.md",
             "state-store.md", "upgrade-cluster.md", "validate-cluster.md"]
DEVELOPER_DOCS = ["architecture.md", "data-tables.md", "faults.md", "gce-test-server.md", "kube-api-test-server.md",
                  "real-cluster.md", "test-hosts.md", "test-time.md"]
# What a user's checkout also holds: the README's own files, a spec kept beside it, build output, notes, caches.
STRAY = ["my-cluster.yml", "k8s.example.com.yaml", "specs/k8s.example.com.yaml", "out/terraform/kubernetes.tf",
         "notes.md", "TODO.txt", "docs/my-notes.md", "roles/nodeup/notes.txt", "playbooks/vars/secret.json",
         "plugins/modules/__pycache__/cluster.cpython-311.pyc", "kubeops-kops-0.0.9.tar.gz", ".env"]
SHIPPED_FILES = {"README.md", "LICENSE", "CHANGELOG.md", "requirements.txt", "tests/config.yml",
                 "tests/sanity/ignore-2.19.txt", "changelogs/changelog.yaml", "changelogs/config.yaml"}
SHIPPED_KINDS = {"meta": (".yml", ".txt"), "plugins": (".py", ".yml"), "roles": (".yml", ".j2", ".py", ".md"),
                 "playbooks": (".yml",)}


def _shipped(name):
    """The allow-list, by name: the collection's files, its users' docs, nothing else."""
    top = name.split("/", 1)[0]
    return (name in SHIPPED_FILES or name in {"docs/" + d for d in USER_DOCS}
            or (top in SHIPPED_KINDS and name.endswith(SHIPPED_KINDS[top]) and "/__pycache__/" not in name))


def test_every_doc_is_a_users_or_a_developers():
    assert sorted(p.name for p in (REPO / "docs").glob("*.md")) == sorted(USER_DOCS + DEVELOPER_DOCS)


def test_the_tarball_holds_what_galaxy_yml_lists_and_nothing_a_checkout_happens_to_hold(tmp_path):
    """Built (ansible-galaxy collection build, as make install) from a copy of the checkout that also holds the
    files a user leaves there: exactly the tracked files the allow-list names are in the tarball."""
    checkout = tmp_path / "checkout"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode()
    tracked = [name for name in tracked.split("\0") if name and (REPO / name).is_file()]
    for name in tracked + STRAY:
        target = checkout / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO / name).read_bytes() if name in tracked else b"a user's file\n")
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path),
                            str(checkout)], capture_output=True, text=True, check=False, env=ansible_env(tmp_path))
    assert build.returncode == 0, build.stdout + build.stderr
    with tarfile.open(next(tmp_path.glob("kubeops-kops-*.tar.gz"))) as tar:
        files = {m.name for m in tar.getmembers() if m.isfile()}
    assert not files & set(STRAY), sorted(files & set(STRAY))
    assert files == {name for name in tracked if _shipped(name)} | {"MANIFEST.json", "FILES.json"}
    assert not {"docs/" + d for d in DEVELOPER_DOCS} & files


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
