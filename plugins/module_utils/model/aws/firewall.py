# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Security groups and rules, as kops' FirewallModelBuilder and ExternalAccessModelBuilder.

Rule names follow kops: from-<source>-<ingress|egress>-<protocol>-<from>to<to>-<group>.
Nodes may reach the control plane on every port except etcd's (2380-2381 peers,
4001-4002 clients), hence the split TCP ranges.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

GROUPS = (("masters", "Security group for masters"), ("nodes", "Security group for nodes"))
# (protocol, from, to) nodes may open towards the control plane.
NODE_TO_CONTROL_PLANE = (("tcp", 1, 2379), ("tcp", 2382, 4000), ("tcp", 4003, 65535), ("udp", 1, 65535))
ALL = ("-1", 0, 0)
PORTS = {"ssh": 22, "https": 443}


def _rule(tasks, group, source_label, direction, protocol, from_port, to_port, **peer):
    proto_label = "all" if protocol == "-1" else protocol
    name = "from-%s-%s-%s-%dto%d-%s" % (source_label, direction, proto_label, from_port, to_port, group.name)
    task = ec2.SecurityGroupRule(name, type=direction, security_group_id=Ref(group), protocol=protocol,
                                 from_port=from_port, to_port=to_port, **peer)
    tasks[task.key] = task
    return task


def access_label(cidr):
    """The source in an access rule's name: kops names prefix-list rules as if from 0.0.0.0/0."""
    return "0.0.0.0/0" if cidr.startswith("pl-") else cidr


def node_port_range(spec):
    """(from, to) of kubeAPIServer.serviceNodePortRange, Kubernetes' 30000-32767 by default."""
    text = (spec.get("kubeAPIServer") or {}).get("serviceNodePortRange") or "30000-32767"
    low, _sep, high = str(text).partition("-")
    try:
        return int(low), int(high or low)
    except ValueError:
        raise ModelError("kubeAPIServer.serviceNodePortRange %r: expected <from>-<to>, for example 30000-32767" % text)


def _cidr_peer(cidr):
    """The rule field for an access entry: an AWS prefix list (pl-...), an IPv6 or an IPv4 CIDR."""
    if cidr.startswith("pl-"):
        return {"prefix_list_ids": [cidr]}
    return {"ipv6_cidr_blocks": [cidr]} if ":" in cidr else {"cidr_blocks": [cidr]}


def build_firewall(cluster, tasks, vpc, instance_groups=None):
    """The masters and nodes groups and their rules.  With a bastion instance group, SSH access
    goes to the bastion's load balancer instead (bastion.py), as kops does."""
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    groups = {}
    for role, description in GROUPS:
        group_name = "%s.%s" % (role, name)
        group = ec2.SecurityGroup(group_name, name=group_name, description=description, vpc_id=Ref(vpc),
                                  tags=cluster_tags(name, group_name))
        tasks[group.key] = groups[role] = group
    masters, nodes = groups["masters"], groups["nodes"]

    for group in (masters, nodes):
        for egress in ("0.0.0.0/0", "::/0"):
            _egress(tasks, group, egress)
    _rule(tasks, masters, masters.name, "ingress", *ALL, source_security_group_id=Ref(masters))
    _rule(tasks, nodes, masters.name, "ingress", *ALL, source_security_group_id=Ref(masters))
    _rule(tasks, nodes, nodes.name, "ingress", *ALL, source_security_group_id=Ref(nodes))
    for protocol, low, high in NODE_TO_CONTROL_PLANE:
        _rule(tasks, masters, nodes.name, "ingress", protocol, low, high, source_security_group_id=Ref(nodes))
    networking = spec.get("networking") or {}
    if "calico" in networking or "kuberouter" in networking:
        # IP-in-IP (protocol 4) between pods across nodes; kops names it without ports.
        task = ec2.SecurityGroupRule("from-%s-ingress-4-0to0-%s" % (nodes.name, masters.name), type="ingress",
                                     security_group_id=Ref(masters), protocol="4", from_port=0, to_port=65535,
                                     source_security_group_id=Ref(nodes))
        tasks[task.key] = task

    uses_bastion = any((g.get("spec") or {}).get("role") == "Bastion" for g in instance_groups or [])
    for cidr in [] if uses_bastion else spec.get("sshAccess") or []:
        for group in (masters, nodes):
            _rule(tasks, group, access_label(cidr), "ingress", "tcp", PORTS["ssh"], PORTS["ssh"], **_cidr_peer(cidr))
    if "loadBalancer" not in (spec.get("api") or {}):
        for cidr in spec.get("kubernetesApiAccess") or []:
            _rule(tasks, masters, access_label(cidr), "ingress", "tcp", PORTS["https"], PORTS["https"],
                  **_cidr_peer(cidr))
    low, high = node_port_range(spec)
    for cidr in spec.get("nodePortAccess") or []:
        for protocol in ("tcp", "udp"):
            task = ec2.SecurityGroupRule(
                "nodeport-%s-external-to-node-%s" % (protocol, cidr.replace(":", "_")), type="ingress",
                security_group_id=Ref(nodes), protocol=protocol, from_port=low, to_port=high, **_cidr_peer(cidr))
            tasks[task.key] = task
    return groups


def _egress(tasks, group, cidr):
    task = ec2.SecurityGroupRule("from-%s-egress-all-0to0-%s" % (group.name, cidr), type="egress",
                                 security_group_id=Ref(group), protocol="-1", from_port=0, to_port=0,
                                 **_cidr_peer(cidr))
    tasks[task.key] = task
    return task
