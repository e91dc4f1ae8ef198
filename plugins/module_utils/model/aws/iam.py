# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IAM roles and instance profiles per instance group role (kops' IAMModelBuilder).

Roles: masters.<c>, nodes.<c>, bastions.<c>, apiservers.<c>, for the roles the
cluster has, unless every group of that role brings its own profile
(spec.iam.profile).  The control plane gets an inline policy: etcd volumes it
may attach (by tag), the state store (read all of the cluster's config, write
its backups), and the cluster's Route53 zone.  Nodes read only their nodeup
config and the kubelet bootstrap token from an S3 store (kOps 1.37 nodes read
nothing: kops-controller serves them), plus what their add-ons need (ECR
pulls, the CNI's source/destination check).
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.names import cluster_tags, iam_role_name
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import iam
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref

ROLE_PREFIX = {objects.ROLE_CONTROL_PLANE: "masters", objects.ROLE_NODE: "nodes",
               objects.ROLE_BASTION: "bastions", objects.ROLE_APISERVER: "apiservers"}
ASSUME_ROLE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


ECR_PULL = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:DescribeRepositories",
            "ecr:GetAuthorizationToken", "ecr:GetDownloadUrlForLayer", "ecr:GetRepositoryPolicy", "ecr:ListImages")
SRC_DST_CHECK = ("ec2:DescribeInstances", "ec2:ModifyNetworkInterfaceAttribute")
# (condition on the completed spec, actions the nodes need for it)
NODE_ACTIONS = (
    (lambda spec: (spec.get("iam") or {}).get("allowContainerRegistry"), ECR_PULL),
    (lambda spec: "calico" in (spec.get("networking") or {}) and spec.get("nonMasqueradeCIDR") != "::/0"
     and (spec["networking"]["calico"] or {}).get("awsSrcDstCheck") != "DoNothing", SRC_DST_CHECK),
    (lambda spec: "kubeRouter" in (spec.get("networking") or {}), SRC_DST_CHECK),
    (lambda spec: "kindnet" in (spec.get("networking") or {}), SRC_DST_CHECK),
    (lambda spec: "amazonvpc" in (spec.get("networking") or {}),
     ("ec2:AssignPrivateIpAddresses", "ec2:AttachNetworkInterface", "ec2:CreateNetworkInterface",
      "ec2:DescribeInstanceTypes", "ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces",
      "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses")),
    (lambda spec: spec.get("nonMasqueradeCIDR") == "::/0", ("ec2:AssignIpv6Addresses",)),
)


def node_policy(cluster):
    """The nodes' inline policy, or None when they need no permission."""
    actions = set()
    for applies, needed in NODE_ACTIONS:
        if applies(cluster["spec"]):
            actions.update(needed)
    statements = node_store_statements(cluster["spec"].get("configBase", ""))
    if actions:
        statements.append({"Action": sorted(actions), "Effect": "Allow", "Resource": "*"})
    if not statements:
        return None
    return {"Statement": statements, "Version": "2012-10-17"}


def node_store_statements(config_base):
    """What a worker reads from an S3 state store: its group's nodeup config and the kubelet bootstrap
    token, nothing else (never pki/: workers bootstrap their kubelet certificate through the API server).
    kOps' workers read nothing (kops-controller hands them their config); ours boot without it."""
    if not config_base.startswith("s3://"):
        return []
    bucket, key = _s3_parts(config_base)
    return [
        {"Action": ["s3:GetObject"], "Effect": "Allow",
         "Resource": ["arn:aws:s3:::%s/%s/igconfig/node/*" % (bucket, key),
                      "arn:aws:s3:::%s/%s/secrets/kubelet-bootstrap-token" % (bucket, key)]},
        {"Action": ["s3:GetBucketLocation"], "Effect": "Allow", "Resource": ["arn:aws:s3:::%s" % bucket]},
    ]


def _s3_parts(url):
    bucket, _sep, key = url[len("s3://"):].partition("/")
    return bucket, key.rstrip("/")


def control_plane_policy(cluster):
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    statements = [{
        "Action": "ec2:AttachVolume",
        "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": name,
                                       "aws:ResourceTag/k8s.io/role/master": "1"}},
        "Effect": "Allow", "Resource": ["*"],
    }]
    base = spec.get("configBase", "")
    if base.startswith("s3://"):
        bucket, key = _s3_parts(base)
        statements += [
            {"Action": ["s3:Get*"], "Effect": "Allow", "Resource": "arn:aws:s3:::%s/%s/*" % (bucket, key)},
            {"Action": ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:GetObject", "s3:PutObject"],
             "Effect": "Allow", "Resource": "arn:aws:s3:::%s/%s/backups/etcd/*" % (bucket, key)},
            {"Action": ["s3:GetBucketLocation", "s3:GetEncryptionConfiguration", "s3:ListBucket",
                        "s3:ListBucketVersions"], "Effect": "Allow", "Resource": ["arn:aws:s3:::%s" % bucket]},
        ]
    if spec.get("dnsZone") and ((spec.get("topology") or {}).get("dns") or {}).get("type", "Public") != "None":
        statements += [
            {"Action": ["route53:ChangeResourceRecordSets", "route53:GetHostedZone",
                        "route53:ListResourceRecordSets"], "Effect": "Allow",
             "Resource": ["arn:aws:route53:::hostedzone/%s" % spec["dnsZone"]]},
            {"Action": ["route53:GetChange"], "Effect": "Allow", "Resource": ["arn:aws:route53:::change/*"]},
            {"Action": ["route53:ListHostedZones", "route53:ListTagsForResource"], "Effect": "Allow",
             "Resource": ["*"]},
        ]
    return {"Statement": statements, "Version": "2012-10-17"}


def build_iam(cluster, groups, tasks):
    """Roles, profiles and policies; returns {IG role: instance profile task or external ARN}."""
    name = cluster["metadata"]["name"]
    profiles = {}
    for role, prefix in ROLE_PREFIX.items():
        members = [g for g in groups if (g.get("spec") or {}).get("role") == role]
        if not members:
            continue
        external = {((g.get("spec") or {}).get("iam") or {}).get("profile") for g in members}
        if None not in external:
            profiles[role] = external.pop() if len(external) == 1 else sorted(external)
            continue
        iam_name = iam_role_name(prefix, name)
        role_task = iam.IAMRole(iam_name, name=iam_name, assume_role_policy=json.dumps(ASSUME_ROLE_POLICY, indent=2),
                                tags=cluster_tags(name, iam_name))
        profile = iam.IAMInstanceProfile(iam_name, name=iam_name, role=Ref(role_task, "name"),
                                         tags=cluster_tags(name, iam_name))
        tasks[role_task.key] = role_task
        tasks[profile.key] = profile
        document = {objects.ROLE_CONTROL_PLANE: control_plane_policy,
                    objects.ROLE_NODE: node_policy}.get(role, lambda _cluster: None)(cluster)
        if document is not None:
            policy = iam.IAMRolePolicy(iam_name, name=iam_name, role=Ref(role_task, "name"),
                                       policy=json.dumps(document, indent=2, sort_keys=True))
            tasks[policy.key] = policy
        profiles[role] = profile
    return profiles
