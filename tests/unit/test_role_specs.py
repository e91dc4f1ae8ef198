"""Every role's argument spec tells the truth about its defaults: ansible-doc shows each option's real default
(defaults/main.yml), a required option has none (a role default would make `required` unenforceable), and every
setting a user may change in defaults/main.yml is documented."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLES = sorted(path.name for path in (REPO / "roles").iterdir() if (path / "tasks").is_dir())
BIN = pathlib.Path(sys.executable).parent


def role_files(role):
    spec = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())
    defaults = yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text()) or {}
    return spec["argument_specs"], defaults


def derived(value):
    """A default computed from other variables (a Jinja expression): the role's own working, not a setting."""
    return isinstance(value, str) and "{{" in value


def test_there_are_roles():
    assert ROLES == sorted(ROLES) and {"nodeup", "protokube"} <= set(ROLES)


@pytest.mark.parametrize("role", ROLES)
def test_spec_defaults_equal_role_defaults(role):
    entry_points, defaults = role_files(role)
    wrong = []
    for entry, spec in entry_points.items():
        for name, option in spec["options"].items():
            if option.get("required"):
                if "default" in option or name in defaults:
                    wrong.append("%s %s: required, so no default (the role default makes it never missing)" % (entry, name))
            elif name not in defaults:
                wrong.append("%s %s: documented but not in defaults/main.yml" % (entry, name))
            elif "default" not in option:
                wrong.append("%s %s: no default in the spec (ansible-doc shows null); defaults/main.yml has %r"
                             % (entry, name, defaults[name]))
            elif option["default"] != defaults[name]:
                wrong.append("%s %s: spec default %r, defaults/main.yml %r" % (entry, name, option["default"], defaults[name]))
    assert wrong == []


@pytest.mark.parametrize("role", ROLES)
def test_every_setting_is_documented(role):
    entry_points, defaults = role_files(role)
    documented = {name for spec in entry_points.values() for name in spec["options"]}
    undocumented = sorted(name for name, value in defaults.items() if name not in documented and not derived(value))
    assert undocumented == [], "roles/%s/defaults/main.yml settings missing from meta/argument_specs.yml" % role


@pytest.mark.parametrize("role", ROLES)
def test_ansible_doc_shows_the_defaults(role):
    """What a user reads: ansible-doc -t role on the collection as installed (build/collections)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"))
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(BIN / "ansible-doc"), "-t", "role", "--json", "kubeops.kops.%s" % role],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    options = json.loads(proc.stdout)["kubeops.kops.%s" % role]["entry_points"]["main"]["options"]
    _entry_points, defaults = role_files(role)
    for name, option in options.items():
        if option.get("required"):
            assert option.get("default") is None, name
        else:
            assert option.get("default") == defaults[name], name
