# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Per-service-account IAM (IRSA): which addon service accounts get an IAM role, its name and ARN, and the
pod wiring that lets the addon assume it (kops' BootstrapChannelBuilder serviceAccountRoles and
pkg/model/iam/subject.go AddServiceAccountRole).

With ``spec.iam.useServiceAccountExternalPermissions`` each addon that calls AWS runs as its own role
``<sa>.<namespace>.sa.<cluster>`` (hashed down to 64 characters), trusted through the cluster's OIDC
issuer; its pods get ``AWS_ROLE_ARN``, ``AWS_WEB_IDENTITY_TOKEN_FILE`` and a projected service-account
token for the audience ``amazonaws.com``.  The roles and their policies are built by
model/aws/service_accounts.py from the same table.
"""

from __future__ import annotations

import collections

from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import truncate
from ansible_collections.kubeops.kops.plugins.module_utils.zones import aws_partition_of

KUBE_SYSTEM = "kube-system"
MAX_ROLE_NAME = 64
TOKEN_DIR = "/var/run/secrets/amazonaws.com/"
TOKEN_FILE = "token"
TOKEN_VOLUME = "token-amazonaws-com"
AUDIENCE = "amazonaws.com"
TOKEN_EXPIRATION_SECONDS = 86400
FS_GROUP = 10001  # kops' wellknownusers.Generic: lets a non-root container read the projected token

ServiceAccountRole = collections.namedtuple("ServiceAccountRole", "namespace name applies")


def irsa(spec):
    return bool((spec.get("iam") or {}).get("useServiceAccountExternalPermissions"))


def _section(spec, name):
    return spec.get(name) or {}


def _enabled(spec, name):
    return bool(_section(spec, name).get("enabled"))


def _publishes_dns(spec):
    """kops PublishesDNSRecords: not DNS none, not gossip (a name ending in .k8s.local)."""
    dns = (_section(spec, "topology").get("dns") or {}).get("type", "Public")
    return dns != "None"


def _ebs_csi(spec):
    return (_section(spec, "cloudConfig").get("awsEBSCSIDriver") or {}).get("managed", True) is not False


def _cert_manager_zones(spec):
    cert_manager = _section(spec, "certManager")
    return (bool(cert_manager.get("enabled")) and cert_manager.get("managed", True) is not False
            and bool(cert_manager.get("hostedZoneIDs")))


def _external_dns(spec):
    return _publishes_dns(spec) and _section(spec, "externalDns").get("provider") == "external-dns"


def _karpenter(spec):
    return _enabled(spec, "karpenter")


# kops' order (BootstrapChannelBuilder.buildAddons).  dns-controller's role is not made: this collection runs no
# dns-controller (its API DNS records are kept by protokube's api_dns on the control plane, with the instance role).
ROLES = (
    ServiceAccountRole(KUBE_SYSTEM, "external-dns", lambda spec: irsa(spec) and _external_dns(spec)),
    ServiceAccountRole(KUBE_SYSTEM, "cluster-autoscaler", lambda spec: irsa(spec) and _enabled(spec, "clusterAutoscaler")),
    # kops makes cert-manager's role whenever it has hosted zones; validation requires IRSA for them.
    ServiceAccountRole(KUBE_SYSTEM, "cert-manager", _cert_manager_zones),
    ServiceAccountRole(KUBE_SYSTEM, "aws-node-termination-handler",
                       lambda spec: irsa(spec) and _enabled(spec, "nodeTerminationHandler")),
    ServiceAccountRole(KUBE_SYSTEM, "aws-load-balancer-controller",
                       lambda spec: irsa(spec) and _enabled(spec, "awsLoadBalancerController")),
    ServiceAccountRole(KUBE_SYSTEM, "aws-cloud-controller-manager", irsa),
    ServiceAccountRole(KUBE_SYSTEM, "ebs-csi-controller-sa", lambda spec: irsa(spec) and _ebs_csi(spec)),
    ServiceAccountRole(KUBE_SYSTEM, "karpenter", lambda spec: irsa(spec) and _karpenter(spec)),
)


def wanted(spec):
    """The addon service-account roles of an AWS cluster, in kops' order: [ServiceAccountRole]."""
    if spec.get("cloudProvider") != "aws":
        return []
    return [role for role in ROLES if role.applies(spec)]


def role_name(cluster_name, namespace, name):
    """kops IAMNameForServiceAccountRole: <name>.<namespace, * as wildcard>.sa.<cluster>, hashed down to 64."""
    return truncate("%s.%s.sa.%s" % (name, namespace.replace("*", "wildcard"), cluster_name), MAX_ROLE_NAME)


