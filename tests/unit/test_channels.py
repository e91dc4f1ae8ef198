"""module_utils/kube/channels.py on plain data: kops' channel format, its version records and when an addon is
re-applied (channels/pkg/channels: addons.go, channel_version.go)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels

LOCATION = "s3://state/k8s.example.com/addons/bootstrap-channel.yaml"
CHANNEL = """
kind: Addons
metadata:
  name: bootstrap
spec:
  addons:
  - id: k8s-1.16
    manifest: kops-controller.addons.k8s.io/k8s-1.16.yaml
    manifestHash: c759
    name: kops-controller.addons.k8s.io
    needsRollingUpdate: control-plane
    selector:
      k8s-addon: kops-controller.addons.k8s.io
  - manifest: limit-range.addons.k8s.io/v1.5.0.yaml
    manifestHash: 686c
    name: limit-range.addons.k8s.io
    namespace: other
    prune:
      kinds:
      - kind: LimitRange
        labelSelector: addon.kops.k8s.io/name=limit-range.addons.k8s.io
"""


def test_channel_addons_resolved_against_the_channel_location():
    addons = channels.parse_channel(CHANNEL, LOCATION)
    assert [(a["name"], a["namespace"], a["id"], a["manifest"]) for a in addons] == [
        ("kops-controller.addons.k8s.io", "kube-system", "k8s-1.16",
         "s3://state/k8s.example.com/addons/kops-controller.addons.k8s.io/k8s-1.16.yaml"),
        ("limit-range.addons.k8s.io", "other", "", "s3://state/k8s.example.com/addons/limit-range.addons.k8s.io/v1.5.0.yaml")]
    assert channels.resolve("/srv/c/addons/bootstrap-channel.yaml", "../x/y.yaml") == "/srv/c/x/y.yaml"
    assert channels.resolve(LOCATION, "https://example.com/a.yaml") == "https://example.com/a.yaml"


def test_a_plain_manifest_is_one_addon_named_after_its_location():
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    (addon,) = channels.parse_channel(text, "s3://b/extra.yaml")
    assert addon["name"].startswith("manifest-") and len(addon["name"]) == len("manifest-") + 12
    assert addon["manifest"] == "s3://b/extra.yaml" and len(addon["manifestHash"]) == 64


@pytest.mark.parametrize("field, value, message", [
    ("needsPKI", True, "needsPKI"), ("needsRollingUpdate", "some", "needsRollingUpdate 'some' is none of"),
    ("colour", "red", "unknown field(s) colour"), ("manifest", "", "manifest is required")])
def test_channel_mistakes_are_named(field, value, message):
    channel = {"kind": "Addons", "spec": {"addons": [{"name": "a", "manifest": "a/1.yaml", field: value}]}}
    with pytest.raises(channels.ChannelError, match="spec.addons\\[0\\].*" + message.replace("(", "\\(").replace(")", "\\)")):
        channels.parse_channel(json.dumps(channel), LOCATION)


def test_the_record_is_gos_json_of_kops_channel_version():
    addon = channels.parse_channel(CHANNEL, LOCATION)[1]
    version = channels.channel_version(addon, LOCATION)
    assert channels.encode(version) == '{"channel":"%s","manifestHash":"686c","systemGeneration":1}' % LOCATION
    assert channels.encode({"channel": "a&b<c>", "systemGeneration": 1}) == \
        '{"channel":"a\\u0026b\\u003cc\\u003e","systemGeneration":1}'


@pytest.mark.parametrize("existing, replaced", [
    ({"id": "k8s-1.16", "manifestHash": "c759", "systemGeneration": 1}, False),
    ({"id": "k8s-1.16", "manifestHash": "c759", "systemGeneration": 1, "channel": "elsewhere"}, False),
    ({"id": "k8s-1.12", "manifestHash": "c759", "systemGeneration": 1}, True),
    ({"id": "k8s-1.16", "manifestHash": "0000", "systemGeneration": 1}, True),
    ({"id": "k8s-1.16", "manifestHash": "c759"}, True),  # recorded before prune existed
    ({"id": "k8s-1.16", "manifestHash": "c759", "systemGeneration": 2}, False),  # a newer applier was here
])
def test_when_an_addon_is_applied_again(existing, replaced):
    new = channels.channel_version(channels.parse_channel(CHANNEL, LOCATION)[0], LOCATION)
    assert channels.replaces(new, existing) is replaced


def test_records_are_read_from_every_namespace_and_bad_ones_skipped():
    namespaces = [{"metadata": {"name": "kube-system", "annotations": {
        "addons.k8s.io/a": '{"id":"1","systemGeneration":1}', "addons.k8s.io/b": "not json", "other": "x"}}},
        {"metadata": {"name": "other"}}]
    found, warnings = channels.installed_versions(namespaces)
    assert found == {"kube-system:a": {"id": "1", "systemGeneration": 1}}
    assert len(warnings) == 1 and "addons.k8s.io/b" in warnings[0]


def test_manifest_objects_need_kind_and_name():
    with pytest.raises(channels.ChannelError, match="document 2: an object needs apiVersion, kind and metadata.name"):
        channels.parse_manifest("apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkind: B\n", "m.yaml")
    assert channels.server_version("v1.34.2-eks-1+abc") == "1.34.2"
