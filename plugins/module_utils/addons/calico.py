# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Calico (networking.projectcalico.org), when spec.networking.calico: the calico-node DaemonSet, the
kube-controllers Deployment, Typha when spec.networking.calico.typhaReplicas is set, their RBAC, the
calico-config ConfigMap and Calico's CRDs (calico_crds, generated from kops by hack/gen_crds.py),
built from the completed spec as kops' k8s-1.25 template does.  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import calico_crds
from ansible_collections.kubeops.kops.plugins.module_utils.addons.cilium import api_internal_name
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    CRITICAL_ADDONS_ONLY, KUBE_SYSTEM, LINUX, binding, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.image_data import IMAGES

ADDON = "networking.projectcalico.org"
CALICO_GROUP = "crd.projectcalico.org"
DEFAULT_REGISTRY = "docker.io"
CONFIG = "calico-config"
# The calico-config keys a container reads: (env name, key).
MTU_FROM_CONFIG = ("FELIX_IPINIPMTU", "FELIX_VXLANMTU", "FELIX_WIREGUARDMTU")
# Lets eBPF mode point every Calico component at the API server directly (the ConfigMap exists only then).
SERVICES_ENDPOINT = [{"configMapRef": {"name": "kubernetes-services-endpoint", "optional": True}}]
NODE_NAME = {"name": "KUBERNETES_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
PRIVILEGED = {"privileged": True}
SECCOMP_DEFAULT = {"seccompProfile": {"type": "RuntimeDefault"}}
_INTEGER = re.compile(r"^[0-9]+$")


def _bool(value):
    return "true" if value else "false"


def _from_config(name, key):
    return {"name": name, "valueFrom": {"configMapKeyRef": {"name": CONFIG, "key": key}}}


def _pdb(name):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"labels": {"k8s-app": name}, "name": name, "namespace": KUBE_SYSTEM},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"k8s-app": name}}}}


def _host_path(name, path, path_type=None):
    host_path = {"path": path}
    if path_type:
        host_path["type"] = path_type
    return {"hostPath": host_path, "name": name}


def image(facts, component):
    """<registry>/calico/<component>:<version>: the spec's registry and version, else kops' pins (image_data)."""
    calico = facts.networking.get("calico") or {}
    repository = "%s/calico/%s" % (DEFAULT_REGISTRY, component)
    tag = calico.get("version") or IMAGES[ADDON][repository]
    return "%s/calico/%s:%s" % (calico.get("registry") or DEFAULT_REGISTRY, component, tag)


def ipv4_pool_ipip_mode(facts, calico):
    """kops CalicoIPv4PoolIPIPMode."""
    if calico.get("encapsulationMode") != "ipip":
        return "Never"
    return calico.get("ipipMode") or ("Always" if facts.provider == "openstack" else "CrossSubnet")


def pool_vxlan_mode(calico, default):
    """kops CalicoIPv4PoolVXLANMode (default CrossSubnet) and CalicoIPv6PoolVXLANMode (default Never)."""
    if calico.get("encapsulationMode") != "vxlan":
        return "Never"
    return calico.get("vxlanMode") or default


def cni_network_config(facts, calico):
    """The CNI config calico's install-cni writes (kops' text: its placeholders are filled on the node)."""
    ipv6 = facts.ipv6_only
    ipam = ['          "assign_ipv4": "%s",' % _bool(not ipv6), '          "assign_ipv6": "%s",' % _bool(ipv6)]
    ipam += (['          "type": "host-local",', '          "ranges": [[{ "subnet": "usePodCidrIPv6" }]]'] if ipv6
             else ['          "type": "calico-ipam"'])
    forwarding = (['      "container_settings": {', '          "allow_ip_forwarding": true', "      },"]
                  if calico.get("allowIPForwarding") else [])
    return "\n".join([
        "{",
        '  "name": "k8s-pod-network",',
        '  "cniVersion": "0.3.1",',
        '  "plugins": [',
        "    {",
        '      "type": "calico",',
        '      "log_level": "info",',
        '      "log_file_path": "/var/log/calico/cni/cni.log",',
        '      "datastore_type": "kubernetes",',
        '      "nodename": "__KUBERNETES_NODE_NAME__",',
        '      "mtu": __CNI_MTU__,',
        '      "ipam": {',
    ] + ipam + ["      },"] + forwarding + [
        '      "policy": {',
        '          "type": "k8s"',
        "      },",
        '      "kubernetes": {',
        '          "kubeconfig": "__KUBECONFIG_FILEPATH__"',
        "      }",
        "    },",
        "    {",
        '      "type": "portmap",',
        '      "snat": true,',
        '      "capabilities": {"portMappings": true}',
        "    }",
        "  ]",
        "}",
    ])


