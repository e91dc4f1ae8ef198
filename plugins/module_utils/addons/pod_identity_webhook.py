# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The EKS pod identity webhook (kops' eks-pod-identity-webhook.addons.k8s.io, id k8s-1.16), for
spec.podIdentityWebhook.enabled on AWS.

It mutates new pods whose service account is one of spec.iam.serviceAccountExternalPermissions: they get
AWS_ROLE_ARN of the service account's IAM role (model/aws/service_accounts.py makes it), the projected
token and regional STS.  Its mapping is a ConfigMap it watches (kops' PodIdentityWebhookConfigMapData);
its serving certificate comes from the addon's cert-manager Issuer (needsPKI).  Pods kops manages, and the
API server's, are never mutated.  Objects in kops' order, before the channel's relabelling (channel.remap).
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.addons import service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.zones import aws_partition_of

ADDON = "eks-pod-identity-webhook.addons.k8s.io"
NAME = "pod-identity-webhook"
IMAGE = "amazon/amazon-eks-pod-identity-webhook:v0.5.7"  # kops' template pins it
CERT_SECRET = NAME + "-cert"
SELECTOR = {"app": NAME}
PROMETHEUS = {"prometheus.io/port": "9999", "prometheus.io/scheme": "http", "prometheus.io/scrape": "true"}


def applies(facts):
    return facts.provider == "aws" and bool(facts.section("podIdentityWebhook").get("enabled"))


def config_map_data(facts):
    """kops podIdentityWebhookConfigMapData: "<namespace>/<name>" -> its role, for each external permission with
    AWS settings, as Go's json.Marshal writes it (keys sorted, no spaces)."""
    mappings = {}
    for entry in (facts.section("iam").get("serviceAccountExternalPermissions") or []):
        if entry.get("aws") is None:
            continue
        if not facts.account_id:
            raise AddonError("addon %s: the service accounts' role ARNs name the AWS account; run with AWS credentials "
                             "(sts:GetCallerIdentity)" % ADDON)
        name = service_accounts.role_name(facts.name, entry["namespace"], entry["name"])
        mappings["%s/%s" % (entry["namespace"], entry["name"])] = {
            "RoleARN": service_accounts.role_arn(aws_partition_of(facts.region), facts.account_id, name),
            "Audience": service_accounts.AUDIENCE, "UseRegionalSTS": True, "TokenExpiration": 0}
    return json.dumps(dict(sorted(mappings.items())), separators=(",", ":"))


def _deployment(facts):
    replicas = facts.section("podIdentityWebhook").get("replicas") or 2
    spread = [{"labelSelector": {"matchLabels": dict(SELECTOR)}, "maxSkew": 1, "topologyKey": key,
               "whenUnsatisfiable": when}
              for key, when in (("topology.kubernetes.io/zone", "ScheduleAnyway"),
                                ("kubernetes.io/hostname", "DoNotSchedule"))]
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": NAME, "namespace": KUBE_SYSTEM},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {"metadata": {"labels": dict(SELECTOR)}, "spec": {
                "containers": [{
                    "command": ["/webhook", "--in-cluster=false", "--namespace=kube-system",
                                "--service-name=" + NAME, "--annotation-prefix=eks.amazonaws.com",
                                "--token-audience=amazonaws.com", "--logtostderr", "--watch-config-map",
                                "--sts-regional-endpoint", "--aws-default-region=" + facts.region, "--v=5"],
                    "image": IMAGE,
                    "name": NAME,
                    "readinessProbe": {"failureThreshold": 3,
                                       "httpGet": {"path": "/healthz", "port": 443, "scheme": "HTTPS"},
                                       "initialDelaySeconds": 5, "periodSeconds": 5, "successThreshold": 1,
                                       "timeoutSeconds": 1},
                    "volumeMounts": [{"mountPath": "/etc/webhook/certs", "name": "cert", "readOnly": True}],
                }],
                "priorityClassName": "system-cluster-critical",
                "serviceAccountName": NAME,
                "topologySpreadConstraints": spread,
                "volumes": [{"name": "cert", "secret": {"secretName": CERT_SECRET}}],
            }},
        },
    }


def objects(facts):
    subject = [sa_subject(NAME)]
    service = "%s.%s.svc" % (NAME, KUBE_SYSTEM)
    return [
        service_account(NAME),
        role("Role", NAME, [rule([""], ["configmaps"], ["list", "get", "watch"])], namespace=KUBE_SYSTEM),
        binding("RoleBinding", NAME, "Role", NAME, subject, namespace=KUBE_SYSTEM),
        role("ClusterRole", NAME, [rule([""], ["serviceaccounts"], ["get", "watch", "list"])]),
        binding("ClusterRoleBinding", NAME, "ClusterRole", NAME, subject),
        _deployment(facts),
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": NAME, "namespace": KUBE_SYSTEM},
         "spec": {"commonName": service,
                  "dnsNames": [NAME, "%s.%s" % (NAME, KUBE_SYSTEM), service, service + ".local"],
                  "duration": "2160h", "issuerRef": {"kind": "Issuer", "name": ADDON}, "renewBefore": "360h",
                  "secretName": CERT_SECRET}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"annotations": {"cert-manager.io/inject-ca-from": "%s/%s" % (KUBE_SYSTEM, NAME)}, "name": NAME},
         "webhooks": [{
             "admissionReviewVersions": ["v1beta1"],
             "clientConfig": {"service": {"name": NAME, "namespace": KUBE_SYSTEM, "path": "/mutate"}},
             "failurePolicy": "Fail",
             "name": "pod-identity-webhook.amazonaws.com",
             # Never kops' own pods, nor the API server's (it would wait on itself).
             "objectSelector": {"matchExpressions": [
                 {"key": "kops.k8s.io/managed-by", "operator": "NotIn", "values": ["kops"]},
                 {"key": "k8s-app", "operator": "NotIn", "values": ["kube-apiserver"]}]},
             "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
             "sideEffects": "None",
         }]},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"annotations": dict(PROMETHEUS), "name": NAME, "namespace": KUBE_SYSTEM},
         "spec": {"ports": [{"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": 443},
                            {"name": "metrics", "port": 9999, "protocol": "TCP", "targetPort": 9999}],
                  "selector": dict(SELECTOR)}},
        {"apiVersion": "v1", "data": {"config": config_map_data(facts)}, "kind": "ConfigMap",
         "metadata": {"annotations": dict(PROMETHEUS), "name": NAME, "namespace": KUBE_SYSTEM}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": NAME, "namespace": KUBE_SYSTEM},
         "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": dict(SELECTOR)}}},
    ]
