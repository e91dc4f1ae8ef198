# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The network of a cluster, as kops' NetworkModelBuilder builds it (pkg/model/awsmodel/network.go):
VPC, DHCP options, internet gateway, the public route table and its default routes,
subnets with their route table associations, and per zone a NAT gateway, its
elastic IP and a private route table for private topologies.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import TAG_CLUSTER_OWNERSHIP, cluster_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, ipv6
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

ELB_TAG = {"kubernetes.io/role/elb": "1"}
INTERNAL_ELB_TAG = {"kubernetes.io/role/internal-elb": "1"}
DEFAULT_ROUTES = (("destination_cidr_block", "0.0.0.0/0"), ("destination_ipv6_cidr_block", "::/0"))
# IPv6 clusters reach IPv4-only hosts through DNS64 and NAT64's well-known prefix, via the NAT gateway.
NAT64_PREFIX = "64:ff9b::/96"


def is_ipv6_cluster(spec):
    return spec.get("nonMasqueradeCIDR") == "::/0"


def dhcp_domain_name(region):
    """AWS' own default: ec2.internal in us-east-1, <region>.compute.internal elsewhere."""
    return "ec2.internal" if region == "us-east-1" else "%s.compute.internal" % region


def _inside(cidr, parent):
    import ipaddress
    try:
        return bool(cidr) and ipaddress.ip_network(cidr, strict=False).subnet_of(ipaddress.ip_network(parent))
    except (TypeError, ValueError):
        return False


def subnet_role_tags(spec, subnet):
    """Which load balancers may use the subnet (kops' subnet tags): public ones in public and utility
    subnets; internal ones in dual-stack subnets, else in the zone's private ones, and in public subnets
    only when the cluster has no private subnet and is not IPv6 (AWS puts no internal load balancer
    behind an IPv6 default route to an internet gateway)."""
    subnets = spec.get("subnets") or []
    kind = subnet["type"]
    if kind in ("Public", "Utility"):
        no_private = not any(s["type"] in ("Private", "DualStack") for s in subnets)
        return dict(ELB_TAG, **(INTERNAL_ELB_TAG if no_private and not is_ipv6_cluster(spec) else {}))
    if kind == "Private" and any(s["type"] == "DualStack" and s["zone"] == subnet["zone"] for s in subnets):
        return {}
    return dict(INTERNAL_ELB_TAG) if kind in ("Private", "DualStack") else {}


def karpenter_subnet_tags(groups, subnet_name):
    """kops: a subnet of a Karpenter group is tagged kops.k8s.io/instance-group/<group>=true, the tag its
    EC2NodeClass selects subnets by."""
    return {"kops.k8s.io/instance-group/" + (g.get("metadata") or {}).get("name"): "true" for g in groups
            if (g.get("spec") or {}).get("manager") == "Karpenter" and subnet_name in ((g.get("spec") or {}).get("subnets")
                                                                                       or [])}


