# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kube-router (networking.kuberouter), when spec.networking.kuberouter: the node DaemonSet (routing, network
policy and the service proxy in one), its CNI config and RBAC.  Objects before kops' relabelling (channel.remap).

The DaemonSet reads /var/lib/kube-router/kubeconfig on the node (kops' nodeup issues it, CN system:kube-router,
which the ClusterRoleBinding names as a User)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image

ADDON = "networking.kuberouter"
IMAGE = "docker.io/cloudnativelabs/kube-router"
CNI_CONF_FILE = "/etc/cni/net.d/10-kuberouter.conflist"
KUBECONFIG = "/var/lib/kube-router/kubeconfig"
CONTAINERD_SOCKET = "/run/containerd/containerd.sock"
# The CNI config the init container installs: a bridge with host-local IPAM (kube-router fills in the node's pod
# CIDR), then portmap for hostPorts.  Text, not JSON data: kops ships it with this exact spacing.
CNI_CONF = "\n".join([
    '{',
    '   "cniVersion":"0.3.0",',
    '   "name":"mynet",',
    '   "plugins":[',
    '      {',
    '         "name":"kubernetes",',
    '         "type":"bridge",',
    '         "bridge":"kube-bridge",',
    '         "isDefaultGateway":true,',
    '         "hairpinMode":true,',
    '         "ipam":{',
    '            "type":"host-local"',
    '         }',
    '      },',
    '      {',
    '         "type": "portmap",',
    '         "capabilities": {',
    '            "snat": true,',
    '            "portMappings": true',
    '         }',
    '      }',
    '   ]',
    '}',
]) + "\n"
# Installs the CNI config once (a node that already has it keeps it), replacing a previous plugin's *.conf.
INSTALL_CNI = ("set -e -x; if [ ! -f {conf} ]; then if [ -f /etc/cni/net.d/*.conf ]; then rm -f /etc/cni/net.d/*.conf;"
               " fi; TMP=/etc/cni/net.d/.tmp-kuberouter-cfg; cp /etc/kube-router/cni-conf.json ${{TMP}};"
               " mv ${{TMP}} {conf}; fi").format(conf=CNI_CONF_FILE)
METRICS_PORT = 12013
HEALTH_PORT = 20244  # kube-router's default --health-port
LABELS = {"k8s-app": "kube-router", "tier": "node"}
# Read access to what kube-router routes and filters, leases for its leader election, service status for the
# external IPs it announces.
RULES = [
    {"apiGroups": [""], "resources": ["namespaces", "pods", "services", "nodes", "endpoints"],
     "verbs": ["list", "get", "watch"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list", "get", "watch"]},
    {"apiGroups": ["extensions"], "resources": ["networkpolicies"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
    {"apiGroups": [""], "resources": ["services/status"], "verbs": ["update"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
]


def args(facts):
    """kube-router's flags as kops writes them: router, firewall and service proxy, over containerd."""
    kube_router = facts.networking.get("kuberouter") or {}
    found = ["--strict-external-ip-validation=false", "--run-router=true", "--run-firewall=true",
             "--run-service-proxy=true", "--bgp-graceful-restart=true", "--kubeconfig=" + KUBECONFIG,
             "--metrics-port=%d" % METRICS_PORT, "--runtime-endpoint=unix://" + CONTAINERD_SOCKET, "--hairpin-mode=true",
             # kops quotes the range inside the flag; kube-router reads the flag as CSV, which drops the quotes.
             '--service-cluster-ip-range="%s"' % _service_range(facts)]
    if kube_router.get("useNFTablesForNetpol"):
        found.append("--use-nftables-for-netpol=true")
    return found


def _service_range(facts):
    service_range = facts.spec.get("serviceClusterIPRange")
    if not service_range:
        facts.refuse(ADDON, "a spec without spec.serviceClusterIPRange", "complete the cluster spec first")
    return service_range


def _host_path(name, path, path_type=None):
    host_path = {"path": path}
    if path_type:
        host_path["type"] = path_type
    return {"hostPath": host_path, "name": name}


def objects(facts):
    image = pinned_image(ADDON, IMAGE)
    pod_spec = {
        "containers": [
            {
                "args": args(facts),
                "env": [
                    {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "KUBE_ROUTER_CNI_CONF_FILE", "value": CNI_CONF_FILE},
                ],
                "image": image,
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": HEALTH_PORT},
                                  "initialDelaySeconds": 10, "periodSeconds": 3},
                "name": "kube-router",
                "resources": {"requests": {"cpu": "250m", "memory": "250Mi"}},
                "securityContext": {"privileged": True},
                "volumeMounts": [
                    {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True},
                    {"mountPath": "/etc/cni/net.d", "name": "cni-conf-dir"},
                    {"mountPath": KUBECONFIG, "name": "kubeconfig", "readOnly": True},
                    {"mountPath": "/run/xtables.lock", "name": "xtables-lock", "readOnly": False},
                    {"mountPath": "/usr/share/iproute2/rt_tables", "name": "rt-tables", "readOnly": False},
                    {"mountPath": CONTAINERD_SOCKET, "name": "containerd-sock", "readOnly": True},
                ],
            },
        ],
        "hostNetwork": True,
        "hostPID": True,
        "initContainers": [
            {
                "command": ["/bin/sh", "-c", INSTALL_CNI],
                "image": image,
                "name": "install-cni",
                "volumeMounts": [
                    {"mountPath": "/etc/cni/net.d", "name": "cni-conf-dir"},
                    {"mountPath": "/etc/kube-router", "name": "kube-router-cfg"},
                ],
            },
        ],
        "priorityClassName": "system-node-critical",
        "serviceAccount": "kube-router",
        "serviceAccountName": "kube-router",
        "tolerations": [{"operator": "Exists"}],
        "volumes": [
            _host_path("lib-modules", "/lib/modules"),
            _host_path("cni-conf-dir", "/etc/cni/net.d"),
            {"configMap": {"name": "kube-router-cfg"}, "name": "kube-router-cfg"},
            _host_path("kubeconfig", KUBECONFIG),
            _host_path("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
            _host_path("rt-tables", "/usr/share/iproute2/rt_tables", "FileOrCreate"),
            _host_path("containerd-sock", CONTAINERD_SOCKET),
        ],
    }
    if facts.selinux:
        pod_spec["securityContext"] = {"seLinuxOptions": {"level": "s0", "type": "spc_t"}}
    return [
        {
            "apiVersion": "v1",
            "data": {"cni-conf.json": CNI_CONF},
            "kind": "ConfigMap",
            "metadata": {"labels": dict(LABELS), "name": "kube-router-cfg", "namespace": "kube-system"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"labels": dict(LABELS), "name": "kube-router", "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": dict(LABELS)},
                "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec},
            },
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "kube-router", "namespace": "kube-system"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "kube-router"},
            "rules": RULES,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kube-router"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kube-router"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "kube-router", "namespace": "kube-system"},
                {"kind": "User", "name": "system:kube-router"},
            ],
        },
    ]
