# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IAM roles and instance profiles per instance group role (kops' IAMModelBuilder).

Roles: masters.<c>, nodes.<c>, bastions.<c>, apiservers.<c>, for the roles the
cluster has, unless every group of that role brings its own profile
(spec.iam.profile).  Each role's inline policy is kops' (iam_statements.py holds
the grants as tables, per role and feature); ``spec.additionalPolicies`` adds an
``additional.<role name>`` policy.  One deliberate difference: our workers read
their nodeup config from an S3 store on boot, which kops' workers (served by
kops-controller) never do; never secrets/ or pki/ (docs/bootstrap-service.md).
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import iam_statements
from ansible_collections.kubeops.kops.plugins.module_utils.completion.instance_groups import (
    resolve_warm_pool, warm_pool_enabled)
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags, iam_role_name
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import iam
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError
from ansible_collections.kubeops.kops.plugins.module_utils.zones import aws_partition_of

ROLE_PREFIX = {objects.ROLE_CONTROL_PLANE: "masters", objects.ROLE_NODE: "nodes",
               objects.ROLE_BASTION: "bastions", objects.ROLE_APISERVER: "apiservers"}
# kops' role keys: iam_statements.ROLE_GRANTS and the keys of spec.externalPolicies / additionalPolicies
# (v1alpha2 writes "master", kops converts it to "control-plane").
ROLE_KEY = {objects.ROLE_CONTROL_PLANE: "master", objects.ROLE_NODE: "node",
            objects.ROLE_BASTION: "bastion", objects.ROLE_APISERVER: "apiserver"}
POLICY_KEYS = {"master": ("control-plane", "master"), "node": ("node",), "bastion": ("bastion",),
               "apiserver": ("apiserver",)}
ASSUME_ROLE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}
# Stores that are not S3 but that kops' tests emulate as S3 buckets (memfs:// exists only in tests).
EMULATED_READ_BUCKET = {"memfs": "placeholder-read-bucket"}
EMULATED_WRITE_BUCKET = {"memfs": "placeholder-write-bucket"}


class IAMPolicyError(ModelError):
    pass


class RoleContext(object):
    """What a role's grants depend on: the completed spec, the groups, the role and its facts."""

    def __init__(self, cluster, groups, role):
        self.cluster = cluster
        self.spec = cluster["spec"]
        self.groups = groups
        self.role = role
        self.name = cluster["metadata"]["name"]
        self.region = region_of(self.spec) or ""
        self.partition = aws_partition_of(self.region)
        self.zone_id = publishing_zone_id(self.spec)
        self.lifecycle_hooks = any(
            self.role_of(g) == role and warm_pool_enabled(pool) and pool.get("enableLifecycleHook")
            for g in groups for pool in [resolve_warm_pool(self.spec.get("warmPool"), g)])

    @staticmethod
    def role_of(group):
        return (group.get("spec") or {}).get("role")


def publishing_zone_id(spec):
    """The hosted zone dns-controller writes to, or None (DNS type None, gossip, no zone)."""
    if ((spec.get("topology") or {}).get("dns") or {}).get("type", "Public") == "None":
        return None
    zone = spec.get("dnsZone") or ""
    for prefix in ("/", "hostedzone/"):
        zone = zone[len(prefix):] if zone.startswith(prefix) else zone
    return zone or None


def _store_path(url, emulated):
    """(bucket, key) of an S3 store path, kops' placeholder bucket for a test store, else None."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    if scheme == "s3":
        bucket, _sep, key = rest.partition("/")
        return bucket, key.strip("/")
    if scheme in emulated:
        return emulated[scheme], rest.strip("/")
    return None


def _arn(ctx, bucket, key=""):
    return "arn:%s:s3:::%s" % (ctx.partition, "/".join(p for p in (bucket, key) if p))


def s3_statements(ctx):
    """kops' AddS3Permissions: read the store's top-level roots, write the etcd backups, list the buckets.
    A file:// store is not in S3: nothing to grant (kops' tests emulate one; see docs/aws-model.md)."""
    spec = ctx.spec
    stores = (spec.get("keyStore"), spec.get("secretStore"), spec.get("configBase"))
    locations = sorted({p.rstrip("/") + "/" for p in stores if p})
    roots = [loc for loc in locations if not any(loc != other and loc.startswith(other) for other in locations)]
    statements, buckets = [], set()
    for root in roots:
        found = _store_path(root, EMULATED_READ_BUCKET)
        if found:
            buckets.add(found[0])
            statements.append({"Action": ["s3:Get*"], "Effect": "Allow", "Resource": _arn(ctx, *found) + "/*"})
    if ctx.role == objects.ROLE_CONTROL_PLANE:
        seen = set()
        for etcd in spec.get("etcdClusters") or []:
            store = ((etcd.get("backups") or {}).get("backupStore")) or ""
            if not store or store in seen:
                continue
            seen.add(store)
            found = _store_path(store, EMULATED_WRITE_BUCKET)
            if found:
                buckets.add(found[0])
                statements.append({"Action": ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:GetObject",
                                              "s3:PutObject"], "Effect": "Allow",
                                   "Resource": _arn(ctx, *found) + "/*"})
    for bucket in sorted(buckets):
        statements.append({"Action": ["s3:GetBucketLocation", "s3:GetEncryptionConfiguration", "s3:ListBucket",
                                      "s3:ListBucketVersions"], "Effect": "Allow", "Resource": [_arn(ctx, bucket)]})
    return statements


