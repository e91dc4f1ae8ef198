# -*- coding: utf-8 -*-
"""The v1alpha2 field table: unknown fields and wrong types are named by their path."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, schema
from ansible_collections.kubeops.kops.plugins.module_utils.api.generated import schema_data


def _cluster(spec_extra=None, **meta):
    cluster = {"apiVersion": objects.API_VERSION, "kind": objects.CLUSTER,
               "metadata": dict({"name": "x.example.com"}, **meta), "spec": {"kubernetesVersion": "1.34.0"}}
    cluster["spec"].update(spec_extra or {})
    return cluster


def _instance_group(spec):
    group = objects.new_instance_group("x.example.com", "nodes-a")
    group["spec"].update(spec)
    return group


def _only_problem(obj):
    problems = schema.check_fields(obj)
    assert len(problems) == 1, problems
    return problems[0]


# ---- the table itself ------------------------------------------------------

def _leaf_types():
    for fields in list(schema_data.STRUCTS.values()) + list(schema.EXTERNAL_STRUCTS.values()):
        for go_type in fields.values():
            while True:
                go_type = schema._resolve(go_type)
                if go_type.startswith("[]"):
                    go_type = go_type[2:]
                elif schema._MAP.match(go_type):
                    go_type = schema._MAP.match(go_type).group(1)
                else:
                    break
            yield go_type


def test_every_type_in_the_table_is_a_struct_or_a_known_scalar():
    unresolved = {t for t in _leaf_types() if schema._struct(t) is None and t not in schema.SCALARS}
    assert unresolved == set()
    assert set(schema.SCALARS.values()) <= set(schema.CHECKS)


@pytest.mark.parametrize("kind, path, go_type", [
    ("Cluster", "spec.kubelet.maxPods", "int32"),
    ("Cluster", "spec.masterKubelet.evictionHard", "string"),
    ("Cluster", "spec.masterKubelet.featureGates", "map[string]string"),
    ("Cluster", "spec.subnets[0].cidr", "string"),
    ("Cluster", "spec.subnets[0].type", "string"),
    ("Cluster", "spec.kubeAPIServer.requestTimeout", "metav1.Duration"),
    ("Cluster", "spec.kubeAPIServer.env", "[]corev1.EnvVar"),
    ("Cluster", "spec.kubeControllerManager.ClusterSigningDuration", "metav1.Duration"),
    ("Cluster", "spec.kubeControllerManager.horizontalPodAutoscalerTolerance", "resource.Quantity"),
    ("Cluster", "spec.kubeScheduler.qps", "resource.Quantity"),
    ("Cluster", "spec.kubeProxy.ipvsSyncPeriod", "metav1.Duration"),
    ("Cluster", "spec.kubeDNS.nodeLocalDNS.enabled", "bool"),
    ("Cluster", "spec.containerd.configAdditions", "map[string]intstr.IntOrString"),
    ("Cluster", "spec.containerd.nvidiaGPU.enabled", "bool"),
    ("Cluster", "spec.cloudConfig.manageStorageClasses", "bool"),
    ("Cluster", "spec.cloudControllerManager.leaderElection.leaderElect", "bool"),
    ("Cluster", "spec.nodeTerminationHandler.enableSQSTerminationDraining", "bool"),
    ("Cluster", "spec.etcdClusters[0].etcdMembers[0].instanceGroup", "string"),
    ("Cluster", "spec.etcdClusters[0].manager.backupInterval", "metav1.Duration"),
    ("Cluster", "spec.networking.cilium.enableNodePort", "bool"),
    ("Cluster", "spec.networking.calico.mtu", "int32"),
    ("Cluster", "spec.api.loadBalancer.class", "string"),
    ("Cluster", "spec.iam.serviceAccountExternalPermissions[0].aws.policyARNs", "[]string"),
    ("InstanceGroup", "spec.role", "string"),
    ("InstanceGroup", "spec.rollingUpdate.maxSurge", "intstr.IntOrString"),
    ("InstanceGroup", "spec.mixedInstancesPolicy.onDemandAboveBase", "int64"),
    ("InstanceGroup", "spec.maxInstanceLifetime", "metav1.Duration"),
    ("InstanceGroup", "spec.kubelet.nodeLabels", "map[string]string"),
    ("InstanceGroup", "spec.containerd.runc.version", "string"),
    ("Cluster", "spec.nope", None),
    # v1alpha3 names, not v1alpha2's.
    ("Cluster", "spec.controlPlaneKubelet", None),
    ("InstanceGroup", "spec.rootVolume", None),
    ("Cluster", "spec.kubelet.nope", None),
])
def test_field_type_lookup(kind, path, go_type):
    assert schema.field_type(kind, path) == go_type


# ---- unknown fields --------------------------------------------------------

@pytest.mark.parametrize("obj, path, detail", [
    (_cluster({"kubernetesVersionn": "1.34.0"}), "spec.kubernetesVersionn",
     'unknown field "kubernetesVersionn"; did you mean "kubernetesVersion"?'),
    (_cluster({"kubelet": {"maxPodz": 10}}), "spec.kubelet.maxPodz", 'unknown field "maxPodz"; did you mean "maxPods"?'),
    (_cluster({"subnets": [{"name": "a"}, {"name": "b", "cidrr": "10.0.0.0/24"}]}), "spec.subnets[1].cidrr",
     'unknown field "cidrr"; did you mean "cidr"?'),
    (_cluster({"etcdClusters": [{"name": "main", "etcdMembers": [{"name": "a", "instanceGroupp": "x"}]}]}),
     "spec.etcdClusters[0].etcdMembers[0].instanceGroupp",
     'unknown field "instanceGroupp"; did you mean "instanceGroup"?'),
    # Field names are case-sensitive, as in kops' decoder.
    (_cluster({"networking": {"cilium": {"enableNodeport": True}}}), "spec.networking.cilium.enableNodeport",
     'unknown field "enableNodeport"; did you mean "enableNodePort"?'),
    (_cluster({"nodeTerminationHandler": {"enableSqsTerminationDraining": True}}),
     "spec.nodeTerminationHandler.enableSqsTerminationDraining",
     'unknown field "enableSqsTerminationDraining"; did you mean "enableSQSTerminationDraining"?'),
    (_cluster({"kubeDNS": {"affinity": {"nodeAfinity": {}}}}), "spec.kubeDNS.affinity.nodeAfinity",
     'unknown field "nodeAfinity"; did you mean "nodeAffinity"?'),
    (_cluster({"kubeAPIServer": {"env": [{"name": "A", "vaule": "1"}]}}), "spec.kubeAPIServer.env[0].vaule",
     'unknown field "vaule"; did you mean "value"?'),
    # Nothing close: no suggestion.
    (_cluster({"kubeProxy": {"colour": "blue"}}), "spec.kubeProxy.colour", 'unknown field "colour"'),
    (_instance_group({"machineTyp": "t3.medium"}), "spec.machineTyp",
     'unknown field "machineTyp"; did you mean "machineType"?'),
    (_instance_group({"mixedInstancesPolicy": {"instance": ["t3.medium"]}}), "spec.mixedInstancesPolicy.instance",
     'unknown field "instance"; did you mean "instances"?'),
    (_instance_group({"rollingUpdate": {"maxSurges": 1}}), "spec.rollingUpdate.maxSurges",
     'unknown field "maxSurges"; did you mean "maxSurge"?'),
    (_instance_group({"containerd": {"runc": {"versoin": "1.2"}}}), "spec.containerd.runc.versoin",
     'unknown field "versoin"; did you mean "version"?'),
])
def test_unknown_field_is_one_error_naming_its_path(obj, path, detail):
    problem = _only_problem(obj)
    assert (problem.path, problem.kind, problem.detail) == (path, errors.UNKNOWN_FIELD, detail)
    assert str(problem) == "%s: Unknown field: %s" % (path, detail)


@pytest.mark.parametrize("obj, path, detail", [
    (_cluster({"controlPlaneKubelet": {"maxPods": 10}}), "spec.controlPlaneKubelet",
     'unknown field "controlPlaneKubelet"; v1alpha2 calls it "masterKubelet"'),
    (_cluster({"networking": {"gcp": {}}}), "spec.networking.gcp", 'unknown field "gcp"; v1alpha2 calls it "gce"'),
    (_instance_group({"associatePublicIP": False}), "spec.associatePublicIP",
     'unknown field "associatePublicIP"; v1alpha2 calls it "associatePublicIp"'),
])
def test_v1alpha3_spelling_points_at_the_v1alpha2_name(obj, path, detail):
    problem = _only_problem(obj)
    assert (problem.path, problem.detail) == (path, detail)


def test_v1alpha3_renames_name_fields_that_exist_only_in_v1alpha2():
    for struct, renames in schema.V1ALPHA3_NAMES.items():
        fields = schema._struct(struct)
        assert all(new not in fields and old in fields for new, old in renames.items()), struct


def test_metadata_and_top_level_fields_are_checked():
    cluster = _cluster(labelz={"a": "b"})
    cluster["status"] = {}
    problems = schema.check_fields(cluster)
    assert sorted((p.path, p.detail) for p in problems) == [
        ("metadata.labelz", 'unknown field "labelz"; did you mean "labels"?'),
        ("status", 'unknown field "status"')]


def test_object_meta_fields_kops_writes_are_known():
    cluster = _cluster(creationTimestamp="2016-12-10T22:42:27Z", generation=3, uid="8f1c", resourceVersion="12",
                       namespace="default", labels={"team": "a"}, annotations={"note": "x"}, finalizers=["f"])
    assert schema.check_fields(cluster) == []


def test_every_problem_is_reported_at_once():
    cluster = _cluster({"kubelet": {"maxPodz": 1, "anonymousAuth": "no"}, "subnets": [{"zonee": "a"}]})
    assert sorted(p.path for p in schema.check_fields(cluster)) == [
        "spec.kubelet.anonymousAuth", "spec.kubelet.maxPodz", "spec.subnets[0].zonee"]


def test_retired_field_still_loads():
    # kops' own update_cluster/complex fixture still carries it.
    assert schema.check_fields(_cluster({"serviceOIDCProvider": {"issuerHostname": "x"}})) == []


# ---- types -----------------------------------------------------------------

@pytest.mark.parametrize("spec, path, detail", [
    ({"kubernetesApiAccess": "0.0.0.0/0"}, "spec.kubernetesApiAccess", "must be a list"),
    ({"kubelet": ["maxPods=10"]}, "spec.kubelet", "must be a mapping"),
    ({"kubelet": {"maxPods": "many"}}, "spec.kubelet.maxPods", "must be an integer"),
    ({"kubelet": {"maxPods": 10.5}}, "spec.kubelet.maxPods", "must be an integer"),
    ({"kubelet": {"maxPods": 2 ** 31}}, "spec.kubelet.maxPods", "must be an integer that fits in 32 bits"),
    ({"kubelet": {"maxPods": True}}, "spec.kubelet.maxPods", "must be an integer"),
    ({"iam": {"allowContainerRegistry": "yes please"}}, "spec.iam.allowContainerRegistry", "must be true or false"),
    ({"subnets": [{"name": 7}]}, "spec.subnets[0].name", "must be a string"),
    # A YAML number for a string field is a JSON number to kops' decoder: rejected.
    ({"kubernetesVersion": 1.34}, "spec.kubernetesVersion", "must be a string (quote it)"),
    ({"cloudLabels": ["a=b"]}, "spec.cloudLabels", "must be a mapping"),
    ({"cloudLabels": {"cost-center": 1234}}, "spec.cloudLabels[cost-center]", "must be a string"),
    ({"kubeAPIServer": {"featureGates": {"Foo": True}}}, "spec.kubeAPIServer.featureGates[Foo]", "must be a string"),
    ({"kubeAPIServer": {"cpuRequest": "100 millicores"}}, "spec.kubeAPIServer.cpuRequest", "must be a quantity"),
    ({"kubeAPIServer": {"memoryLimit": "1GB"}}, "spec.kubeAPIServer.memoryLimit", "must be a quantity"),
    ({"kubeAPIServer": {"requestTimeout": 60}}, "spec.kubeAPIServer.requestTimeout", "must be a duration"),
    ({"kubeAPIServer": {"requestTimeout": "1 minute"}}, "spec.kubeAPIServer.requestTimeout", "must be a duration"),
    ({"etcdClusters": [{"name": "main", "manager": {"backupRetentionDays": -1}}]},
     "spec.etcdClusters[0].manager.backupRetentionDays", "must be an integer from 0 to 4294967295"),
    ({"containerd": {"configAdditions": {"a.b": 1.5}}}, "spec.containerd.configAdditions[a.b]",
     "must be an integer or a string"),
    ({"kubeDNS": {"tolerations": [{"key": "a", "tolerationSeconds": "30"}]}},
     "spec.kubeDNS.tolerations[0].tolerationSeconds", "must be an integer"),
])
def test_wrong_types_are_one_error_naming_the_path(spec, path, detail):
    problem = _only_problem(_cluster(spec))
    assert (problem.path, problem.kind) == (path, errors.INVALID)
    assert problem.detail.startswith(detail), problem.detail


@pytest.mark.parametrize("meta, path", [
    ({"creationTimestamp": "yesterday"}, "metadata.creationTimestamp"),
    ({"creationTimestamp": "2016-12-10"}, "metadata.creationTimestamp"),
    ({"labels": {"a": False}}, "metadata.labels[a]"),
    ({"generation": "1"}, "metadata.generation"),
])
def test_metadata_types(meta, path):
    assert _only_problem(_cluster(**meta)).path == path


@pytest.mark.parametrize("spec, path", [
    ({"rollingUpdate": {"maxSurge": 1.5}}, "spec.rollingUpdate.maxSurge"),
    ({"rollingUpdate": {"maxUnavailable": False}}, "spec.rollingUpdate.maxUnavailable"),
    ({"maxInstanceLifetime": "7 days"}, "spec.maxInstanceLifetime"),
    ({"minSize": "1"}, "spec.minSize"),
    ({"nodeLabels": {"spot": True}}, "spec.nodeLabels[spot]"),
    ({"subnets": "us-east-1a"}, "spec.subnets"),
    ({"taints": [{"key": "a"}]}, "spec.taints[0]"),
])
def test_instance_group_types(spec, path):
    assert _only_problem(_instance_group(spec)).path == path


@pytest.mark.parametrize("spec", [
    {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}},
    {"maxInstanceLifetime": "168h0m0s"},
    {"maxInstanceLifetime": "0"},
    {"minSize": 1, "maxSize": 3.0},  # integral float: Go's decoder sees 3
    {"rootVolumeSize": 64, "rootVolumeIops": 3000, "rootVolumeEncryption": True},
    {"kubelet": {"cpuCFSQuotaPeriod": "100ms", "kubeReserved": {"cpu": "100m"}}},
])
def test_instance_group_values_kops_accepts(spec):
    assert schema.check_fields(_instance_group(spec)) == []


@pytest.mark.parametrize("spec", [
    {"kubeAPIServer": {"cpuRequest": "150m", "memoryLimit": "1Gi", "auditWebhookBatchThrottleQps": 0.5}},
    {"kubeAPIServer": {"cpuLimit": 2, "memoryRequest": "1e3", "requestTimeout": "1m30s"}},
    {"kubeControllerManager": {"horizontalPodAutoscalerTolerance": "0.1", "ClusterSigningDuration": "8760h"}},
    {"kubeScheduler": {"qps": "3.1", "burst": 100}},
    {"containerd": {"configAdditions": {"plugins.cri.x": "y", "plugins.cri.n": 1}}},
    {"kubeDNS": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}},
                 "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}]}},
    {"kubeAPIServer": {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}},
    {"kubelet": None, "subnets": None},  # an explicit null is "not set"
    {"cloudLabels": {}, "kubeProxy": None},
])
def test_cluster_values_kops_accepts(spec):
    assert schema.check_fields(_cluster(spec)) == []


# ---- through the loader ----------------------------------------------------

def test_load_objects_raises_with_every_path():
    text = ("apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: a.example.com\n"
            "spec:\n  subnets:\n  - name: a\n    cidrr: 10.0.0.0/24\n---\n"
            "apiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  name: nodes\n"
            "spec:\n  minSize: one\n")
    with pytest.raises(errors.ValidationError) as raised:
        objects.load_objects(text, source="cluster.yaml")
    assert [str(e) for e in raised.value.errors] == [
        'spec.subnets[0].cidrr: Unknown field: unknown field "cidrr"; did you mean "cidr"?',
        'spec.minSize: Invalid value: "one": must be an integer that fits in 32 bits']


def test_load_rejects_other_kinds_and_versions():
    with pytest.raises(errors.ValidationError) as error:
        objects.load_objects("apiVersion: kops.k8s.io/v1alpha3\nkind: Cluster\nmetadata: {name: a}\n")
    assert "apiVersion" in str(error.value) and "kops.k8s.io/v1alpha2" in str(error.value)
    with pytest.raises(errors.ValidationError) as error:
        objects.load_objects("apiVersion: kops.k8s.io/v1alpha2\nkind: Pod\n")
    assert "kind" in str(error.value)
