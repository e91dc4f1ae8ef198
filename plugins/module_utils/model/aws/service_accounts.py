# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Service-account IAM (IRSA) on AWS: the OIDC provider, one IAM role per service account and the discovery
documents' store objects (kops' OIDCProviderBuilder, IAMModelBuilder.BuildServiceAccountRoleTasks and
IssuerDiscoveryModelBuilder).

- ``aws_iam_openid_connect_provider`` ``<cluster>`` with ``enableAWSOIDCProvider``: the service-account issuer,
  audience ``amazonaws.com`` plus ``additionalAudiences``, the two S3 root CA thumbprints kops pins.
- ``aws_iam_role`` / ``aws_iam_role_policy`` ``<sa>.<namespace>.sa.<cluster>`` for each addon service account
  that calls AWS (addons/service_accounts.py: which, and the pods' wiring) and for each of
  ``spec.iam.serviceAccountExternalPermissions`` (its inline policy; its ``policyARNs`` attached).  The trust
  policy lets only that service account's projected token assume the role (``AssumeRoleWithWebIdentity``).
- Terraform: ``aws_s3_object`` ``discovery.json`` and ``keys.json`` in the discovery store (kops' names).
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.addons import service_accounts as addon_roles
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import iam_statements
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.iam import (
    IAMPolicyError, build_role, policy_json, publishing_zone_id)
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import aws as names
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags, iam_role_name
from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import iam
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.s3 import S3Object
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import fnv32a
from ansible_collections.kubeops.kops.plugins.module_utils.zones import aws_partition_of, region_of

DEFAULT_AUDIENCE = "amazonaws.com"
# The SHA-1 fingerprints of the two root CAs S3 serves under (kops getFingerprints).
S3_ROOT_THUMBPRINTS = ["9e99a48a9960b14926bb7f3b02e22da2b0ab7280", "a9d53002e97e00e043244f3d170d6f4c414104fd"]
TAG_SA_NAME = names.TAG_SERVICE_ACCOUNT_NAME
TAG_SA_NAMESPACE = names.TAG_SERVICE_ACCOUNT_NAMESPACE
# kops' tests keep a memfs:// discovery store in their Terraform output's test bucket.
EMULATED_BUCKET = {"memfs": "testingBucket"}


def _get(spec, *path):
    for key in path:
        spec = (spec or {}).get(key)
    return spec


class _Context(object):
    """What the addon grants read (iam_statements' predicates take ctx.spec)."""

    def __init__(self, completed, groups):
        self.spec = completed["spec"]
        self.groups = groups
        self.name = completed["metadata"]["name"]
        self.region = region_of(self.spec) or ""
        self.partition = aws_partition_of(self.region)

    def policy(self, *grants):
        policy = iam_statements.Policy(self.name, self.partition, self.region, publishing_zone_id(self.spec))
        for grant in grants:
            if grant is not None:
                policy.add(grant)
        return policy


def _when(condition, grant):
    return grant if condition else None


def _cloud_controller(ctx):
    return ctx.policy(iam_statements.CLOUD_CONTROLLER_MANAGER,
                      _when(_get(ctx.spec, "networking", "kubenet") is not None, iam_statements.CCM_CLOUD_ROUTES),
                      _when(_get(ctx.spec, "cloudConfig", "nlbSecurityGroupMode") == "Managed",
                            iam_statements.CCM_NLB_SECURITY_GROUPS))


def _ebs_csi(ctx):
    return ctx.policy(_when(_get(ctx.spec, "snapshotController", "enabled"), iam_statements.EBS_CSI_SNAPSHOTS),
                      iam_statements.EBS_CSI)


def _load_balancer_controller(ctx):
    config = ctx.spec.get("awsLoadBalancerController") or {}
    return ctx.policy(iam_statements.LOAD_BALANCER_CONTROLLER, _when(config.get("enableWAF"), iam_statements.LBC_WAF),
                      _when(config.get("enableWAFv2"), iam_statements.LBC_WAFV2),
                      _when(config.get("enableShield"), iam_statements.LBC_SHIELD))


def _cluster_autoscaler(ctx):
    static = _get(ctx.spec, "clusterAutoscaler", "awsUseStaticInstanceList")
    return ctx.policy(iam_statements.CLUSTER_AUTOSCALER,
                      _when(not static, iam_statements.CLUSTER_AUTOSCALER_INSTANCE_TYPES))


def _dns(ctx):
    return ctx.policy(_when(publishing_zone_id(ctx.spec), iam_statements.DNS_CONTROLLER))


def _cert_manager(ctx):
    zones = ["arn:%s:route53:::hostedzone/%s" % (ctx.partition, zone)
             for zone in _get(ctx.spec, "certManager", "hostedZoneIDs") or []]
    policy = ctx.policy()
    policy.add_statements(iam_statements.cert_manager_statements(ctx.partition, zones))
    return policy


def _karpenter(ctx):
    karpenter_groups = [g for g in ctx.groups if (g.get("spec") or {}).get("manager") == "Karpenter"]
    custom_profiles = any(_get(g, "spec", "iam", "profile") for g in karpenter_groups)
    customer_keys = any(_get(g, "spec", "rootVolumeEncryption") and _get(g, "spec", "rootVolumeEncryptionKey")
                        for g in karpenter_groups)
    policy = ctx.policy(_when(customer_keys, iam_statements.KMS_VIA_SERVICE))
    policy.add(iam_statements.KARPENTER)
    node_role = iam_role_name("nodes", ctx.name)
    policy.add_statements(iam_statements.karpenter_statements(ctx.partition, ctx.name, ctx.region, node_role,
                                                              custom_profiles))
    return policy


# Each addon service account's policy (addons/service_accounts.ROLES names which apply).
POLICIES = {
    "aws-cloud-controller-manager": _cloud_controller,
    "ebs-csi-controller-sa": _ebs_csi,
    "aws-load-balancer-controller": _load_balancer_controller,
    "cluster-autoscaler": _cluster_autoscaler,
    "aws-node-termination-handler": lambda ctx: ctx.policy(iam_statements.NTH_QUEUE),
    "external-dns": _dns,
    "cert-manager": _cert_manager,
    "karpenter": _karpenter,
}


def user_roles(spec):
    """spec.iam.serviceAccountExternalPermissions as (namespace, name, inline policy document or None, ARNs)."""
    found = []
    for index, entry in enumerate(_get(spec, "iam", "serviceAccountExternalPermissions") or []):
        field = "spec.iam.serviceAccountExternalPermissions[%d]" % index
        if not entry.get("name") or not entry.get("namespace"):
            raise IAMPolicyError("%s needs name and namespace (the service account the role is for)" % field)
        aws = entry.get("aws") or {}
        document = None
        if aws.get("inlinePolicy"):
            try:
                statements = json.loads(aws["inlinePolicy"])
            except ValueError as exc:
                raise IAMPolicyError("%s.aws.inlinePolicy is not a JSON list of IAM statements: %s" % (field, exc)) from None
            if not isinstance(statements, list) or not all(isinstance(s, dict) for s in statements):
                raise IAMPolicyError("%s.aws.inlinePolicy must be a JSON list of IAM statements (objects)" % field)
            document = {"Statement": statements, "Version": "2012-10-17"}
        found.append((entry["namespace"], entry["name"], document, sorted(aws.get("policyARNs") or [])))
    return found


def _attachment_name(role_name, arn):
    """kops' name of a service-account role's managed-policy attachment: external-<role>-<FNV-32a of the ARN>."""
    return "external-%s-%d" % (role_name, fnv32a(arn))


def build_service_account_iam(completed, groups, tasks, account_id):
    """The OIDC provider and every service-account role with its policy; returns the role tasks."""
    spec = completed["spec"]
    cluster = completed["metadata"]["name"]
    ctx = _Context(completed, groups)
    build_oidc_provider(completed, tasks)
    wanted = [(r.namespace, r.name, POLICIES[r.name](ctx).document(), []) for r in addon_roles.wanted(spec)]
    wanted += user_roles(spec)
    if not wanted:
        return []
    if not account_id:
        raise IAMPolicyError("spec.iam.useServiceAccountExternalPermissions: the service-account roles' trust policies "
                             "name the AWS account; run with AWS credentials (sts:GetCallerIdentity)")
    made = []
    for namespace, name, document, arns in wanted:
        role_name = addon_roles.role_name(cluster, namespace, name)
        trust = addon_roles.trust_policy(spec, ctx.partition, account_id, namespace, name)
        made.append(build_role(completed, tasks, role_name, policy_json(trust), policies=((role_name, document),),
                               external_arns=arns, export_with_id=addon_roles.role_key(namespace, name),
                               extra_tags={TAG_SA_NAME: name, TAG_SA_NAMESPACE: namespace.replace("*", "wildcard")},
                               attachment_name=_attachment_name))
    return made


def build_oidc_provider(completed, tasks):
    spec = completed["spec"]
    discovery_config = spec.get("serviceAccountIssuerDiscovery") or {}
    if not discovery_config.get("enableAWSOIDCProvider"):
        return None
    cluster = completed["metadata"]["name"]
    issuer = _get(spec, "kubeAPIServer", "serviceAccountIssuer")
    audiences = [DEFAULT_AUDIENCE] + list(discovery_config.get("additionalAudiences") or [])
    provider = iam.IAMOIDCProvider(cluster, url=issuer, client_id_list=audiences,
                                   thumbprint_list=list(S3_ROOT_THUMBPRINTS), tags=cluster_tags(cluster, cluster))
    tasks[provider.key] = provider
    return provider


def discovery_location(store):
    """(bucket, key prefix) of an s3:// discovery store (memfs:// as kops' tests keep it); None otherwise."""
    scheme, sep, rest = store.partition("://")
    if not sep:
        return None
    if scheme == "s3":
        bucket, _sep, key = rest.partition("/")
        return bucket, key.strip("/")
    if scheme in EMULATED_BUCKET:
        return EMULATED_BUCKET[scheme], rest.strip("/")
    return None


def build_discovery_objects(completed, documents, tasks, public_read=False):
    """Terraform: the discovery documents as aws_s3_object resources (kops' ManagedFile names); the names covered."""
    store = discovery.discovery_store(completed["spec"])
    location = discovery_location(store) if store else None
    if not location:
        return []
    bucket, prefix = location
    covered = []
    for name, path, data in documents:
        task = S3Object(name, bucket=bucket, key="%s/%s" % (prefix, path) if prefix else path, content=data,
                        **({"acl": "public-read"} if public_read else {}))
        tasks[task.key] = task
        covered.append(name)
    return covered