def node_store_statements(ctx):
    """What a worker reads from an S3 state store: the pinned boot artefacts (nodeconfig/boot_artifacts.py), nothing
    else: its nodeup config and its kubelet's and kube-proxy's certificates come from the bootstrap service on the
    control plane (never igconfig/, secrets/ or pki/).
    kOps' workers read nothing (they download nodeup from its release URL); ours download the collection and its
    wheels, pinned by sha256, from the store's boot/."""
    found = _store_path(ctx.spec.get("configBase") or "", {})
    if not found:
        return []
    bucket, key = found
    return [
        {"Action": ["s3:GetObject"], "Effect": "Allow",
         "Resource": [_arn(ctx, bucket, key) + "/boot/sha256/*"]},
        {"Action": ["s3:GetBucketLocation"], "Effect": "Allow", "Resource": [_arn(ctx, bucket)]},
    ]


COMPUTED = {"s3": s3_statements, "node_store": node_store_statements}


def role_policy(cluster, groups, role):
    """The inline policy document of an instance group role, or None when it grants nothing."""
    ctx = RoleContext(cluster, groups, role)
    policy = iam_statements.Policy(ctx.name, ctx.partition, ctx.region, ctx.zone_id)
    for applies, grant in iam_statements.ROLE_GRANTS[ROLE_KEY[role]]:
        if not applies(ctx):
            continue
        if grant == "dns":
            policy.add(iam_statements.DNS_CONTROLLER)
        elif isinstance(grant, str):
            policy.add_statements(COMPUTED[grant](ctx))
        else:
            policy.add(grant)
    return policy.document()


def _role_setting(spec, field, role):
    values = [(spec.get(field) or {}).get(key) for key in POLICY_KEYS[ROLE_KEY[role]]]
    return next((v for v in values if v), None)


def additional_policy(cluster, role):
    """spec.additionalPolicies[<role>] (a JSON list of statements) as a policy document, or None."""
    text = _role_setting(cluster["spec"], "additionalPolicies", role)
    if not text:
        return None
    try:
        statements = json.loads(text)
    except ValueError as exc:
        raise IAMPolicyError("spec.additionalPolicies.%s is not a JSON list of IAM statements: %s"
                             % (POLICY_KEYS[ROLE_KEY[role]][0], exc)) from None
    if not isinstance(statements, list) or not all(isinstance(s, dict) for s in statements):
        raise IAMPolicyError("spec.additionalPolicies.%s must be a JSON list of IAM statements (objects), e.g. "
                             '[{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["*"]}]'
                             % POLICY_KEYS[ROLE_KEY[role]][0])
    return {"Statement": statements, "Version": "2012-10-17"}


def external_policies(cluster, role):
    """spec.externalPolicies[<role>]: managed policy ARNs kops attaches to the role, sorted."""
    return sorted(_role_setting(cluster["spec"], "externalPolicies", role) or [])


def permissions_boundary(cluster):
    return ((cluster["spec"].get("iam") or {}).get("permissionsBoundary")) or None


def policy_json(document):
    """A policy document as kops writes it (sorted keys, two-space indent)."""
    return json.dumps(document, indent=2, sort_keys=True)


def _attachment_name(role_name, arn):
    """An instance-group role's spec.externalPolicies attachment: <role>-<the ARN's last path element>."""
    return "%s-%s" % (role_name, arn.rsplit("/", 1)[-1])


def build_role(cluster, tasks, role_name, trust, policies=(), external_arns=(), export_with_id=None, extra_tags=None,
               attachment_name=_attachment_name):
    """One IAM role with its inline policies and managed-policy attachments, the way every role of the cluster is
    built (instance-group roles here, service-account roles in service_accounts.py); returns the role task.

    trust: the assume-role policy as written (JSON text); policies: [(policy name, document or None)], a None
    document making no policy; external_arns: managed policies attached, each named attachment_name(role, ARN)
    and kept equal to the spec (IAMRole.external_policies: any other is detached).  spec.iam.permissionsBoundary
    applies to every role."""
    cluster_name = cluster["metadata"]["name"]
    boundary = permissions_boundary(cluster)
    role = iam.IAMRole(role_name, export_with_id=export_with_id, name=role_name, assume_role_policy=trust,
                       tags=cluster_tags(cluster_name, role_name, extra=extra_tags),
                       **({"permissions_boundary": boundary} if boundary else {}))
    tasks[role.key] = role
    for policy_name, document in policies:
        if document is not None:
            policy = iam.IAMRolePolicy(policy_name, name=policy_name, role=Ref(role, "name"),
                                       policy=policy_json(document))
            tasks[policy.key] = policy
    role.external_policies = tuple(external_arns)
    for arn in role.external_policies:
        attachment = iam.IAMRolePolicyAttachment(attachment_name(role_name, arn), role=Ref(role, "name"),
                                                 policy_arn=arn)
        tasks[attachment.key] = attachment
    return role


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
        role_task = build_role(cluster, tasks, iam_name, json.dumps(ASSUME_ROLE_POLICY, indent=2),
                               policies=((iam_name, role_policy(cluster, groups, role)),
                                         ("additional." + iam_name, additional_policy(cluster, role))),
                               external_arns=external_policies(cluster, role), export_with_id=prefix)
        profile = iam.IAMInstanceProfile(iam_name, name=iam_name, role=Ref(role_task, "name"),
                                         tags=cluster_tags(name, iam_name))
        tasks[profile.key] = profile
        profiles[role] = profile
    return profiles
