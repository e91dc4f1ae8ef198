# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IPv6 network tasks (kops' awstasks EgressOnlyInternetGateway and Subnet's IPv6 side).

An IPv6 cluster (nonMasqueradeCIDR ::/0) routes its private subnets' IPv6 traffic
through an egress-only internet gateway and NAT64 (64:ff9b::/96) through the NAT
gateway.  Its subnets carry an IPv6 /64, written either literally or as kops'
`/64#N`: the Nth /64 of the VPC's Amazon-provided block, which is known only once
the VPC has it (Terraform: `cidrsubnet(local.vpc_ipv6_cidr_block, ...)`).
"""

from __future__ import annotations

import ipaddress
import re
import time

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Ref, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

# kops' utils.ParseCIDRNotation: /<new prefix length>#<subnet number in hex>.
CIDR_NOTATION = re.compile(r"^/(\d+)#([0-9a-fA-F]+)$")
# How long a new VPC may take to be given its Amazon-provided IPv6 block.
VPC_IPV6_WAIT_SECONDS = 60


# Association states of a CIDR block that no longer (or never will) belong to the VPC or subnet.
GONE = ("disassociating", "disassociated", "failing", "failed")


def _state(block_state):
    """A CIDR association's state (moto's server reports the whole {'State': ...} dict as the string)."""
    state = str((block_state or {}).get("State", "associated"))
    return "associated" if "'associated'" in state else state


def parse_cidr_notation(text):
    """'/64#a' -> (64, 10), or None when text is a plain CIDR."""
    match = CIDR_NOTATION.match(str(text))
    return (int(match.group(1)), int(match.group(2), 16)) if match else None


def subnet_of(block, notation):
    """The CIDR `/64#N` names inside `block` (Terraform's cidrsubnet; kops' utils.CIDRSubnet)."""
    new_prefix, number = parse_cidr_notation(notation)
    network = ipaddress.ip_network(block, strict=False)
    if not network.prefixlen <= new_prefix <= network.max_prefixlen:
        raise TaskError("ipv6CIDR %s: /%d does not fit in the VPC's IPv6 block %s" % (notation, new_prefix, block))
    count = 1 << (new_prefix - network.prefixlen)
    if number >= count:
        raise TaskError("ipv6CIDR %s: the VPC's IPv6 block %s holds only %d /%d subnets (#0 to #%x)"
                        % (notation, block, count, new_prefix, count - 1))
    size = 1 << (network.max_prefixlen - new_prefix)
    return str(ipaddress.ip_network((int(network.network_address) + number * size, new_prefix)))


def vpc_ipv6_block(cloud, vpc_task, wait=True):
    """The VPC's Amazon-provided IPv6 block: from its lookup, else asked for (a new VPC gets it a moment
    after creation)."""
    known = vpc_task.outputs.get("ipv6_cidr_block")
    if known:
        return known
    deadline = time.monotonic() + (VPC_IPV6_WAIT_SECONDS if wait else 0)
    while True:
        vpcs = cloud.ec2.describe_vpcs(VpcIds=[vpc_task.outputs["id"]])["Vpcs"]
        for association in (vpcs[0].get("Ipv6CidrBlockAssociationSet") or []) if vpcs else []:
            if association.get("Ipv6CidrBlock") and _state(association.get("Ipv6CidrBlockState")) == "associated":
                vpc_task.outputs["ipv6_cidr_block"] = association["Ipv6CidrBlock"]
                return association["Ipv6CidrBlock"]
        if time.monotonic() >= deadline:
            if not wait:
                return None
            raise TaskError("VPC %s has no IPv6 CIDR block: subnets with ipv6CIDR /64#N need one (associate an "
                            "Amazon-provided IPv6 block with the VPC)" % vpc_task.outputs["id"])
        time.sleep(2)


class SubnetIPv6CIDR(Ref):
    """A subnet's `/64#N` IPv6 CIDR: a reference to the VPC's IPv6 block, resolved when that is known."""

    __slots__ = ("notation",)

    def __init__(self, vpc_task, notation):
        Ref.__init__(self, vpc_task, "ipv6_cidr_block")
        self.notation = notation

    def resolve(self):
        return subnet_of(Ref.resolve(self), self.notation)

    def terraform(self):
        new_prefix, number = parse_cidr_notation(self.notation)
        return Expression("cidrsubnet(local.vpc_ipv6_cidr_block, %d - local.vpc_ipv6_cidr_length, %d)"
                          % (new_prefix, number))

    def __repr__(self):
        return "%s of name:%s" % (self.notation, self.task.name)


class Subnet(ec2.Subnet):
    """A subnet with an IPv6 CIDR: dual-stack when it also has an IPv4 CIDR, else IPv6-only (native, DNS64)."""

    # The IPv4 fields of any subnet, the IPv6 block (read from its live associations, see read_actual) and
    # the DNS options an IPv6 subnet adds, set by ModifySubnetAttribute after create.
    FIELDS = ec2.Subnet.FIELDS + (
        Field("ipv6_cidr_block", api="Ipv6CidrBlock", cfn="Ipv6CidrBlock"),
        Field("ipv6_native", api="Ipv6Native"),  # implied by the missing IPv4 CIDR, which is compared
        Field("assign_ipv6_address_on_creation", read="AssignIpv6AddressOnCreation", mutable=True),
        Field("enable_resource_name_dns_aaaa_record_on_launch",
              read="PrivateDnsNameOptionsOnLaunch.EnableResourceNameDnsAAAARecord", mutable=True),
        Field("enable_dns64", read="EnableDns64", mutable=True),
    )
    # ModifySubnetAttribute takes one attribute per call: field -> (parameter, whether it is a {"Value": } boolean).
    ATTRIBUTES = {
        "private_dns_hostname_type_on_launch": ("PrivateDnsHostnameTypeOnLaunch", False),
        "enable_resource_name_dns_a_record_on_launch": ("EnableResourceNameDnsARecordOnLaunch", True),
        "assign_ipv6_address_on_creation": ("AssignIpv6AddressOnCreation", True),
        "enable_resource_name_dns_aaaa_record_on_launch": ("EnableResourceNameDnsAAAARecordOnLaunch", True),
        "enable_dns64": ("EnableDns64", True),
    }

    def read_actual(self, item):
        actual = ec2.Subnet.read_actual(self, item)
        blocks = [a["Ipv6CidrBlock"] for a in item.get("Ipv6CidrBlockAssociationSet") or []
                  if _state(a.get("Ipv6CidrBlockState")) not in GONE]
        actual["ipv6_cidr_block"] = blocks[0] if blocks else None
        return actual

    def compared_fields(self):
        return ec2.Subnet.compared_fields(self) + ["ipv6_cidr_block"]

    def find(self, cloud):
        actual = ec2.Subnet.find(self, cloud)
        if actual is not None and isinstance(self.fields["ipv6_cidr_block"], SubnetIPv6CIDR):
            vpc_ipv6_block(cloud, self.fields["ipv6_cidr_block"].task, wait=False)
        return actual

    def create(self, cloud):
        if isinstance(self.fields["ipv6_cidr_block"], SubnetIPv6CIDR):
            vpc_ipv6_block(cloud, self.fields["ipv6_cidr_block"].task)
        ec2.Subnet.create(self, cloud)

    def update_fields(self, cloud, changes):
        for field, (parameter, boolean) in self.ATTRIBUTES.items():
            if field in changes:
                value = changes[field][1]
                cloud.ec2.modify_subnet_attribute(SubnetId=self.outputs["id"],
                                                  **{parameter: {"Value": value} if boolean else value})

    def render_terraform(self):
        cidr = self.fields["ipv6_cidr_block"]
        body = ec2.Subnet.render_terraform(self)
        if isinstance(cidr, SubnetIPv6CIDR):
            body["ipv6_cidr_block"] = cidr.terraform()
        return body

    def render_cloudformation(self):
        raise TaskError("subnet %s: IPv6 subnets are not written by the cloudformation target" % self.name,
                        fix="use target terraform or direct")


class EgressOnlyInternetGateway(ec2.TaggedEc2Task):
    """IPv6 egress for private subnets (kops creates one per IPv6 cluster, named after the cluster)."""

    kind = "aws_egress_only_internet_gateway"
    describe = ("describe_egress_only_internet_gateways", "EgressOnlyInternetGateways")
    resource_type = "egress-only-internet-gateway"
    id_key = "EgressOnlyInternetGatewayId"
    create_operation, create_result = "create_egress_only_internet_gateway", (
        "EgressOnlyInternetGateway", "EgressOnlyInternetGatewayId")
    cloudformation_type = "AWS::EC2::EgressOnlyInternetGateway"
    # An egress-only gateway cannot move between VPCs: a different vpc_id is an error naming both.
    FIELDS = (Field("vpc_id", api="VpcId", read="Attachments[0].VpcId", cfn="VpcId"),)

    def render_cloudformation(self):
        return {"VpcId": self.fields["vpc_id"]}  # the resource takes no tags


class SharedEgressOnlyInternetGateway(Task):
    """The egress-only gateway of a shared VPC (spec.networkID): looked up by its attachment, never created."""

    kind = "aws_egress_only_internet_gateway"
    shared = True
    FIELDS = (Field("vpc_id"),)  # the shared VPC it is attached to (found by that attachment)
    cloudformation_type = "AWS::EC2::EgressOnlyInternetGateway"

    def find(self, cloud):
        vpc = self.desired()["vpc_id"]
        found = cloud.ec2.describe_egress_only_internet_gateways(
            Filters=[{"Name": "attachment.vpc-id", "Values": [vpc]}])["EgressOnlyInternetGateways"]
        attached = [g for g in found if any(a.get("VpcId") == vpc for a in g.get("Attachments") or [])]
        if not attached:
            raise TaskError("shared VPC %s has no egress-only internet gateway, which the IPv6 routes of private "
                            "subnets need" % vpc, fix="create one in the VPC")
        self.outputs["id"] = attached[0]["EgressOnlyInternetGatewayId"]
        return {}

    def resolve_from_facts(self, facts):
        """A rendered target: the gateway's id from the cloud facts (given, or looked up), written as a literal as
        kops writes the id it looks up when it renders."""
        found = facts.egress_only_internet_gateway(self._vpc_id())
        if found:
            self.outputs["rendered_id"] = found

    def _vpc_id(self):
        return self.fields["vpc_id"].task.fields.get("id")

    def terraform_value(self, attribute):
        if self.outputs.get("rendered_id"):
            return self.outputs["rendered_id"]
        raise TaskError("shared VPC %s: Terraform cannot look up its egress-only internet gateway (the AWS provider "
                        "has no data source for one), which the IPv6 routes of private subnets use" % self._vpc_id(),
                        fix="give its id in cloud_facts.egress_only_internet_gateways {%s: eigw-...}, let the module "
                            "look it up (AWS credentials, cloud_lookup not false), or apply with target direct"
                            % self._vpc_id())

    def render_terraform(self):
        return None

    def render_cloudformation(self):
        return None
