# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' names and tags for AWS objects (pkg/model/names.go, awsup tags, terraformWriter)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import terraform_name
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import truncate

__all__ = ["terraform_name"]  # kops' names.go has it; the model imports it from here

TAG_CLUSTER = "KubernetesCluster"
TAG_NAME = "Name"
TAG_CLUSTER_OWNERSHIP = "kubernetes.io/cluster/%s"
# AWS name limits kops keeps to by truncating with a hash (pkg/truncate): IAM roles and instance profiles 64,
# SQS queues 80 (kops: a 75-character prefix and "-nth"), EventBridge rules 64 (kops: a 40-character prefix).
MAX_IAM_ROLE_NAME = 64
MAX_QUEUE_NAME_PREFIX = 75
MAX_EVENT_RULE_PREFIX = 40


def cluster_tags(cluster_name, name, shared=False, extra=None):
    """The tags kops puts on every object it owns (or shares, for BYO network objects)."""
    tags = {
        TAG_CLUSTER: cluster_name,
        TAG_NAME: name,
        TAG_CLUSTER_OWNERSHIP % cluster_name: "shared" if shared else "owned",
    }
    tags.update(extra or {})
    return tags


def resource_name_32(cluster_name, prefix):
    """Load balancer / target group names: <prefix>-<cluster with dots as dashes>, 32 chars, hashed."""
    return truncate("%s-%s" % (prefix, cluster_name.replace(".", "-")), 32, always_hash=True)


def cidr_label(cidr):
    """A CIDR in a rule name: 0.0.0.0/0 -> 0-0-0-0--0, ::/0 -> __--0 (after terraform_name)."""
    return terraform_name(cidr.replace(":", "_"))


def iam_role_name(role_prefix, cluster_name):
    """masters.<c>, nodes.<c>, ...: kops' IAM role and instance profile name, hashed down to 64 characters."""
    return truncate("%s.%s" % (role_prefix, cluster_name), MAX_IAM_ROLE_NAME)


def queue_name(cluster_name):
    """node-termination-handler's SQS queue: <c with dots as dashes, hashed to 75>-nth (kops' QueueNamePrefix)."""
    return truncate(cluster_name.replace(".", "-"), MAX_QUEUE_NAME_PREFIX) + "-nth"


def event_rule_name(cluster_name, event):
    """An EventBridge rule: <c hashed to 40>-<event> (kops' GetClusterName40)."""
    return "%s-%s" % (truncate(cluster_name, MAX_EVENT_RULE_PREFIX), event)
