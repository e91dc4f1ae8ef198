# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Firewall rules between the roles' network tags and from the outside (kops' gcemodel
FirewallModelBuilder, ExternalAccessModelBuilder and the API load balancer's rules).

A rule with source ranges comes in two, as kops makes them: <name> for the IPv4 ranges and
<name>-ipv6 for the IPv6 ones (ICMP as protocol 58); a side with no range is kept, disabled,
open to the whole family, so that adding a range later changes the rule instead of making one.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute

ALL_PROTOCOLS = ("tcp", "udp", "icmp", "esp", "ah", "sctp")
# kops' well-known ports the nodes reach on the control plane: API, kubelet, kops-controller,
# controller-manager and scheduler metrics, kube-proxy metrics, etcd main and events metrics, node-exporter.
NODE_TO_MASTER = (443, 10250, 3988, 10257, 10259, 10249, 2382, 2384, 9100)
# Google's health checkers (https://cloud.google.com/load-balancing/docs/health-checks#fw-rule).
HEALTH_CHECK_RANGES = ("35.191.0.0/16", "130.211.0.0/22", "209.85.204.0/22", "209.85.152.0/22")
API_PORT, KOPS_CONTROLLER_PORT, CILIUM_ETCD_PORT, BGP_PORT, VXLAN_PORT = 443, 3988, 4003, 179, 8472
ICMPV6 = "58"


def allow(rules):
    """kops' "tcp", "tcp:443" spellings -> the allow blocks (protocol, ports)."""
    blocks = []
    for rule in rules:
        protocol, _sep, ports = rule.partition(":")
        blocks.append(dict({"protocol": protocol}, **({"ports": [ports]} if ports else {})))
    return blocks


class Rules(object):
    def __init__(self, ctx, network):
        self.ctx = ctx
        self.network = network

    def one(self, name, allowed, target_tags, source_ranges=None, source_tags=None, disabled=False):
        fields = {"network": Ref(self.network, "name"), "allow": allow(allowed), "target_tags": list(target_tags),
                  "disabled": disabled}
        if source_ranges is not None:
            fields["source_ranges"] = list(source_ranges)
        if source_tags is not None:
            fields["source_tags"] = list(source_tags)
        rule_name = self.ctx.suffixed(name)
        return self.ctx.add(compute.Firewall(rule_name, name=rule_name, **fields))

    def both(self, name, allowed, target_tags, source_ranges=(), source_tags=None):
        """kops' AddFirewallRulesTasks: the IPv4 rule and its -ipv6 twin."""
        v4 = [r for r in source_ranges if ":" not in r]
        v6 = [r for r in source_ranges if ":" in r]
        for suffix, ranges, everything, rules in (("", v4, "0.0.0.0/0", allowed),
                                                  ("-ipv6", v6, "::/0", [ICMPV6 if r == "icmp" else r for r in allowed])):
            if source_tags:
                self.one(name + suffix, rules, target_tags, source_tags=source_tags)
            else:
                self.one(name + suffix, rules, target_tags, source_ranges=ranges or [everything], disabled=not ranges)


def build_firewall(ctx, network):
    rules = Rules(ctx, network)
    spec = ctx.spec
    protocols = list(ALL_PROTOCOLS) + (["ipip"] if "calico" in ctx.networking() else [])
    node = [ctx.tag(objects.ROLE_NODE)]
    control_plane = ctx.control_plane_tags()
    if ctx.load_balancer() is not None:
        rules.one("lb-health-checks", ["tcp"], ctx.api_targets(), source_ranges=HEALTH_CHECK_RANGES)
    rules.one("node-to-node", protocols, node, source_tags=node)
    rules.one("master-to-master", protocols, control_plane, source_tags=control_plane)
    rules.one("master-to-node", protocols, node, source_tags=control_plane)
    to_master = ["tcp:%d" % p for p in NODE_TO_MASTER]
    if "calico" in ctx.networking():
        to_master += ["ipip", "tcp:%d" % BGP_PORT]
    if "cilium" in ctx.networking():
        to_master.append("udp:%d" % VXLAN_PORT)
        if ctx.cilium_etcd():
            to_master.append("tcp:%d" % CILIUM_ETCD_PORT)
    rules.one("node-to-master", to_master, control_plane, source_tags=node)
    if (ctx.ip_alias() or ctx.gce_routes()) and spec.get("podCIDR"):
        rules.both("pod-cidrs-to-node", protocols, node, source_ranges=[spec["podCIDR"]])

    ssh = spec.get("sshAccess") or []
    if ctx.groups_with(objects.ROLE_BASTION):
        bastion = [ctx.tag(objects.ROLE_BASTION)]
        rules.both("ssh-external-to-bastion", ["tcp:22"], bastion, source_ranges=ssh)
        rules.both("bastion-to-master-ssh", ["tcp:22"], control_plane, source_tags=bastion)
        rules.both("bastion-to-node-ssh", ["tcp:22"], node, source_tags=bastion)
    else:
        rules.both("ssh-external-to-master", ["tcp:22"], control_plane, source_ranges=ssh)
        rules.both("ssh-external-to-node", ["tcp:22"], node, source_ranges=ssh)
    node_ports = node_port_range(spec)
    rules.both("nodeport-external-to-node", ["tcp:" + node_ports, "udp:" + node_ports], node,
               source_ranges=spec.get("nodePortAccess") or [])
    api_access = spec.get("kubernetesApiAccess") or []
    if ctx.load_balancer() is None:
        rules.both("kubernetes-master-https", ["tcp:%d" % API_PORT], control_plane, source_ranges=api_access)
    else:
        rules.both("https-api", ["tcp:%d" % API_PORT], ctx.api_targets(), source_ranges=api_access)
        if ctx.dns_none():
            rules.both("kops-controller", ["tcp:%d" % KOPS_CONTROLLER_PORT], [ctx.tag("ControlPlane")],
                       source_ranges=api_access)
        if ctx.cilium_etcd():
            rules.both("cilium-etcd", ["tcp:%d" % CILIUM_ETCD_PORT], [ctx.tag("ControlPlane")], source_ranges=api_access)
    if ctx.ip_alias():
        rules.one("pod-cidrs-to-https-api", ["tcp:%d" % API_PORT], ctx.api_targets(), source_ranges=[spec.get("podCIDR")])


def node_port_range(spec):
    """kube-apiserver's serviceNodePortRange, kops' default 30000-32767."""
    return ((spec.get("kubeAPIServer") or {}).get("serviceNodePortRange") or "30000-32767")
