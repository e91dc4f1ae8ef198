"""Launch templates, autoscaling groups and lifecycle hooks against kops' kubernetes.tf."""

from __future__ import annotations

import base64

import hcl2
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws_driver
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import autoscaling
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import _tasks
from tests.unit.model.test_autoscaling_tags import CASES

KINDS = ("aws_launch_template", "aws_autoscaling_group", "aws_autoscaling_lifecycle_hook")


def _resources(parsed, kind):
    return {name: body for block in parsed.get("resource", []) for name, body in (block.get(kind) or {}).items()}


def _kops(case):
    return kops_fixtures.unquoted(hcl2.loads((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()))


def _ours(tasks):
    return kops_fixtures.unquoted(hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1"))))


@pytest.mark.parametrize("case", CASES)
def test_names_match_kops(case):
    _completed, tasks = _tasks(case)
    ours, theirs = _ours(tasks), _kops(case)
    for kind in KINDS:
        assert set(_resources(ours, kind)) == set(_resources(theirs, kind)), kind
        for name, body in _resources(theirs, kind).items():
            assert _resources(ours, kind)[name]["name"] == body["name"]


LAUNCH_TEMPLATE_FIELDS = ("instance_type", "metadata_options", "monitoring", "network_interfaces",
                          "tag_specifications", "tags", "iam_instance_profile", "key_name", "lifecycle",
                          "credit_specification")
GROUP_FIELDS = ("min_size", "max_size", "max_instance_lifetime", "enabled_metrics", "metrics_granularity",
                "protect_from_scale_in", "tag", "vpc_zone_identifier", "launch_template", "load_balancers",
                "suspended_processes")


@pytest.mark.parametrize("case", CASES)
def test_key_fields_match_kops(case):
    _completed, tasks = _tasks(case)
    ours, theirs = _ours(tasks), _kops(case)
    for name, body in _resources(theirs, "aws_launch_template").items():
        mine = _resources(ours, "aws_launch_template")[name]
        for field in LAUNCH_TEMPLATE_FIELDS:
            assert mine.get(field) == body.get(field), (name, field)
        # The root device name comes from the image here (data.aws_ami ... root_device_name).
        assert mine["block_device_mappings"][0]["ebs"] == body["block_device_mappings"][0]["ebs"], name
        assert [m.get("virtual_name") for m in mine["block_device_mappings"]][:2] == \
            [m.get("virtual_name") for m in body["block_device_mappings"]][:2]
    for name, body in _resources(theirs, "aws_autoscaling_group").items():
        mine = _resources(ours, "aws_autoscaling_group")[name]
        for field in GROUP_FIELDS:
            assert mine.get(field) == body.get(field), (name, field)
    for name, body in _resources(theirs, "aws_autoscaling_lifecycle_hook").items():
        assert _resources(ours, "aws_autoscaling_lifecycle_hook")[name] == body


@pytest.mark.parametrize("case, name", [
    ("minimal-dns-none", "master-us-test-1a-masters-minimal-example-com"),
    ("privatecalico", "master-us-test-1a-masters-privatecalico-example-com"),
    ("privatecalico", "bastion-privatecalico-example-com"),
])
def test_groups_join_kops_target_groups(case, name):
    _completed, tasks = _tasks(case)
    ours, theirs = _ours(tasks), _kops(case)
    assert _resources(ours, "aws_autoscaling_group")[name]["target_group_arns"] == \
        _resources(theirs, "aws_autoscaling_group")[name]["target_group_arns"]


def test_user_data_is_base64_of_the_boot_script():
    completed, tasks = _tasks("minimal-aws")
    from tests.unit.model.test_autoscaling_tags import _groups
    groups = _groups("minimal-aws")
    built = aws_model.build_tasks(completed, groups, user_data={"nodes": "#!/bin/bash\necho hi\n"})
    template = built["aws_launch_template/nodes.minimal-aws.example.com"]
    assert base64.b64decode(template.fields["user_data"]).decode() == "#!/bin/bash\necho hi\n"
    assert "user_data" not in built["aws_launch_template/master-us-test-1a.masters.minimal-aws.example.com"].fields
    parsed = _ours(list(built.values()))
    # As kops: the script is a data/ file beside kubernetes.tf, read with filebase64().
    data_file = "data/aws_launch_template_nodes.minimal-aws.example.com_user_data"
    assert data_file in _resources(parsed, "aws_launch_template")["nodes-minimal-aws-example-com"]["user_data"]
    assert dict(terraform.data_files(list(built.values())))[data_file] == b"#!/bin/bash\necho hi\n"


def test_warm_pool_and_mixed_instances():
    completed, _tasks_built = _tasks("minimal-aws")
    from tests.unit.model.test_autoscaling_tags import _groups
    groups = _groups("minimal-aws")
    nodes = next(g for g in groups if g["metadata"]["name"] == "nodes")
    nodes["spec"]["warmPool"] = {"minSize": 1, "maxSize": 3, "enableLifecycleHook": True}
    nodes["spec"]["mixedInstancesPolicy"] = {"instances": ["t3.medium", "t3a.medium"], "onDemandBase": 0,
                                             "onDemandAboveBase": 20, "spotAllocationStrategy": "capacity-optimized"}
    built = aws_model.build_tasks(completed, groups)
    group = built["aws_autoscaling_group/nodes.minimal-aws.example.com"]
    assert group.fields["warm_pool"] == {"min_size": 1, "max_group_prepared_capacity": 3}
    assert "WarmPoolWarmedCapacity" in group.fields["enabled_metrics"]
    hook = built["aws_autoscaling_lifecycle_hook/kops-warmpool-nodes"]
    assert (hook.fields["name"], hook.fields["default_result"], hook.fields["heartbeat_timeout"]) == (
        "kops-warmpool", "ABANDON", 600)
    body = _resources(_ours(list(built.values())), "aws_autoscaling_group")["nodes-minimal-aws-example-com"]
    policy = body["mixed_instances_policy"][0]
    assert policy["instances_distribution"][0]["on_demand_percentage_above_base_capacity"] == 20
    assert [o["instance_type"] for o in policy["launch_template"][0]["override"]] == ["t3.medium", "t3a.medium"]
    assert "launch_template" not in body
    # The control plane gets no pool from a cluster-wide setting (kops' ResolveDefaults).
    assert autoscaling.resolve_warm_pool({"minSize": 1}, {"spec": {"role": "Master"}}) is None


@pytest.mark.parametrize("value, seconds", [("0", 0), ("48h20m", 174000), ("90s", 90), ("1h0m0s", 3600)])
def test_durations(value, seconds):
    assert autoscaling.duration_seconds(value) == seconds