def calico_config(facts, calico):
    mode = calico.get("encapsulationMode")
    return {
        "apiVersion": "v1",
        "data": {
            "calico_backend": "bird" if mode == "ipip" else str(mode or ""),
            "cni_network_config": cni_network_config(facts, calico),
            "typha_service_name": "calico-typha" if calico.get("typhaReplicas") else "none",
            "veth_mtu": str(calico.get("mtu") or 0),
        },
        "kind": "ConfigMap",
        "metadata": {"name": CONFIG, "namespace": KUBE_SYSTEM},
    }


def proxy_env(facts):
    """kops ProxyEnv: the egress proxy's variables, by name (Go ranges over a map in key order)."""
    proxy = facts.section("egressProxy")
    found = {}
    http_proxy = proxy.get("httpProxy") or {}
    if http_proxy.get("host"):
        url = "http://" + http_proxy["host"] + (":%s" % http_proxy["port"] if http_proxy.get("port") else "")
        found.update(http_proxy=url, https_proxy=url)
    if proxy.get("excludes"):
        found.update(no_proxy=proxy["excludes"], NO_PROXY=proxy["excludes"])
    return [{"name": name, "value": found[name]} for name in sorted(found)]


def node_env(facts, calico):
    """calico-node's environment, in kops' order."""
    ipv6 = facts.ipv6_only
    env = [{"name": "DATASTORE_TYPE", "value": "kubernetes"}]
    if ipv6:
        env.append({"name": "USE_POD_CIDR", "value": "true"})
    if calico.get("typhaReplicas"):
        env.append(_from_config("FELIX_TYPHAK8SSERVICENAME", "typha_service_name"))
    env += [
        {"name": "WAIT_FOR_DATASTORE", "value": "true"},
        {"name": "NODENAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        _from_config("CALICO_NETWORKING_BACKEND", "calico_backend"),
        {"name": "CLUSTER_TYPE", "value": "kops,bgp"},
        {"name": "IP", "value": "none" if ipv6 else "autodetect"},
        {"name": "IP6", "value": "autodetect" if ipv6 else "none"},
        {"name": "IP_AUTODETECTION_METHOD",
         "value": calico.get("ipv4AutoDetectionMethod") or ("none" if ipv6 else "first-found")},
        {"name": "IP6_AUTODETECTION_METHOD",
         "value": calico.get("ipv6AutoDetectionMethod") or ("first-found" if ipv6 else "none")},
        {"name": "CALICO_IPV4POOL_IPIP", "value": ipv4_pool_ipip_mode(facts, calico)},
        {"name": "CALICO_IPV4POOL_VXLAN", "value": pool_vxlan_mode(calico, "CrossSubnet")},
        {"name": "CALICO_IPV6POOL_VXLAN", "value": pool_vxlan_mode(calico, "Never")},
    ]
    env += [_from_config(name, "veth_mtu") for name in MTU_FROM_CONFIG]
    if ipv6:
        env += [{"name": "CALICO_ROUTER_ID", "value": "hash"}, {"name": "NO_DEFAULT_POOLS", "value": "true"}]
    else:
        cluster_cidr = (facts.spec.get("kubeControllerManager") or {}).get("clusterCIDR") or ""
        env.append({"name": "CALICO_IPV4POOL_CIDR", "value": cluster_cidr})
    src_dst_check = (calico.get("awsSrcDstCheck") or "Disable") if facts.provider == "aws" and not ipv6 else "DoNothing"
    env += [
        {"name": "CALICO_DISABLE_FILE_LOGGING", "value": "true"},
        {"name": "FELIX_DEFAULTENDPOINTTOHOSTACTION", "value": "ACCEPT"},
        {"name": "FELIX_IPV6SUPPORT", "value": _bool(ipv6)},
        {"name": "FELIX_HEALTHENABLED", "value": "true"},
        {"name": "FELIX_AWSSRCDSTCHECK", "value": src_dst_check},
        {"name": "FELIX_BPFENABLED", "value": _bool(calico.get("bpfEnabled"))},
        {"name": "FELIX_BPFEXTERNALSERVICEMODE", "value": calico.get("bpfExternalServiceMode") or "Tunnel"},
        {"name": "FELIX_BPFKUBEPROXYIPTABLESCLEANUPENABLED",
         "value": _bool(calico.get("bpfKubeProxyIptablesCleanupEnabled"))},
        {"name": "FELIX_BPFLOGLEVEL", "value": calico.get("bpfLogLevel") or "Off"},
        {"name": "FELIX_CHAININSERTMODE", "value": calico.get("chainInsertMode") or "insert"},
        {"name": "FELIX_IPTABLESBACKEND", "value": calico.get("iptablesBackend") or "Auto"},
    ]
    if calico.get("nftablesMode"):
        env.append({"name": "FELIX_NFTABLESMODE", "value": calico["nftablesMode"]})
    env += [
        {"name": "FELIX_LOGSEVERITYSCREEN", "value": calico.get("logSeverityScreen") or "info"},
        {"name": "FELIX_PROMETHEUSMETRICSENABLED", "value": _bool(calico.get("prometheusMetricsEnabled"))},
        {"name": "FELIX_PROMETHEUSMETRICSPORT", "value": str(calico.get("prometheusMetricsPort") or 9091)},
        {"name": "FELIX_PROMETHEUSGOMETRICSENABLED", "value": _bool(calico.get("prometheusGoMetricsEnabled"))},
        {"name": "FELIX_PROMETHEUSPROCESSMETRICSENABLED", "value": _bool(calico.get("prometheusProcessMetricsEnabled"))},
        {"name": "FELIX_WIREGUARDENABLED", "value": _bool(calico.get("wireguardEnabled"))},
    ]
    return env + proxy_env(facts)


def cpu_request(calico):
    """The request as kops' template writes it, unquoted: a whole number of cores is a YAML integer."""
    value = str(calico.get("cpuRequest") or "250m")
    return int(value) if _INTEGER.match(value) else value


def _probe_command(facts, calico, check):
    command = ["/bin/calico-node", "-felix-" + check]
    if calico.get("encapsulationMode") == "ipip":  # BIRD runs (and is checked) with IP-in-IP only
        command.append("-bird6-" + check if facts.ipv6_only else "-bird-" + check)
    return command


def node_container(facts, calico):
    container = {
        "env": node_env(facts, calico),
        "envFrom": SERVICES_ENDPOINT,
        "image": image(facts, "node"),
        "imagePullPolicy": "IfNotPresent",
        "lifecycle": {"preStop": {"exec": {"command": ["/bin/calico-node", "-shutdown"]}}},
        "livenessProbe": {"exec": {"command": _probe_command(facts, calico, "live")}, "failureThreshold": 6,
                          "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 10},
        "name": "calico-node",
        "readinessProbe": {"exec": {"command": _probe_command(facts, calico, "ready")}, "periodSeconds": 10,
                           "timeoutSeconds": 10},
        "resources": {"requests": {"cpu": cpu_request(calico)}},
        "securityContext": PRIVILEGED,
        "volumeMounts": [
            {"mountPath": "/host/etc/cni/net.d", "name": "cni-net-dir", "readOnly": False},
            {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True},
            {"mountPath": "/run/xtables.lock", "name": "xtables-lock", "readOnly": False},
            {"mountPath": "/var/run/calico", "name": "var-run-calico", "readOnly": False},
            {"mountPath": "/var/lib/calico", "name": "var-lib-calico", "readOnly": False},
            {"mountPath": "/var/run/nodeagent", "name": "policysync"},
            {"mountPath": "/sys/fs/bpf", "name": "bpffs"},
            {"mountPath": "/var/log/calico/cni", "name": "cni-log-dir", "readOnly": True},
        ],
    }
    if calico.get("prometheusMetricsEnabled"):
        container["ports"] = [{"containerPort": int(calico.get("prometheusMetricsPort") or 9091), "name": "metrics",
                               "protocol": "TCP"}]
    return container


def node_init_containers(facts):
    cni_bin = {"mountPath": "/host/opt/cni/bin", "name": "cni-bin-dir"}
    found = []
    if not facts.ipv6_only:  # migrates host-local IPAM to calico-ipam (IPv6 keeps host-local)
        found.append({
            "command": ["/opt/cni/bin/calico-ipam", "-upgrade"],
            "env": [NODE_NAME, _from_config("CALICO_NETWORKING_BACKEND", "calico_backend")],
            "envFrom": SERVICES_ENDPOINT,
            "image": image(facts, "cni"),
            "imagePullPolicy": "IfNotPresent",
            "name": "upgrade-ipam",
            "securityContext": PRIVILEGED,
            "volumeMounts": [{"mountPath": "/var/lib/cni/networks", "name": "host-local-net-dir"}, cni_bin],
        })
    found += [
        {
            "command": ["/opt/cni/bin/install"],
            "env": [
                {"name": "CNI_CONF_NAME", "value": "10-calico.conflist"},
                _from_config("CNI_NETWORK_CONFIG", "cni_network_config"),
                NODE_NAME,
                _from_config("CNI_MTU", "veth_mtu"),
                {"name": "SLEEP", "value": "false"},
            ],
            "envFrom": SERVICES_ENDPOINT,
            "image": image(facts, "cni"),
            "imagePullPolicy": "IfNotPresent",
            "name": "install-cni",
            "securityContext": PRIVILEGED,
            "volumeMounts": [cni_bin, {"mountPath": "/host/etc/cni/net.d", "name": "cni-net-dir"}],
        },
        {
            # Mounts the BPF filesystem and cgroup2 for the eBPF data plane, best effort (iptables mode goes on).
            "command": ["calico-node", "-init", "-best-effort"],
            "image": image(facts, "node"),
            "imagePullPolicy": "IfNotPresent",
            "name": "ebpf-bootstrap",
            "securityContext": PRIVILEGED,
            "volumeMounts": [
                {"mountPath": "/sys/fs", "mountPropagation": "Bidirectional", "name": "sys-fs"},
                {"mountPath": "/var/run/calico", "mountPropagation": "Bidirectional", "name": "var-run-calico"},
                {"mountPath": "/nodeproc", "name": "nodeproc", "readOnly": True},
            ],
        },
    ]
    return found


def node_volumes(facts):
    volumes = [
        _host_path("lib-modules", "/lib/modules"),
        _host_path("var-run-calico", "/var/run/calico", "DirectoryOrCreate"),
        _host_path("var-lib-calico", "/var/lib/calico", "DirectoryOrCreate"),
        _host_path("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
        _host_path("sys-fs", "/sys/fs/", "DirectoryOrCreate"),
        _host_path("bpffs", "/sys/fs/bpf", "Directory"),
        _host_path("nodeproc", "/proc"),
        _host_path("cni-bin-dir", "/opt/cni/bin", "DirectoryOrCreate"),
        _host_path("cni-net-dir", "/etc/cni/net.d"),
        _host_path("cni-log-dir", "/var/log/calico/cni"),
    ]
    if not facts.ipv6_only:
        volumes.append(_host_path("host-local-net-dir", "/var/lib/cni/networks"))
    return volumes + [_host_path("policysync", "/var/run/nodeagent", "DirectoryOrCreate")]


def calico_node(facts, calico):
    labels = {"k8s-app": "calico-node"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"labels": labels, "name": "calico-node", "namespace": KUBE_SYSTEM},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [node_container(facts, calico)],
                    "hostNetwork": True,
                    "initContainers": node_init_containers(facts),
                    "nodeSelector": LINUX,
                    "priorityClassName": "system-node-critical",
                    "securityContext": SECCOMP_DEFAULT,
                    "serviceAccountName": "calico-node",
                    "terminationGracePeriodSeconds": 0,  # a forced deletion keeps a node's downtime short
                    "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}, CRITICAL_ADDONS_ONLY,
                                    {"effect": "NoExecute", "operator": "Exists"}],
                    "volumes": node_volumes(facts),
                },
            },
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "RollingUpdate"},
        },
    }


