"""Deletions of autoscaling objects against moto's server: an instance group removed from the spec, a lifecycle
hook no longer wanted, a target group attached outside the spec; foreign groups and templates are never touched,
and one with our name but not our ownership tags stops the run."""

from __future__ import annotations

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import TaskFailed

from tests.integration.test_aws_update import ADMIN_KEY, MOTO_AMI, _mutating, _service, _update

CLUSTER = "k8s.example.com"
REMOVED = "nodes-us-east-1b.%s" % CLUSTER
KEPT = ("control-plane-us-east-1a.masters.%s" % CLUSTER, "nodes-us-east-1a.%s" % CLUSTER)


def _clients():
    return boto3.client("ec2", region_name="us-east-1"), boto3.client("autoscaling", region_name="us-east-1")


def _groups():
    return {g["AutoScalingGroupName"]: g for g in _clients()[1].describe_auto_scaling_groups()["AutoScalingGroups"]}


def _templates():
    return {t["LaunchTemplateName"]: t for t in _clients()[0].describe_launch_templates()["LaunchTemplates"]}


def _foreign_group(name, tags, template_name=None):
    """An autoscaling group (and its template, by default of the same name) that is not this cluster's own."""
    ec2, autoscaling = _clients()
    subnet = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][0]["SubnetId"]
    template = ec2.create_launch_template(
        LaunchTemplateName=template_name or name, LaunchTemplateData={"ImageId": MOTO_AMI, "InstanceType": "t3.micro"},
        TagSpecifications=[{"ResourceType": "launch-template", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
        if tags else [])["LaunchTemplate"]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName=name, MinSize=0, MaxSize=1, VPCZoneIdentifier=subnet,
        LaunchTemplate={"LaunchTemplateId": template["LaunchTemplateId"], "Version": "$Latest"},
        Tags=[{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": k, "Value": v, "PropagateAtLaunch": True}
              for k, v in tags.items()])
    return template["LaunchTemplateId"]


# Look-alikes that must survive: another cluster's group, an untagged one, one with only the cluster tag.
FOREIGN = {
    "nodes-us-east-1b.k8s.example.org": {"KubernetesCluster": "k8s.example.org",
                                         "kubernetes.io/cluster/k8s.example.org": "owned",
                                         "kops.k8s.io/instancegroup": "nodes-us-east-1b"},
    "nodes-us-east-1c.%s" % CLUSTER: {},
    "nodes-legacy.%s" % CLUSTER: {"KubernetesCluster": CLUSTER, "kops.k8s.io/instancegroup": "nodes-legacy"},
}


def test_a_removed_instance_group_loses_its_group_and_template_and_nothing_else(aws, tmp_path):
    service = _service("file://%s" % tmp_path, zones=["us-east-1a", "us-east-1b"])
    _update(service, ssh_public_key=ADMIN_KEY)
    assert set(KEPT) | {REMOVED} <= set(_groups())
    for name, tags in FOREIGN.items():
        _foreign_group(name, tags)
    ec2, _autoscaling = _clients()
    removed_template = _templates()[REMOVED]["LaunchTemplateId"]
    kept_templates = {name: _templates()[name]["LaunchTemplateId"] for name in KEPT}

    # kops delete instancegroup, state store side (what the instance_group module does with state=absent).
    service.execute(service.plan_instance_group(CLUSTER, objects.new_instance_group(CLUSTER, "nodes-us-east-1b"),
                                                state="absent"))

    counts, plan, calls = _update(service, dry_run=True)
    assert _mutating(calls) == {}
    deletions = [(e.kind, e.name) for e in plan if e.action == "delete"]
    # In delete order: the hook, then the group (it terminates its instances), then its template.
    assert deletions == [("aws_autoscaling_lifecycle_hook", "%s:nodes-us-east-1b-NTHLifecycleHook" % REMOVED),
                         ("aws_autoscaling_group", REMOVED), ("aws_launch_template", REMOVED)]
    entry = next(e for e in plan if e.kind == "aws_autoscaling_group" and e.action == "delete")
    assert "force delete" in entry.changes["what"][0]
    assert {e.action for e in plan if e.action != "delete"} == {"unchanged"}
    assert REMOVED in _groups() and REMOVED in _templates()

    counts, plan, calls = _update(service)
    assert _mutating(calls) == {"DeleteLifecycleHook": 1, "DeleteAutoScalingGroup": 1, "DeleteLaunchTemplate": 1}
    assert counts["delete"] == 3 and set(counts) == {"delete", "unchanged"}
    groups, templates = _groups(), _templates()
    assert REMOVED not in groups and REMOVED not in templates
    assert set(KEPT) <= set(groups) and {n: templates[n]["LaunchTemplateId"] for n in KEPT} == kept_templates
    assert set(FOREIGN) <= set(groups) and set(FOREIGN) <= set(templates)
    assert removed_template not in {t["LaunchTemplateId"] for t in templates.values()}
    # Its instances went with it (ForceDelete), the other groups' did not.
    states = {}
    for reservation in ec2.describe_instances()["Reservations"]:
        for instance in reservation["Instances"]:
            group = tag_dict(instance.get("Tags")).get("kops.k8s.io/instancegroup")
            states.setdefault(group, set()).add(instance["State"]["Name"])
    assert states["nodes-us-east-1b"] == {"terminated"}
    assert states["nodes-us-east-1a"] == {"running"}

    again, plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_a_lifecycle_hook_the_spec_drops_is_deleted(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    cluster, igs = service.read(CLUSTER)
    nodes = next(g for g in igs if g["metadata"]["name"] == "nodes-us-east-1a")
    nodes["spec"]["warmPool"] = {"minSize": 0, "maxSize": 1, "enableLifecycleHook": True}
    service.execute(service.plan_replace([cluster] + igs))
    _update(service)
    name = "nodes-us-east-1a.%s" % CLUSTER
    autoscaling = _clients()[1]
    hooks = {h["LifecycleHookName"] for h in autoscaling.describe_lifecycle_hooks(AutoScalingGroupName=name)["LifecycleHooks"]}
    assert hooks == {"kops-warmpool", "nodes-us-east-1a-NTHLifecycleHook"}
    # A hook that is not kops' is someone else's business.
    autoscaling.put_lifecycle_hook(LifecycleHookName="drain-by-ops", AutoScalingGroupName=name,
                                   LifecycleTransition="autoscaling:EC2_INSTANCE_TERMINATING")

    cluster, igs = service.read(CLUSTER)
    next(g for g in igs if g["metadata"]["name"] == "nodes-us-east-1a")["spec"]["warmPool"]["enableLifecycleHook"] = False
    service.execute(service.plan_replace([cluster] + igs))
    _counts, plan, calls = _update(service, dry_run=True)
    assert _mutating(calls) == {}
    # The hook goes, and with it the nodes' permission to complete it (kops grants it only with the hook), and the
    # nodes' config no longer asks them to complete it (EnableLifecycleHook: a new config hash, a new template).
    assert sorted((e.kind, e.name, e.action) for e in plan if e.action != "unchanged") == [
        ("aws_autoscaling_lifecycle_hook", "%s:kops-warmpool" % name, "delete"),
        ("aws_iam_role_policy", "nodes.%s" % CLUSTER, "update"),
        ("aws_launch_template", name, "update")]
    _counts, plan, calls = _update(service)
    assert _mutating(calls) == {"DeleteLifecycleHook": 1, "PutRolePolicy": 1, "CreateLaunchTemplateVersion": 1}
    hooks = {h["LifecycleHookName"] for h in autoscaling.describe_lifecycle_hooks(AutoScalingGroupName=name)["LifecycleHooks"]}
    assert hooks == {"drain-by-ops", "nodes-us-east-1a-NTHLifecycleHook"}
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_a_target_group_the_spec_does_not_list_is_detached(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    _update(service)
    ec2, autoscaling = _clients()
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "tag:KubernetesCluster", "Values": [CLUSTER]}])["Vpcs"][0]["VpcId"]
    extra = elbv2.create_target_group(Name="stray", Protocol="TCP", Port=80, VpcId=vpc)["TargetGroups"][0][
        "TargetGroupArn"]
    name = KEPT[0]
    autoscaling.attach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=[extra])

    _counts, plan, calls = _update(service, dry_run=True)
    assert _mutating(calls) == {}
    assert [(e.kind, e.name, e.id) for e in plan if e.action != "unchanged"] == [
        ("aws_autoscaling_attachment", "%s:stray" % name, extra)]
    _counts, plan, calls = _update(service)
    assert _mutating(calls) == {"DetachLoadBalancerTargetGroups": 1}
    arns = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0][
        "TargetGroupARNs"]
    assert extra not in arns and len(arns) == 2  # the API's and kops-controller's stay
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_a_group_or_template_with_our_name_but_not_our_tags_stops_the_run(aws, tmp_path):
    ec2, autoscaling = _clients()
    group_name = KEPT[0]
    _foreign_group(group_name, {}, template_name="someone-elses")  # untagged
    template_name = KEPT[1]
    ec2.create_launch_template(LaunchTemplateName=template_name, LaunchTemplateData={"ImageId": MOTO_AMI},
                               TagSpecifications=[{"ResourceType": "launch-template", "Tags": [
                                   {"Key": "KubernetesCluster", "Value": "k8s.example.org"}]}])
    service = _service("file://%s" % tmp_path)
    with pytest.raises(TaskFailed) as failed:
        _update(service)
    text = str(failed.value)
    refused = [line.split(": ", 1)[0] for line in failed.value.errors if "never adopted" in line]
    assert sorted(refused) == ["aws_autoscaling_group/%s" % group_name, "aws_launch_template/%s" % template_name]
    assert "does not carry this cluster's ownership tags (KubernetesCluster=%s" % CLUSTER in text
    # Nothing of ours was put on them.
    assert autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[group_name])["AutoScalingGroups"][0][
        "Tags"] == []
    templates = _templates()
    assert tag_dict(templates[template_name].get("Tags")) == {"KubernetesCluster": "k8s.example.org"}
    assert ec2.describe_launch_template_versions(LaunchTemplateName=template_name)["LaunchTemplateVersions"][0][
        "VersionNumber"] == 1


def test_a_create_token_left_by_a_killed_run_is_removed_and_others_tags_stay(aws, tmp_path):
    """A run killed between an object's create (tagged with its create token) and the token's removal leaves the
    token on the object; the next run removes it, as the cut-off create would have, and leaves others' tags."""
    service = _service("file://%s" % tmp_path)
    _update(service)
    ec2 = _clients()[0]
    subnet = ec2.describe_subnets(Filters=[{"Name": "tag:KubernetesCluster", "Values": [CLUSTER]}])["Subnets"][0]
    ec2.create_tags(Resources=[subnet["SubnetId"]], Tags=[{"Key": "kubeops.kops/create-token", "Value": "0123abcd"},
                                                          {"Key": "team", "Value": "ops"}])
    _counts, plan, calls = _update(service)
    assert [(e.kind, e.action) for e in plan if e.action != "unchanged"] == [("aws_subnet", "update")]
    assert _mutating(calls) == {"CreateTags": 1, "DeleteTags": 1}
    tags = tag_dict(ec2.describe_subnets(SubnetIds=[subnet["SubnetId"]])["Subnets"][0]["Tags"])
    assert "kubeops.kops/create-token" not in tags and tags["team"] == "ops"
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}
