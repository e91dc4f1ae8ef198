# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The bastion, as kops' BastionModelBuilder, when an instance group has role Bastion.

SSH reaches the bastion through a network load balancer: its group ``bastion-elb.<c>``
takes TCP 22 (and ICMP for path MTU discovery) from spec.sshAccess and from the CIDRs of
the load balancer's subnets; the bastion's own group ``bastion.<c>`` takes TCP 22 from the
load balancer's group, and the masters and nodes groups take TCP 22 from the bastion's.
Both groups egress freely.  The NLB ``bastion.<c>`` (its AWS name hashed to 32 characters)
sits in one subnet per zone (utility/public ones, or private ones for an Internal load
balancer) with a TCP 22 listener to the target group of the bastion's autoscaling group.
With topology.bastion.bastionPublicName, alias records A/AAAA to the NLB.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import dns
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.firewall import _cidr_peer, _egress, _rule
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import balancer_name, cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, elbv2
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

SSH = 22
HEALTH_CHECK = {"healthy_threshold": 2, "interval": 10, "protocol": "TCP", "unhealthy_threshold": 2}
ROLE = "Bastion"


def _add(tasks, task):
    tasks[task.key] = task
    return task


def bastion_groups(instance_groups):
    return [g for g in instance_groups or [] if (g.get("spec") or {}).get("role") == ROLE]


def uses_ssh_bastion(instance_groups):
    """kops' UsesSSHBastion: some instance group is a bastion (SSH access then goes through it)."""
    return bool(bastion_groups(instance_groups))


def _balancer_type(spec):
    kind = (((spec.get("topology") or {}).get("bastion") or {}).get("loadBalancer") or {}).get("type") or "Public"
    if kind not in ("Public", "Internal"):
        raise ModelError("spec.topology.bastion.loadBalancer.type: unhandled type %r (Public or Internal)" % kind)
    return kind


def _subnets_for_balancer(cluster, instance_groups, balancer_type):
    """(the CIDRs SSH may come from, one subnet name per zone) as kops chooses them for the NLB."""
    wanted = {"Public": ("Public", "Utility"), "Internal": ("Private", "DualStack")}[balancer_type]
    control_plane_subnets = {s for g in instance_groups or []
                             if (g.get("spec") or {}).get("role") in ("ControlPlane", "Master")
                             for s in g["spec"].get("subnets") or []}
    by_zone = {}
    for subnet in cluster["spec"].get("subnets") or []:
        if subnet.get("type") in wanted:
            by_zone.setdefault(subnet.get("zone"), []).append(subnet)
    cidrs, chosen = [], []
    for zone_subnets in by_zone.values():
        cidrs += [s["cidr"] for s in zone_subnets if s.get("cidr")]

        def score(subnet):
            return ((subnet["name"] in control_plane_subnets) + 2 * (subnet.get("type") == "DualStack")
                    + 3 * (subnet.get("type") == "Utility"))
        chosen.append(max(zone_subnets, key=score)["name"])
    return cidrs, chosen


def _uses_ipv6(cluster, instance_groups):
    """kops' useIPv6ForBastion: some instance group has a subnet with an IPv6 CIDR."""
    ipv6 = {s["name"] for s in cluster["spec"].get("subnets") or [] if s.get("ipv6CIDR")}
    return any(s in ipv6 for g in instance_groups or [] for s in (g.get("spec") or {}).get("subnets") or [])