def kube_controllers(facts):
    labels = {"k8s-app": "calico-kube-controllers"}
    linux = {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": labels, "name": "calico-kube-controllers", "namespace": KUBE_SYSTEM},
        "spec": {
            "replicas": 1,  # one active instance only
            "selector": {"matchLabels": labels},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": labels, "name": "calico-kube-controllers", "namespace": KUBE_SYSTEM},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "node-role.kubernetes.io/" + node_role, "operator": "Exists"}, linux]}
                        for node_role in ("control-plane", "master")]}}},
                    "containers": [{
                        "env": [{"name": "ENABLED_CONTROLLERS", "value": "node,loadbalancer"},
                                {"name": "DATASTORE_TYPE", "value": "kubernetes"}],
                        "image": image(facts, "kube-controllers"),
                        "imagePullPolicy": "IfNotPresent",
                        "livenessProbe": {"exec": {"command": ["/usr/bin/check-status", "-l"]}, "failureThreshold": 6,
                                          "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 10},
                        "name": "calico-kube-controllers",
                        "readinessProbe": {"exec": {"command": ["/usr/bin/check-status", "-r"]}, "periodSeconds": 10},
                        "securityContext": {"runAsNonRoot": True},
                    }],
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": SECCOMP_DEFAULT,
                    "serviceAccountName": "calico-kube-controllers",
                    "tolerations": [CRITICAL_ADDONS_ONLY,
                                    {"effect": "NoSchedule", "key": "node-role.kubernetes.io/master"},
                                    {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}],
                },
            },
        },
    }


