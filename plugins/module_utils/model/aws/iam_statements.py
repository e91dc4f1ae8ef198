# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The instance roles' IAM permissions as kops grants them (kops' pkg/model/iam/iam_builder.go), as tables.

A ``Grant`` is what one component needs: actions on any resource (``anywhere``), actions on resources
tagged with the cluster (``tagged``), create actions whose request tags the cluster (``tagged_create``),
EC2 create-tag pairs (``ec2_create``: actions, resource types), KMS through AWS services (``kms``) and
literal statements (``{cluster}`` and ``{partition}`` are filled in).  ``ROLE_GRANTS`` lists, per
instance-group role, which grant applies when; ``Policy`` folds them into kops' statement order.
"""

from __future__ import annotations

import collections
import copy
import ipaddress

Grant = collections.namedtuple("Grant", "anywhere tagged tagged_create ec2_create kms statements")
Grant.__new__.__defaults__ = ((), (), (), (), None, ())

# kms: "via" = data-plane actions only through EC2/S3 (kms:ViaService); "direct" = without that condition.
KMS_ACTIONS = ("kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*")

ETCD_MANAGER = Grant(
    anywhere=("ec2:DescribeInstances", "ec2:DescribeVolumes"),
    statements=({"Action": "ec2:AttachVolume",
                 "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": "{cluster}",
                                                "aws:ResourceTag/k8s.io/role/master": "1"}},
                 "Effect": "Allow", "Resource": ["*"]},))
# kops-controller verifies and labels nodes (kept: our bootstrap service does the same, issue 12 item 4).
KOPS_CONTROLLER = Grant(anywhere=("ec2:DescribeInstances",))
KOPS_CONTROLLER_IPAM = Grant(anywhere=("ec2:DescribeNetworkInterfaces",))
NODEUP_INSTANCE_TYPES = Grant(anywhere=("ec2:DescribeInstanceTypes",))
NODEUP_IPV6 = Grant(anywhere=("ec2:AssignIpv6Addresses",))
LIFECYCLE_HOOKS = Grant(anywhere=("autoscaling:DescribeLifecycleHooks",), tagged=("autoscaling:CompleteLifecycleAction",))
ECR = Grant(anywhere=("ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer",
                      "ecr:GetRepositoryPolicy", "ecr:DescribeRepositories", "ecr:ListImages", "ecr:BatchGetImage"))
ECR_PULL_THROUGH = Grant(anywhere=("ecr:ReplicateImage", "ecr:BatchImportUpstreamImage", "ecr:CreateRepository",
                                   "ecr:TagResource"))
SRC_DST_CHECK = Grant(anywhere=("ec2:DescribeInstances", "ec2:ModifyNetworkInterfaceAttribute"))
MODIFY_INSTANCE = Grant(tagged=("ec2:ModifyInstanceAttribute",))
AMAZON_VPC = Grant(
    anywhere=("ec2:AssignPrivateIpAddresses", "ec2:AttachNetworkInterface", "ec2:CreateNetworkInterface",
              "ec2:DeleteNetworkInterface", "ec2:DescribeInstances", "ec2:DescribeTags", "ec2:DescribeNetworkInterfaces",
              "ec2:DescribeInstanceTypes", "ec2:DescribeSecurityGroups", "ec2:DescribeSubnets",
              "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses"),
    statements=({"Action": ["ec2:CreateTags"], "Effect": "Allow",
                 "Resource": ["arn:{partition}:ec2:*:*:network-interface/*"]},))
CILIUM_ENI = Grant(anywhere=(
    "ec2:DescribeSubnets", "ec2:AttachNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses",
    "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups",
    "ec2:DeleteNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:DescribeVpcs", "ec2:CreateTags",
    "ec2:DescribeRouteTables", "ec2:DescribeTags", "ec2:DescribeInstances"))
KMS_VIA_SERVICE = Grant(kms="via")
KMS_DIRECT = Grant(kms="direct")
EBS_CSI = Grant(
    kms="via",
    anywhere=("ec2:DescribeAvailabilityZones", "ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeTags",
              "ec2:DescribeVolumes", "ec2:DescribeVolumesModifications", "ec2:DescribeVolumeStatus"),
    tagged=("ec2:AttachVolume", "ec2:DeleteVolume", "ec2:DetachVolume", "ec2:ModifyVolume"),
    ec2_create=((("CopyVolumes", "CreateVolume"), ("volume", "snapshot")),))
EBS_CSI_SNAPSHOTS = Grant(
    anywhere=("ec2:CreateSnapshot", "ec2:DescribeAvailabilityZones", "ec2:DescribeSnapshots"),
    tagged=("ec2:DeleteSnapshot", "ec2:EnableFastSnapshotRestores"),
    ec2_create=((("CreateSnapshot",), ("volume", "snapshot")),),
    statements=({"Action": "ec2:CreateVolume",
                 "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": "{cluster}"}},
                 "Effect": "Allow", "Resource": ["arn:{partition}:ec2:*:*:snapshot/*"]},))
CLOUD_CONTROLLER_MANAGER = Grant(
    anywhere=("autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeTags", "ec2:DescribeInstances",
              "ec2:DescribeRegions", "ec2:DescribeAvailabilityZones", "ec2:DescribeRouteTables",
              "ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:DescribeInstanceTopology",
              "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeLoadBalancerAttributes",
              "elasticloadbalancing:DescribeListeners", "elasticloadbalancing:DescribeLoadBalancerPolicies",
              "elasticloadbalancing:DescribeTargetGroups", "elasticloadbalancing:DescribeTargetGroupAttributes",
              "elasticloadbalancing:DescribeTargetHealth", "iam:CreateServiceLinkedRole", "kms:DescribeKey"),
    tagged=("ec2:ModifyInstanceAttribute", "ec2:AuthorizeSecurityGroupIngress", "ec2:DeleteSecurityGroup",
            "ec2:RevokeSecurityGroupIngress", "elasticloadbalancing:AttachLoadBalancerToSubnets",
            "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer", "elasticloadbalancing:CreateLoadBalancerListeners",
            "elasticloadbalancing:CreateLoadBalancerPolicy", "elasticloadbalancing:ConfigureHealthCheck",
            "elasticloadbalancing:DeleteLoadBalancer", "elasticloadbalancing:DeleteLoadBalancerListeners",
            "elasticloadbalancing:DetachLoadBalancerFromSubnets",
            "elasticloadbalancing:DeregisterInstancesFromLoadBalancer",
            "elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:RegisterInstancesWithLoadBalancer",
            "elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer", "elasticloadbalancing:AddTags",
            "elasticloadbalancing:DeleteListener", "elasticloadbalancing:DeleteTargetGroup",
            "elasticloadbalancing:ModifyListener", "elasticloadbalancing:ModifyTargetGroup",
            "elasticloadbalancing:ModifyTargetGroupAttributes", "elasticloadbalancing:RegisterTargets",
            "elasticloadbalancing:DeregisterTargets", "elasticloadbalancing:SetLoadBalancerPoliciesOfListener"),
    tagged_create=("elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateListener",
                   "elasticloadbalancing:CreateTargetGroup"),
    ec2_create=((("CreateSecurityGroup",), ("security-group",)),))
CCM_CLOUD_ROUTES = Grant(tagged=("ec2:CreateRoute", "ec2:DeleteRoute"))
CCM_NLB_SECURITY_GROUPS = Grant(tagged=("elasticloadbalancing:SetSecurityGroups",))
LOAD_BALANCER_CONTROLLER = Grant(
    anywhere=("cognito-idp:DescribeUserPoolClient", "acm:DescribeCertificate", "acm:ListCertificates",
              "ec2:DescribeAvailabilityZones", "ec2:DescribeInstances", "ec2:DescribeInternetGateways",
              "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
              "ec2:DescribeVpcPeeringConnections", "ec2:DescribeVpcs", "ec2:DescribeAccountAttributes",
              "ec2:GetSecurityGroupsForVpc", "elasticloadbalancing:DescribeCapacityReservation",
              "elasticloadbalancing:DescribeListeners", "elasticloadbalancing:DescribeListenerAttributes",
              "elasticloadbalancing:DescribeListenerCertificates", "elasticloadbalancing:DescribeLoadBalancers",
              "elasticloadbalancing:DescribeLoadBalancerAttributes", "elasticloadbalancing:DescribeRules",
              "elasticloadbalancing:DescribeTags", "elasticloadbalancing:DescribeTargetGroups",
              "elasticloadbalancing:DescribeTargetGroupAttributes", "elasticloadbalancing:DescribeTargetHealth",
              "elasticloadbalancing:DescribeTrustStores", "elasticloadbalancing:SetRulePriorities"),
    tagged=("ec2:AuthorizeSecurityGroupIngress", "ec2:DeleteSecurityGroup", "ec2:RevokeSecurityGroupIngress",
            "elasticloadbalancing:AddListenerCertificates", "elasticloadbalancing:AddTags",
            "elasticloadbalancing:DeleteListener", "elasticloadbalancing:DeleteLoadBalancer",
            "elasticloadbalancing:DeleteRule", "elasticloadbalancing:DeleteTargetGroup",
            "elasticloadbalancing:DeregisterTargets", "elasticloadbalancing:ModifyCapacityReservation",
            "elasticloadbalancing:ModifyListener", "elasticloadbalancing:ModifyListenerAttributes",
            "elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:ModifyRule",
            "elasticloadbalancing:ModifyTargetGroup", "elasticloadbalancing:ModifyTargetGroupAttributes",
            "elasticloadbalancing:RegisterTargets", "elasticloadbalancing:RemoveListenerCertificates",
            "elasticloadbalancing:RemoveTags", "elasticloadbalancing:SetIpAddressType",
            "elasticloadbalancing:SetSecurityGroups", "elasticloadbalancing:SetSubnets"),
    tagged_create=("elasticloadbalancing:CreateListener", "elasticloadbalancing:CreateLoadBalancer",
                   "elasticloadbalancing:CreateRule", "elasticloadbalancing:CreateTargetGroup"),
    ec2_create=((("CreateSecurityGroup",), ("security-group",)),))
LBC_WAF = Grant(anywhere=("elasticloadbalancing:SetWebACL", "waf-regional:AssociateWebACL",
                          "waf-regional:DisassociateWebACL", "waf-regional:GetWebACL", "waf-regional:GetWebACLForResource"))
LBC_WAFV2 = Grant(anywhere=("elasticloadbalancing:SetWebACL", "wafv2:AssociateWebACL", "wafv2:DisassociateWebACL",
                            "wafv2:GetWebACL", "wafv2:GetWebACLForResource"))
LBC_SHIELD = Grant(anywhere=("shield:GetSubscriptionState", "shield:DescribeProtection", "shield:CreateProtection",
                             "shield:DeleteProtection"))
CLUSTER_AUTOSCALER = Grant(
    anywhere=("autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeAutoScalingInstances",
              "autoscaling:DescribeLaunchConfigurations", "autoscaling:DescribeScalingActivities",
              "ec2:DescribeImages", "ec2:DescribeLaunchTemplateVersions",
              "ec2:GetInstanceTypesFromInstanceRequirements"),
    tagged=("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"))
CLUSTER_AUTOSCALER_INSTANCE_TYPES = Grant(anywhere=("ec2:DescribeInstanceTypes",))
NTH_QUEUE = Grant(anywhere=("autoscaling:DescribeAutoScalingInstances", "autoscaling:DescribeTags",
                            "ec2:DescribeInstances", "sqs:DeleteMessage", "sqs:ReceiveMessage"),
                  tagged=("autoscaling:CompleteLifecycleAction",))
DNS_CONTROLLER = Grant(statements=(
    {"Action": ["route53:ChangeResourceRecordSets", "route53:GetHostedZone", "route53:ListResourceRecordSets"],
     "Effect": "Allow", "Resource": ["arn:{partition}:route53:::hostedzone/{zone}"]},
    {"Action": ["route53:GetChange"], "Effect": "Allow", "Resource": ["arn:{partition}:route53:::change/*"]},
    {"Action": ["route53:ListHostedZones", "route53:ListTagsForResource"], "Effect": "Allow", "Resource": ["*"]},
))

# Karpenter's controller (kops AddKarpenterPermissions): what it reads anywhere; karpenter_statements() scopes the rest.
KARPENTER = Grant(anywhere=(
    "ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstanceStatus",
    "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeInstances",
    "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups",
    "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets", "iam:GetInstanceProfile", "iam:ListInstanceProfiles",
    "pricing:GetProducts", "ssm:GetParameter"))


def ec2_service(region):
    """kops IAMServiceEC2: the EC2 service principal of the region's partition."""
    return "ec2.amazonaws.com.cn" if (region or "").startswith("cn-") else "ec2.amazonaws.com"