def role_key(namespace, name):
    """kops' roleKey of a service account (its Terraform outputs' prefix): <namespace>-<name>, lower case."""
    return ("%s-%s" % (namespace, name)).replace("*", "wildcard").lower()


def oidc_provider(spec):
    """The OIDC provider's identifier: the service-account issuer without https://."""
    issuer = (spec.get("kubeAPIServer") or {}).get("serviceAccountIssuer") or ""
    return issuer[len("https://"):] if issuer.startswith("https://") else issuer


def trust_policy(spec, partition, account_id, namespace, name):
    """kops formatAWSIAMStatement: only this service account's projected token may assume the role."""
    if "*" in name:
        raise AddonError("spec.iam.serviceAccountExternalPermissions: service account name %r cannot contain a "
                         "wildcard; name one service account (a namespace may use *)" % name)
    provider = oidc_provider(spec)
    condition = "StringLike" if "*" in namespace else "StringEquals"
    return {"Statement": [{
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {condition: {provider + ":sub": "system:serviceaccount:%s:%s" % (namespace, name)}},
        "Effect": "Allow",
        "Principal": {"Federated": "arn:%s:iam::%s:oidc-provider/%s" % (partition, account_id, provider)},
    }], "Version": "2012-10-17"}


def role_arn(partition, account_id, name):
    return "arn:%s:iam::%s:role/%s" % (partition, account_id, name)


def controller_tolerations(facts):
    """The tolerations kops' templates give a controller that runs on workers as its own IAM role: critical
    addons, five minutes of NoExecute, and the control plane when Karpenter makes the workers (IsControlPlaneMode)."""
    tolerations = [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                   {"effect": "NoExecute", "operator": "Exists", "tolerationSeconds": 300}]
    if facts.section("karpenter").get("enabled"):
        tolerations += [{"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]
    return tolerations


def has_pod_template(document):
    return isinstance(((document.get("spec") or {}).get("template") or {}).get("spec"), dict)


def wire_pod(pod, arn):
    """kops addServiceAccountRoleForAWS on one pod spec (a new dict): the projected token, its mount and the
    two environment variables the AWS SDKs read, in every container; fsGroup unless the pod sets one."""
    # kops re-encodes the pod spec through corev1.PodSpec: a null field (nodeSelector: null) is dropped.
    pod = {key: value for key, value in pod.items() if value is not None}
    volume = {"name": TOKEN_VOLUME, "projected": {"defaultMode": 0o644, "sources": [{"serviceAccountToken": {
        "audience": AUDIENCE, "expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": TOKEN_FILE}}]}}
    pod = dict(pod, volumes=list(pod.get("volumes") or []) + [volume])
    containers = []
    for container in pod.get("containers") or []:
        container = dict(container)
        container["volumeMounts"] = list(container.get("volumeMounts") or []) + [
            {"mountPath": TOKEN_DIR, "name": TOKEN_VOLUME, "readOnly": True}]
        container["env"] = list(container.get("env") or []) + [
            {"name": "AWS_ROLE_ARN", "value": arn},
            {"name": "AWS_WEB_IDENTITY_TOKEN_FILE", "value": TOKEN_DIR + TOKEN_FILE}]
        containers.append(container)
    pod["containers"] = containers
    security = dict(pod.get("securityContext") or {})
    security.setdefault("fsGroup", FS_GROUP)
    pod["securityContext"] = security
    return pod


def wire(facts, documents):
    """kops addServiceAccountRole: every pod template whose service account has a role runs as that role."""
    if not irsa(facts.spec):
        return documents
    roles = {(r.namespace, r.name) for r in wanted(facts.spec)}
    wired = []
    for document in documents:
        namespace = (document.get("metadata") or {}).get("namespace")
        if has_pod_template(document):
            template = document["spec"]["template"]
            account = template["spec"].get("serviceAccountName")
            if (namespace, account) in roles:
                if not facts.account_id:
                    raise AddonError("spec.iam.useServiceAccountExternalPermissions: the pods' AWS_ROLE_ARN names the "
                                     "AWS account; run with AWS credentials (sts:GetCallerIdentity)")
                arn = role_arn(aws_partition_of(facts.region), facts.account_id,
                               role_name(facts.name, namespace, account))
                document = dict(document, spec=dict(document["spec"], template=dict(
                    template, spec=wire_pod(template["spec"], arn))))
        wired.append(document)
    return wired
