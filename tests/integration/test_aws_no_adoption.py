"""Never an adoption, every attribute compared: load balancers, target groups, the NTH queue and rules, IAM.

On moto's server (tests/conftest.py).  Two clusters whose names differ only by "." and "-"
(a.example.com, a-example.com) derive the same NLB, target-group and SQS names: the second
must fail naming the first's objects, and leave them alone.
"""

from __future__ import annotations

import collections

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import TaskFailed
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.names import queue_name, resource_name_32

from tests.integration.test_aws_update import MOTO_AMI, READ_ONLY, CountingCloud

FIRST, SECOND = "a.example.com", "a-example.com"


def _service(store, name, **options):
    service = clusters.ClusterService(store)
    spec = {"cluster_name": name, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
            "zones": ["us-east-1a"], "image": MOTO_AMI}
    spec.update(options)
    service.execute(service.plan_create(spec))
    return service


def _update(service, name, dry_run=False):
    calls = collections.Counter()

    def factory(cluster_name, region):
        cloud = CountingCloud(cluster_name, region)
        cloud.calls = calls
        return cloud

    plan = updates.apply_direct(service, name, dry_run, factory)[0]
    return plan, calls


def _mutating(calls):
    return {op: n for op, n in calls.items() if not op.startswith(READ_ONLY)}


def _balancers():
    return {b["LoadBalancerName"]: b for b in boto3.client("elbv2", region_name="us-east-1").describe_load_balancers()[
        "LoadBalancers"]}


def test_names_collide_as_the_issue_measured():
    """The premise: these two cluster names derive the same balancer, target group and queue names."""
    assert resource_name_32(FIRST, "api") == resource_name_32(SECOND, "api")
    assert resource_name_32(FIRST, "tcp") == resource_name_32(SECOND, "tcp")
    assert queue_name(FIRST) == queue_name(SECOND)


def test_second_cluster_never_adopts_the_firsts_balancer(aws, tmp_path):
    store = "file://%s" % tmp_path
    first = _service(store, FIRST)
    _update(first, FIRST)
    balancer_name = resource_name_32(FIRST, "api")
    balancer = _balancers()[balancer_name]
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    before = elbv2.describe_tags(ResourceArns=[balancer["LoadBalancerArn"]])["TagDescriptions"][0]["Tags"]

    second = _service(store, SECOND)
    with pytest.raises(TaskFailed) as failed:
        _update(second, SECOND)
    errors = "\n".join(failed.value.errors)
    # The balancer, its target groups and the NTH queue are refused, each named with the fix.
    assert "aws_lb/api.%s: " % SECOND in errors and balancer["LoadBalancerArn"] in errors
    assert "never adopted" in errors and "delete or rename it" in errors
    refused = {line.split(":", 1)[0].split("/", 1)[0] for line in failed.value.errors if "never adopted" in line}
    assert refused == {"aws_lb", "aws_lb_target_group", "aws_sqs_queue"}
    # Its dry run says the same without changing anything.
    with pytest.raises(TaskFailed) as dry:
        _update(second, SECOND, dry_run=True)
    assert balancer["LoadBalancerArn"] in "\n".join(dry.value.errors)

    # The first cluster's objects are untouched: same balancer, same tags, and its next run is a no-op.
    assert _balancers()[balancer_name]["LoadBalancerArn"] == balancer["LoadBalancerArn"]
    assert elbv2.describe_tags(ResourceArns=[balancer["LoadBalancerArn"]])["TagDescriptions"][0]["Tags"] == before
    plan, calls = _update(first, FIRST)
    assert {e.action for e in plan} == {"unchanged"} and _mutating(calls) == {}
    # Two listeners (443 and kops-controller's 3988), still pointing at the first's target groups.
    listeners = elbv2.describe_listeners(LoadBalancerArn=balancer["LoadBalancerArn"])["Listeners"]
    groups = {g["TargetGroupArn"]: g for g in elbv2.describe_target_groups()["TargetGroups"]}
    for listener in listeners:
        arn = listener["DefaultActions"][0]["TargetGroupArn"]
        tags = tag_dict(elbv2.describe_tags(ResourceArns=[arn])["TagDescriptions"][0]["Tags"])
        assert arn in groups and tags["KubernetesCluster"] == FIRST


