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
# kops' tags on a service-account role (IRSA): which service account it is for.
TAG_SERVICE_ACCOUNT_NAME = "service-account.kops.k8s.io/name"
TAG_SERVICE_ACCOUNT_NAMESPACE = "service-account.kops.k8s.io/namespace"
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


# Look-alike cluster names (model/aws/lookalike.py): a cluster whose kops-derived names another cluster already
# holds (a.example.com beside a-example.com) carries this annotation in its completed spec, from the record in its
# store, and its load balancer, target group and NTH queue names end with a hash of the full cluster name instead.
UNIQUE_NAMES_ANNOTATION = "kubeops.kops/aws-names"
UNIQUE_NAMES = "unique"
# Every resource_name_32 prefix the model uses (balancers and target groups).
RESOURCE_NAME_PREFIXES = ("api", "tcp", "tls", "kops-controller", "bastion")


def uses_unique_names(cluster):
    return ((cluster.get("metadata") or {}).get("annotations") or {}).get(UNIQUE_NAMES_ANNOTATION) == UNIQUE_NAMES


def resource_name_32(cluster_name, prefix, unique=False):
    """Load balancer / target group names: <prefix>-<cluster with dots as dashes>, 32 chars, hashed (kops hashes
    that text; with unique, the hash is of <prefix>-<cluster name> with its dots, kops' truncation otherwise kept)."""
    text = "%s-%s" % (prefix, cluster_name.replace(".", "-"))
    return truncate(text, 32, always_hash=True, hash_of="%s-%s" % (prefix, cluster_name) if unique else None)


def balancer_name(cluster, prefix):
    """resource_name_32 of a (completed) cluster, as its look-alike record says."""
    return resource_name_32(cluster["metadata"]["name"], prefix, uses_unique_names(cluster))


def cidr_label(cidr):
    """A CIDR in a rule name: 0.0.0.0/0 -> 0-0-0-0--0, ::/0 -> __--0 (after terraform_name)."""
    return terraform_name(cidr.replace(":", "_"))


def iam_role_name(role_prefix, cluster_name):
    """masters.<c>, nodes.<c>, ...: kops' IAM role and instance profile name, hashed down to 64 characters."""
    return truncate("%s.%s" % (role_prefix, cluster_name), MAX_IAM_ROLE_NAME)


def queue_name(cluster_name, unique=False):
    """node-termination-handler's SQS queue: <c with dots as dashes, hashed to 75>-nth (kops' QueueNamePrefix);
    with unique, always hashed, the hash of the cluster name with its dots."""
    return truncate(cluster_name.replace(".", "-"), MAX_QUEUE_NAME_PREFIX, always_hash=unique,
                    hash_of=cluster_name if unique else None) + "-nth"


def queue_name_prefix(cluster_name):
    """What every queue_name of the cluster starts with, kops' or unique, however long the name (truncate keeps
    this much before its "-<hash>")."""
    return cluster_name.replace(".", "-")[:MAX_QUEUE_NAME_PREFIX - 7]


def cluster_queue_name(cluster):
    """queue_name of a (completed) cluster, as its look-alike record says."""
    return queue_name(cluster["metadata"]["name"], uses_unique_names(cluster))


def kops_derived_names(cluster_name):
    """The AWS names kops derives from the cluster name with its dots as dashes, which a look-alike cluster
    would share: every balancer and target group name, and the NTH queue's."""
    return {resource_name_32(cluster_name, p) for p in RESOURCE_NAME_PREFIXES} | {queue_name(cluster_name)}


def event_rule_name(cluster_name, event):
    """An EventBridge rule: <c hashed to 40>-<event> (kops' GetClusterName40)."""
    return "%s-%s" % (truncate(cluster_name, MAX_EVENT_RULE_PREFIX), event)


def lookalike_cluster_names(cluster_name):
    """The other cluster names that give the same AWS names as this one where kops writes its dots as dashes
    (a.example.com, a-example.com, a.example-com, a-example-com), sorted; each "." or "-" may be either."""
    parts, separators = [], 0
    for char in cluster_name:
        parts.append("%s" if char in ".-" else char.replace("%", "%%"))
        separators += char in ".-"
    if not separators:
        return []
    template = "".join(parts)
    names = set()
    for bits in range(2 ** separators):
        names.add(template % tuple("-" if bits >> i & 1 else "." for i in range(separators)))
    names.discard(cluster_name)
    return sorted(names)


# The lifecycle hooks kops makes (model/aws/autoscaling.py names them): only these are ever deleted
# (tasks/aws/autoscaling.py); a warming node completes the warm pool's (nodeconfig/config.py).
NTH_HOOK_SUFFIX = "-NTHLifecycleHook"
WARM_POOL_HOOK = "kops-warmpool"


def group_object_name(cluster_name, group):
    """kops' AutoscalingGroupName: <ig>.masters.<c> for the control plane, <ig>.apiservers.<c> for API servers,
    <ig>.<c> otherwise."""
    role = group["spec"].get("role")
    if role in ("ControlPlane", "Master"):
        return "%s.masters.%s" % (group["metadata"]["name"], cluster_name)
    if role == "APIServer":
        return "%s.apiservers.%s" % (group["metadata"]["name"], cluster_name)
    return "%s.%s" % (group["metadata"]["name"], cluster_name)