def typha_service():
    labels = {"k8s-app": "calico-typha"}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"labels": labels, "name": "calico-typha", "namespace": KUBE_SYSTEM},
            "spec": {"ports": [{"name": "calico-typha", "port": 5473, "protocol": "TCP", "targetPort": "calico-typha"}],
                     "selector": labels}}


def typha(facts, calico):
    labels = {"k8s-app": "calico-typha"}
    metrics_port = calico.get("typhaPrometheusMetricsPort") or 9093
    ports = [{"containerPort": 5473, "name": "calico-typha", "protocol": "TCP"}]
    if calico.get("typhaPrometheusMetricsEnabled"):
        ports.append({"containerPort": int(metrics_port), "name": "metrics", "protocol": "TCP"})
    health = {"host": "localhost", "port": 9098}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": labels, "name": "calico-typha", "namespace": KUBE_SYSTEM},
        "spec": {
            "replicas": int(calico["typhaReplicas"]),
            "revisionHistoryLimit": 2,
            "selector": {"matchLabels": labels},
            # A full surge lets every new Typha come up before the old ones shed their clients.
            "strategy": {"rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 1}, "type": "RollingUpdate"},
            "template": {
                "metadata": {"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}, "labels": labels},
                "spec": {
                    "containers": [{
                        "env": [
                            {"name": "TYPHA_LOGSEVERITYSCREEN", "value": "info"},
                            {"name": "TYPHA_LOGFILEPATH", "value": "none"},
                            {"name": "TYPHA_LOGSEVERITYSYS", "value": "none"},
                            {"name": "TYPHA_CONNECTIONREBALANCINGMODE", "value": "kubernetes"},
                            {"name": "TYPHA_DATASTORETYPE", "value": "kubernetes"},
                            {"name": "TYPHA_HEALTHENABLED", "value": "true"},
                            {"name": "TYPHA_SHUTDOWNTIMEOUTSECS", "value": "300"},  # = terminationGracePeriodSeconds
                            {"name": "TYPHA_PROMETHEUSMETRICSENABLED",
                             "value": _bool(calico.get("typhaPrometheusMetricsEnabled"))},
                            {"name": "TYPHA_PROMETHEUSMETRICSPORT", "value": str(metrics_port)},
                        ],
                        "envFrom": SERVICES_ENDPOINT,
                        "image": image(facts, "typha"),
                        "imagePullPolicy": "IfNotPresent",
                        "livenessProbe": {"httpGet": dict(health, path="/liveness"), "initialDelaySeconds": 30,
                                          "periodSeconds": 30, "timeoutSeconds": 10},
                        "name": "calico-typha",
                        "ports": ports,
                        "readinessProbe": {"httpGet": dict(health, path="/readiness"), "periodSeconds": 10,
                                           "timeoutSeconds": 10},
                        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True},
                    }],
                    "hostNetwork": True,  # Calico cannot network a pod before Typha runs
                    "nodeSelector": LINUX,
                    "priorityClassName": "system-cluster-critical",
                    "securityContext": dict(SECCOMP_DEFAULT, fsGroup=65534),
                    "serviceAccountName": "calico-node",
                    "terminationGracePeriodSeconds": 300,
                    "tolerations": [CRITICAL_ADDONS_ONLY, {"effect": "NoSchedule", "operator": "Exists"},
                                    {"effect": "NoExecute", "operator": "Exists"}],
                },
            },
        },
    }


