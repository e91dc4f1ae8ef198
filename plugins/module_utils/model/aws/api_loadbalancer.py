# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The API network load balancer (kops' APILoadBalancerBuilder): the NLB in the API subnets,
a TCP 443 listener to the control plane, and with dns None a 3988 listener to
kops-controller; its security group api-elb.<c> and the rules between it, the
API's clients, the nodes and the control plane."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.firewall import _cidr_peer, access_label
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import balancer_name, cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, elbv2
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

KOPS_CONTROLLER_PORT = 3988
# With spec.api.loadBalancer.sslCertificate kops terminates TLS on 443 and keeps plain TCP on 8443.
TCP_WITH_CERTIFICATE_PORT = 8443
HEALTH_CHECK = {"healthy_threshold": 2, "interval": 10, "unhealthy_threshold": 2}


def _add(tasks, task):
    tasks[task.key] = task
    return task


def _group_id(group):
    """A security group task's id, or the id of a group the user brought (securityGroupOverride)."""
    return group if isinstance(group, str) else Ref(group)


def _access_logs(log):
    """spec.api.loadBalancer.accessLog as the balancer's access_logs (kops: bucket, enabled, prefix when set)."""
    if not (log or {}).get("bucket"):
        return None
    return dict({"bucket": log["bucket"], "enabled": True}, **({"prefix": log["bucketPrefix"]}
                                                               if log.get("bucketPrefix") else {}))


def _rule(tasks, name, group, **fields):
    return _add(tasks, ec2.SecurityGroupRule(name, security_group_id=_group_id(group), **fields))


def _source(group):
    return {"source_security_group_id": _group_id(group)}


