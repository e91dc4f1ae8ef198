# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""external-dns (external-dns.addons.k8s.io), when spec.externalDns.provider is external-dns and the cluster
publishes DNS records: kubernetes-sigs/external-dns on the control plane (host network, the local API server),
in kops' dns-controller compatibility mode, writing the zone spec.dnsZone names (completion resolves it to the
zone's id).  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, pinned_image, publishes_dns_records, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError

ADDON = "external-dns.addons.k8s.io"
NAME = "external-dns"
ROLE = "kops:external-dns"
ADDON_LABEL = {"k8s-addon": ADDON}
# kops' template labels the pods with this version while pinning a later image; kept as kops writes it.
VERSION_LABEL = "v0.13.1"
HEALTH_PORT = 7979
CONTROL_PLANE_ROLES = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def applies(facts):
    return publishes_dns_records(facts) and facts.section("externalDns").get("provider") == "external-dns"


def argv(facts):
    """kops' ExternalDNSArgv: the cloud's provider, the sources watched, the TXT registry owned by the cluster."""
    config = facts.section("externalDns")
    if facts.provider == "aws":
        args = ["--provider=aws"]
    elif facts.provider == "gce":
        if not facts.spec.get("project"):
            raise AddonError("addon %s: spec.project is missing (external-dns on GCE writes records in the "
                             "project's zones); set spec.project" % ADDON)
        args = ["--provider=google", "--google-project=" + facts.spec["project"]]
    else:
        raise AddonError("addon %s: external-dns for cloud %r is not rendered by kubeops.kops (AWS and GCE are)"
                         % (ADDON, facts.provider))
    args.append("--events")
    if config.get("watchIngress") is not False:
        args.append("--source=ingress")
    args += ["--source=pod", "--source=service", "--compatibility=kops-dns-controller", "--registry=txt",
             "--txt-owner-id=kops-" + facts.name, "--zone-id-filter=" + (facts.spec.get("dnsZone") or "")]
    if config.get("watchNamespace"):
        args.append("--namespace=" + config["watchNamespace"])
    return args


def objects(facts):
    labels = dict(ADDON_LABEL, **{"k8s-app": NAME, "version": VERSION_LABEL})
    probe = {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10, "successThreshold": 1,
             "timeoutSeconds": 5}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": dict(labels), "name": NAME, "namespace": KUBE_SYSTEM},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"k8s-app": NAME}},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": key, "operator": "Exists"}]} for key in CONTROL_PLANE_ROLES]}}},
                    "containers": [{
                        "args": argv(facts),
                        # the API server on the same (control-plane) host: no cluster DNS or service network needed
                        "env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
                                {"name": "KUBERNETES_SERVICE_PORT", "value": "443"}],
                        "image": pinned_image(ADDON, "registry.k8s.io/external-dns/external-dns"),
                        "livenessProbe": dict(probe, failureThreshold=2, initialDelaySeconds=10),
                        "name": NAME,
                        "ports": [{"containerPort": HEALTH_PORT, "name": "http", "protocol": "TCP"}],
                        "readinessProbe": dict(probe, failureThreshold=6, initialDelaySeconds=5),
                        "resources": {"requests": {"cpu": "50m", "memory": "50Mi"}},
                        "securityContext": {"capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
                                            "runAsNonRoot": True, "runAsUser": 65534},
                    }],
                    "dnsPolicy": "Default",  # not the cluster DNS: it may run before CoreDNS
                    "hostNetwork": True,
                    "nodeSelector": None,  # kops' template writes it null
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": {"fsGroup": 65534},
                    "serviceAccountName": NAME,
                    "tolerations": [{"effect": "NoSchedule", "key": key}
                                    for key in CONTROL_PLANE_ROLES + ("node.kubernetes.io/not-ready",)],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": dict(ADDON_LABEL), "name": NAME, "namespace": KUBE_SYSTEM},
        "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
                 "selector": {"k8s-app": NAME}, "type": "ClusterIP"},
    }
    return [
        deployment,
        service,
        service_account(NAME, labels=dict(ADDON_LABEL)),
        role("ClusterRole", ROLE, [
            rule([""], ["services", "endpoints", "pods"], ["get", "watch", "list"]),
            rule(["extensions", "networking.k8s.io"], ["ingresses"], ["get", "watch", "list"]),
            rule([""], ["nodes"], ["list", "watch"]),
        ], labels=dict(ADDON_LABEL)),
        binding("ClusterRoleBinding", ROLE, "ClusterRole", ROLE, [sa_subject(NAME)], labels=dict(ADDON_LABEL)),
    ]
