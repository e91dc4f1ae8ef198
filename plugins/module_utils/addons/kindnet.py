# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kindnet (networking.kindnet), when spec.networking.kindnet: the node DaemonSet and its RBAC.  Objects before
kops' relabelling (channel.remap).  The admin network policy CRDs are not rendered (refused by name)."""

from __future__ import annotations

ADDON = "networking.kindnet"


def _flag(value):
    return "true" if value else "false"


def command(kindnet):
    """kindnetd's command line as kops writes it from spec.networking.kindnet."""
    found = ["/bin/kindnetd", "--hostname-override=$(NODE_NAME)", "--v=%s" % kindnet.get("logLevel", 0)]
    if kindnet.get("networkPolicies") is not None:  # kops tests the pointer: false is written too
        found.append("--network-policy=%s" % _flag(kindnet["networkPolicies"]))
    found += ["--dns-caching=%s" % _flag(kindnet.get("dnsCaching")), "--nat64=%s" % _flag(kindnet.get("nat64")),
              "--fastpath-threshold=%s" % kindnet.get("fastPathThreshold", 0)]
    masquerade = kindnet.get("masquerade")
    if masquerade is not None:
        found.append("--masquerading=%s" % _flag(masquerade.get("enabled", True)))
        if masquerade.get("nonMasqueradeCIDRs"):
            found.append("--no-masquerade-cidr=%s" % ",".join(masquerade["nonMasqueradeCIDRs"]))
    return found


def objects(facts):
    kindnet = facts.networking.get("kindnet") or {}
    for field in ("adminNetworkPolicies", "baselineAdminNetworkPolicies"):
        if kindnet.get(field) is not None:  # kops tests the pointer: even false adds the CRDs
            facts.refuse(ADDON, "spec.networking.kindnet.%s (the admin network policy CRDs)" % field, "leave it unset")
    if not kindnet.get("version"):
        facts.refuse(ADDON, "a spec without spec.networking.kindnet.version", "complete the cluster spec first")
    image = "registry.k8s.io/networking/kindnet:%s" % kindnet["version"]
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "kindnet"},
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch", "patch"]},
                {"apiGroups": [""], "resources": ["nodes/proxy", "nodes/configz"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["pods", "namespaces"], "verbs": ["list", "watch"]},
                {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kindnet"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kindnet"},
            "subjects": [{"kind": "ServiceAccount", "name": "kindnet", "namespace": "kube-system"}],
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "kindnet", "namespace": "kube-system"}},
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"},
                "name": "kindnet",
                "namespace": "kube-system",
            },
            "spec": {
                "selector": {"matchLabels": {"app": "kindnet"}},
                "template": {
                    "metadata": {"labels": {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"}},
                    "spec": {
                        "containers": [
                            {
                                "command": command(kindnet),
                                "env": [
                                    {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                                    {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                                ],
                                "image": image,
                                "name": "kindnet-cni",
                                "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
                                "securityContext": {"privileged": True},
                                "volumeMounts": [
                                    {"mountPath": "/etc/cni/net.d", "name": "cni-cfg"},
                                    {"mountPath": "/var/lib/cni-kindnet", "name": "var-lib-kindnet"},
                                    {"mountPath": "/var/run/nri", "name": "nri-plugin"},
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "initContainers": [
                            {
                                "command": [
                                    "sh",
                                    "-c",
                                    "cat /opt/cni/bin/cni-kindnet > /cni/cni-kindnet ; chmod +x /cni/cni-kindnet",
                                ],
                                "image": image,
                                "name": "install-cni-bin",
                                "volumeMounts": [{"mountPath": "/cni", "name": "cni-bin"}],
                            },
                        ],
                        "serviceAccountName": "kindnet",
                        "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}],
                        "volumes": [
                            {"hostPath": {"path": "/opt/cni/bin", "type": "DirectoryOrCreate"}, "name": "cni-bin"},
                            {"hostPath": {"path": "/etc/cni/net.d", "type": "DirectoryOrCreate"}, "name": "cni-cfg"},
                            {
                                "hostPath": {"path": "/var/lib/cni-kindnet", "type": "DirectoryOrCreate"},
                                "name": "var-lib-kindnet",
                            },
                            {"hostPath": {"path": "/var/run/nri"}, "name": "nri-plugin"},
                        ],
                    },
                },
            },
        },
    ]
