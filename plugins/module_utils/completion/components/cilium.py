# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cilium defaults (kops CiliumOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

DEFAULTS = {
    "version": versions.CILIUM_VERSION, "enableEndpointHealthChecking": True, "enableHostFirewall": False,
    "identityAllocationMode": "crd", "identityChangeGracePeriod": "5s", "bpfCTGlobalAnyMax": 262144,
    "bpfCTGlobalTCPMax": 524288, "bpfLBAlgorithm": "random", "bpfLBMaglevTableSize": "16381",
    "bpfNATGlobalMax": 524288, "bpfNeighGlobalMax": 524288, "bpfPolicyMapMax": 16384, "bpfLBMapMax": 65536,
    "clusterName": "default", "monitorAggregation": "medium", "sidecarIstioProxyImage": "cilium/istio_proxy",
    "toFqdnsDnsRejectResponseCode": "refused", "agentPrometheusPort": 9090, "ipam": "kubernetes",
    "enableRemoteNodeIdentity": True, "enableUnreachableRoutes": False, "enableL7Proxy": True,
    "enableLocalRedirectPolicy": False, "disableCNPStatusUpdates": True, "cpuRequest": "25m",
    "memoryRequest": "128Mi", "cniExclusive": True,
}
# Optional features: an absent block means off, a present one without "enabled" means on.
FEATURE_BLOCKS = ("hubble", "ingress", "gatewayAPI")
# Zero and empty values count as unset, like kops' checks on Go zero values.
UNSET = (None, "", 0)


def build(spec, ctx):
    cilium = context.networking(spec).get("cilium")
    if cilium is None:
        return
    for key, value in DEFAULTS.items():
        if cilium.get(key) in UNSET:
            cilium[key] = value
    ipv6 = context.is_ipv6_only(spec)
    eni = cilium["ipam"] == "eni"
    # kops' internal Masquerade (default: not IPv6-only) is v1alpha2's disableMasquerade, inverted.
    if cilium.get("disableMasquerade") is None:
        cilium["disableMasquerade"] = ipv6
    if not cilium.get("tunnel"):
        cilium["tunnel"] = "disabled" if eni or ipv6 else "vxlan"
    if cilium.get("enableBPFMasquerade") is None:
        cilium["enableBPFMasquerade"] = eni
    if cilium.get("enableEncryption") and not cilium.get("encryptionType"):
        cilium["encryptionType"] = "ipsec"
    for block in FEATURE_BLOCKS:
        if cilium.get(block) is None:
            cilium[block] = {"enabled": False}
        elif cilium[block].get("enabled") is None:
            cilium[block]["enabled"] = True
