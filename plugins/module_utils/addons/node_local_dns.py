# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""NodeLocal DNSCache (nodelocaldns.addons.k8s.io), when spec.kubeDNS.nodeLocalDNS.enabled with CoreDNS: a caching
DNS server on every node at spec.kubeDNS.nodeLocalDNS.localIP (which completion makes the kubelets' clusterDNS),
forwarding cluster names to CoreDNS through the kube-dns-upstream Service.  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import uses_coredns
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError

ADDON = "nodelocaldns.addons.k8s.io"
HEALTH_PORT = 3989  # kops' wellknownports.NodeLocalDNSHealthCheck
METRICS_PORT = 9253
# Replaced by node-cache at start: CoreDNS' service IP (kube-dns-upstream's) and the node's resolv.conf servers.
CLUSTER_DNS_PLACEHOLDER = "__PILLAR__CLUSTER__DNS__"
UPSTREAM_PLACEHOLDER = "__PILLAR__UPSTREAM__SERVERS__"
ADDON_MANAGER = {"addonmanager.kubernetes.io/mode": "Reconcile"}
CLUSTER_SERVICE = {"kubernetes.io/cluster-service": "true"}


def applies(facts):
    """kops renders it with CoreDNS only (validation refuses node-local-dns with kube-dns)."""
    return uses_coredns(facts) and bool(_config(facts).get("enabled"))


def _config(facts):
    return facts.kube_dns.get("nodeLocalDNS") or {}


def _cluster_dns(facts):
    """kops' NodeLocalDNSClusterIP: with IPVS kube-proxy the kube-dns service IP itself, else node-cache's placeholder."""
    if (facts.spec.get("kubeProxy") or {}).get("proxyMode") == "ipvs":
        return facts.kube_dns["serverIP"]
    return CLUSTER_DNS_PLACEHOLDER


def _host_port(host, port):
    """Go's net.JoinHostPort: an IPv6 address in brackets."""
    return "[%s]:%s" % (host, port) if ":" in host else "%s:%s" % (host, port)


def _server(zone, cache, local_ip, forward, extra=()):
    lines = ["%s:53 {" % zone, "    errors"] + ["    " + line for line in cache] + [
        "    reload", "    loop", "    bind %s" % local_ip]
    if forward == UPSTREAM_PLACEHOLDER:
        lines.append("    forward . %s" % forward)
    else:  # to CoreDNS over TCP: UDP through conntrack is what node-local-dns avoids
        lines += ["    forward . %s {" % forward, "      force_tcp", "    }"]
    lines.append("    prometheus :%d" % METRICS_PORT)
    return lines + ["    " + line for line in extra] + ["}"]


def corefile(facts):
    """The node-cache Corefile: the cluster domain to CoreDNS, reverse zones too and everything else to the node's
    resolvers (or all to CoreDNS with forwardToKubeDNS), then additionalConfig; or externalCoreFile alone."""
    config = _config(facts)
    if config.get("externalCoreFile"):
        return _literal_block(config["externalCoreFile"])
    local_ip, cluster_dns = config["localIP"], _cluster_dns(facts)
    lines = _server(facts.kube_dns["domain"], ["cache {", "  success 9984 30", "  denial 9984 5", "}"],
                    local_ip, cluster_dns, ["health %s" % _host_port(local_ip, HEALTH_PORT)])
    if config.get("forwardToKubeDNS"):
        lines += _server(".", ["cache 30"], local_ip, cluster_dns)
    else:
        for zone in ("in-addr.arpa", "ip6.arpa"):
            lines += _server(zone, ["cache 30"], local_ip, cluster_dns)
        lines += _server(".", ["cache 30"], local_ip, UPSTREAM_PLACEHOLDER, ["dns64"] if facts.ipv6_only else [])
    return _literal_block("\n".join(lines) + "\n" + (config.get("additionalConfig") or ""))


def _literal_block(text):
    """The value kops' YAML literal block (`|`, clip chomping) gives text: trailing blank lines dropped, one newline."""
    lines = text.split("\n")
    while lines and not lines[-1]:  # a line of spaces is indented past the block's 4 columns: content, kept
        lines.pop()
    return "\n".join(lines) + "\n"


def _quantity(value):
    """A resource quantity as kops' template writes it unquoted: a whole number is a YAML integer."""
    text = str(value)
    return int(text) if text.isdigit() else text


def objects(facts):
    config = _config(facts)
    for field in ("localIP", "image"):
        if not config.get(field):
            raise AddonError("addon %s: spec.kubeDNS.nodeLocalDNS.%s is missing from the completed spec "
                             "(complete the cluster spec first)" % (ADDON, field))
    local_ip = config["localIP"]
    security = {"capabilities": {"add": ["NET_ADMIN"]}}
    if facts.selinux:
        security["seLinuxOptions"] = {"level": "s0", "type": "spc_t"}
    annotations = {"prometheus.io/port": str(METRICS_PORT), "prometheus.io/scrape": "true"}
    annotations.update({key: str(value) for key, value in (config.get("podAnnotations") or {}).items()})
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": dict(CLUSTER_SERVICE, **ADDON_MANAGER), "name": "node-local-dns",
                         "namespace": "kube-system"},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "labels": dict(CLUSTER_SERVICE, **ADDON_MANAGER, **{"k8s-app": "kube-dns",
                                                                    "kubernetes.io/name": "KubeDNSUpstream"}),
                "name": "kube-dns-upstream",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                          {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}],
                "selector": {"k8s-app": "kube-dns"},
            },
        },
        {
            "apiVersion": "v1",
            "data": {"Corefile": corefile(facts)},
            "kind": "ConfigMap",
            "metadata": {"labels": dict(ADDON_MANAGER), "name": "node-local-dns", "namespace": "kube-system"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": dict(CLUSTER_SERVICE, **ADDON_MANAGER, **{"k8s-app": "node-local-dns"}),
                "name": "node-local-dns",
                "namespace": "kube-system",
            },
            "spec": {
                "selector": {"matchLabels": {"k8s-app": "node-local-dns"}},
                "template": {
                    "metadata": {"annotations": annotations, "labels": {"k8s-app": "node-local-dns"}},
                    "spec": {
                        "containers": [
                            {
                                "args": ["-localip=%s" % local_ip, "-conf=/etc/Corefile",
                                         "-upstreamsvc=kube-dns-upstream", "-setupiptables=false"],
                                "image": config["image"],
                                "livenessProbe": {
                                    "httpGet": {"host": local_ip, "path": "/health", "port": HEALTH_PORT},
                                    "initialDelaySeconds": 60,
                                    "timeoutSeconds": 5,
                                },
                                "name": "node-cache",
                                "ports": [
                                    {"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                    {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                    {"containerPort": METRICS_PORT, "name": "metrics", "protocol": "TCP"},
                                ],
                                "resources": {"requests": {"cpu": _quantity(config.get("cpuRequest", "25m")),
                                                           "memory": _quantity(config.get("memoryRequest", "5Mi"))}},
                                "securityContext": security,
                                "volumeMounts": [
                                    {"mountPath": "/run/xtables.lock", "name": "xtables-lock", "readOnly": False},
                                    {"mountPath": "/etc/coredns", "name": "config-volume"},
                                    {"mountPath": "/etc/kube-dns", "name": "kube-dns-config"},
                                ],
                            },
                        ],
                        "dnsPolicy": "Default",  # node-cache resolves through the node, not the cluster DNS
                        "hostNetwork": True,
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": "node-local-dns",
                        "tolerations": [
                            {"key": "CriticalAddonsOnly", "operator": "Exists"},
                            {"effect": "NoExecute", "operator": "Exists"},
                            {"effect": "NoSchedule", "operator": "Exists"},
                        ],
                        "volumes": [
                            {"hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}, "name": "xtables-lock"},
                            {"configMap": {"name": "kube-dns", "optional": True}, "name": "kube-dns-config"},
                            {
                                "configMap": {"items": [{"key": "Corefile", "path": "Corefile.base"}],
                                              "name": "node-local-dns"},
                                "name": "config-volume",
                            },
                        ],
                    },
                },
                "updateStrategy": {"type": "OnDelete"},
            },
        },
    ]