def test_a_foreign_role_and_rule_of_the_clusters_names_are_refused(aws, tmp_path):
    """An IAM role or EventBridge rule with the cluster's name but without its ownership tags (made by hand,
    or by another tool) is an error naming it, never taken over."""
    iam = boto3.client("iam", region_name="us-east-1")
    iam.create_role(RoleName="nodes.%s" % FIRST, AssumeRolePolicyDocument="{}")
    events = boto3.client("events", region_name="us-east-1")
    rule_arn = events.put_rule(Name="%s-SpotInterruption" % FIRST, EventPattern='{"source": ["aws.ec2"]}')["RuleArn"]
    service = _service("file://%s" % tmp_path, FIRST)
    with pytest.raises(TaskFailed) as failed:
        _update(service, FIRST)
    errors = {line.split(":", 1)[0]: line for line in failed.value.errors if "never adopted" in line}
    assert set(errors) == {"aws_iam_role/nodes.%s" % FIRST, "aws_cloudwatch_event_rule/%s-SpotInterruption" % FIRST}
    assert rule_arn in errors["aws_cloudwatch_event_rule/%s-SpotInterruption" % FIRST]
    # Neither was changed: no tags added, the pattern as it was.
    assert iam.get_role(RoleName="nodes.%s" % FIRST)["Role"].get("Tags") in (None, [])
    assert events.describe_rule(Name="%s-SpotInterruption" % FIRST)["EventPattern"] == '{"source": ["aws.ec2"]}'


def test_attributes_set_after_create_are_compared(aws, tmp_path):
    """A run cut off between create and its second call (or a hand edit) leaves drift the next run fixes:
    cross-zone load balancing, the target groups' attributes and health check, the listeners, the queue's
    retention, a rule's tags, an instance profile's role."""
    service = _service("file://%s" % tmp_path, FIRST)
    _update(service, FIRST)
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    balancer = _balancers()[resource_name_32(FIRST, "api")]
    arn = balancer["LoadBalancerArn"]
    # dns None (kops create cluster's default): cross-zone on, as kops does for kops-controller.
    cross_zone = {a["Key"]: a["Value"] for a in elbv2.describe_load_balancer_attributes(LoadBalancerArn=arn)[
        "Attributes"]}["load_balancing.cross_zone.enabled"]
    assert cross_zone == "true"
    elbv2.modify_load_balancer_attributes(LoadBalancerArn=arn, Attributes=[
        {"Key": "load_balancing.cross_zone.enabled", "Value": "false"}])
    group = next(g for g in elbv2.describe_target_groups()["TargetGroups"]
                 if g["TargetGroupName"] == resource_name_32(FIRST, "tcp"))
    elbv2.modify_target_group_attributes(TargetGroupArn=group["TargetGroupArn"], Attributes=[
        {"Key": "deregistration_delay.timeout_seconds", "Value": "300"}])
    elbv2.modify_target_group(TargetGroupArn=group["TargetGroupArn"], HealthCheckIntervalSeconds=30)
    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.get_queue_url(QueueName=queue_name(FIRST))["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=queue, Attributes={"MessageRetentionPeriod": "600"})
    events = boto3.client("events", region_name="us-east-1")
    rule = events.describe_rule(Name="%s-SpotInterruption" % FIRST)["Arn"]
    events.untag_resource(ResourceARN=rule, TagKeys=["Name"])
    iam = boto3.client("iam", region_name="us-east-1")
    iam.remove_role_from_instance_profile(InstanceProfileName="nodes.%s" % FIRST, RoleName="nodes.%s" % FIRST)

    plan, calls = _update(service, FIRST, dry_run=True)
    updated = {"%s/%s" % (e.kind, e.name): e for e in plan if e.action == "update"}
    assert _mutating(calls) == {}
    assert set(updated) == {"aws_lb/api.%s" % FIRST, "aws_lb_target_group/%s" % group["TargetGroupName"],
                            "aws_sqs_queue/%s" % queue_name(FIRST), "aws_cloudwatch_event_rule/%s-SpotInterruption" % FIRST,
                            "aws_iam_instance_profile/nodes.%s" % FIRST}
    assert set(updated["aws_lb/api.%s" % FIRST].changes) == {"enable_cross_zone_load_balancing"}
    assert set(updated["aws_lb_target_group/%s" % group["TargetGroupName"]].changes) == {
        "deregistration_delay", "health_check"}

    plan, calls = _update(service, FIRST)
    assert sum(e.action == "update" for e in plan) == 5
    assert _mutating(calls) == {"ModifyLoadBalancerAttributes": 1, "ModifyTargetGroupAttributes": 1,
                                "ModifyTargetGroup": 1, "SetQueueAttributes": 1, "TagResource": 1,
                                "AddRoleToInstanceProfile": 1}
    attributes = {a["Key"]: a["Value"] for a in elbv2.describe_target_group_attributes(
        TargetGroupArn=group["TargetGroupArn"])["Attributes"]}
    assert attributes["deregistration_delay.timeout_seconds"] == "30"
    plan, calls = _update(service, FIRST)
    assert {e.action for e in plan} == {"unchanged"} and _mutating(calls) == {}
