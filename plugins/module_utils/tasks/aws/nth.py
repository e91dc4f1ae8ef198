# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""node-termination-handler's queue mode: an SQS queue and the EventBridge rules that feed it."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression, literal
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import (
    ApiField, ComparedTask, not_owned, own_tags)
from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import get_att
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Ref, Task

SENDERS = ["events.amazonaws.com", "sqs.amazonaws.com"]


def _code(exc):
    return ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")


def queue_policy(resource):
    return {"Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Principal": {"Service": SENDERS},
                           "Resource": resource}], "Version": "2012-10-17"}


def _policy_fields(document):
    return json.loads(document) if document else None


class SQSQueue(ComparedTask):
    """The queue; its policy names the queue's own ARN, which needs the account (STS) when applied.

    Found by name (GetQueueUrl); the name is the cluster's with dots as dashes, so a queue of that
    name must carry this cluster's ownership tags (ListQueueTags), else it is an error, never adopted.
    """

    kind = "aws_sqs_queue"
    cloudformation_type = "AWS::SQS::Queue"
    FIELDS = (
        ApiField("name", api="QueueName", read="QueueName", cfn="QueueName", compare=False),
        ApiField("message_retention_seconds", read="Attributes.MessageRetentionPeriod", cfn="MessageRetentionPeriod",
                 to_api=str, from_api=lambda v: None if v is None else int(v), to_cfn=lambda v: v, mutable=True),
        ApiField("tags", api="tags", read="Tags", to_api=dict, from_api=lambda v: own_tags(tag_list(v or {})),
                 mutable=True),
    )

    def cloudformation_value(self, attribute):
        """The ARN as Fn::GetAtt (a queue's Ref is its URL)."""
        return get_att(self, "Arn") if attribute == "arn" else None

    def _arn(self, cloud):
        account = cloud.lookup("account", lambda: cloud.client("sts").get_caller_identity()["Account"])
        partition = "aws-cn" if cloud.region.startswith("cn-") else "aws-us-gov" \
            if cloud.region.startswith("us-gov-") else "aws"
        return "arn:%s:sqs:%s:%s:%s" % (partition, cloud.region, account, self.fields["name"])

    def find(self, cloud):
        import botocore.exceptions
        sqs = cloud.client("sqs")
        try:
            url = sqs.get_queue_url(QueueName=self.fields["name"])["QueueUrl"]
        except botocore.exceptions.ClientError as exc:
            if _code(exc) in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"):
                return None
            raise
        tags = sqs.list_queue_tags(QueueUrl=url).get("Tags") or {}
        if not cloud.owns(tags):
            raise not_owned(cloud, url)
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        self.outputs.update(id=url, url=url, arn=attributes["QueueArn"])
        actual = self.read_actual({"QueueName": self.fields["name"], "Attributes": attributes, "Tags": tags})
        actual["policy"] = _policy_fields(attributes.get("Policy"))
        return actual

    def compare(self, actual):
        changes = ComparedTask.compare(self, actual)
        wanted = queue_policy(self.outputs["arn"])
        if actual["policy"] != wanted:
            changes["policy"] = (actual["policy"], wanted)
        return changes

    def _attributes(self, arn):
        return {"MessageRetentionPeriod": str(self.fields["message_retention_seconds"]),
                "Policy": json.dumps(queue_policy(arn))}

    def create(self, cloud):
        arn = self._arn(cloud)
        url = cloud.client("sqs").create_queue(Attributes=self._attributes(arn), **self.create_args())["QueueUrl"]
        self.outputs.update(id=url, url=url, arn=arn)

    def update(self, cloud, actual, changes):
        sqs, url = cloud.client("sqs"), self.outputs["url"]
        if {"message_retention_seconds", "policy"} & set(changes):
            sqs.set_queue_attributes(QueueUrl=url, Attributes=self._attributes(self.outputs["arn"]))
        if "tags" in changes:
            have, want = changes["tags"][0] or {}, self.fields["tags"]
            sqs.tag_queue(QueueUrl=url, Tags=dict(want))
            extra = sorted(set(have) - set(want))
            if extra:
                sqs.untag_queue(QueueUrl=url, TagKeys=extra)

    def terraform_data(self):
        # kops writes the region data source wherever it writes the account's.
        return [("aws_caller_identity", "current", {}), ("aws_partition", "current", {}), ("aws_region", "current", {})]

    def render_terraform(self):
        region_arn = Expression('"arn:${data.aws_partition.current.partition}:sqs:${data.aws_region.current.name}'
                                ':${data.aws_caller_identity.current.account_id}:%s"' % self.fields["name"])
        return {"message_retention_seconds": self.fields["message_retention_seconds"], "name": self.fields["name"],
                "policy": Expression("jsonencode(%s)" % literal(queue_policy(region_arn), 1)),
                "tags": self.fields["tags"]}

    def extra_cloudformation(self):
        return [("QueuePolicy", "AWS::SQS::QueuePolicy", {
            "Queues": [Ref(self)], "PolicyDocument": queue_policy(Ref(self, "arn"))})]


