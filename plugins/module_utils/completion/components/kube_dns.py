# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cluster DNS (CoreDNS) and NodeLocal DNSCache (kops KubeDnsOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

KUBE_DNS_DEFAULTS = {"cacheMaxSize": 1000, "cacheMaxConcurrent": 150, "memoryRequest": "70Mi",
                     "cpuRequest": "100m", "memoryLimit": "170Mi", "provider": "CoreDNS"}
NODE_LOCAL_DNS_DEFAULTS = {"enabled": False, "memoryRequest": "5Mi", "cpuRequest": "25m",
                           "image": versions.NODE_LOCAL_DNS_IMAGE}
# The link-local address NodeLocal DNSCache listens on, by IP family.
NODE_LOCAL_DNS_IP = {4: "169.254.20.10", 6: "fd00:90de:d95::1"}
# The VPC resolver an IPv6-only AWS cluster forwards to.
AWS_IPV6_RESOLVER = "fd00:ec2::253"
# kube-dns is the tenth address of the service range.
KUBE_DNS_SERVICE_OFFSET = 10


def build(spec, ctx):
    dns = context.section(spec, "kubeDNS")
    # Zero quantities count as unset, like kops' IsZero checks.
    for key in ("cacheMaxSize", "cacheMaxConcurrent", "memoryRequest", "cpuRequest", "memoryLimit"):
        if dns.get(key) in (0, "0"):
            dns.pop(key)
    context.fill(dns, KUBE_DNS_DEFAULTS)
    if not dns.get("serverIP"):
        dns["serverIP"] = context.well_known_service_ip(spec, KUBE_DNS_SERVICE_OFFSET)
    if not dns.get("domain"):
        dns["domain"] = spec["clusterDNSDomain"]
    ipv6 = context.is_ipv6_only(spec)
    if ipv6 and ctx.cloud == context.CLOUD_AWS and not dns.get("upstreamNameservers"):
        dns["upstreamNameservers"] = [AWS_IPV6_RESOLVER]
    local = context.fill(context.section(dns, "nodeLocalDNS"), NODE_LOCAL_DNS_DEFAULTS)
    if local["enabled"]:
        if not local.get("localIP"):
            local["localIP"] = NODE_LOCAL_DNS_IP[6 if ipv6 else 4]
        local.setdefault("forwardToKubeDNS", False)