def build_network(cluster, tasks, groups=()):
    """Add the network tasks to `tasks` (a dict key -> task); returns {subnet name: Subnet task}.
    groups: the instance groups (a Karpenter group's subnets carry its tag)."""
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    region = region_of(spec)

    def add(task):
        tasks[task.key] = task
        return task

    if spec.get("networkID"):
        # A shared VPC is the user's: its DHCP options and internet gateway stay as they are.
        vpc = add(ec2.SharedVPC(name, id=spec["networkID"]))
        vpc_id = Ref(vpc)
        gateway = add(ec2.SharedInternetGateway(name, vpc_id=vpc_id))
    else:
        vpc = add(ec2.VPC(name, cidr_block=spec["networkCIDR"], enable_dns_hostnames=True, enable_dns_support=True,
                          assign_generated_ipv6_cidr_block=True, tags=cluster_tags(name, name)))
        vpc_id = Ref(vpc)
        dhcp = add(ec2.DHCPOptions(name, domain_name=dhcp_domain_name(region),
                                   domain_name_servers=["AmazonProvidedDNS"], tags=cluster_tags(name, name)))
        add(ec2.VPCDHCPOptionsAssociation(name, vpc_id=vpc_id, dhcp_options_id=Ref(dhcp)))
        gateway = add(ec2.InternetGateway(name, vpc_id=vpc_id, tags=cluster_tags(name, name)))
    extra_cidrs = [add(ec2.VPCCIDRBlock("cidr-" + cidr, vpc_id=vpc_id, cidr_block=cidr))
                   for cidr in spec.get("additionalNetworkCIDRs") or []]
    all_subnets = spec.get("subnets") or []
    public_table = None
    # kops: no public route table when every subnet is the user's (an id) or none is routed by the cluster
    # (egress: External), and with the latter no internet gateway either.
    if all_subnets and all(is_unmanaged(s) for s in all_subnets):
        del tasks[gateway.key]
    elif not all(is_shared(s) for s in all_subnets):
        public_table = add(ec2.RouteTable(name, vpc_id=vpc_id, tags=cluster_tags(
            name, name, extra={ec2.KOPS_ROLE_TAG: "public"})))
        for field, destination in DEFAULT_ROUTES:
            add(ec2.Route("route-" + destination, route_table_id=Ref(public_table), gateway_id=Ref(gateway),
                          **{field: destination}))

    subnets = {}
    for subnet in all_subnets:
        role_tags = dict(subnet_role_tags(spec, subnet), **karpenter_subnet_tags(groups, subnet["name"]))
        if is_shared(subnet):
            subnets[subnet["name"]] = add(_shared_subnet(cluster, subnet, vpc_id,
                                                         role_tags if spec.get("tagSubnets") is not False else None))
        else:
            subnets[subnet["name"]] = add(_subnet(name, subnet, vpc, role_tags))

    for subnet in all_subnets:
        if is_shared(subnet):
            continue
        # A subnet in an added VPC CIDR can only be created once that CIDR is associated.
        subnets[subnet["name"]].after = [c for c in extra_cidrs if _inside(subnet.get("cidr"), c.fields["cidr_block"])]

    egress_only = None
    routed_private = [s for s in all_subnets if s["type"] in ("Private", "DualStack") and not is_unmanaged(s)]
    if is_ipv6_cluster(spec) and routed_private:
        egress_only = add(ipv6.SharedEgressOnlyInternetGateway(name, vpc_id=vpc_id) if spec.get("networkID") else
                          ipv6.EgressOnlyInternetGateway(name, vpc_id=vpc_id, tags=cluster_tags(name, name)))
    private_tables = _build_private_egress(cluster, tasks, subnets, add, vpc_id, egress_only)
    for subnet in all_subnets:
        kind = subnet["type"]
        if is_shared(subnet) or is_unmanaged(subnet):
            continue  # kops associates only the subnets it creates and routes
        table = public_table if kind in ("Public", "Utility") else private_tables.get(subnet["zone"])
        if table is None:
            continue
        label = "private-" + subnet["name"] if kind in ("Private", "DualStack") else subnet["name"]
        add(ec2.RouteTableAssociation("%s.%s" % (label, name), route_table_id=Ref(table),
                                      subnet_id=Ref(subnets[subnet["name"]])))
    return subnets


def is_shared(subnet):
    """A subnet the user brought (its id is given): referred to and tagged, never created or routed."""
    return bool(subnet.get("id"))


def is_unmanaged(subnet):
    """kops' isUnmanaged: egress External, the user routes the subnet (no association, no NAT, no routes)."""
    return subnet.get("egress") == "External"


def _shared_subnet(cluster, subnet, vpc_id, role_tags):
    """kops' tags on a shared subnet (CloudTags(name, shared=true): no Name, no KubernetesCluster, the
    ownership tag "shared", the cloud labels), SubnetType and the role tags; none with tagSubnets: false."""
    name = cluster["metadata"]["name"]
    tags = None
    if role_tags is not None:
        tags = dict((cluster["spec"].get("cloudLabels") or {}), **{TAG_CLUSTER_OWNERSHIP % name: "shared"})
        tags.update(SubnetType=subnet["type"], **role_tags)
    return ec2.SharedSubnet("%s.%s" % (subnet["name"], name), short_name=subnet["name"], id=subnet["id"],
                            vpc_id=vpc_id, tags=tags or {})


def _subnet(cluster_name, subnet, vpc, role_tags):
    """kops' subnet: tags by type; with an ipv6CIDR (literal or /64#N of the VPC's block) an IPv6 subnet,
    IPv6-only (native, DNS64, no IPv4 CIDR) when it has no cidr."""
    subnet_name = "%s.%s" % (subnet["name"], cluster_name)
    fields = dict(vpc_id=Ref(vpc), availability_zone=subnet["zone"], private_dns_hostname_type_on_launch="resource-name",
                  tags=cluster_tags(cluster_name, subnet_name, extra=dict({"SubnetType": subnet["type"]}, **role_tags)))
    if subnet.get("cidr"):
        fields.update(cidr_block=subnet["cidr"], enable_resource_name_dns_a_record_on_launch=True)
    ipv6_cidr = subnet.get("ipv6CIDR")
    if not ipv6_cidr:
        if not subnet.get("cidr"):
            raise ModelError("spec.subnets[%s]: neither cidr nor ipv6CIDR is set" % subnet["name"],
                             fix="give the subnet a CIDR")
        return ec2.Subnet(subnet_name, short_name=subnet["name"], **fields)
    fields.update(assign_ipv6_address_on_creation=True, enable_resource_name_dns_aaaa_record_on_launch=True,
                  ipv6_cidr_block=ipv6.SubnetIPv6CIDR(vpc, ipv6_cidr) if ipv6.parse_cidr_notation(ipv6_cidr)
                  else ipv6_cidr)
    if not subnet.get("cidr"):
        fields.update(enable_dns64=True, ipv6_native=True)
    return ipv6.Subnet(subnet_name, short_name=subnet["name"], **fields)


