# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""node-termination-handler's queue mode: an SQS queue and the EventBridge rules that feed it."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression, literal
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Task

SENDERS = ["events.amazonaws.com", "sqs.amazonaws.com"]


def _code(exc):
    return ((getattr(exc, "response", None) or {}).get("Error") or {}).get("Code")


def queue_policy(resource):
    return {"Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Principal": {"Service": SENDERS},
                           "Resource": resource}], "Version": "2012-10-17"}


class SQSQueue(Task):
    """The queue; its policy names the queue's own ARN, which needs the account (STS) when applied."""

    kind = "aws_sqs_queue"

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
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        self.outputs.update(id=url, url=url, arn=attributes["QueueArn"])
        return {"message_retention_seconds": int(attributes.get("MessageRetentionPeriod", 0)),
                "policy": json.loads(attributes.get("Policy") or "{}")}

    def compare(self, actual):
        changes = {}
        if actual["message_retention_seconds"] != self.fields["message_retention_seconds"]:
            changes["message_retention_seconds"] = (actual["message_retention_seconds"],
                                                    self.fields["message_retention_seconds"])
        wanted = queue_policy(self.outputs["arn"])
        if actual["policy"] != wanted:
            changes["policy"] = (actual["policy"], wanted)
        return changes

    def _attributes(self, arn):
        return {"MessageRetentionPeriod": str(self.fields["message_retention_seconds"]),
                "Policy": json.dumps(queue_policy(arn))}

    def create(self, cloud):
        arn = self._arn(cloud)
        url = cloud.client("sqs").create_queue(QueueName=self.fields["name"], Attributes=self._attributes(arn),
                                               tags=self.fields["tags"])["QueueUrl"]
        self.outputs.update(id=url, url=url, arn=arn)

    def update(self, cloud, actual, changes):
        cloud.client("sqs").set_queue_attributes(QueueUrl=self.outputs["url"],
                                                 Attributes=self._attributes(self.outputs["arn"]))

    def terraform_data(self):
        # kops writes the region data source wherever it writes the account's.
        return [("aws_caller_identity", "current", {}), ("aws_partition", "current", {}), ("aws_region", "current", {})]

    def render_terraform(self):
        region_arn = Expression('"arn:${data.aws_partition.current.partition}:sqs:${data.aws_region.current.name}'
                                ':${data.aws_caller_identity.current.account_id}:%s"' % self.fields["name"])
        return {"message_retention_seconds": self.fields["message_retention_seconds"], "name": self.fields["name"],
                "policy": Expression("jsonencode(%s)" % literal(queue_policy(region_arn), 1)),
                "tags": self.fields["tags"]}


class EventBridgeRule(Task):
    kind = "aws_cloudwatch_event_rule"

    def find(self, cloud):
        import botocore.exceptions
        try:
            rule = cloud.client("events").describe_rule(Name=self.fields["name"])
        except botocore.exceptions.ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":
                return None
            raise
        self.outputs.update(id=rule["Name"], arn=rule["Arn"])
        return {"event_pattern": json.loads(rule.get("EventPattern") or "{}")}

    def compare(self, actual):
        wanted = json.loads(self.fields["event_pattern"])
        return {} if actual["event_pattern"] == wanted else {"event_pattern": (actual["event_pattern"], wanted)}

    def create(self, cloud):
        arn = cloud.client("events").put_rule(Name=self.fields["name"], EventPattern=self.fields["event_pattern"],
                                              Tags=tag_list(self.fields["tags"]))["RuleArn"]
        self.outputs.update(id=self.fields["name"], arn=arn)

    def update(self, cloud, actual, changes):
        cloud.client("events").put_rule(Name=self.fields["name"], EventPattern=self.fields["event_pattern"])


class EventBridgeTarget(Task):
    kind = "aws_cloudwatch_event_target"
    TARGET_ID = "1"

    def find(self, cloud):
        desired = self.desired()
        targets = cloud.client("events").list_targets_by_rule(Rule=desired["rule"])["Targets"]
        for target in targets:
            if target["Arn"] == desired["arn"]:
                self.outputs["id"] = target["Id"]
                return {}
        return None

    def create(self, cloud):
        desired = self.desired()
        cloud.client("events").put_targets(Rule=desired["rule"], Targets=[{"Id": self.TARGET_ID, "Arn": desired["arn"]}])
        self.outputs["id"] = self.TARGET_ID


def _queue_policy_resource(task):
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref
    return [("QueuePolicy", "AWS::SQS::QueuePolicy", {
        "Queues": [Ref(task)], "PolicyDocument": queue_policy(Ref(task, "arn"))})]


SQSQueue.cloudformation_type = "AWS::SQS::Queue"
SQSQueue.render_cloudformation = lambda t: {
    "QueueName": t.fields["name"], "MessageRetentionPeriod": t.fields["message_retention_seconds"],
    "Tags": tag_list(t.fields["tags"])}
SQSQueue.extra_cloudformation = _queue_policy_resource
EventBridgeRule.cloudformation_type = "AWS::Events::Rule"
EventBridgeRule.render_cloudformation = lambda t: {
    "Name": t.fields["name"], "EventPattern": json.loads(t.fields["event_pattern"]),
    "Targets": [{"Id": EventBridgeTarget.TARGET_ID, "Arn": arn} for arn in getattr(t, "cloudformation_targets", [])]}
# In CloudFormation a rule's targets are part of the rule.
EventBridgeTarget.cloudformation_type = "AWS::Events::Rule"
EventBridgeTarget.render_cloudformation = lambda t: None
