# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Where workers reach the control plane when the cluster has no DNS (kops' dns: None).

kops serves kops-controller (port 3988) and the API (443) through the API network load balancer
(model/aws/api_loadbalancer.py builds its 3988 listener, target group and rules) and bakes the balancer's
private addresses into each worker's boot config (NetworkLoadBalancer.FindAddresses, selectControlPlaneIPs:
BootConfig.APIServerIPs); the worker's nodeup pins api.internal.<c> and kops-controller.internal.<c> to them
in /etc/hosts.  Here: which clusters use them and which of the balancer's addresses are kept; the AWS driver finds
the addresses before the model is built (providers/aws/update_facts.py: control_plane_addresses) for the boot script
(nodeconfig/bootstrap.py).
"""

from __future__ import annotations

import ipaddress


def uses_load_balancer(spec):
    """kops' UsesLoadBalancerForKopsController: every cluster without DNS that has an API load balancer."""
    return (((spec.get("topology") or {}).get("dns") or {}).get("type") == "None"
            and (spec.get("api") or {}).get("loadBalancer") is not None)


def _ipv6_only(spec):
    try:
        return ipaddress.ip_network(spec.get("nonMasqueradeCIDR") or "", strict=False).version == 6
    except ValueError:
        return False


def select_control_plane_ips(spec, addresses):
    """kops' selectControlPlaneIPs on AWS: the addresses inside the cluster's network CIDRs, and any IPv6 one; in an
    IPv6-only cluster only IPv6 ones (its nodes' subnets have no IPv4 route). Sorted, each once."""
    networks = []
    for cidr in list(spec.get("additionalNetworkCIDRs") or []) + [spec.get("networkCIDR")]:
        if cidr:
            networks.append(ipaddress.ip_network(cidr, strict=False))
    chosen = set()
    for text in addresses:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue  # kops' FindAddresses also lists the balancer's DNS name
        if _ipv6_only(spec) and address.version != 6:
            continue
        if address.version == 6 or any(address in network for network in networks):
            chosen.add(text)
    return sorted(chosen)