# A subnet's egress / additionalRoutes target by its id prefix (kops' subnet egress and route targets).
ROUTE_TARGETS = (("tgw-", "transit_gateway_id"), ("nat-", "nat_gateway_id"), ("i-", "instance_id"),
                 ("pcx-", "vpc_peering_connection_id"), ("igw-", "gateway_id"))


def route_target(target, where):
    for prefix, field in ROUTE_TARGETS:
        if target.startswith(prefix):
            return field
    raise ModelError("%s: route target %r is not a transit gateway (tgw-), NAT gateway (nat-), instance (i-), "
                     "peering connection (pcx-) or internet gateway (igw-)" % (where, target))


def _build_private_egress(cluster, tasks, subnets, add, vpc_id, egress_only=None):
    """Per zone with private subnets: a private route table and its default route, through a new NAT
    gateway (+ EIP) in the zone's utility subnet unless the subnets name their egress (kops' egress:
    tgw-, nat-, i-, eipalloc- for the NAT's address, External for none); then the subnets' additionalRoutes.
    In an IPv6 cluster also ::/0 through the egress-only gateway and NAT64 through the IPv4 egress."""
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    tables = {}
    # kops routes (table, NAT, egress) only the private subnets it creates and does not leave to the user.
    private = [s for s in spec.get("subnets") or [] if s["type"] in ("Private", "DualStack")
               and not is_shared(s) and not is_unmanaged(s)]
    for zone in sorted({s["zone"] for s in private}):
        egress = next((s.get("egress") for s in private if s["zone"] == zone and s.get("egress")), None)
        utility = next((s for s in spec["subnets"] if s["type"] == "Utility" and s["zone"] == zone), None)
        if utility is None and (egress is None or egress.startswith("eipalloc-")):
            continue
        zone_name = "%s.%s" % (zone, name)
        table_name = "private-%s.%s" % (zone, name)
        table = add(ec2.RouteTable(table_name, vpc_id=vpc_id, tags=cluster_tags(
            name, table_name, extra={ec2.KOPS_ROLE_TAG: "private-" + zone})))
        tables[zone] = table
        if egress_only is not None:
            add(ec2.Route("route-private-%s-::/0" % zone, route_table_id=Ref(table),
                          destination_ipv6_cidr_block="::/0", egress_only_gateway_id=Ref(egress_only)))
        if egress == "External":
            continue
        if egress and not egress.startswith("eipalloc-"):
            target = {route_target(egress, "subnets[%s].egress" % zone): egress}
        else:
            allocation = egress or Ref(add(ec2.ElasticIP(zone_name, domain="vpc", tags=cluster_tags(name, zone_name))))
            nat = add(ec2.NatGateway(zone_name, allocation_id=allocation, subnet_id=Ref(subnets[utility["name"]]),
                                     tags=cluster_tags(name, zone_name)))
            target = {"nat_gateway_id": Ref(nat)}
        add(ec2.Route("route-private-%s-0.0.0.0/0" % zone, route_table_id=Ref(table),
                      destination_cidr_block="0.0.0.0/0", **target))
        if egress_only is not None and "instance_id" not in target:
            add(ec2.Route("route-private-%s-%s" % (zone, NAT64_PREFIX), route_table_id=Ref(table),
                          destination_ipv6_cidr_block=NAT64_PREFIX, **target))
    for subnet in spec.get("subnets") or []:
        table = tables.get(subnet["zone"]) if subnet in private else None
        for route in subnet.get("additionalRoutes") or []:
            if table is None:
                raise ModelError("subnets[%s].additionalRoutes: only private subnets take additional routes"
                                 % subnet["name"])
            field = route_target(route["target"], "subnets[%s].additionalRoutes" % subnet["name"])
            destination = "destination_ipv6_cidr_block" if ":" in route["cidr"] else "destination_cidr_block"
            add(ec2.Route("route-%s-%s" % (subnet["name"], route["cidr"]), route_table_id=Ref(table),
                          **{destination: route["cidr"], field: route["target"]}))
    return tables
