"""Instance-group names and tags against the launch templates of kops' kubernetes.tf."""

from __future__ import annotations

import os
import pathlib

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import autoscaling

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import _tasks

CASES = ["minimal-aws", "ha", "complex", "privatecalico", "shared_vpc", "existing_iam", "minimal-dns-none"]


def _kops_launch_templates(case):
    parsed = kops_fixtures.unquoted(hcl2.loads((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()))
    return {body["name"]: body for block in parsed.get("resource", [])
            for body in (block.get("aws_launch_template") or {}).values()}


def _groups(case):
    docs = [d for d in yaml.safe_load_all((kops_fixtures.UPDATE_CLUSTER / case / "in-v1alpha2.yaml").read_text()) if d]
    return objects.split_objects(docs)[1]


@pytest.mark.parametrize("case", CASES)
def test_instance_tags_match_kops(case):
    completed, _built = _tasks(case)
    kops_templates = _kops_launch_templates(case)
    groups = _groups(case)
    assert {autoscaling.group_object_name(completed["metadata"]["name"], g) for g in groups} == set(kops_templates)
    for group in groups:
        template = kops_templates[autoscaling.group_object_name(completed["metadata"]["name"], group)]
        kops_tags = next(t["tags"] for t in template["tag_specifications"] if t["resource_type"] == "instance")
        assert autoscaling.group_tags(completed, group) == kops_tags


# ---------------------------------------------------------------- GPU groups (kops' nvidia fixture)

def _gpu_case(machine_type, cluster_nvidia=True, taints=None):
    directory = kops_fixtures.UPDATE_CLUSTER / "minimal-aws"
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    if cluster_nvidia:
        cluster["spec"]["containerd"] = {"nvidiaGPU": {"enabled": True}}
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    group = next(g for g in groups if g["spec"]["role"] == "Node")
    group["spec"]["machineType"] = machine_type
    if taints is not None:
        group["spec"]["taints"] = taints
    return completed, populate.populate_instance_group_spec(completed, group)


def test_a_gpu_group_gets_the_autoscaler_label_and_taint_tags():
    completed, group = _gpu_case("g4dn.xlarge")
    assert group["spec"]["nodeLabels"]["kops.k8s.io/gpu"] == "1"
    assert group["spec"]["taints"] == ["nvidia.com/gpu:NoSchedule"]
    tags = autoscaling.group_tags(completed, group)
    assert tags["k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/gpu"] == "1"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"] == ":NoSchedule"


def test_no_gpu_tags_without_the_nvidia_runtime_or_a_gpu_machine():
    for machine_type, nvidia in (("g4dn.xlarge", False), ("t3.medium", True), ("inf1.xlarge", True)):
        completed, group = _gpu_case(machine_type, cluster_nvidia=nvidia)
        assert "kops.k8s.io/gpu" not in (group["spec"].get("nodeLabels") or {}), machine_type
        assert not any("gpu" in key for key in autoscaling.group_tags(completed, group)), machine_type


def test_a_user_nvidia_taint_is_kept_and_taints_tag_as_kops_parses_them():
    completed, group = _gpu_case("p4d.24xlarge", taints=["nvidia.com/gpu=present:NoExecute", "dedicated:NoSchedule",
                                                         "no-effect", "a=b=c:NoSchedule"])
    assert group["spec"]["taints"] == ["nvidia.com/gpu=present:NoExecute", "dedicated:NoSchedule", "no-effect",
                                       "a=b=c:NoSchedule"]
    taint_tags = {k: v for k, v in autoscaling.group_tags(completed, group).items() if "/taint/" in k}
    assert taint_tags == {"k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "present:NoExecute",
                          "k8s.io/cluster-autoscaler/node-template/taint/dedicated": ":NoSchedule"}


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"), reason="KOPS_SOURCE is not set: kops' nvidia fixture is in a "
                    "kops checkout only")
def test_nvidia_fixture_tags_match_kops():
    directory = pathlib.Path(os.environ["KOPS_SOURCE"]) / "tests" / "integration" / "update_cluster" / "nvidia"
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    parsed = kops_fixtures.unquoted(hcl2.loads((directory / "kubernetes.tf").read_text()))
    templates = {body["name"]: body for block in parsed.get("resource", [])
                 for body in (block.get("aws_launch_template") or {}).values()}
    for group in groups:
        template = templates[autoscaling.group_object_name(completed["metadata"]["name"], group)]
        kops_tags = next(t["tags"] for t in template["tag_specifications"] if t["resource_type"] == "instance")
        assert autoscaling.group_tags(completed, populate.populate_instance_group_spec(completed, group)) == kops_tags
