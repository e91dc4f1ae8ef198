"""Instance-group names and tags against the launch templates of kops' kubernetes.tf."""

from __future__ import annotations

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import autoscaling

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import _tasks

CASES = ["minimal-aws", "ha", "complex", "privatecalico", "shared_vpc", "existing_iam", "minimal-dns-none"]


def _unquoted(value):
    if isinstance(value, str):
        return value.strip('"')
    if isinstance(value, dict):
        return {_unquoted(k): _unquoted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unquoted(v) for v in value]
    return value


def _kops_launch_templates(case):
    parsed = _unquoted(hcl2.loads((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()))
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