def karpenter_statements(partition, cluster, region, node_role, custom_profiles):
    """Karpenter's scoped statements, in kops' order: launch into the cluster's subnets and groups from images and
    reservations, from and with its own launch templates and resources tagged with the cluster and a node pool,
    retag and delete only those, and pass only the node role (any role with custom instance profiles) to EC2."""
    arn = "arn:%s:ec2:*:*:%%s/*" % partition
    instance, launch_template = arn % "instance", arn % "launch-template"
    taggable = [arn % "fleet", instance, launch_template, arn % "network-interface", arn % "spot-instances-request",
                arn % "volume"]
    owned = {"StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster},
             "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}
    launch = ["ec2:CreateFleet", "ec2:RunInstances"]
    return [
        {"Action": launch, "Effect": "Allow",
         "Resource": sorted([arn % "capacity-reservation", "arn:%s:ec2:*::image/*" % partition,
                             "arn:%s:ec2:*::snapshot/*" % partition, arn % "security-group", arn % "subnet"])},
        {"Action": launch, "Condition": owned, "Effect": "Allow", "Resource": [launch_template]},
        {"Action": ["ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:RunInstances"],
         "Condition": {"StringEquals": {"aws:RequestTag/KubernetesCluster": cluster},
                       "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}},
         "Effect": "Allow", "Resource": taggable},
        {"Action": "ec2:CreateTags",
         "Condition": {"StringEquals": {"aws:RequestTag/KubernetesCluster": cluster,
                                        "ec2:CreateAction": ["CreateFleet", "CreateLaunchTemplate", "RunInstances"]},
                       "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}},
         "Effect": "Allow", "Resource": taggable},
        {"Action": ["ec2:CreateTags", "ec2:DeleteTags"],
         "Condition": {"Null": {"aws:RequestTag/KubernetesCluster": "true"},
                       "StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster},
                       "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
         "Effect": "Allow", "Resource": taggable},
        {"Action": ["ec2:DeleteLaunchTemplate", "ec2:TerminateInstances"], "Condition": owned, "Effect": "Allow",
         "Resource": [instance, launch_template]},
        {"Action": "iam:PassRole", "Condition": {"StringEquals": {"iam:PassedToService": ec2_service(region)}},
         "Effect": "Allow",
         "Resource": "arn:%s:iam::*:role/%s" % (partition, "*" if custom_profiles else node_role)},
    ]


def cert_manager_statements(partition, zones):
    """cert-manager's dns-01 solver (kops addCertManagerPermissions): TXT _acme-challenge records in the zones."""
    return [
        {"Action": "route53:ListResourceRecordSets", "Effect": "Allow", "Resource": zones},
        {"Action": "route53:ChangeResourceRecordSets",
         "Condition": {"ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]},
                       "ForAllValues:StringLike": {"route53:ChangeResourceRecordSetsNormalizedRecordNames":
                                                   ["_acme-challenge.*"]}},
         "Effect": "Allow", "Resource": zones},
        {"Action": ["route53:GetChange"], "Effect": "Allow", "Resource": ["arn:%s:route53:::change/*" % partition]},
        {"Action": ["route53:ListHostedZonesByName"], "Effect": "Allow", "Resource": ["*"]},
    ]


# ---- the facts of the completed (v1alpha2) spec the grants depend on
def _get(spec, *path):
    for key in path:
        spec = (spec or {}).get(key)
    return spec


def ipv6_only(ctx):
    cidr = ctx.spec.get("nonMasqueradeCIDR") or ""
    try:
        return ipaddress.ip_network(cidr, strict=False).version == 6
    except ValueError:
        return False


def cilium_eni(ctx):
    return _get(ctx.spec, "networking", "cilium", "ipam") == "eni"


def networking(kind):
    return lambda ctx: _get(ctx.spec, "networking", kind) is not None


def calico_src_dst(ctx):
    return (networking("calico")(ctx) and _get(ctx.spec, "networking", "calico", "awsSrcDstCheck") != "DoNothing"
            and not ipv6_only(ctx))


def nvidia(ctx):
    """Nvidia GPUs on the cluster or on any group of the role (one role serves all its groups)."""
    enabled = [_get(ctx.spec, "containerd", "nvidiaGPU", "enabled")]
    enabled += [_get(g, "spec", "containerd", "nvidiaGPU", "enabled") for g in ctx.groups if ctx.role_of(g) == ctx.role]
    return any(enabled)


def describe_instance_types(ctx):
    """nodeup probes the instance type for GPUs, the kubelet for ENI-based max pods."""
    return nvidia(ctx) or networking("amazonvpc")(ctx) or cilium_eni(ctx)


def irsa(ctx):
    return bool(_get(ctx.spec, "iam", "useServiceAccountExternalPermissions"))


def flag(*path):
    return lambda ctx: bool(_get(ctx.spec, *path))


def not_irsa_and(predicate):
    return lambda ctx: not irsa(ctx) and predicate(ctx)


def lbc_enabled(ctx):
    return bool(_get(ctx.spec, "awsLoadBalancerController", "enabled"))


def nth_queue_mode(ctx):
    nth = ctx.spec.get("nodeTerminationHandler")
    return bool(nth and nth.get("enabled") and nth.get("enableSQSTerminationDraining", True) is not False)


def always(_ctx):
    return True


COMMON_ADDON_GRANTS = (
    (flag("iam", "allowContainerRegistry"), ECR),
    (flag("containerd", "useECRCredentialsForMirrors"), ECR_PULL_THROUGH),
    (networking("amazonvpc"), AMAZON_VPC),
)

# Per role, in kops' order (the order of the literal statements follows it): (applies, grant or
# function of the context returning one or None).  "s3" and "dns" are computed (see iam.py).
ROLE_GRANTS = {
    "master": (
        (always, ETCD_MANAGER),
        (always, KOPS_CONTROLLER),
        (describe_instance_types, NODEUP_INSTANCE_TYPES),
        (ipv6_only, NODEUP_IPV6),
        (ipv6_only, KOPS_CONTROLLER_IPAM),
        (always, "s3"),
        (lambda ctx: not ctx.spec.get("encryptionConfig"), KMS_VIA_SERVICE),
        (flag("encryptionConfig"), KMS_DIRECT),
        # Not kops: kept under IRSA too.  kops' dns-controller runs as its own role there; this collection runs no
        # dns-controller, and protokube's api_dns keeps the API records from the host, as the instance role.
        (lambda ctx: ctx.zone_id, "dns"),
        (not_irsa_and(flag("snapshotController", "enabled")), EBS_CSI_SNAPSHOTS),
        (not_irsa_and(always), EBS_CSI),
        (not_irsa_and(always), CLOUD_CONTROLLER_MANAGER),
        (not_irsa_and(networking("kubenet")), CCM_CLOUD_ROUTES),
        (not_irsa_and(lambda ctx: _get(ctx.spec, "cloudConfig", "nlbSecurityGroupMode") == "Managed"),
         CCM_NLB_SECURITY_GROUPS),
        (not_irsa_and(lbc_enabled), LOAD_BALANCER_CONTROLLER),
        (not_irsa_and(lambda ctx: lbc_enabled(ctx) and _get(ctx.spec, "awsLoadBalancerController", "enableWAF")),
         LBC_WAF),
        (not_irsa_and(lambda ctx: lbc_enabled(ctx) and _get(ctx.spec, "awsLoadBalancerController", "enableWAFv2")),
         LBC_WAFV2),
        (not_irsa_and(lambda ctx: lbc_enabled(ctx) and _get(ctx.spec, "awsLoadBalancerController", "enableShield")),
         LBC_SHIELD),
        (not_irsa_and(always), CLUSTER_AUTOSCALER),
        (not_irsa_and(lambda ctx: not _get(ctx.spec, "clusterAutoscaler", "awsUseStaticInstanceList")),
         CLUSTER_AUTOSCALER_INSTANCE_TYPES),
        (not_irsa_and(nth_queue_mode), NTH_QUEUE),
    ) + COMMON_ADDON_GRANTS + (
        (cilium_eni, CILIUM_ENI),
        (calico_src_dst, SRC_DST_CHECK),
        (networking("kindnet"), MODIFY_INSTANCE),
    ),
    "apiserver": (
        (lambda ctx: ctx.lifecycle_hooks, LIFECYCLE_HOOKS),
        (describe_instance_types, NODEUP_INSTANCE_TYPES),
        (ipv6_only, NODEUP_IPV6),
        (always, "s3"),
        (lambda ctx: not ctx.spec.get("encryptionConfig"), KMS_VIA_SERVICE),
        (flag("encryptionConfig"), KMS_DIRECT),
    ) + COMMON_ADDON_GRANTS + (
        (cilium_eni, CILIUM_ENI),
        (calico_src_dst, SRC_DST_CHECK),
        (networking("kindnet"), MODIFY_INSTANCE),
    ),
    "node": (
        (lambda ctx: ctx.lifecycle_hooks, LIFECYCLE_HOOKS),
        (describe_instance_types, NODEUP_INSTANCE_TYPES),
        (ipv6_only, NODEUP_IPV6),
        # Not kops: our workers read their nodeup config and the bootstrap token (see iam.py).
        (always, "node_store"),
    ) + COMMON_ADDON_GRANTS + (
        (calico_src_dst, SRC_DST_CHECK),
        (networking("kuberouter"), MODIFY_INSTANCE),
        (networking("kindnet"), MODIFY_INSTANCE),
    ),
    "bastion": (),
}


def kms_via_services(region):
    return ["ec2.%s.amazonaws.com" % region, "s3.*.amazonaws.com"]


def _one_or_list(actions):
    """kops' stringorset.Of: one action as a string, several as a sorted list."""
    actions = sorted(actions)
    return actions[0] if len(actions) == 1 else actions


class Policy(object):
    """kops' Policy: literal statements in the order granted, then the folded ones (AsJSON's order)."""

    def __init__(self, cluster_name, partition, region, zone_id=None):
        self.values = {"cluster": cluster_name, "partition": partition, "zone": zone_id}
        self.region = region
        self.statements = []
        self.anywhere, self.tagged, self.tagged_create, self.kms_data = set(), set(), set(), set()
        self.kms_grant = False

    def _fill(self, value):
        if isinstance(value, str):
            return value.format(**self.values)
        if isinstance(value, list):
            return [self._fill(v) for v in value]
        if isinstance(value, dict):
            return {k.format(**self.values): self._fill(v) for k, v in value.items()}
        return value

    def add(self, grant):
        self.anywhere.update(grant.anywhere)
        self.tagged.update(grant.tagged)
        self.tagged_create.update(grant.tagged_create)
        for actions, resource_types in grant.ec2_create:
            self._add_ec2_create(actions, resource_types)
        self.statements += [self._fill(copy.deepcopy(s)) for s in grant.statements]
        if grant.kms:
            self.kms_grant = True
            if grant.kms == "direct" or not self.region:
                self.anywhere.update(KMS_ACTIONS)
            else:
                self.kms_data.update(KMS_ACTIONS)

    def add_statements(self, statements):
        self.statements += statements

    def _add_ec2_create(self, actions, resource_types):
        """kops' AddEC2CreateAction: tag what the create makes, retag only what the cluster owns."""
        self.tagged_create.update("ec2:" + a for a in actions)
        resources = sorted("arn:%s:ec2:*:*:%s/*" % (self.values["partition"], r) for r in resource_types)
        cluster = self.values["cluster"]
        self.statements += [
            {"Action": "ec2:CreateTags", "Effect": "Allow", "Resource": resources,
             "Condition": {"StringEquals": {"aws:RequestTag/KubernetesCluster": cluster,
                                            "ec2:CreateAction": list(actions)}}},
            {"Action": ["ec2:CreateTags", "ec2:DeleteTags"], "Effect": "Allow", "Resource": resources,
             "Condition": {"Null": {"aws:RequestTag/KubernetesCluster": "true"},
                           "StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster}}},
        ]

    def document(self):
        """The policy document, or None when it grants nothing (kops then writes no inline policy)."""
        cluster = self.values["cluster"]
        statements = list(self.statements)
        if self.kms_grant:
            # kms:GrantIsForAWSResource: only grants an AWS service creates on the role's behalf.
            statements.append({"Action": "kms:CreateGrant", "Effect": "Allow", "Resource": "*",
                               "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}})
        if self.kms_data:
            statements.append({"Action": _one_or_list(self.kms_data), "Effect": "Allow", "Resource": "*",
                               "Condition": {"StringLike": {"kms:ViaService": kms_via_services(self.region)}}})
        if self.anywhere:
            statements.append({"Action": _one_or_list(self.anywhere), "Effect": "Allow", "Resource": "*"})
        if self.tagged:
            statements.append({"Action": _one_or_list(self.tagged), "Effect": "Allow", "Resource": "*",
                               "Condition": {"StringEquals": {"aws:ResourceTag/KubernetesCluster": cluster}}})
        if self.tagged_create:
            statements.append({"Action": _one_or_list(self.tagged_create), "Effect": "Allow", "Resource": "*",
                               "Condition": {"StringEquals": {"aws:RequestTag/KubernetesCluster": cluster}}})
            # VPCs take no request tags and need not be tagged: security groups in any VPC.
            if "ec2:CreateSecurityGroup" in self.tagged_create:
                statements.append({"Action": "ec2:CreateSecurityGroup", "Effect": "Allow",
                                   "Resource": "arn:%s:ec2:*:*:vpc/*" % self.values["partition"]})
        if not statements:
            return None
        return {"Statement": statements, "Version": "2012-10-17"}
