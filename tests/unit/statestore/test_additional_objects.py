"""kops' additional objects: the Kubernetes objects a definition carries besides its Cluster and InstanceGroups
(kops create -f), stored at <cluster>/clusteraddons/default as kops stores them, the KubeSchedulerConfiguration
among them made the control plane's kube-scheduler configuration (kops' additionalobjects fixture)."""

from __future__ import annotations

import copy

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import clusters
from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store

NAME = "extra.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
           "zones": ["us-east-1a"]}
SCHEDULER = {"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration",
             "clientConnection": {"burst": 100, "qps": 3.1}}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "kube-system"},
              "data": {"a": "b"}}


@pytest.fixture
def service(tmp_path):
    run = clusters.ClusterService("file://%s" % (tmp_path / "state"))
    run.execute(run.plan_create(OPTIONS))
    return run


def _definition(service, *extra):
    cluster, groups = service.read(NAME)
    return objects.dump_objects([cluster] + groups + list(extra))


def test_other_objects_are_set_aside_as_additional_objects():
    text = objects.dump_objects([objects.new_cluster("a.example.com"), SCHEDULER, CONFIG_MAP])
    additional = []
    loaded = objects.load_objects(text, additional=additional)
    assert [o["kind"] for o in loaded] == ["Cluster"] and additional == [SCHEDULER, CONFIG_MAP]
    with pytest.raises(errors.ValidationError, match="apiVersion"):
        objects.load_objects(text)  # without a place for them (a group file, the store's spec) they are refused


@pytest.mark.parametrize("extra, message", [
    ([dict(SCHEDULER, clientConnection={"kubeconfig": "/x"})], r"clientConnection.kubeconfig.*controlled by kOps"),
    ([SCHEDULER, SCHEDULER], r"at most one KubeSchedulerConfiguration"),
    ([{"apiVersion": "example.com/v1"}], r"kind"),
])
def test_what_kops_refuses_in_additional_objects(extra, message):
    text = objects.dump_objects([objects.new_cluster("a.example.com")] + extra)
    with pytest.raises(errors.ValidationError, match=message):
        objects.load_objects(text, additional=[])


def test_a_kops_object_of_another_version_is_still_refused():
    text = objects.dump_objects([dict(objects.new_cluster("a.example.com"), apiVersion="kops.k8s.io/v1alpha3")])
    with pytest.raises(errors.ValidationError, match="apiVersion"):
        objects.load_objects(text, additional=[])


def test_they_are_stored_as_kops_stores_them_and_replaced_only_when_given(service):
    additional = []
    documents = objects.load_objects(_definition(service, SCHEDULER, CONFIG_MAP), additional=additional)
    plan = service.plan_replace(documents, additional_objects=additional)
    assert objects.ADDITIONAL_OBJECTS_PATH in plan.changed_paths and "ConfigMap" in plan.diff()["after"]
    service.execute(plan)
    stored = service.cluster_store(NAME).read(objects.ADDITIONAL_OBJECTS_PATH).decode("utf-8")
    assert stored.split("\n---\n\n") == [objects.dump_object(SCHEDULER), objects.dump_object(CONFIG_MAP)]
    assert list(yaml.safe_load_all(stored)) == [SCHEDULER, CONFIG_MAP]
    again = service.plan_replace(objects.load_objects(_definition(service, SCHEDULER, CONFIG_MAP), additional=[]),
                                 additional_objects=copy.deepcopy(additional))
    assert not again.changed  # the same objects: nothing to write
    without = service.plan_replace(objects.load_objects(_definition(service)), additional_objects=[])
    assert not without.changed  # none given: the stored ones stay, as kops leaves them


def test_they_need_the_cluster_in_the_same_definition(service):
    _cluster, groups = service.read(NAME)
    with pytest.raises(clusters.ClusterError, match="need the Cluster object"):
        service.plan_replace(groups, additional_objects=[SCHEDULER])


def test_the_control_plane_runs_the_given_scheduler_configuration(service):
    additional = []
    documents = objects.load_objects(_definition(service, SCHEDULER, CONFIG_MAP), additional=additional)
    plan = service.plan_replace(documents, additional_objects=additional)
    service.execute(plan)
    cluster, groups = service.read(NAME)
    warnings = []
    changes, _hashes = nodeup_store.node_files(service.cluster_store(NAME), plan.completed, groups, warn=warnings.append)
    configs = {path: yaml.safe_load(data) for path, data in changes if path.startswith("igconfig/")}
    control = next(c for p, c in configs.items() if "/control-plane/" in p)
    asset = next(a for a in control["FileAssets"] if a["path"] == "/var/lib/kube-scheduler/config.yaml")
    assert yaml.safe_load(asset["content"]) == dict(SCHEDULER, clientConnection={
        "burst": 100, "qps": 3.1, "kubeconfig": "/var/lib/kube-scheduler/kubeconfig"})
    workers = [c for p, c in configs.items() if "/node/" in p]
    assert workers and all("FileAssets" not in c for c in workers)
    assert any("v1/ConfigMap" in w and "not applied" in w for w in warnings)
