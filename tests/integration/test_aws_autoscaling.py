"""Launch templates and autoscaling groups against moto's server: create, no-op, one field, check mode."""

from __future__ import annotations

import base64

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict

from tests.integration.test_aws_update import ADMIN_KEY, _mutating, _service, _update

OWNED = [{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}]


def _templates():
    ec2 = boto3.client("ec2", region_name="us-east-1")
    templates = ec2.describe_launch_templates(Filters=OWNED)["LaunchTemplates"]
    return {t["LaunchTemplateName"]: t for t in templates}


def _latest(template_id):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    return ec2.describe_launch_template_versions(LaunchTemplateId=template_id, Versions=["$Latest"])[
        "LaunchTemplateVersions"][0]


def test_groups_are_created_then_left_alone_then_only_the_template_changes(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    _counts, plan, _calls = _update(service, ssh_public_key=ADMIN_KEY)

    templates = _templates()
    cp, nodes = "control-plane-us-east-1a.masters.k8s.example.com", "nodes-us-east-1a.k8s.example.com"
    assert set(templates) == {cp, nodes}
    data = _latest(templates[nodes]["LaunchTemplateId"])["LaunchTemplateData"]
    assert data["InstanceType"] == "t3.medium"
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    assert data["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 128
    assert data["BlockDeviceMappings"][0]["DeviceName"] == "/dev/sda1"  # the AMI's root device
    assert data["IamInstanceProfile"] == {"Name": "nodes.k8s.example.com"}
    assert data["KeyName"] == "kubernetes.k8s.example.com-c4:a6:ed:9a:a8:89:b9:e2:c3:9c:d6:63:eb:9c:71:57"
    script = base64.b64decode(data["UserData"]).decode()
    assert script.startswith("#!/bin/bash") and "NODEUP_CONFIG_HASH=" in script
    instance_tags = tag_dict(next(t["Tags"] for t in data["TagSpecifications"] if t["ResourceType"] == "instance"))
    assert instance_tags["kops.k8s.io/instancegroup"] == "nodes-us-east-1a"

    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    groups = {g["AutoScalingGroupName"]: g for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]}
    assert set(groups) == {cp, nodes}
    group = groups[cp]
    assert (group["MinSize"], group["MaxSize"]) == (1, 1)
    assert group["LaunchTemplate"]["LaunchTemplateId"] == templates[cp]["LaunchTemplateId"]
    tags = {t["Key"]: (t["Value"], t["PropagateAtLaunch"]) for t in group["Tags"]}
    assert tags["k8s.io/role/control-plane"] == ("1", True)
    assert tags["Name"] == (cp, True)
    assert len(group["TargetGroupARNs"]) == 2  # the API (443) and kops-controller (3988, dns None)
    assert len(group["EnabledMetrics"]) == 8
    hooks = autoscaling.describe_lifecycle_hooks(AutoScalingGroupName=nodes)["LifecycleHooks"]
    assert [h["LifecycleHookName"] for h in hooks] == ["nodes-us-east-1a-NTHLifecycleHook"]

    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"}
    assert _mutating(calls) == {}
    # One lookup per kind: templates, their latest versions, groups (hooks: one per group).
    assert calls["DescribeLaunchTemplates"] == 1 and calls["DescribeLaunchTemplateVersions"] == 1
    assert calls["DescribeAutoScalingGroups"] == 1 and calls["DescribeLifecycleHooks"] == 2

    cluster, igs = service.read("k8s.example.com")
    next(g for g in igs if g["metadata"]["name"] == "nodes-us-east-1a")["spec"]["machineType"] = "t3.large"
    service.execute(service.plan_replace([cluster] + igs))
    _counts, plan, calls = _update(service)
    changed = [(e.kind, e.name, sorted(e.changes)) for e in plan if e.action != "unchanged"]
    assert changed == [("aws_launch_template", nodes, ["instance_type"])]
    assert _mutating(calls) == {"CreateLaunchTemplateVersion": 1}
    latest = _latest(templates[nodes]["LaunchTemplateId"])
    assert latest["VersionNumber"] == 2 and latest["LaunchTemplateData"]["InstanceType"] == "t3.large"
    # The group follows $Latest, so it needs no change.
    assert autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[nodes])["AutoScalingGroups"][0][
        "LaunchTemplate"]["Version"] == "$Latest"


def test_check_mode_on_an_empty_account_mutates_nothing(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    counts, plan, calls = _update(service, dry_run=True)
    assert _mutating(calls) == {}
    kinds = {e.kind for e in plan if e.action == "create"}
    assert {"aws_launch_template", "aws_autoscaling_group", "aws_autoscaling_lifecycle_hook"} <= kinds
    assert _templates() == {}


def test_more_templates_than_one_default_page_are_all_found(aws):
    # moto pages by 15 and never returns a NextToken: the lookup must ask for full (200) pages.
    ec2 = boto3.client("ec2", region_name="us-east-1")
    for index in range(20):
        ec2.create_launch_template(
            LaunchTemplateName="g%02d.k8s.example.com" % index, LaunchTemplateData={"ImageId": "ami-1e749f67"},
            TagSpecifications=[{"ResourceType": "launch-template",
                                "Tags": [{"Key": "KubernetesCluster", "Value": "k8s.example.com"}]}])
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import LaunchTemplate
    found = LaunchTemplate.describe_cluster_templates(AwsCloud("k8s.example.com", "us-east-1"))
    assert len(found) == 20 and all(version is not None for _template, version in found.values())


def test_warm_pool_mixed_instances_and_hook_converge(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    cluster, igs = service.read("k8s.example.com")
    nodes = next(g for g in igs if g["metadata"]["name"] == "nodes-us-east-1a")
    nodes["spec"]["warmPool"] = {"minSize": 1, "maxSize": 2, "enableLifecycleHook": True}
    # All on demand: kops refuses warm pools with spot instances.
    nodes["spec"]["mixedInstancesPolicy"] = {"instances": ["t3.medium", "t3a.medium"], "onDemandBase": 0,
                                             "onDemandAboveBase": 100}
    service.execute(service.plan_replace([cluster] + igs))
    _update(service)
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    name = "nodes-us-east-1a.k8s.example.com"
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]
    overrides = group["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"]
    assert [o["InstanceType"] for o in overrides] == ["t3.medium", "t3a.medium"]
    assert autoscaling.describe_warm_pool(AutoScalingGroupName=name)["WarmPoolConfiguration"]["MinSize"] == 1
    hooks = {h["LifecycleHookName"]: h for h in
             autoscaling.describe_lifecycle_hooks(AutoScalingGroupName=name)["LifecycleHooks"]}
    assert hooks["kops-warmpool"]["LifecycleTransition"] == "autoscaling:EC2_INSTANCE_LAUNCHING"
    again, plan, calls = _update(service)
    assert [(e.kind, e.name, e.changes) for e in plan if e.action != "unchanged"] == []
    assert _mutating(calls) == {}