# ---------------------------------------------------------------- RBAC

_CRUD = ["get", "list", "create", "update", "delete"]
KUBE_CONTROLLERS_RULES = [
    rule([""], ["nodes"], ["watch", "list", "get"]),
    rule([""], ["pods"], ["get", "list", "watch"]),
    rule([""], ["namespaces"], ["get", "list", "watch"]),
    rule([""], ["services", "services/status"], ["get", "list", "update", "watch"]),
    rule([CALICO_GROUP], ["ipreservations"], ["list"]),
    rule([CALICO_GROUP], ["blockaffinities", "ipamblocks", "ipamhandles", "ipamconfigs", "tiers"], _CRUD + ["watch"]),
    rule([CALICO_GROUP], ["ippools"], ["list", "watch"]),
    rule([CALICO_GROUP], ["hostendpoints"], _CRUD + ["watch"]),
    rule([CALICO_GROUP], ["clusterinformations"], ["get", "list", "create", "update", "watch"]),
    rule([CALICO_GROUP], ["kubecontrollersconfigurations"], ["get", "list", "create", "update", "watch"]),
]
NODE_RULES = [
    rule([""], ["serviceaccounts/token"], ["create"], names=["calico-cni-plugin"]),
    rule([""], ["pods", "nodes", "namespaces"], ["get"]),
    rule(["discovery.k8s.io"], ["endpointslices"], ["watch", "list"]),
    rule([""], ["endpoints", "services"], ["watch", "list", "get"]),
    rule([""], ["configmaps"], ["get"]),
    rule([""], ["nodes/status"], ["patch", "update"]),
    rule(["networking.k8s.io"], ["networkpolicies"], ["watch", "list"]),
    rule(["policy.networking.k8s.io"], ["adminnetworkpolicies", "baselineadminnetworkpolicies"], ["watch", "list"]),
    rule([""], ["pods", "namespaces", "serviceaccounts"], ["list", "watch"]),
    rule([""], ["pods/status"], ["patch"]),
    rule([CALICO_GROUP], [
        "globalfelixconfigs", "felixconfigurations", "bgppeers", "bgpfilters", "globalbgpconfigs", "bgpconfigurations",
        "ippools", "ipreservations", "ipamblocks", "globalnetworkpolicies", "stagedglobalnetworkpolicies",
        "networkpolicies", "stagednetworkpolicies", "stagedkubernetesnetworkpolicies", "globalnetworksets",
        "networksets", "clusterinformations", "hostendpoints", "blockaffinities", "caliconodestatuses", "tiers",
    ], ["get", "list", "watch"]),
    rule([CALICO_GROUP], ["tiers"], ["create"]),
    rule([CALICO_GROUP], ["ippools", "felixconfigurations", "clusterinformations"], ["create", "update"]),
    rule([CALICO_GROUP], ["caliconodestatuses"], ["update"]),
    rule([""], ["nodes"], ["get", "list", "watch"]),
    rule([CALICO_GROUP], ["bgpconfigurations", "bgppeers"], ["create", "update"]),  # upgrades from Calico 2.6
    rule([CALICO_GROUP], ["blockaffinities", "ipamblocks", "ipamhandles"], _CRUD),
    rule([CALICO_GROUP], ["ipamconfigs"], ["get", "create"]),
    rule([CALICO_GROUP], ["blockaffinities"], ["watch"]),
    rule(["apps"], ["daemonsets"], ["get"]),  # the host-local to calico-ipam migration
]
CNI_PLUGIN_RULES = [
    rule([""], ["pods", "nodes", "namespaces"], ["get"]),
    rule([""], ["pods/status"], ["patch"]),
    rule([CALICO_GROUP], ["blockaffinities", "ipamblocks", "ipamhandles", "clusterinformations", "ippools",
                          "ipreservations", "ipamconfigs"], _CRUD),
]
# Lets the controller manager's garbage collector read Calico tiers.
TIER_GETTER_RULES = [rule(["projectcalico.org"], ["tiers"], ["get"])]