def build_bastion(cluster, instance_groups, tasks, vpc, subnets, groups):
    """Add the bastion's groups, rules, NLB, target group and listener; groups gains "bastion" and
    "bastion-elb".  Returns the NLB task, or None without a bastion instance group."""
    if not uses_ssh_bastion(instance_groups):
        return None
    spec = cluster["spec"]
    name = cluster["metadata"]["name"]
    bastion_spec = (spec.get("topology") or {}).get("bastion") or {}
    balancer_spec = bastion_spec.get("loadBalancer") or {}

    bastion_name = "bastion.%s" % name
    bastion = _add(tasks, ec2.SecurityGroup(bastion_name, name=bastion_name, description="Security group for bastion",
                                            vpc_id=Ref(vpc), tags=cluster_tags(name, bastion_name)))
    elb_name = "bastion-elb.%s" % name
    elb = _add(tasks, ec2.SecurityGroup(elb_name, name=elb_name, description="Security group for bastion ELB",
                                        vpc_id=Ref(vpc), tags=cluster_tags(name, elb_name)))
    groups["bastion"], groups["bastion-elb"] = bastion, elb

    for group in (bastion, elb):
        for cidr in ("0.0.0.0/0", "::/0"):
            _egress(tasks, group, cidr)
    for target in (groups["masters"], groups["nodes"]):
        _rule(tasks, target, bastion.name, "ingress", "tcp", SSH, SSH, source_security_group_id=Ref(bastion))

    balancer_type = _balancer_type(spec)
    subnet_cidrs, balancer_subnets = _subnets_for_balancer(cluster, instance_groups, balancer_type)
    for cidr in subnet_cidrs + list(spec.get("sshAccess") or []):
        peer = _cidr_peer(cidr)
        _rule(tasks, elb, cidr, "ingress", "tcp", SSH, SSH, **peer)
        # Path MTU discovery: ICMPv6 for IPv6 and prefix lists, ICMP for IPv4 and prefix lists.
        if "cidr_blocks" not in peer:
            _add(tasks, ec2.SecurityGroupRule("icmpv6-pmtu-ssh-nlb-%s" % cidr, type="ingress",
                                              security_group_id=Ref(elb), protocol="icmpv6", from_port=-1, to_port=-1,
                                              **peer))
        if "ipv6_cidr_blocks" not in peer:
            _add(tasks, ec2.SecurityGroupRule("icmp-pmtu-ssh-nlb-%s" % cidr, type="ingress",
                                              security_group_id=Ref(elb), protocol="icmp", from_port=3, to_port=4,
                                              **peer))
    _rule(tasks, bastion, elb.name, "ingress", "tcp", SSH, SSH, source_security_group_id=Ref(elb))
    _rule(tasks, bastion, elb.name, "ingress", "icmp", 3, 4, source_security_group_id=Ref(elb))
    _rule(tasks, elb, bastion.name, "ingress", "icmp", 3, 4, source_security_group_id=Ref(bastion))

    balancer_fields = dict(
        name=balancer_name(cluster, "bastion"), load_balancer_type="network", internal=balancer_type == "Internal",
        enable_cross_zone_load_balancing=False,
        security_groups=[Ref(elb)] + list(balancer_spec.get("additionalSecurityGroups") or []),
        subnet_mapping=[{"subnet_id": Ref(subnets[s])} for s in balancer_subnets],
        tags=cluster_tags(name, bastion_name, extra=dict(spec.get("cloudLabels") or {}, Name=bastion_name)))
    if _uses_ipv6(cluster, instance_groups):
        balancer_fields["ip_address_type"] = "dualstack"
    balancer = _add(tasks, elbv2.LoadBalancer(bastion_name, **balancer_fields))

    target_name = balancer_name(cluster, "bastion")
    target = _add(tasks, elbv2.TargetGroup(
        target_name, name=target_name, port=SSH, protocol="TCP", vpc_id=Ref(vpc), connection_termination="true",
        deregistration_delay="30", health_check=dict(HEALTH_CHECK), tags=cluster_tags(name, target_name)))
    _add(tasks, elbv2.Listener("%s-%d" % (bastion_name, SSH), load_balancer_arn=Ref(balancer), port=SSH,
                               protocol="TCP", default_action={"target_group_arn": Ref(target), "type": "forward"}))

    public_name = bastion_spec.get("bastionPublicName") or bastion_spec.get("publicName")
    if public_name:
        zone = dns.hosted_zone(cluster, tasks)
        if zone is not None:
            dns.alias_records(tasks, zone, public_name, balancer)
    return balancer
