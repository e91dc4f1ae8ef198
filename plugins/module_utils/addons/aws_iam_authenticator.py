# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""aws-iam-authenticator (authentication.aws), when spec.authentication.aws is set: the authenticator server on
each API server node (host network, its state and the API server's webhook kubeconfig under
/srv/kubernetes/aws-iam-authenticator, which nodeup fills), the IAMIdentityMapping CRD, and with a CRD backend
mode the spec's identityMappings as IAMIdentityMapping objects.  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, pinned_image, role, rule, sa_subject, service_account)

ADDON = "authentication.aws"
NAME = "aws-iam-authenticator"
GROUP = "iamauthenticator.k8s.aws"
LABELS = {"k8s-app": NAME}
STATE_DIR = "/var/aws-iam-authenticator"
HOST_DIR = "/srv/kubernetes/aws-iam-authenticator/"
HEALTH_PORT = 21362
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"  # kops' APIServerNodeRole (APIServerNodes flag unmodelled)


def _config(facts):
    return facts.section("authentication").get("aws") or {}


def applies(facts):
    return "aws" in facts.section("authentication")


def _quantity(value):
    """A resource quantity as kops' template writes it unquoted: a whole number is a YAML integer."""
    text = str(value)
    return int(text) if text.isdigit() else text


def _uses_mounted_file(config):
    """kops reads the mapping from a mounted ConfigMap unless a backend mode without MountedFile is set."""
    return not config.get("backendMode") or "MountedFile" in config["backendMode"]


def _crd():
    strings = {"type": "string"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "iamidentitymappings." + GROUP},
        "spec": {
            "group": GROUP,
            "names": {"categories": ["all"], "kind": "IAMIdentityMapping", "plural": "iamidentitymappings",
                      "singular": "iamidentitymapping"},
            "scope": "Cluster",
            "versions": [{
                "name": "v1alpha1",
                "schema": {"openAPIV3Schema": {"properties": {
                    "spec": {"properties": {"arn": dict(strings), "groups": {"items": dict(strings), "type": "array"},
                                            "username": dict(strings)},
                             "required": ["arn", "username"], "type": "object"},
                    "status": {"properties": {"canonicalARN": dict(strings), "userID": dict(strings)}, "type": "object"},
                }, "type": "object"}},
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
            }],
        },
    }


def _args(facts, config):
    args = ["server"]
    if _uses_mounted_file(config):
        args.append("--config=/etc/aws-iam-authenticator/config.yaml")
    if config.get("clusterID") or not _uses_mounted_file(config):
        args.append("--cluster-id=" + (config.get("clusterID") or facts.name))
    args += ["--state-dir=" + STATE_DIR, "--kubeconfig-pregenerated=true"]
    if config.get("backendMode"):
        args.append("--backend-mode=" + config["backendMode"])
    return args


def _daemon_set(facts, config):
    mounted = _uses_mounted_file(config)
    limits = {"memory": _quantity(config.get("memoryLimit") or "20Mi")}
    if config.get("cpuLimit"):
        limits["cpu"] = _quantity(config["cpuLimit"])
    pod = {
        "containers": [{
            "args": _args(facts, config),
            "image": config.get("image") or pinned_image(ADDON, "public.ecr.aws/eks-distro/kubernetes-sigs/aws-iam-authenticator"),
            "livenessProbe": {"httpGet": {"host": "127.0.0.1", "path": "/healthz", "port": HEALTH_PORT, "scheme": "HTTPS"}},
            "name": NAME,
            "resources": {"limits": limits,
                          "requests": {"cpu": _quantity(config.get("cpuRequest") or "10m"),
                                       "memory": _quantity(config.get("memoryRequest") or "20Mi")}},
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                "runAsGroup": 10000, "runAsUser": 10000},
            "volumeMounts": ([{"mountPath": "/etc/aws-iam-authenticator/", "name": "config"}] if mounted else []) + [
                {"mountPath": STATE_DIR + "/", "name": "state"},
                {"mountPath": "/etc/kubernetes/aws-iam-authenticator/", "name": "output"},
            ],
        }],
        "hostNetwork": True,  # the API server calls it before any CNI is up
        "nodeSelector": {CONTROL_PLANE_ROLE: ""},
        "priorityClassName": "system-node-critical",
        "serviceAccountName": NAME,
        "tolerations": [{"effect": "NoSchedule", "key": key} for key in (
            "node-role.kubernetes.io/master", CONTROL_PLANE_ROLE, "node-role.kubernetes.io/api-server")] + [
            {"key": "node.cloudprovider.kubernetes.io/uninitialized", "operator": "Exists"},
            {"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "volumes": ([{"configMap": {"name": NAME}, "name": "config"}] if mounted else []) + [
            {"hostPath": {"path": HOST_DIR}, "name": "output"},
            {"hostPath": {"path": HOST_DIR}, "name": "state"},
        ],
    }
    if facts.selinux:
        pod["securityContext"] = {"seLinuxOptions": {"level": "s0", "type": "spc_t"}}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"},
                     "labels": dict(LABELS), "name": NAME, "namespace": KUBE_SYSTEM},
        "spec": {"selector": {"matchLabels": dict(LABELS)},
                 "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod},
                 "updateStrategy": {"type": "RollingUpdate"}},
    }


def objects(facts):
    config = _config(facts)
    documents = [
        _crd(),
        role("ClusterRole", NAME, [
            rule([GROUP], ["iamidentitymappings"], ["get", "list", "watch"]),
            rule([GROUP], ["iamidentitymappings/status"], ["patch", "update"]),
            rule([""], ["events"], ["create", "update", "patch"]),
            rule([""], ["configmaps"], ["list", "watch"]),
            rule([""], ["configmaps"], ["get"], names=["aws-auth"]),
        ]),
        service_account(NAME),
        binding("ClusterRoleBinding", NAME, "ClusterRole", NAME, [sa_subject(NAME)]),
        _daemon_set(facts, config),
    ]
    if "CRD" in (config.get("backendMode") or ""):
        for index, mapping in enumerate(config.get("identityMappings") or []):
            documents.append({
                "apiVersion": GROUP + "/v1alpha1",
                "kind": "IAMIdentityMapping",
                "metadata": {"labels": dict(LABELS), "name": "iam-identity-mapping-%d" % index},
                "spec": {"arn": mapping.get("arn"), "groups": mapping.get("groups"), "username": mapping.get("username")},
            })
    return documents
