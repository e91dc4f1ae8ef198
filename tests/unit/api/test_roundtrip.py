# -*- coding: utf-8 -*-
"""Every kops YAML fixture loads cleanly and survives load -> dump -> load unchanged."""

from __future__ import annotations

import datetime

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

from tests.conformance import kops_fixtures

# Written by kops itself (kops create cluster's output, and the completed spec
# kops update cluster puts in the state store): our dump must match byte for byte.
KOPS_WRITTEN = sorted(
    list(kops_fixtures.CREATE_CLUSTER.glob("*/expected-v1alpha2.yaml"))
    + list(kops_fixtures.UPDATE_CLUSTER.glob("*/data/*completed.spec*")))
# Written by hand for kops' tests: comments, key order and quoting are the author's.
HAND_WRITTEN = sorted(kops_fixtures.UPDATE_CLUSTER.glob("*/in-v1alpha2.yaml"))
FIXTURES = KOPS_WRITTEN + HAND_WRITTEN


def _fixture_id(path):
    return "/".join(path.parts[-3:])


def test_every_fixture_is_found():
    create_cases = [p for p in kops_fixtures.CREATE_CLUSTER.iterdir() if (p / "expected-v1alpha2.yaml").exists()]
    update_cases = [p for p in kops_fixtures.UPDATE_CLUSTER.iterdir() if (p / "in-v1alpha2.yaml").exists()]
    completed_specs = [p for p in KOPS_WRITTEN if "completed" in p.name]
    assert len(create_cases) >= 14 and len(update_cases) >= 9
    assert len(KOPS_WRITTEN) == len(create_cases) + len(completed_specs) and len(HAND_WRITTEN) == len(update_cases)
    assert {p.parts[-3] for p in completed_specs} == {"minimal-aws", "minimal_gce"}


def _same_as_plain_yaml(ours, plain):
    """True when ours equals PyYAML's own reading, timestamps aside.

    PyYAML's safe loader makes datetimes of unquoted timestamps; kops keeps the
    text, so a datetime on the plain side must match a string that parses to it.
    """
    if isinstance(plain, (datetime.datetime, datetime.date)):
        return isinstance(ours, str) and yaml.safe_load("t: %s" % ours)["t"] == plain
    if isinstance(plain, dict):
        return (isinstance(ours, dict) and ours.keys() == plain.keys()
                and all(_same_as_plain_yaml(ours[k], plain[k]) for k in plain))
    if isinstance(plain, list):
        return (isinstance(ours, list) and len(ours) == len(plain)
                and all(_same_as_plain_yaml(a, b) for a, b in zip(ours, plain)))
    return type(ours) is type(plain) and ours == plain


@pytest.mark.parametrize("path", FIXTURES, ids=_fixture_id)
def test_fixture_loads_without_errors_and_as_written(path):
    text = path.read_text()
    loaded = objects.load_objects(text, source=str(path))
    assert loaded and all(o["kind"] in objects.KINDS for o in loaded)
    assert _same_as_plain_yaml(loaded, [d for d in yaml.safe_load_all(text) if d is not None])


@pytest.mark.parametrize("path", FIXTURES, ids=_fixture_id)
def test_load_dump_load_gives_the_same_data(path):
    loaded = objects.load_objects(path.read_text(), source=str(path))
    dumped = objects.dump_objects(loaded)
    assert objects.load_objects(dumped) == loaded
    # And dumping is stable: a second pass writes the same text.
    assert objects.dump_objects(objects.load_objects(dumped)) == dumped


@pytest.mark.parametrize("path", KOPS_WRITTEN, ids=_fixture_id)
def test_dump_of_kops_written_spec_is_byte_identical(path):
    """Sorted keys, indentless lists, go-yaml's quoting ("true", '*', "2016-12-10T22:42:27Z"), '---' between documents."""
    text = path.read_text()
    assert objects.dump_objects(objects.load_objects(text)).strip() == text.strip()


def test_timestamps_stay_the_text_the_user_wrote():
    text = ("apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\n"
            "metadata:\n  creationTimestamp: 2016-12-10T22:42:27Z\n  name: a.example.com\nspec: {}\n")
    loaded = objects.load_objects(text)
    assert loaded[0]["metadata"]["creationTimestamp"] == "2016-12-10T22:42:27Z"
    assert 'creationTimestamp: "2016-12-10T22:42:27Z"' in objects.dump_objects(loaded)


@pytest.mark.parametrize("value, written", [
    ("*", "'*'"),          # not a plain scalar: go-yaml single-quotes it
    ("true", '"true"'),    # would read back as a bool
    ("y", '"y"'),          # a YAML 1.1 bool to go-yaml
    ("0.5", '"0.5"'),      # would read back as a number
    ("", '""'),
    ("100m", "100m"),
    ("a:b", "a:b"),
])
def test_strings_are_quoted_as_kops_quotes_them(value, written):
    cluster = objects.new_cluster("a.example.com")
    cluster["spec"]["configBase"] = value
    dumped = objects.dump_objects([cluster])
    assert "  configBase: %s\n" % written in dumped
    assert objects.load_objects(dumped)[0]["spec"]["configBase"] == value
