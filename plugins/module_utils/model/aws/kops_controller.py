# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Where workers reach the control plane when the cluster has no DNS (kops' dns: None).

kops serves kops-controller (port 3988) and the API (443) through the API network load balancer
(model/aws/api_loadbalancer.py builds its 3988 listener, target group and rules) and bakes the balancer's
private addresses into each worker's boot config (NetworkLoadBalancer.FindAddresses, selectControlPlaneIPs:
BootConfig.APIServerIPs); the worker's nodeup pins api.internal.<c> and kops-controller.internal.<c> to them
in /etc/hosts.  Here: the same addresses, found the same way, for the boot script (nodeconfig/bootstrap.py).
"""

from __future__ import annotations

import ipaddress
import time

from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.names import balancer_name
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError


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


def find_addresses(cloud, completed):
    """The API balancer's private addresses workers use for kops-controller and the API (kops' FindAddresses with
    UsesLoadBalancerForKopsController, then selectControlPlaneIPs); [] when the cluster uses DNS or the balancer
    does not exist yet (kops then leaves the name, as its dry run and Terraform output do).

    One request: kops lists the VPC's balancer interfaces and keeps those described "ELB net/<name>/..."; a
    balancer's name is unique in its region, so the description alone finds them (the update's no-op request
    count, tests/integration/test_noop_requests.py, pays one DescribeNetworkInterfaces for it)."""
    spec = completed["spec"]
    if not uses_load_balancer(spec):
        return []
    prefix = "ELB net/%s/" % balancer_name(completed, "api")
    found = []
    pages = cloud.client("ec2").get_paginator("describe_network_interfaces").paginate(
        Filters=[{"Name": "description", "Values": [prefix + "*"]}])
    for page in pages:
        for interface in page.get("NetworkInterfaces") or []:
            if not (interface.get("Description") or "").startswith(prefix):
                continue
            if interface.get("PrivateIpAddress"):
                found.append(interface["PrivateIpAddress"])
            found += [a["Ipv6Address"] for a in interface.get("Ipv6Addresses") or [] if a.get("Ipv6Address")]
    return select_control_plane_ips(spec, found)


def wait_until_active(cloud, completed, timeout, sleep=time.sleep, clock=time.monotonic):
    """Wait for the API balancer this run made to be active (kops' SetWaitForLoadBalancerReady for dns None: its
    network interfaces, whose addresses the workers need, exist by then). Raises ValueError after timeout seconds."""
    name = balancer_name(completed, "api")
    end = clock() + timeout
    while True:
        balancers = cloud.client("elbv2").describe_load_balancers(Names=[name]).get("LoadBalancers") or []
        state = ((balancers[0].get("State") or {}).get("Code") if balancers else None) or "missing"
        if state == "active":
            return
        if state == "failed" or clock() >= end:
            raise ModelError("the API load balancer %s is %s after %d s; its addresses go into the workers' boot "
                             "script (dns None)" % (name, state, timeout), fix="run update again once it is active")
        sleep(5)
