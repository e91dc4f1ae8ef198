# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""metrics-server (metrics-server.addons.k8s.io), when spec.metricsServer.enabled: the resource metrics API
(v1beta1.metrics.k8s.io) served from two replicas.  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image

ADDON = "metrics-server.addons.k8s.io"


def needs_pki(facts):
    """kops sets the channel's needsPKI unless spec.metricsServer.insecure is true (even though the
    template's own default is insecure)."""
    return not facts.section("metricsServer").get("insecure")


def objects(facts):
    config = facts.section("metricsServer")
    if config.get("insecure") is False:
        facts.refuse(ADDON, "spec.metricsServer.insecure: false (a serving certificate from cert-manager)",
                     "leave it unset or true")
    image = config.get("image") or pinned_image(ADDON, "registry.k8s.io/metrics-server/metrics-server")
    # Kubelets are reached by name on AWS (resolvable there), by address elsewhere and on IPv6.
    address_type = "InternalIP" if facts.ipv6_only or facts.provider != "aws" else "Hostname"
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server", "namespace": "kube-system"},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "k8s-app": "metrics-server",
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                    "rbac.authorization.k8s.io/aggregate-to-view": "true",
                },
                "name": "system:aggregated-metrics-reader",
            },
            "rules": [
                {"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "system:metrics-server"},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "labels": {"k8s-app": "metrics-server"},
                "name": "metrics-server-auth-reader",
                "namespace": "kube-system",
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "extension-apiserver-authentication-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "metrics-server", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server:system:auth-delegator"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:auth-delegator"},
            "subjects": [{"kind": "ServiceAccount", "name": "metrics-server", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "system:metrics-server"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:metrics-server"},
            "subjects": [{"kind": "ServiceAccount", "name": "metrics-server", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server", "namespace": "kube-system"},
            "spec": {
                "ports": [
                    {"appProtocol": "https", "name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"},
                ],
                "selector": {"k8s-app": "metrics-server"},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server", "namespace": "kube-system"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"k8s-app": "metrics-server"}},
                "template": {
                    "metadata": {"labels": {"k8s-app": "metrics-server"}},
                    "spec": {
                        "containers": [
                            {
                                "args": [
                                    "--secure-port=10250",
                                    "--kubelet-use-node-status-port",
                                    "--metric-resolution=15s",
                                    "--kubelet-preferred-address-types=" + address_type,
                                    "--cert-dir=/tmp",
                                    "--kubelet-insecure-tls",
                                ],
                                "image": image,
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {"path": "/livez", "port": "https", "scheme": "HTTPS"},
                                    "periodSeconds": 10,
                                },
                                "name": "metrics-server",
                                "ports": [{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
                                "readinessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"},
                                    "initialDelaySeconds": 20,
                                    "periodSeconds": 10,
                                },
                                "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": True,
                                    "runAsNonRoot": True,
                                    "runAsUser": 1000,
                                    "seccompProfile": {"type": "RuntimeDefault"},
                                },
                                "volumeMounts": [{"mountPath": "/tmp", "name": "tmp-dir"}],
                            },
                        ],
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": "metrics-server",
                        "topologySpreadConstraints": [
                            {
                                "labelSelector": {"matchLabels": {"k8s-app": "metrics-server"}},
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            },
                            {
                                "labelSelector": {"matchLabels": {"k8s-app": "metrics-server"}},
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "DoNotSchedule",
                            },
                        ],
                        "volumes": [{"emptyDir": {}, "name": "tmp-dir"}],
                    },
                },
            },
        },
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "v1beta1.metrics.k8s.io"},
            "spec": {
                "group": "metrics.k8s.io",
                "groupPriorityMinimum": 100,
                "insecureSkipTLSVerify": True,
                "service": {"name": "metrics-server", "namespace": "kube-system"},
                "version": "v1beta1",
                "versionPriority": 100,
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"labels": {"k8s-app": "metrics-server"}, "name": "metrics-server", "namespace": "kube-system"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"k8s-app": "metrics-server"}}},
        },
    ]
