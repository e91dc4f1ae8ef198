"""Never an adoption, every attribute compared: load balancers, target groups, the NTH queue and rules, IAM.

On moto's server (tests/conftest.py).  Two clusters whose names differ only by "." and "-"
(a.example.com, a-example.com) derive the same NLB, target-group and SQS names under kops' rules: the second
gets unique ones (model/aws/lookalike.py) and both coexist, neither adopting the other's objects.
"""

from __future__ import annotations

import collections
import json

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import TaskFailed
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import queue_name, resource_name_32

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


def _queues():
    sqs = boto3.client("sqs", region_name="us-east-1")
    return {url.rsplit("/", 1)[-1]: tag_dict([{"Key": k, "Value": v} for k, v in (
        sqs.list_queue_tags(QueueUrl=url).get("Tags") or {}).items()]).get("KubernetesCluster")
        for url in sqs.list_queues().get("QueueUrls") or []}


def _owners():
    """{balancer or target group name: its KubernetesCluster tag}, and the same for queues."""
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    found = {}
    for operation, key, name_key, arn_key in (("describe_load_balancers", "LoadBalancers", "LoadBalancerName",
                                               "LoadBalancerArn"),
                                              ("describe_target_groups", "TargetGroups", "TargetGroupName",
                                               "TargetGroupArn")):
        for item in getattr(elbv2, operation)()[key]:
            tags = tag_dict(elbv2.describe_tags(ResourceArns=[item[arn_key]])["TagDescriptions"][0]["Tags"])
            found["%s/%s" % (operation.split("_", 1)[1], item[name_key])] = tags.get("KubernetesCluster")
    found.update(("queue/%s" % name, owner) for name, owner in _queues().items())
    return found


def _listener_targets(balancer_name):
    """{listener port: the KubernetesCluster tag of the target group it forwards to}."""
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    arn = _balancers()[balancer_name]["LoadBalancerArn"]
    targets = {}
    for listener in elbv2.describe_listeners(LoadBalancerArn=arn)["Listeners"]:
        group = listener["DefaultActions"][0]["TargetGroupArn"]
        targets[listener["Port"]] = tag_dict(elbv2.describe_tags(ResourceArns=[group])["TagDescriptions"][0][
            "Tags"])["KubernetesCluster"]
    return targets


@pytest.mark.parametrize("deleted_first", [FIRST, SECOND])
def test_look_alike_clusters_coexist_and_delete_apart(aws, tmp_path, deleted_first):
    """a.example.com is built with kops' names; a-example.com, whose kops names a.example.com holds, gets unique ones
    (kops' truncation, the hash of its full name), says so in its plan, records the choice; both are built, neither
    adopts the other's objects, later runs change nothing, and each deletes without touching the other."""
    from ansible_collections.kubeops.kops.plugins.module_utils import deletion
    from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import lookalike

    store = "file://%s" % tmp_path
    first = _service(store, FIRST)
    plan, _calls = _update(first, FIRST)
    assert not [e for e in plan if e.kind == lookalike.PLAN_KIND]  # kops' names, nothing recorded
    assert first.cluster_store(FIRST).read(lookalike.RECORD) is None
    kops_names = {"load_balancers/%s" % resource_name_32(FIRST, "api"), "target_groups/%s" % resource_name_32(FIRST, "tcp"),
                  "target_groups/%s" % resource_name_32(FIRST, "kops-controller"), "queue/%s" % queue_name(FIRST)}
    before = _owners()
    assert {name: before[name] for name in kops_names} == dict.fromkeys(kops_names, FIRST)

    second = _service(store, SECOND)
    plan, calls = _update(second, SECOND, dry_run=True)
    assert _mutating(calls) == {} and second.cluster_store(SECOND).read(lookalike.RECORD) is None
    said = [e for e in plan if e.kind == lookalike.PLAN_KIND]
    assert [e.action for e in said] == ["create"] and "look-alike cluster %s holds kops' names" % FIRST in said[0].name
    assert {e.action for e in plan if e.kind in ("aws_lb", "aws_lb_target_group", "aws_sqs_queue")} == {"create"}

    plan, calls = _update(second, SECOND)  # built in full: no "never adopted" refusal
    said = [e for e in plan if e.kind == lookalike.PLAN_KIND]
    assert [e.action for e in said] == ["create"] and "unique AWS names" in said[0].name
    assert json.loads(second.cluster_store(SECOND).read(lookalike.RECORD))["lookalikes"] == [FIRST]
    unique = {"load_balancers/%s" % resource_name_32(SECOND, "api", True),
              "target_groups/%s" % resource_name_32(SECOND, "tcp", True),
              "target_groups/%s" % resource_name_32(SECOND, "kops-controller", True),
              "queue/%s" % queue_name(SECOND, True)}
    assert not unique & kops_names
    after = _owners()
    # The first's objects are as they were; the second's are new, its own, under names that cannot collide.
    assert {name: after[name] for name in kops_names} == dict.fromkeys(kops_names, FIRST)
    assert {name: after[name] for name in unique} == dict.fromkeys(unique, SECOND)
    assert set(after) == set(before) | unique
    assert set(_listener_targets(resource_name_32(FIRST, "api")).values()) == {FIRST}
    assert set(_listener_targets(resource_name_32(SECOND, "api", True)).values()) == {SECOND}
    # Later runs of either change nothing (the second's choice is read from its record).
    for service, name in ((first, FIRST), (second, SECOND)):
        plan, calls = _update(service, name)
        assert {e.action for e in plan} == {"unchanged"} and _mutating(calls) == {}

    # Deleting one leaves the other whole; then the other deletes cleanly.
    services = {FIRST: first, SECOND: second}
    kept = SECOND if deleted_first == FIRST else FIRST
    outcome = deletion.delete_cluster(services[deleted_first], deleted_first, yes=True, interval=0)
    assert outcome.store_deleted
    left = _owners()
    assert deleted_first not in left.values()
    assert {name: owner for name, owner in left.items() if owner == kept} == {
        name: owner for name, owner in after.items() if owner == kept}
    plan, calls = _update(services[kept], kept)
    assert {e.action for e in plan} == {"unchanged"} and _mutating(calls) == {}
    outcome = deletion.delete_cluster(services[kept], kept, yes=True, interval=0)
    assert outcome.store_deleted and set(_owners().values()) <= {None}


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
