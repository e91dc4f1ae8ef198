# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Per-instance-group objects (kops pkg/model/awsmodel/autoscalinggroup.go): names and tags.

First part: the launch template / autoscaling group names and the tags kops puts on
an instance group's instances, volumes and autoscaling group.  The tasks that
reconcile launch templates, autoscaling groups, lifecycle hooks and warm pools
build on these.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.names import cluster_tags

NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/%s"
NODE_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/%s"
NTH_MANAGED = "aws-node-termination-handler/managed"

# Labels kops gives every node of a role (nodelabels.BuildNodeLabels), shown to cluster-autoscaler.
ROLE_LABELS = {
    "ControlPlane": {"kops.k8s.io/kops-controller-pki": "",
                     "node-role.kubernetes.io/control-plane": "",
                     "node.kubernetes.io/exclude-from-external-load-balancers": ""},
    "Master": {"kops.k8s.io/kops-controller-pki": "",
               "node-role.kubernetes.io/control-plane": "",
               "node.kubernetes.io/exclude-from-external-load-balancers": ""},
    "Node": {"node-role.kubernetes.io/node": ""},
    "Bastion": {},
    "APIServer": {"node-role.kubernetes.io/api-server": ""},
}
ROLE_TAGS = {
    "ControlPlane": {"k8s.io/role/control-plane": "1", "k8s.io/role/master": "1"},
    "Master": {"k8s.io/role/control-plane": "1", "k8s.io/role/master": "1"},
    "Node": {"k8s.io/role/node": "1"},
    "Bastion": {"k8s.io/role/bastion": "1"},
    "APIServer": {"k8s.io/role/api-server": "1"},
}


def group_object_name(cluster_name, group):
    """kops' AutoscalingGroupName: <ig>.masters.<c> for the control plane, <ig>.<c> otherwise."""
    role = group["spec"].get("role")
    if role in ("ControlPlane", "Master"):
        return "%s.masters.%s" % (group["metadata"]["name"], cluster_name)
    return "%s.%s" % (group["metadata"]["name"], cluster_name)


def nth_queue_mode(cluster):
    """Queue mode as model/aws/nth.py builds it: enabled, SQS draining not switched off."""
    handler = cluster["spec"].get("nodeTerminationHandler") or {}
    return bool(handler.get("enabled")) and handler.get("enableSQSTerminationDraining") is not False


def group_tags(cluster, group):
    """The tags of an instance group's instances, volumes and autoscaling group (CloudTagsForInstanceGroup)."""
    cluster_name = cluster["metadata"]["name"]
    spec = group["spec"]
    role = spec.get("role")
    labels = dict(ROLE_LABELS.get(role, {}))
    labels.update(spec.get("nodeLabels") or {})
    extra = {NODE_TEMPLATE_LABEL % k: v for k, v in labels.items()}
    for taint in spec.get("taints") or []:
        key, _sep, rest = taint.partition("=")
        extra[NODE_TEMPLATE_TAINT % key] = rest
    extra.update(cluster["spec"].get("cloudLabels") or {})
    extra.update(spec.get("cloudLabels") or {})
    extra.update(ROLE_TAGS.get(role, {}))
    extra["kops.k8s.io/instancegroup"] = group["metadata"]["name"]
    if nth_queue_mode(cluster):
        # kops writes the managed tag first, so a managedASGTag equal to a cluster tag keeps the cluster value.
        managed_tag = (cluster["spec"].get("nodeTerminationHandler") or {}).get("managedASGTag") or NTH_MANAGED
        extra = dict({managed_tag: ""}, **extra)
    tags = dict(extra)
    tags.update(cluster_tags(cluster_name, group_object_name(cluster_name, group)))
    return tags
