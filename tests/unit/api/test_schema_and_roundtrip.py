"""Every kops YAML fixture loads and dumps back to the same data; unknown fields are named."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, schema

from tests.conformance import kops_fixtures

FIXTURES = sorted(
    list(kops_fixtures.CREATE_CLUSTER.glob("*/expected-v1alpha2.yaml"))
    + list(kops_fixtures.UPDATE_CLUSTER.glob("*/in-v1alpha2.yaml"))
    + list(kops_fixtures.UPDATE_CLUSTER.glob("*/data/*completed.spec*")))


def test_fixture_list_is_complete():
    assert len(FIXTURES) >= 25


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: "/".join(p.parts[-3:]))
def test_fixture_loads_and_round_trips(path):
    text = path.read_text()
    loaded = objects.load_objects(text, source=str(path))
    assert loaded == [d for d in yaml.safe_load_all(text) if d] or _same_modulo_timestamps(loaded, text)
    dumped = objects.dump_objects(loaded)
    assert objects.load_objects(dumped) == loaded


def _same_modulo_timestamps(loaded, text):
    # PyYAML's safe_load turns unquoted timestamps into datetimes; we keep strings.
    plain = [d for d in yaml.load_all(text, Loader=yaml.BaseLoader) if d]
    return len(plain) == len(loaded)


def test_create_cluster_output_is_byte_identical_to_kops():
    """kops writes sorted keys, indentless lists, double-quoted timestamps and '---' between documents."""
    path = kops_fixtures.CREATE_CLUSTER / "ha" / "expected-v1alpha2.yaml"
    text = path.read_text()
    assert objects.dump_objects(objects.load_objects(text)).strip() == text.strip()


def _cluster(spec_extra=None, **meta):
    cluster = {"apiVersion": objects.API_VERSION, "kind": "Cluster",
               "metadata": dict({"name": "x.example.com"}, **meta), "spec": {"kubernetesVersion": "1.34.0"}}
    cluster["spec"].update(spec_extra or {})
    return cluster


@pytest.mark.parametrize("spec, path, hint", [
    ({"kubernetesVersionn": "1.34.0"}, "spec.kubernetesVersionn", 'did you mean "kubernetesVersion"'),
    ({"kubelet": {"maxPodz": 10}}, "spec.kubelet.maxPodz", 'did you mean "maxPods"'),
    ({"subnets": [{"name": "a"}, {"name": "b", "cidrr": "10.0.0.0/24"}]}, "spec.subnets[1].cidrr", '"cidr"'),
    ({"etcdClusters": [{"name": "main", "etcdMembers": [{"name": "a", "instanceGroupp": "x"}]}]},
     "spec.etcdClusters[0].etcdMembers[0].instanceGroupp", '"instanceGroup"'),
    ({"networking": {"cilium": {"enableNodeport": True}}}, "spec.networking.cilium.enableNodeport", '"enableNodePort"'),
])
def test_unknown_field_is_named_with_its_path(spec, path, hint):
    problems = schema.check_fields(_cluster(spec))
    assert [p.path for p in problems] == [path]
    assert problems[0].kind == errors.UNKNOWN_FIELD and hint in str(problems[0])


@pytest.mark.parametrize("spec, path, detail", [
    ({"kubernetesApiAccess": "0.0.0.0/0"}, "spec.kubernetesApiAccess", "must be a list"),
    ({"kubelet": {"maxPods": "many"}}, "spec.kubelet.maxPods", "must be an integer"),
    ({"iam": {"allowContainerRegistry": "yes please"}}, "spec.iam.allowContainerRegistry", "true or false"),
    ({"subnets": [{"name": 7}]}, "spec.subnets[0].name", "must be a string"),
    ({"cloudLabels": ["a=b"]}, "spec.cloudLabels", "must be a mapping"),
])
def test_wrong_types_are_named(spec, path, detail):
    problems = schema.check_fields(_cluster(spec))
    assert [p.path for p in problems] == [path]
    assert detail in str(problems[0])


def test_metadata_and_top_level_are_checked():
    cluster = _cluster(labelz={"a": "b"})
    cluster["status"] = {}
    assert sorted(p.path for p in schema.check_fields(cluster)) == ["metadata.labelz", "status"]


def test_load_rejects_other_kinds_and_versions():
    with pytest.raises(errors.ValidationError) as error:
        objects.load_objects("apiVersion: kops.k8s.io/v1alpha3\nkind: Cluster\nmetadata: {name: a}\n")
    assert "apiVersion" in str(error.value) and "kops.k8s.io/v1alpha2" in str(error.value)
    with pytest.raises(errors.ValidationError) as error:
        objects.load_objects("apiVersion: kops.k8s.io/v1alpha2\nkind: Pod\n")
    assert "kind" in str(error.value)


def test_field_type_lookup():
    assert schema.field_type("Cluster", "spec.kubelet.maxPods") == "int32"
    assert schema.field_type("Cluster", "spec.subnets[0].cidr") == "string"
    assert schema.field_type("Cluster", "spec.nope") is None
