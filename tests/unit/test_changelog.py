"""changelogs/: every fragment parses, uses only the sections changelogs/config.yaml knows, and a release
made from them (as `antsibull-changelog release` makes it) holds every entry; playbooks and roles are announced."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CHANGELOGS = REPO / "changelogs"
FRAGMENTS = sorted((CHANGELOGS / "fragments").glob("*"))
CONFIG = yaml.safe_load((CHANGELOGS / "config.yaml").read_text())
CHANGES = yaml.safe_load((CHANGELOGS / "changelog.yaml").read_text())

TEXT_SECTIONS = {name for name, _title in CONFIG["sections"]} | {CONFIG["trivial_section_name"]}
# "add object.<type>": what antsibull-changelog announces besides modules and plugins (found by version_added).
OBJECT_SECTIONS = {"add object.playbook": "playbook", "add object.role": "role"}


def load(path):
    return yaml.safe_load(path.read_text())


def test_there_are_fragments_or_releases():
    assert FRAGMENTS or CHANGES["releases"], "changelogs/ records no change at all"


@pytest.mark.parametrize("path", FRAGMENTS, ids=lambda p: p.name)
def test_fragment_parses_with_known_sections(path):
    assert path.suffix in (".yml", ".yaml"), "%s: fragments are .yml files" % path.name
    fragment = load(path)
    assert isinstance(fragment, dict) and fragment, "%s: a fragment is a mapping of section to entries" % path.name
    for section, entries in fragment.items():
        if section == CONFIG["prelude_section_name"]:
            assert isinstance(entries, str) and entries.strip(), "%s: %s is one text" % (path.name, section)
            continue
        assert section in TEXT_SECTIONS | set(OBJECT_SECTIONS), (
            "%s: unknown section %r (known: %s)" % (path.name, section, ", ".join(sorted(TEXT_SECTIONS | set(OBJECT_SECTIONS)))))
        assert isinstance(entries, list) and entries, "%s: %s is a non-empty list" % (path.name, section)
        for entry in entries:
            if section in OBJECT_SECTIONS:
                assert isinstance(entry, dict) and set(entry) == {"name", "description"}, (
                    "%s: %s entries are {name, description}: %r" % (path.name, section, entry))
            else:
                assert isinstance(entry, str) and entry.strip(), "%s: %s entries are text: %r" % (path.name, section, entry)


def announced(kind):
    """Names of the playbooks or roles a fragment or a past release announces."""
    names = set()
    for path in FRAGMENTS:
        names.update(entry["name"] for entry in load(path).get("add object.%s" % kind, []))
    for release in (CHANGES.get("releases") or {}).values():
        names.update(entry["name"] for entry in release.get("objects", {}).get(kind, []))
    return names


@pytest.mark.parametrize("kind, present", [
    ("playbook", {p.stem for p in (REPO / "playbooks").glob("*.yml")}),
    ("role", {p.name for p in (REPO / "roles").iterdir() if p.is_dir()}),
])
def test_every_playbook_and_role_is_announced(kind, present):
    names = announced(kind)
    assert present - names == set(), (
        "%ss without a changelog entry: add a fragment with 'add object.%s: [{name: ..., description: ...}]'"
        % (kind, kind))
    assert names - present == set(), "the changelog announces %ss that do not exist" % kind


def antsibull_changelog(*args, cwd):
    return subprocess.run([sys.executable, "-m", "antsibull_changelog", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_antsibull_changelog_lint():
    proc = antsibull_changelog("lint", cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stdout + proc.stderr


def test_release_holds_every_fragment(tmp_path):
    """The release `antsibull-changelog release` would make now, in a copy: every entry lands in changelog.yaml
    and CHANGELOG.md, and the fragments are consumed."""
    copy = tmp_path / "kops"
    copy.mkdir()
    shutil.copy(REPO / "galaxy.yml", copy)
    shutil.copytree(CHANGELOGS, copy / "changelogs")
    # Plugins come from the repo (the copy has none): the release lists new modules by their version_added.
    shutil.copytree(REPO / "plugins", copy / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    proc = antsibull_changelog("release", "--version", version, "--date", "2026-01-01",
                               "--ansible-doc-bin", str(pathlib.Path(sys.executable).parent / "ansible-doc"), cwd=copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    release = yaml.safe_load((copy / "changelogs" / "changelog.yaml").read_text())["releases"][version]
    markdown = (copy / "CHANGELOG.md").read_text()
    for path in FRAGMENTS:
        for section, entries in load(path).items():
            if section in OBJECT_SECTIONS:
                released = {entry["name"] for entry in release["objects"][OBJECT_SECTIONS[section]]}
                assert {entry["name"] for entry in entries} <= released, path.name
            elif section != CONFIG["trivial_section_name"]:
                for entry in entries:
                    assert entry in release["changes"][section], "%s: %r not released" % (path.name, entry)
    assert "## v%s" % version.replace(".", "\\.") in markdown
    released_modules = {entry["name"] for entry in release.get("modules", [])}
    assert released_modules, "the release lists no new module (version_added %s in plugins/modules)" % version
    assert list((copy / "changelogs" / "fragments").glob("*.yml")) == []