def build_api_loadbalancer(cluster, tasks, vpc, subnets, groups):
    spec = cluster["spec"]
    balancer_spec = (spec.get("api") or {}).get("loadBalancer")
    if balancer_spec is None:
        return None
    name = cluster["metadata"]["name"]
    dns_none = ((spec.get("topology") or {}).get("dns") or {}).get("type") == "None"
    internal = balancer_spec.get("type") == "Internal"
    elb_group_name = "api-elb.%s" % name
    # With securityGroupOverride the user's group takes the api-elb group's place (and its rules, under the
    # api-elb names, as kops writes them); none is created.
    elb = balancer_spec.get("securityGroupOverride") or _add(tasks, ec2.SecurityGroup(
        elb_group_name, name=elb_group_name, description="Security group for api ELB", vpc_id=Ref(vpc),
        tags=cluster_tags(name, elb_group_name)))
    masters, nodes = groups["masters"], groups["nodes"]

    wanted = {"Private"} if internal else {"Public", "Utility"}
    zones_seen, mapping, chosen = set(), [], []
    by_name = {s["name"]: s for s in spec.get("subnets") or []}
    # spec.api.loadBalancer.subnets: the user's choice, each with the Elastic IP or private address to pin.
    for given in balancer_spec.get("subnets") or []:
        if given.get("name") not in by_name:
            raise ModelError("spec.api.loadBalancer.subnets: %r is not a subnet of spec.subnets" % given.get("name"))
        chosen.append(by_name[given["name"]])
        mapping.append(dict({"subnet_id": Ref(subnets[given["name"]])}, **{
            field: given[key] for key, field in (("allocationId", "allocation_id"),
                                                 ("privateIPv4Address", "private_ipv4_address")) if given.get(key)}))
    for subnet in spec.get("subnets") or [] if not mapping else []:
        if subnet["type"] in wanted and subnet.get("zone") not in zones_seen:
            zones_seen.add(subnet.get("zone"))
            chosen.append(subnet)
            mapping.append({"subnet_id": Ref(subnets[subnet["name"]])})
    # kops: dualstack when every subnet of the balancer has an IPv6 CIDR; cross-zone on when kops-controller
    # is reached through the balancer (dns None), else as the spec says (off by default).
    dualstack = {"ip_address_type": "dualstack"} if chosen and all(s.get("ipv6CIDR") for s in chosen) else {}
    balancer = _add(tasks, elbv2.LoadBalancer(
        "api.%s" % name, name=balancer_name(cluster, "api"), load_balancer_type="network", internal=internal,
        enable_cross_zone_load_balancing=dns_none or bool(balancer_spec.get("crossZoneLoadBalancing", False)),
        # the user's additionalSecurityGroups, then the api-elb group (kops' order in its Terraform output)
        security_groups=list(balancer_spec.get("additionalSecurityGroups") or []) + [_group_id(elb)],
        subnet_mapping=mapping, tags=cluster_tags(name, "api.%s" % name),
        **dict(dualstack, **({"access_logs": _access_logs(balancer_spec["accessLog"])}
                             if _access_logs(balancer_spec.get("accessLog")) else {}))))

    certificate = balancer_spec.get("sslCertificate")
    tcp_check = dict(HEALTH_CHECK, protocol="TCP")
    # (listener port, its protocol and TLS fields, target group prefix, target port, target protocol, check)
    if certificate:
        tls = {"certificate_arn": certificate, "ssl_policy": balancer_spec.get("sslPolicy") or None}
        listeners = [(443, "TLS", tls, "tls", 443, "TLS", tcp_check),
                     (TCP_WITH_CERTIFICATE_PORT, "TCP", {}, "tcp", 443, "TCP", tcp_check)]
    else:
        listeners = [(443, "TCP", {}, "tcp", 443, "TCP", tcp_check)]
    if dns_none:
        listeners.append((KOPS_CONTROLLER_PORT, "TCP", {}, "kops-controller", KOPS_CONTROLLER_PORT, "TCP",
                          dict(HEALTH_CHECK, protocol="HTTPS", path="/healthz")))
    for port, protocol, tls_fields, prefix, target_port, target_protocol, check in listeners:
        group_name = balancer_name(cluster, prefix)
        target = _add(tasks, elbv2.TargetGroup(
            group_name, name=group_name, port=target_port, protocol=target_protocol, vpc_id=Ref(vpc),
            connection_termination="true", deregistration_delay="30", health_check=check,
            tags=cluster_tags(name, group_name)))
        _add(tasks, elbv2.Listener("api.%s-%d" % (name, port), load_balancer_arn=Ref(balancer), port=port,
                                   protocol=protocol, default_action={"target_group_arn": Ref(target), "type": "forward"},
                                   **{k: v for k, v in tls_fields.items() if v}))

    for cidr in ("0.0.0.0/0", "::/0"):
        _rule(tasks, "from-%s-egress-all-0to0-%s" % (elb_group_name, cidr), elb, type="egress", protocol="-1", from_port=0,
              to_port=0, **_cidr_peer(cidr))
    api_ports = [443] + ([TCP_WITH_CERTIFICATE_PORT] if certificate else [])
    for cidr in spec.get("kubernetesApiAccess") or []:
        for port in api_ports:
            _rule(tasks, "from-%s-ingress-tcp-%dto%d-%s" % (access_label(cidr), port, port, elb_group_name), elb,
                  type="ingress", protocol="tcp", from_port=port, to_port=port, **_cidr_peer(cidr))
        # Path MTU discovery back to the clients: ICMPv6 for IPv6, ICMP for IPv4, both for a prefix list.
        if ":" in cidr or cidr.startswith("pl-"):
            _rule(tasks, "icmpv6-pmtu-api-elb-%s" % cidr, elb, type="ingress", protocol="icmpv6", from_port=-1,
                  to_port=-1, **_cidr_peer(cidr))
        if ":" not in cidr:
            _rule(tasks, "icmp-pmtu-api-elb-%s" % cidr, elb, type="ingress", protocol="icmp", from_port=3, to_port=4,
                  **_cidr_peer(cidr))
    if certificate:
        _rule(tasks, "tcp-api-cp", masters, type="ingress", protocol="tcp", from_port=TCP_WITH_CERTIFICATE_PORT,
              to_port=TCP_WITH_CERTIFICATE_PORT, **_source(elb))
    _rule(tasks, "https-elb-to-master", masters, type="ingress", protocol="tcp", from_port=443, to_port=443,
          **_source(elb))
    _rule(tasks, "icmp-pmtu-elb-to-cp", masters, type="ingress", protocol="icmp", from_port=3, to_port=4,
          **_source(elb))
    _rule(tasks, "icmp-pmtu-cp-to-elb", elb, type="ingress", protocol="icmp", from_port=3, to_port=4,
          source_security_group_id=Ref(masters))
    if dns_none:
        _rule(tasks, "kops-controller-elb-to-cp", masters, type="ingress", protocol="tcp",
              from_port=KOPS_CONTROLLER_PORT, to_port=KOPS_CONTROLLER_PORT, **_source(elb))
        _rule(tasks, "node-to-elb", elb, type="ingress", protocol="-1", from_port=0, to_port=0,
              source_security_group_id=Ref(nodes))
    return balancer
