# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""node-termination-handler in queue mode (kops' NodeTerminationHandlerBuilder): the
<cluster-dashes>-nth queue and one EventBridge rule + target per event kind."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags, event_rule_name
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_queue_name
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import nth
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref

QUEUE_RETENTION_SECONDS = 300
EVENTS = {
    "ASGLifecycle": {"source": ["aws.autoscaling"], "detail-type": ["EC2 Instance-terminate Lifecycle Action"]},
    "SpotInterruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "InstanceStateChange": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "InstanceScheduledChange": {"source": ["aws.health"], "detail-type": ["AWS Health Event"],
                                "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]}},
    "RebalanceRecommendation": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
}


def enabled_events(spec):
    handler = spec.get("nodeTerminationHandler") or {}
    events = ["ASGLifecycle", "InstanceScheduledChange", "InstanceStateChange", "SpotInterruption"]
    if handler.get("enableRebalanceDraining") or handler.get("enableRebalanceMonitoring"):
        events.append("RebalanceRecommendation")
    return sorted(events)


def build_nth(cluster, tasks):
    spec = cluster["spec"]
    handler = spec.get("nodeTerminationHandler") or {}
    if not handler.get("enabled") or handler.get("enableSQSTerminationDraining") is False:
        return None
    name = cluster["metadata"]["name"]
    queue_name = cluster_queue_name(cluster)
    queue = nth.SQSQueue(queue_name, name=queue_name, message_retention_seconds=QUEUE_RETENTION_SECONDS,
                         tags=cluster_tags(name, queue_name))
    tasks[queue.key] = queue
    for event in enabled_events(spec):
        rule_name = event_rule_name(name, event)
        rule = nth.EventBridgeRule(rule_name, name=rule_name, event_pattern=json.dumps(EVENTS[event]),
                                   tags=cluster_tags(name, rule_name), cloudformation_targets=[Ref(queue, "arn")])
        target = nth.EventBridgeTarget(rule_name + "-Target", rule=Ref(rule), arn=Ref(queue, "arn"))
        tasks[rule.key] = rule
        tasks[target.key] = target
    return queue