def _cluster_rules(cloud, prefix):
    """The rules whose names start with the cluster's rule prefix: one paginated ListRules per run."""
    return cloud.lookup("aws_cloudwatch_event_rule:" + prefix, lambda: {r["Name"]: r for r in paginate(
        cloud.client("events"), "list_rules", "Rules", NamePrefix=prefix)})


class EventBridgeRule(ComparedTask):
    """An EventBridge rule <cluster>-<event>, found in one ListRules by the cluster's prefix; its tags
    (the run's one tagging-API call, AwsCloud.tags_of, else ListTagsForResource) say whether it is this
    cluster's: another's is an error."""

    kind = "aws_cloudwatch_event_rule"
    cloudformation_type = "AWS::Events::Rule"
    FIELDS = (
        ApiField("name", api="Name", read="Name", cfn="Name", compare=False),
        ApiField("event_pattern", api="EventPattern", read="EventPattern", cfn="EventPattern",
                 from_api=_policy_fields, to_cfn=json.loads, mutable=True),
        ApiField("tags", api="Tags", read="Tags", to_api=tag_list, from_api=own_tags, mutable=True),
    )

    def __init__(self, task_name, /, cloudformation_targets=(), **fields):
        """cloudformation_targets: the ARNs (Refs) of the targets CloudFormation lists inside the rule; the API and
        Terraform make each target its own object (EventBridgeTarget), so they are not a field."""
        ComparedTask.__init__(self, task_name, **fields)
        self.cloudformation_targets = list(cloudformation_targets)

    def cloudformation_value(self, attribute):
        """The ARN as Fn::GetAtt (a rule's Ref is its name)."""
        return get_att(self, "Arn") if attribute == "arn" else None

    def find(self, cloud):
        prefix = self.fields["name"].rsplit("-", 1)[0] + "-"
        rule = _cluster_rules(cloud, prefix).get(self.fields["name"])
        if rule is None:
            return None
        tags = cloud.tags_of(rule["Arn"], lambda: cloud.client("events").list_tags_for_resource(
            ResourceARN=rule["Arn"]).get("Tags") or [])
        if not cloud.owns(own_tags(tags)):
            raise not_owned(cloud, rule["Arn"])
        self.outputs.update(id=rule["Name"], arn=rule["Arn"])
        return self.read_actual(dict(rule, Tags=tags))

    def create(self, cloud):
        arn = cloud.client("events").put_rule(**self.create_args())["RuleArn"]
        self.outputs.update(id=self.fields["name"], arn=arn)

    def update(self, cloud, actual, changes):
        events = cloud.client("events")
        if "event_pattern" in changes:
            events.put_rule(Name=self.fields["name"], EventPattern=self.fields["event_pattern"])
        if "tags" in changes:
            have, want = changes["tags"][0] or {}, self.fields["tags"]
            events.tag_resource(ResourceARN=self.outputs["arn"], Tags=tag_list(want))
            extra = sorted(set(have) - set(want))
            if extra:
                events.untag_resource(ResourceARN=self.outputs["arn"], TagKeys=extra)
            cloud.forget_tags(self.outputs["arn"])

    def render_cloudformation(self):
        """Name and pattern; in CloudFormation a rule's targets are part of the rule (no Tags: kops writes none)."""
        return {"Name": self.fields["name"], "EventPattern": json.loads(self.fields["event_pattern"]),
                "Targets": [{"Id": EventBridgeTarget.TARGET_ID, "Arn": arn}
                            for arn in self.cloudformation_targets]}


class EventBridgeTarget(Task):
    """The queue as a rule's target; the rules that target the queue come from one
    ListRuleNamesByTarget per queue and run (not one ListTargetsByRule per rule).
    fields: rule (the rule's name, a Ref) and arn (the queue's, a Ref); the target's id is kops' "1"."""

    kind = "aws_cloudwatch_event_target"
    cloudformation_type = "AWS::Events::Rule"
    TARGET_ID = "1"
    FIELDS = (
        Field("rule", api="Rule"),
        Field("arn", api="Targets", to_api=lambda arn: [{"Id": EventBridgeTarget.TARGET_ID, "Arn": arn}]),
    )

    def find(self, cloud):
        desired = self.desired()
        rules = cloud.lookup("rules-by-target:" + desired["arn"], lambda: set(paginate(
            cloud.client("events"), "list_rule_names_by_target", "RuleNames", TargetArn=desired["arn"])))
        if desired["rule"] not in rules:
            return None
        self.outputs["id"] = self.TARGET_ID
        return {}

    def create(self, cloud):
        cloud.client("events").put_targets(**self.create_args())
        self.outputs["id"] = self.TARGET_ID

    def render_cloudformation(self):
        return None  # part of its rule (EventBridgeRule.render_cloudformation)
