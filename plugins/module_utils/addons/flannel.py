# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""flannel (networking.flannel), when spec.networking.flannel: the kube-flannel namespace, DaemonSet, RBAC and
network config (the cluster's non-masquerade CIDR, the spec's backend).  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image

ADDON = "networking.flannel"
# The CNI config flannel's init container installs: flannel with hairpin mode, then portmap for hostPorts.
CNI_CONF = {"name": "cbr0", "cniVersion": "0.3.1", "plugins": [
    {"type": "flannel", "delegate": {"hairpinMode": True, "isDefaultGateway": True}},
    {"type": "portmap", "capabilities": {"portMappings": True}},
]}


def objects(facts):
    flannel = facts.networking.get("flannel") or {}
    # kops defaults an unset backend to udp (with a warning that it is not recommended).
    net_conf = {"Network": facts.spec.get("nonMasqueradeCIDR"), "EnableNFTables": False,
                "Backend": {"Type": flannel.get("backend") or "udp"}}
    flannel_image = pinned_image(ADDON, "ghcr.io/flannel-io/flannel")
    cni_plugin_image = pinned_image(ADDON, "ghcr.io/flannel-io/flannel-cni-plugin")
    resync_seconds = flannel.get("iptablesResyncSeconds") or 5
    security = {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}, "privileged": False}
    if facts.selinux:
        security["seLinuxOptions"] = {"level": "s0", "type": "spc_t"}
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "labels": {"k8s-app": "flannel", "pod-security.kubernetes.io/enforce": "privileged"},
                "name": "kube-flannel",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": {"k8s-app": "flannel"}, "name": "flannel"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": {"k8s-app": "flannel"}, "name": "flannel"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "flannel"},
            "subjects": [{"kind": "ServiceAccount", "name": "flannel", "namespace": "kube-flannel"}],
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"k8s-app": "flannel"}, "name": "flannel", "namespace": "kube-flannel"},
        },
        {
            "apiVersion": "v1",
            "data": {
                "cni-conf.json": json.dumps(CNI_CONF, indent=2) + "\n",
                "net-conf.json": json.dumps(net_conf, indent=2),
            },
            "kind": "ConfigMap",
            "metadata": {
                "labels": {"app": "flannel", "k8s-app": "flannel", "tier": "node"},
                "name": "kube-flannel-cfg",
                "namespace": "kube-flannel",
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": {"app": "flannel", "k8s-app": "flannel", "tier": "node"},
                "name": "kube-flannel-ds",
                "namespace": "kube-flannel",
            },
            "spec": {
                "selector": {"matchLabels": {"app": "flannel", "tier": "node"}},
                "template": {
                    "metadata": {"labels": {"app": "flannel", "tier": "node"}},
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                            ],
                                        },
                                    ],
                                },
                            },
                        },
                        "containers": [
                            {
                                "args": ["--ip-masq", "--kube-subnet-mgr", "--iptables-resync=%s" % resync_seconds,
                                         "--healthz-port=8081"],
                                "command": ["/opt/bin/flanneld"],
                                "env": [
                                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                    {
                                        "name": "POD_NAMESPACE",
                                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                    },
                                    {"name": "EVENT_QUEUE_DEPTH", "value": "5000"},
                                    {"name": "CONT_WHEN_CACHE_NOT_READY", "value": "false"},
                                ],
                                "image": flannel_image,
                                "livenessProbe": {
                                    "httpGet": {"path": "/healthz", "port": "healthz"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 30,
                                },
                                "name": "kube-flannel",
                                "ports": [{"containerPort": 8081, "name": "healthz", "protocol": "TCP"}],
                                "readinessProbe": {
                                    "httpGet": {"path": "/readyz", "port": "healthz"},
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 10,
                                },
                                "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
                                "securityContext": security,
                                "volumeMounts": [
                                    {"mountPath": "/run/flannel", "name": "run"},
                                    {"mountPath": "/etc/kube-flannel/", "name": "flannel-cfg"},
                                    {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "initContainers": [
                            {
                                "args": ["-f", "/flannel", "/opt/cni/bin/flannel"],
                                "command": ["cp"],
                                "image": cni_plugin_image,
                                "name": "install-cni-plugin",
                                "volumeMounts": [{"mountPath": "/opt/cni/bin", "name": "cni-plugin"}],
                            },
                            {
                                "args": ["/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"],
                                "command": ["/opt/bin/install-conf"],
                                "image": flannel_image,
                                "name": "install-cni",
                                "volumeMounts": [
                                    {"mountPath": "/etc/cni/net.d", "name": "cni"},
                                    {"mountPath": "/etc/kube-flannel/", "name": "flannel-cfg"},
                                ],
                            },
                        ],
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": "flannel",
                        "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}],
                        "volumes": [
                            {"hostPath": {"path": "/run/flannel"}, "name": "run"},
                            {"hostPath": {"path": "/opt/cni/bin"}, "name": "cni-plugin"},
                            {"hostPath": {"path": "/etc/cni/net.d"}, "name": "cni"},
                            {"configMap": {"name": "kube-flannel-cfg"}, "name": "flannel-cfg"},
                            {"hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}, "name": "xtables-lock"},
                        ],
                    },
                },
            },
        },
    ]