def rbac():
    roles = [role("ClusterRole", name, rules) for name, rules in (
        ("calico-kube-controllers", KUBE_CONTROLLERS_RULES), ("calico-node", NODE_RULES),
        ("calico-cni-plugin", CNI_PLUGIN_RULES), ("calico-tier-getter", TIER_GETTER_RULES))]
    bindings = [binding("ClusterRoleBinding", name, "ClusterRole", name, [sa_subject(name)])
                for name in ("calico-kube-controllers", "calico-node", "calico-cni-plugin")]
    bindings.append(binding("ClusterRoleBinding", "calico-tier-getter", "ClusterRole", "calico-tier-getter",
                            [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                              "name": "system:kube-controller-manager"}]))
    return roles + bindings


# ---------------------------------------------------------------- the manifest


def objects(facts):
    calico = facts.networking["calico"] or {}
    typha_on = bool(calico.get("typhaReplicas"))
    found = []
    if calico.get("bpfEnabled"):  # calico-node replaces kube-proxy, so it reaches the API server directly
        found.append({"apiVersion": "v1", "kind": "ConfigMap",
                      "data": {"KUBERNETES_SERVICE_HOST": api_internal_name(facts), "KUBERNETES_SERVICE_PORT": "443"},
                      "metadata": {"name": "kubernetes-services-endpoint", "namespace": KUBE_SYSTEM}})
    found.append(_pdb("calico-kube-controllers"))
    if typha_on:
        found.append(_pdb("calico-typha"))
    found += [service_account(name) for name in ("calico-kube-controllers", "calico-node", "calico-cni-plugin")]
    found.append(calico_config(facts, calico))
    found += calico_crds.CRDS
    found += rbac()
    if typha_on:
        found.append(typha_service())
    found += [calico_node(facts, calico), kube_controllers(facts)]
    if typha_on:
        found.append(typha(facts, calico))
    return found
