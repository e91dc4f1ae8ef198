# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""EC2 network, firewall and storage tasks: VPC, DHCP options, internet gateway, route tables,
routes, subnets, security groups and their rules, elastic IPs, NAT gateways, EBS volumes, key pairs.

Each kind is described by one Field table (engine/task.Field): the create call,
the read-back of the describe item, the comparison and the CloudFormation
properties derive from it; field names are Terraform's, so the Terraform body
is the fields themselves.  Each kind is found with one describe call filtered
by the cluster tag (cached on the AwsCloud) and matched by its Name tag; an
object with that name that is not this cluster's own is an error, never
adopted.  Creates go through cloud/aws.create_once (tagged at create, never
sent twice).  Deletions: security-group rules (kops' RemoveExtraRules),
routes and route-table associations inside the cluster's own route tables
and groups that the spec no longer asks for (docs/aws-model.md).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import (
    CREATE_TOKEN_TAG, as_wanted, create_once, error_code, paginate, tag_dict, tag_list)
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import get_att
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion, Field, Ref, Task, resolve, to_terraform
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError


# Protocols whose rules carry ports (or ICMP type/code); EC2 ignores ports for all (-1) and others (IP-in-IP 4).
PORTED_PROTOCOLS = ("tcp", "udp", "icmp", "icmpv6", "6", "17", "1", "58")

# The tag kops gives a route table for the role it plays (public, private-<zone>); it names the table's output.
KOPS_ROLE_TAG = "kubernetes.io/kops/role"

# Deletion order: what refers to a thing goes before it (rules before their groups, routes before the
# NAT gateways they point at, associations before their tables).  delete_cluster will add the rest.
ORDER_RULES = ORDER_ROUTES = ORDER_ASSOCIATIONS = 0


def has_ports(protocol):
    return str(protocol).lower() in PORTED_PROTOCOLS


def _nest(properties):
    """CloudFormation properties with dotted names ("A.B") as nested objects ({"A": {"B": ...}})."""
    nested = {}
    for key, value in properties.items():
        target = nested
        *parents, leaf = key.split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return nested


def not_owned_error(cloud, what, object_id, tags):
    ownership = ", ".join("%s=%s" % item for item in sorted(cloud.ownership_tags().items()))
    return TaskError("%s %s exists but is not this cluster's own (its tags: %s; this cluster's: %s): it is not "
                     "adopted" % (what, object_id, ", ".join("%s=%s" % item for item in sorted(tags.items())) or "none",
                                  ownership),
                     fix="delete or rename it if it is a leftover, or tag it %s if it is this cluster's" % ownership)


def carrying(items, tag_key, value):
    """The described items that carry tag_key=value.  The tag filter was sent too; this guards against an
    endpoint that ignores it (moto's DescribeNatGateways answers every gateway to any tag filter, and the
    lookup after a 5xx then took another zone's gateway for the one it had just failed to create)."""
    return [item for item in items if tag_dict(item.get("Tags")).get(tag_key) == value]


class TaggedEc2Task(Task):
    """An EC2 object identified by its Name tag among the cluster's tagged objects of its kind."""

    describe = ("", "")       # (operation, result key)
    resource_type = None      # TagSpecifications ResourceType
    id_key = None
    create_operation = None   # client method; its response's id: create_result[0][create_result[1]]
    create_result = ()

    @classmethod
    def describe_cluster_objects(cls, cloud):
        operation, key = cls.describe
        return cloud.lookup(cls.kind, lambda: carrying(
            paginate(cloud.ec2, operation, key, Filters=cloud.cluster_filter()), "KubernetesCluster", cloud.cluster_name))

    @classmethod
    def owned_objects(cls, cloud):
        return [item for item in cls.describe_cluster_objects(cloud) if cloud.owns(tag_dict(item.get("Tags")))]

    def find(self, cloud):
        name = self.fields["tags"]["Name"]
        matches = [item for item in self.describe_cluster_objects(cloud) if tag_dict(item.get("Tags")).get("Name") == name]
        if len(matches) > 1:
            raise TaskError("%s: %d objects are named %s (%s)" % (
                self.key, len(matches), name, ", ".join(sorted(m[self.id_key] for m in matches))),
                fix="delete all but one")
        if not matches:
            return None
        item = matches[0]
        tags = tag_dict(item.get("Tags"))
        if not cloud.owns(tags):
            raise not_owned_error(cloud, "%s named %s:" % (self.kind, name), item[self.id_key], tags)
        self.outputs["id"] = item[self.id_key]
        item = self.read_more(cloud, item)
        actual = self.read_actual(item)
        actual["tags"] = tags
        return actual

    def read_more(self, cloud, item):
        """The describe item, completed with what only other calls report (attributes set after create)."""
        return item

    def compare(self, actual):
        changes = Task.compare(self, actual)
        wanted = self.fields.get("tags") or {}
        # A create token left on the object means our create was cut off (a killed run) before it removed it:
        # it goes, as it would have; tags others set stay.
        if any(actual["tags"].get(k) != v for k, v in wanted.items()) or CREATE_TOKEN_TAG in actual["tags"]:
            changes["tags"] = (actual["tags"], wanted)
        return changes

    def create_call_args(self, desired):
        return self.create_args(desired)

    def find_by_token(self, cloud, tag_key, token):
        operation, key = self.describe
        found = carrying(paginate(cloud.ec2, operation, key, Filters=[{"Name": "tag:" + tag_key, "Values": [token]}]),
                         tag_key, token)
        return found[0][self.id_key] if found else None

    def create(self, cloud):
        desired = self.desired()
        result_key, id_key = self.create_result

        def id_of(response):
            return response[result_key][id_key] if result_key else response[id_key]

        self.outputs["id"], response = create_once(
            cloud, self.create_operation, id_of, lambda tag, token: self.find_by_token(cloud, tag, token),
            tag_specification=(self.resource_type, self.fields["tags"]), **self.create_call_args(desired))
        self.after_create(cloud, desired, response)

    def after_create(self, cloud, desired, response):
        """Set what the create call cannot (attributes changed by a second call)."""
        self.update_fields(cloud, {f.name: (None, desired[f.name]) for f in self.FIELDS
                                   if f.mutable and f.api is None and desired.get(f.name) is not None})

    def update(self, cloud, actual, changes):
        self.immutable_changes({f: c for f, c in changes.items() if f != "tags"})
        if "tags" in changes:
            cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))
            if CREATE_TOKEN_TAG in (changes["tags"][0] or {}):
                cloud.ec2.delete_tags(Resources=[self.outputs["id"]], Tags=[{"Key": CREATE_TOKEN_TAG}])
        self.update_fields(cloud, {f: c for f, c in changes.items() if f != "tags"})

    def update_fields(self, cloud, changes):
        """Change the mutable fields in changes ({field: (actual, desired)}) in place."""

    def render_cloudformation(self):
        properties = Task.render_cloudformation(self)
        return None if properties is None else _nest(properties)


# The prefix length of the VPC's IPv6 block, null without one (kops' VPC.RenderTerraform).
VPC_IPV6_CIDR_LENGTH = Expression(
    'local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\\\d+)", local.vpc_ipv6_cidr_block)[0])')


def vpc_outputs(vpc):
    """kops' VPC outputs: its id and CIDR blocks (a shared VPC's blocks from its data source)."""
    return [("vpc_id", Ref(vpc).terraform(), False),
            ("vpc_cidr_block", Ref(vpc, "cidr_block").terraform(), False),
            ("vpc_ipv6_cidr_block", Ref(vpc, "ipv6_cidr_block").terraform(), False),
            ("vpc_ipv6_cidr_length", VPC_IPV6_CIDR_LENGTH, False)]


class VPC(TaggedEc2Task):
    kind = "aws_vpc"
    cloudformation_type = "AWS::EC2::VPC"
    describe = ("describe_vpcs", "Vpcs")
    resource_type = "vpc"
    id_key = "VpcId"
    create_operation, create_result = "create_vpc", ("Vpc", "VpcId")
    # DNS flags: set by ModifyVpcAttribute after create, read back by DescribeVpcAttribute (read_more).
    ATTRIBUTES = (("enable_dns_support", "enableDnsSupport", "EnableDnsSupport"),
                  ("enable_dns_hostnames", "enableDnsHostnames", "EnableDnsHostnames"))
    FIELDS = (
        Field("cidr_block", api="CidrBlock", read="CidrBlock", cfn="CidrBlock"),
        Field("assign_generated_ipv6_cidr_block", api="AmazonProvidedIpv6CidrBlock", to_api=bool,
              read="length(Ipv6CidrBlockAssociationSet[?Ipv6CidrBlock] || `[]`) > `0`"),
        Field("enable_dns_hostnames", read="EnableDnsHostnames", cfn="EnableDnsHostnames", mutable=True),
        Field("enable_dns_support", read="EnableDnsSupport", cfn="EnableDnsSupport", mutable=True),
    )

    def cloudformation_value(self, attribute):
        """Its CIDR block as Fn::GetAtt (its Ref is the id)."""
        return get_att(self, "CidrBlock") if attribute == "cidr_block" else None

    def find(self, cloud):
        actual = TaggedEc2Task.find(self, cloud)
        if actual is not None:
            self.outputs["cidr_block"] = actual["cidr_block"]
        return actual

    def read_more(self, cloud, item):
        self.outputs["dhcp_options_id"] = item.get("DhcpOptionsId")
        ipv6 = [a for a in item.get("Ipv6CidrBlockAssociationSet") or [] if a.get("Ipv6CidrBlock")]
        if ipv6:
            self.outputs["ipv6_cidr_block"] = ipv6[0]["Ipv6CidrBlock"]
        item = dict(item)
        for _field, attribute, key in self.ATTRIBUTES:
            item[key] = cloud.ec2.describe_vpc_attribute(VpcId=item["VpcId"], Attribute=attribute)[key]["Value"]
        return item

    def after_create(self, cloud, desired, response):
        self.outputs["cidr_block"] = desired["cidr_block"]
        TaggedEc2Task.after_create(self, cloud, desired, response)

    def update_fields(self, cloud, changes):
        for field, _attribute, key in self.ATTRIBUTES:
            if field in changes:
                cloud.ec2.modify_vpc_attribute(VpcId=self.outputs["id"], **{key: {"Value": changes[field][1]}})

    def terraform_outputs(self):
        return vpc_outputs(self)


class DHCPOptions(TaggedEc2Task):
    kind = "aws_vpc_dhcp_options"
    cloudformation_type = "AWS::EC2::DHCPOptions"
    describe = ("describe_dhcp_options", "DhcpOptions")
    resource_type = "dhcp-options"
    id_key = "DhcpOptionsId"
    create_operation, create_result = "create_dhcp_options", ("DhcpOptions", "DhcpOptionsId")
    # api: the DhcpConfigurations key.
    FIELDS = (
        Field("domain_name", api="domain-name", cfn="DomainName",
              read="DhcpConfigurations[?Key=='domain-name'] | [0].Values[0].Value"),
        Field("domain_name_servers", api="domain-name-servers", cfn="DomainNameServers",
              read="DhcpConfigurations[?Key=='domain-name-servers'] | [0].Values[].Value"),
    )

    def create_call_args(self, desired):
        return {"DhcpConfigurations": [{"Key": key, "Values": value if isinstance(value, list) else [value]}
                                       for key, value in sorted(self.create_args(desired).items())]}

    def after_create(self, cloud, desired, response):
        # AWS tags at create; moto ignores TagSpecifications on this call and answers without tags,
        # so then (only then) the tags follow in a second call.
        if response is not None and not response["DhcpOptions"].get("Tags"):
            cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))


class VPCDHCPOptionsAssociation(Task):
    kind = "aws_vpc_dhcp_options_association"
    cloudformation_type = "AWS::EC2::VPCDHCPOptionsAssociation"
    FIELDS = (
        Field("vpc_id", read="VpcId", cfn="VpcId"),
        Field("dhcp_options_id", read="DhcpOptionsId", cfn="DhcpOptionsId", mutable=True),
    )

    def find(self, cloud):
        # The VPC's own lookup already says which options it uses.
        desired = self.desired()
        self.outputs["id"] = desired["vpc_id"]
        return self.read_actual({"VpcId": desired["vpc_id"],
                                 "DhcpOptionsId": self.fields["vpc_id"].task.outputs.get("dhcp_options_id")})

    def create(self, cloud):
        self.update(cloud, None, None)

    def update(self, cloud, actual, changes):
        desired = self.desired()
        cloud.ec2.associate_dhcp_options(DhcpOptionsId=desired["dhcp_options_id"], VpcId=desired["vpc_id"])
        self.fields["vpc_id"].task.outputs["dhcp_options_id"] = desired["dhcp_options_id"]


class InternetGateway(TaggedEc2Task):
    kind = "aws_internet_gateway"
    cloudformation_type = "AWS::EC2::InternetGateway"
    describe = ("describe_internet_gateways", "InternetGateways")
    resource_type = "internet-gateway"
    id_key = "InternetGatewayId"
    create_operation, create_result = "create_internet_gateway", ("InternetGateway", "InternetGatewayId")
    # Attached by a second call; CloudFormation has a VPCGatewayAttachment for it (extra_cloudformation).
    FIELDS = (Field("vpc_id", read="Attachments[0].VpcId", mutable=True),)

    def update_fields(self, cloud, changes):
        if "vpc_id" in changes:
            gateway, vpc = self.outputs["id"], changes["vpc_id"][1]

            def attached():  # a retry of an attach whose answer was lost: already attached to this VPC is done
                found = cloud.ec2.describe_internet_gateways(InternetGatewayIds=[gateway])["InternetGateways"]
                return any(a.get("VpcId") == vpc for g in found for a in g.get("Attachments") or [])
            as_wanted(cloud.ec2.attach_internet_gateway, ("Resource.AlreadyAssociated",), attached,
                      InternetGatewayId=gateway, VpcId=vpc)

    def extra_cloudformation(self):
        return [("VPCGatewayAttachment", "AWS::EC2::VPCGatewayAttachment",
                 {"InternetGatewayId": Ref(self), "VpcId": self.fields["vpc_id"]})]


class RouteTable(TaggedEc2Task):
    kind = "aws_route_table"
    cloudformation_type = "AWS::EC2::RouteTable"
    describe = ("describe_route_tables", "RouteTables")
    resource_type = "route-table"
    id_key = "RouteTableId"
    create_operation, create_result = "create_route_table", ("RouteTable", "RouteTableId")
    FIELDS = (Field("vpc_id", api="VpcId", read="VpcId", cfn="VpcId"),)

    def read_more(self, cloud, item):
        self.outputs["routes"] = item.get("Routes") or []
        self.outputs["associations"] = item.get("Associations") or []
        return item

    def after_create(self, cloud, desired, response):
        self.outputs.update(routes=[], associations=[])

    def terraform_outputs(self):
        """route_table_<role>_id, by the table's kubernetes.io/kops/role tag (public, private-<zone>), as kops."""
        role = (self.fields.get("tags") or {}).get(KOPS_ROLE_TAG)
        return [("route_table_%s_id" % role, Ref(self).terraform(), False)] if role else []


# Route targets: (field, API and CloudFormation name).
ROUTE_TARGETS = (("gateway_id", "GatewayId"), ("nat_gateway_id", "NatGatewayId"), ("instance_id", "InstanceId"),
                 ("transit_gateway_id", "TransitGatewayId"),
                 ("egress_only_gateway_id", "EgressOnlyInternetGatewayId"),
                 ("vpc_peering_connection_id", "VpcPeeringConnectionId"))
# Targets of routes the cluster may delete: gateways it points at.  Routes to instances and network
# interfaces are the route controller's (kubenet pod routes in the cluster's tables), routes to VPC
# endpoints (vpce-) the endpoint's, the local route the VPC's: never deleted.
DELETABLE_ROUTE_TARGETS = ("NatGatewayId", "TransitGatewayId", "EgressOnlyInternetGatewayId", "VpcPeeringConnectionId")


def _route_destination(route):
    return route.get("DestinationCidrBlock") or route.get("DestinationIpv6CidrBlock")


class Route(Task):
    kind = "aws_route"
    cloudformation_type = "AWS::EC2::Route"
    FIELDS = (
        Field("route_table_id", api="RouteTableId", cfn="RouteTableId"),
        Field("destination_cidr_block", api="DestinationCidrBlock", cfn="DestinationCidrBlock"),
        Field("destination_ipv6_cidr_block", api="DestinationIpv6CidrBlock", cfn="DestinationIpv6CidrBlock"),
    ) + tuple(Field(field, api=api, read=api, cfn=api, mutable=True) for field, api in ROUTE_TARGETS)

    def _table(self):
        return self.fields["route_table_id"].task

    def _id(self, desired):
        return "%s-%s" % (desired["route_table_id"], desired.get("destination_cidr_block")
                          or desired.get("destination_ipv6_cidr_block"))

    def find(self, cloud):
        desired = self.desired()
        wanted = desired.get("destination_cidr_block") or desired.get("destination_ipv6_cidr_block")
        for route in self._table().outputs.get("routes") or []:
            if _route_destination(route) == wanted:
                self.outputs["id"] = self._id(desired)
                return self.read_actual(route)
        return None

    def create(self, cloud):
        desired = self.desired()
        try:
            cloud.ec2.create_route(**self.create_args(desired))
        except Exception as exc:
            if error_code(exc) != "RouteAlreadyExists":
                raise
            # There already (a create whose answer was lost, sent again by botocore): point it at the target.
            cloud.ec2.replace_route(**self.create_args(desired))
        self.outputs["id"] = self._id(desired)

    def update(self, cloud, actual, changes):
        self.immutable_changes(changes)
        cloud.ec2.replace_route(**self.create_args())

    @classmethod
    def orphans(cls, cloud, wanted):
        """Routes in the cluster's own route tables to a gateway no wanted route names (see DELETABLE_ROUTE_TARGETS)."""
        wanted_routes = set()
        for task in wanted:
            try:
                desired = task.desired()
            except ValueError:
                continue  # its table does not exist yet, so it holds nothing to delete
            wanted_routes.add((desired["route_table_id"], desired.get("destination_cidr_block")
                               or desired.get("destination_ipv6_cidr_block")))
        deletions = []
        for table in RouteTable.owned_objects(cloud):
            table_id, table_name = table["RouteTableId"], tag_dict(table.get("Tags")).get("Name", table["RouteTableId"])
            for route in table.get("Routes") or []:
                destination = _route_destination(route)
                gateway = route.get("GatewayId") or ""
                ours = gateway.startswith("igw-") or any(route.get(api) for api in DELETABLE_ROUTE_TARGETS)
                if route.get("Origin") == "CreateRouteTable" or not destination or not ours \
                        or (table_id, destination) in wanted_routes:
                    continue
                key = "DestinationIpv6CidrBlock" if route.get("DestinationIpv6CidrBlock") else "DestinationCidrBlock"
                target = gateway or next(route[api] for api in DELETABLE_ROUTE_TARGETS if route.get(api))
                deletions.append(Deletion(
                    cls.kind, "%s:%s" % (table_name, destination), "%s-%s" % (table_id, destination),
                    _delete_route(table_id, key, destination), order=ORDER_ROUTES,
                    detail="route %s -> %s in %s" % (destination, target, table_id)))
        return deletions


def _delete_route(table_id, key, destination):
    # A retry of a delete whose answer was lost finds the route gone: done.
    return lambda cloud: as_wanted(cloud.ec2.delete_route, ("InvalidRoute.NotFound",), lambda: True,
                                   RouteTableId=table_id, **{key: destination})


class Subnet(TaggedEc2Task):
    """A subnet; short_name is its name in spec.subnets (kops' ShortName), which names its Terraform output."""

    kind = "aws_subnet"
    cloudformation_type = "AWS::EC2::Subnet"
    describe = ("describe_subnets", "Subnets")
    resource_type = "subnet"
    id_key = "SubnetId"
    create_operation, create_result = "create_subnet", ("Subnet", "SubnetId")
    # The DNS name options are set by ModifySubnetAttribute after create (CreateSubnet has no parameter
    # for them); CloudFormation sets them in the resource.
    FIELDS = (
        Field("vpc_id", api="VpcId", read="VpcId", cfn="VpcId"),
        Field("cidr_block", api="CidrBlock", read="CidrBlock", cfn="CidrBlock"),
        Field("availability_zone", api="AvailabilityZone", read="AvailabilityZone", cfn="AvailabilityZone"),
        Field("private_dns_hostname_type_on_launch", read="PrivateDnsNameOptionsOnLaunch.HostnameType",
              cfn="PrivateDnsNameOptionsOnLaunch.HostnameType", mutable=True),
        Field("enable_resource_name_dns_a_record_on_launch",
              read="PrivateDnsNameOptionsOnLaunch.EnableResourceNameDnsARecord",
              cfn="PrivateDnsNameOptionsOnLaunch.EnableResourceNameDnsARecord", mutable=True),
    )

    def __init__(self, task_name, /, short_name=None, **fields):
        TaggedEc2Task.__init__(self, task_name, **fields)
        self.short_name = short_name

    def terraform_outputs(self):
        return [("subnet_%s_id" % self.short_name, Ref(self).terraform(), False)] if self.short_name else []

    def update_fields(self, cloud, changes):
        if "private_dns_hostname_type_on_launch" in changes:
            cloud.ec2.modify_subnet_attribute(SubnetId=self.outputs["id"], PrivateDnsHostnameTypeOnLaunch=changes[
                "private_dns_hostname_type_on_launch"][1])
        if "enable_resource_name_dns_a_record_on_launch" in changes:
            cloud.ec2.modify_subnet_attribute(SubnetId=self.outputs["id"], EnableResourceNameDnsARecordOnLaunch={
                "Value": changes["enable_resource_name_dns_a_record_on_launch"][1]})


class SharedSubnet(Task):
    """A subnet the user brought (spec.subnets[].id): never created, changed in any other way, deleted or
    rendered.  Direct: it must exist, and it carries the tags kops puts on a shared subnet (the cluster's
    kubernetes.io/cluster/<name>=shared, SubnetType, the load-balancer role tags), added to its own; deleting
    the cluster removes only the cluster's tag (deletion/aws.py).  Terraform writes its id where it is used,
    and the subnet_ids output kops writes for shared subnets."""

    kind = "aws_subnet"
    cloudformation_type = "AWS::EC2::Subnet"
    shared = True
    FIELDS = (
        Field("id"),
        Field("vpc_id"),
        # The tags kops adds: compared as a subset of the subnet's own (compare below), never removed.
        Field("tags", read="Tags", from_api=tag_dict, compare=False),
    )

    def __init__(self, task_name, /, short_name=None, **fields):
        Task.__init__(self, task_name, **fields)
        self.short_name = short_name

    def find(self, cloud):
        import botocore.exceptions
        try:
            found = cloud.ec2.describe_subnets(SubnetIds=[self.fields["id"]])["Subnets"]
        except botocore.exceptions.ClientError:
            found = []
        if not found:
            raise TaskError("spec.subnets[%s].id: subnet %s not found in %s" % (
                self.short_name, self.fields["id"], cloud.region),
                fix="check the id, or remove it to have the subnet created")
        item = found[0]
        if self.fields.get("vpc_id") is not None and item["VpcId"] != resolve(self.fields["vpc_id"]):
            raise TaskError("spec.subnets[%s].id: subnet %s is in %s, not in the cluster's VPC %s" % (
                self.short_name, item["SubnetId"], item["VpcId"], resolve(self.fields["vpc_id"])))
        self.outputs.update(id=item["SubnetId"], cidr_block=item.get("CidrBlock"))
        return self.read_actual(item)

    def compare(self, actual):
        wanted = self.fields.get("tags") or {}
        if any(actual["tags"].get(k) != v for k, v in wanted.items()):
            return {"tags": (actual["tags"], dict(actual["tags"], **wanted))}
        return {}

    def update(self, cloud, actual, changes):
        # Only the tags kops adds; the subnet's own tags stay.
        cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))

    def terraform_value(self, attribute):
        return self.fields["id"] if attribute == "id" else None

    def terraform_outputs(self):
        outputs = [("subnet_ids", self.fields["id"], True)]
        if self.short_name:
            outputs.append(("subnet_%s_id" % self.short_name, self.fields["id"], False))
        return outputs


class RouteTableAssociation(Task):
    kind = "aws_route_table_association"
    cloudformation_type = "AWS::EC2::SubnetRouteTableAssociation"
    FIELDS = (
        Field("route_table_id", api="RouteTableId", cfn="RouteTableId"),
        Field("subnet_id", api="SubnetId", read="SubnetId", cfn="SubnetId"),
    )

    def find(self, cloud):
        desired = self.desired()
        for association in self.fields["route_table_id"].task.outputs.get("associations") or []:
            if association.get("SubnetId") == desired["subnet_id"]:
                self.outputs["id"] = association["RouteTableAssociationId"]
                return self.read_actual(association)
        return None

    def create(self, cloud):
        args = self.create_args()
        found = {}

        def associated():  # a retry of an association whose answer was lost: the subnet is already in this table
            tables = cloud.ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id",
                                                               "Values": [args["SubnetId"]]}])["RouteTables"]
            for table in tables:
                for association in table.get("Associations") or []:
                    if association.get("SubnetId") == args["SubnetId"] and table["RouteTableId"] == args["RouteTableId"]:
                        found["id"] = association["RouteTableAssociationId"]
            return "id" in found
        response = as_wanted(cloud.ec2.associate_route_table, ("Resource.AlreadyAssociated",), associated, **args)
        self.outputs["id"] = response["AssociationId"] if response is not None else found["id"]

    @classmethod
    def orphans(cls, cloud, wanted):
        """Subnet associations of the cluster's own route tables that no wanted association asks for
        (never a table's main association)."""
        wanted_pairs = set()
        for task in wanted:
            try:
                desired = task.desired()
            except ValueError:
                continue  # its table or subnet does not exist yet
            wanted_pairs.add((desired["route_table_id"], desired["subnet_id"]))
        deletions = []
        for table in RouteTable.owned_objects(cloud):
            table_name = tag_dict(table.get("Tags")).get("Name", table["RouteTableId"])
            for association in table.get("Associations") or []:
                subnet = association.get("SubnetId")
                if association.get("Main") or not subnet or (table["RouteTableId"], subnet) in wanted_pairs:
                    continue
                association_id = association["RouteTableAssociationId"]
                deletions.append(Deletion(
                    cls.kind, "%s:%s" % (table_name, subnet), association_id, _disassociate(association_id),
                    order=ORDER_ASSOCIATIONS, detail="subnet %s from route table %s" % (subnet, table["RouteTableId"])))
        return deletions


def _disassociate(association_id):
    return lambda cloud: as_wanted(cloud.ec2.disassociate_route_table, ("InvalidAssociationID.NotFound",),
                                   lambda: True, AssociationId=association_id)


class SecurityGroup(TaggedEc2Task):
    kind = "aws_security_group"
    cloudformation_type = "AWS::EC2::SecurityGroup"
    describe = ("describe_security_groups", "SecurityGroups")
    resource_type = "security-group"
    id_key = "GroupId"
    create_operation, create_result = "create_security_group", ("", "GroupId")
    FIELDS = (
        Field("name", api="GroupName", read="GroupName", cfn="GroupName"),
        Field("description", api="Description", read="Description", cfn="GroupDescription"),
        Field("vpc_id", api="VpcId", read="VpcId", cfn="VpcId"),
    )

    def create(self, cloud):
        try:
            TaggedEc2Task.create(self, cloud)
        except Exception as exc:
            if error_code(exc) != "InvalidGroup.Duplicate":
                raise
            # A group of that name is in the VPC (group names are unique per VPC) but was not found.
            desired = self.desired()
            found = cloud.ec2.describe_security_groups(Filters=[
                {"Name": "vpc-id", "Values": [desired["vpc_id"]]},
                {"Name": "group-name", "Values": [desired["name"]]}])["SecurityGroups"]
            if not found:
                raise
            if cloud.owns(tag_dict(found[0].get("Tags"))) and tag_dict(found[0].get("Tags")).get("Name") == desired["name"]:
                # This cluster's, made by a create whose answer was lost and not yet visible to the lookup.
                self.outputs["id"] = found[0]["GroupId"]
                return
            raise not_owned_error(cloud, "security group %s in %s:" % (desired["name"], desired["vpc_id"]),
                                  found[0]["GroupId"], tag_dict(found[0].get("Tags")))


# kops' RemoveExtraRules: per group (its name before ".<cluster>"), the ports whose rules are the
# model's alone, so a rule on them that no task asks for is deleted (narrowing sshAccess or
# kubernetesApiAccess closes the old rule).  Other rules stay: the cloud controller adds its own
# (load balancer services) to the same groups (kops #478).  A rule matches a port when both its
# from and to port are that port.
REMOVE_EXTRA_RULE_PORTS = {
    "masters": (22, 443, 2380, 2381, 4001, 4002, 4789, 179, 8443),
    "nodes": (22,),
    "api-elb": (443,),
    "bastion": (22,),
    "bastion-elb": (22,),
}
# Beyond kops: the path-MTU rules the model derives from each access CIDR (kubernetesApiAccess on api-elb,
# sshAccess and the subnets on bastion-elb) go with that CIDR.  kops' RemoveExtraRules judges ports only, so
# after narrowing kops keeps "icmp 3-4 from 0.0.0.0/0" and "icmpv6 from ::/0" open; here an unwanted rule of
# exactly that shape (ICMP type 3 code 4, or all ICMPv6, from a CIDR or prefix list) on these groups is deleted,
# unless it carries tags that are not this cluster's (someone else's rule).
PMTU_RULE_GROUPS = ("api-elb", "bastion-elb")
PMTU_RULE_SHAPES = {("icmp", 3, 4), ("1", 3, 4), ("icmpv6", -1, -1), ("58", -1, -1)}


def rule_signature(egress, protocol, from_port, to_port, peer):
    protocol = str(protocol)
    ports = (from_port, to_port) if has_ports(protocol) else (None, None)
    return (bool(egress), protocol, ports, peer)


def described_rule_signature(rule):
    peer = rule.get("CidrIpv4") or rule.get("CidrIpv6") or rule.get("PrefixListId") \
        or (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
    return rule_signature(rule.get("IsEgress"), rule.get("IpProtocol"), rule.get("FromPort"), rule.get("ToPort"), peer)


# DescribeSecurityGroupRules takes up to this many group ids in one filter.
RULES_BATCH = 200


def _owned_groups_rules(cloud):
    """{group id: [rules]} of every group the cluster owned when its groups were listed, in one call per
    RULES_BATCH groups (not one per group).  Each group's answer is handed out once (_group_rules pops it), so a
    group whose rules were forgotten after a change is asked again on its own."""
    group_ids = sorted(g["GroupId"] for g in SecurityGroup.owned_objects(cloud))
    by_group = {group_id: [] for group_id in group_ids}
    for start in range(0, len(group_ids), RULES_BATCH):
        for rule in paginate(cloud.ec2, "describe_security_group_rules", "SecurityGroupRules",
                             Filters=[{"Name": "group-id", "Values": group_ids[start:start + RULES_BATCH]}]):
            by_group.setdefault(rule["GroupId"], []).append(rule)
    return by_group


def _group_rules(cloud, group_id):
    def fetch():
        rules = cloud.lookup("rules-of-owned-groups", lambda: _owned_groups_rules(cloud)).pop(group_id, None)
        if rules is not None:
            return rules
        return paginate(cloud.ec2, "describe_security_group_rules", "SecurityGroupRules",
                        Filters=[{"Name": "group-id", "Values": [group_id]}])
    return cloud.lookup("rules:" + group_id, fetch)


def _forget_rules(cloud, group_id):
    """After a change of a group's rules: the next look at them asks EC2.  (Before the batch was fetched, this
    leaves an empty one: the groups are then asked one by one, never from a listing older than the change.)"""
    cloud.lookup("rules-of-owned-groups", dict).pop(group_id, None)
    cloud.forget("rules:" + group_id)


def _given(name):
    """send_if: the field is sent when it holds something (an empty peer list is not sent)."""
    return lambda desired: bool(desired.get(name))


def _first(values):
    return values[0] if values else None


# CloudFormation names an egress rule's peer its destination.
EGRESS_CFN = {"SourcePrefixListId": "DestinationPrefixListId", "SourceSecurityGroupId": "DestinationSecurityGroupId"}


class SecurityGroupRule(Task):
    """One rule: its group (GroupId) and one permission (the other API fields: IpPermissions[0]) with one
    peer among four kinds.  Found by its signature among its group's rules; nothing to compare (a rule
    that differs is another rule).  CloudFormation holds one peer per rule and ports only for protocols
    that have them, under two resource types (ingress, egress)."""

    kind = "aws_security_group_rule"
    FIELDS = (
        Field("type"),  # ingress or egress: which call (and which CloudFormation type) makes it
        Field("security_group_id", api="GroupId", cfn="GroupId"),
        Field("protocol", api="IpProtocol", cfn="IpProtocol", to_api=str),
        # Sent for every protocol but all (-1), as kops: EC2 ignores them for others such as IP-in-IP (4), as
        # the signature does; moto fails without them.
        Field("from_port", api="FromPort", cfn="FromPort", send_if=lambda d: str(d["protocol"]) != "-1"),
        Field("to_port", api="ToPort", cfn="ToPort", send_if=lambda d: str(d["protocol"]) != "-1"),
        Field("cidr_blocks", api="IpRanges", cfn="CidrIp", send_if=_given("cidr_blocks"),
              to_api=lambda cidrs: [{"CidrIp": c} for c in cidrs], to_cfn=_first),
        Field("ipv6_cidr_blocks", api="Ipv6Ranges", cfn="CidrIpv6", send_if=_given("ipv6_cidr_blocks"),
              to_api=lambda cidrs: [{"CidrIpv6": c} for c in cidrs], to_cfn=_first),
        Field("prefix_list_ids", api="PrefixListIds", cfn="SourcePrefixListId", send_if=_given("prefix_list_ids"),
              to_api=lambda ids: [{"PrefixListId": p} for p in ids], to_cfn=_first),
        Field("source_security_group_id", api="UserIdGroupPairs", cfn="SourceSecurityGroupId",
              send_if=_given("source_security_group_id"), to_api=lambda group: [{"GroupId": group}], to_cfn=lambda g: g),
    )

    @property
    def cloudformation_type(self):
        return "AWS::EC2::SecurityGroupEgress" if self.fields["type"] == "egress" else "AWS::EC2::SecurityGroupIngress"

    def signature(self):
        d = self.desired()
        peer = (d.get("cidr_blocks") or [None])[0] or (d.get("ipv6_cidr_blocks") or [None])[0] \
            or (d.get("prefix_list_ids") or [None])[0] or d.get("source_security_group_id")
        return rule_signature(d["type"] == "egress", d["protocol"], d["from_port"], d["to_port"], peer)

    def find(self, cloud):
        wanted = self.signature()
        for rule in _group_rules(cloud, self.desired()["security_group_id"]):
            if described_rule_signature(rule) == wanted:
                self.outputs["id"] = rule["SecurityGroupRuleId"]
                return {}
        return None

    def create(self, cloud):
        d = self.desired()
        permission = self.create_args(d)
        del permission["GroupId"]
        authorize = cloud.ec2.authorize_security_group_egress if d["type"] == "egress" \
            else cloud.ec2.authorize_security_group_ingress
        tags = self.api_tags()
        extra = {"TagSpecifications": [{"ResourceType": "security-group-rule", "Tags": tag_list(tags)}]} if tags else {}
        try:
            result = authorize(GroupId=d["security_group_id"], IpPermissions=[permission], **extra)
        except Exception as exc:
            if error_code(exc) != "InvalidPermission.Duplicate":
                raise
            # There already (a create whose answer was lost, sent again by botocore): take its id.
            _forget_rules(cloud, d["security_group_id"])
            if self.find(cloud) is None:
                raise
            return
        rules = result.get("SecurityGroupRules") or [{}]
        self.outputs["id"] = rules[0].get("SecurityGroupRuleId", self.name)
        _forget_rules(cloud, d["security_group_id"])

    def api_tags(self):
        """kops' AddDirectionalGroupRule tags: its group's tags and Name, the rule's name.  Sent at create only
        (Terraform and CloudFormation carry none, as kops renders them); they tell the cluster's rules from others'
        (see _is_our_pmtu_rule).  A rule on a group the user brought (a plain id) gets none."""
        group = self.fields["security_group_id"]
        group_tags = (group.task.fields.get("tags") or {}) if isinstance(group, Ref) else {}
        return dict(group_tags, Name=self.name) if group_tags else {}

    def render_cloudformation(self):
        """The table's properties; ports only for protocols that have them, an egress rule's peer its destination."""
        properties = Task.render_cloudformation(self)
        if not has_ports(properties["IpProtocol"]):
            properties.pop("FromPort", None)
            properties.pop("ToPort", None)
        if self.fields["type"] == "egress":
            properties = {EGRESS_CFN.get(k, k): v for k, v in properties.items()}
        return properties

    @classmethod
    def orphans(cls, cloud, wanted):
        """Rules of the cluster's own groups on a REMOVE_EXTRA_RULE_PORTS port that no wanted rule matches."""
        wanted_by_group, unknown = {}, set()
        for task in wanted:
            try:
                group_id = resolve(task.fields["security_group_id"])
            except ValueError:
                continue  # its group does not exist yet, so it holds nothing to delete
            try:
                wanted_by_group.setdefault(group_id, set()).add(task.signature())
            except ValueError:
                unknown.add(group_id)  # a peer group not created yet: nothing in this group is judged (kops)
        cluster_suffix = "." + cloud.cluster_name
        deletions = []
        for group in SecurityGroup.owned_objects(cloud):
            group_id, group_name = group["GroupId"], group.get("GroupName", "")
            role = group_name[:-len(cluster_suffix)] if group_name.endswith(cluster_suffix) else None
            ports = REMOVE_EXTRA_RULE_PORTS.get(role)
            if not ports or group_id in unknown:
                continue
            for rule in _group_rules(cloud, group_id):
                if described_rule_signature(rule) in wanted_by_group.get(group_id, ()):
                    continue
                if _judged_by_port(rule, ports):
                    what = "%s %s port %s" % ("egress" if rule.get("IsEgress") else "ingress", rule.get("IpProtocol"),
                                              rule["FromPort"])
                elif role in PMTU_RULE_GROUPS and _is_our_pmtu_rule(rule, cloud.cluster_name):
                    what = "ingress %s %s-%s (path MTU)" % (rule.get("IpProtocol"), rule["FromPort"], rule["ToPort"])
                else:
                    continue
                egress, _protocol, _ports, peer = described_rule_signature(rule)
                what = "%s from %s" % (what, peer)
                deletions.append(Deletion(cls.kind, "%s:%s" % (group_name, what), rule["SecurityGroupRuleId"],
                                          _revoke(group_id, rule["SecurityGroupRuleId"], egress),
                                          order=ORDER_RULES, detail=what))
        return deletions


def _judged_by_port(rule, ports):
    """kops' port=N removal rule: the rule's from and to port are both one of the group's ports."""
    return rule.get("FromPort") == rule.get("ToPort") and rule.get("FromPort") in ports


def _is_our_pmtu_rule(rule, cluster_name):
    """An ingress path-MTU rule from a CIDR or prefix list, untagged (made before rules were tagged) or tagged as
    this cluster's."""
    if rule.get("IsEgress") or (rule.get("ReferencedGroupInfo") or {}).get("GroupId"):
        return False
    if (str(rule.get("IpProtocol")).lower(), rule.get("FromPort"), rule.get("ToPort")) not in PMTU_RULE_SHAPES:
        return False
    tags = tag_dict(rule.get("Tags"))
    return not tags or tags.get("KubernetesCluster") == cluster_name


def _revoke(group_id, rule_id, egress):
    def revoke(cloud):
        call = cloud.ec2.revoke_security_group_egress if egress else cloud.ec2.revoke_security_group_ingress
        as_wanted(call, ("InvalidPermission.NotFound", "InvalidSecurityGroupRuleId.NotFound"), lambda: True,
                  GroupId=group_id, SecurityGroupRuleIds=[rule_id])
        _forget_rules(cloud, group_id)
    return revoke


class ElasticIP(TaggedEc2Task):
    kind = "aws_eip"
    cloudformation_type = "AWS::EC2::EIP"
    describe = ("describe_addresses", "Addresses")
    resource_type = "elastic-ip"
    id_key = "AllocationId"
    create_operation, create_result = "allocate_address", ("", "AllocationId")
    FIELDS = (Field("domain", api="Domain", read="Domain", cfn="Domain"),)

    def cloudformation_value(self, attribute):
        """The allocation id as Fn::GetAtt (an EIP's Ref is its public IP)."""
        return get_att(self, "AllocationId") if attribute == "id" else None

    @classmethod
    def describe_cluster_objects(cls, cloud):
        # DescribeAddresses is not paginated.
        return cloud.lookup(cls.kind, lambda: carrying(cloud.ec2.describe_addresses(Filters=cloud.cluster_filter())
                                                       ["Addresses"], "KubernetesCluster", cloud.cluster_name))

    def find_by_token(self, cloud, tag_key, token):
        found = carrying(cloud.ec2.describe_addresses(Filters=[{"Name": "tag:" + tag_key, "Values": [token]}])
                         ["Addresses"], tag_key, token)
        return found[0]["AllocationId"] if found else None


class NatGateway(TaggedEc2Task):
    kind = "aws_nat_gateway"
    cloudformation_type = "AWS::EC2::NatGateway"
    describe = ("describe_nat_gateways", "NatGateways")
    resource_type = "natgateway"
    id_key = "NatGatewayId"
    create_operation, create_result = "create_nat_gateway", ("NatGateway", "NatGatewayId")
    FIELDS = (
        Field("allocation_id", api="AllocationId", read="NatGatewayAddresses[0].AllocationId", cfn="AllocationId"),
        Field("subnet_id", api="SubnetId", read="SubnetId", cfn="SubnetId"),
    )

    @classmethod
    def describe_cluster_objects(cls, cloud):
        # Deleted gateways linger in the listing for an hour; they are not ours any more.
        items = TaggedEc2Task.describe_cluster_objects.__func__(cls, cloud)
        return [g for g in items if g.get("State") not in ("deleted", "deleting", "failed")]


def _same_kms_key(actual, desired):
    """AWS reports the key's ARN; the spec may name it by id or ARN (an alias cannot be compared
    without asking KMS, so it is taken as the same)."""
    if actual == desired or desired is None:
        return True
    if "alias/" in str(desired):
        return True
    return bool(actual) and str(actual).endswith("/" + str(desired))


class EBSVolume(TaggedEc2Task):
    kind = "aws_ebs_volume"
    cloudformation_type = "AWS::EC2::Volume"
    describe = ("describe_volumes", "Volumes")
    resource_type = "volume"
    id_key = "VolumeId"
    create_operation, create_result = "create_volume", ("", "VolumeId")
    FIELDS = (
        Field("availability_zone", api="AvailabilityZone", read="AvailabilityZone", cfn="AvailabilityZone"),
        Field("size", api="Size", read="Size", cfn="Size", mutable=True),
        Field("type", api="VolumeType", read="VolumeType", cfn="VolumeType", mutable=True),
        Field("iops", api="Iops", read="Iops", cfn="Iops", mutable=True),
        Field("throughput", api="Throughput", read="Throughput", cfn="Throughput", mutable=True),
        Field("encrypted", api="Encrypted", read="Encrypted", cfn="Encrypted", to_api=bool),
        Field("kms_key_id", api="KmsKeyId", read="KmsKeyId", cfn="KmsKeyId"),
    )
    MODIFIABLE = (("size", "Size"), ("type", "VolumeType"), ("iops", "Iops"), ("throughput", "Throughput"))

    def compare(self, actual):
        changes = TaggedEc2Task.compare(self, actual)
        if "kms_key_id" in changes and _same_kms_key(*changes["kms_key_id"]):
            del changes["kms_key_id"]
        return changes

    def update_fields(self, cloud, changes):
        # ModifyVolume changes size (grow only), type, IOPS and throughput of a volume in use.
        desired = self.desired()
        if any(field in changes for field, _api in self.MODIFIABLE):
            cloud.ec2.modify_volume(VolumeId=self.outputs["id"], **{
                api: desired[field] for field, api in self.MODIFIABLE if desired.get(field) is not None})


class KeyPair(Task):
    kind = "aws_key_pair"
    cloudformation_type = "AWS::EC2::KeyPair"
    FIELDS = (
        Field("key_name", api="KeyName", read="KeyName", cfn="KeyName"),
        Field("public_key", api="PublicKeyMaterial", cfn="PublicKeyMaterial", to_api=lambda v: v.encode("utf-8"),
              to_cfn=lambda v: v),
    )

    def find(self, cloud):
        name = self.fields["key_name"]
        pairs = cloud.lookup(self.kind, lambda: cloud.ec2.describe_key_pairs()["KeyPairs"])
        for pair in pairs:
            if pair["KeyName"] == name:
                tags = tag_dict(pair.get("Tags"))
                if not cloud.owns(tags):
                    raise not_owned_error(cloud, "key pair %s:" % name, pair.get("KeyPairId", name), tags)
                self.outputs["id"] = pair.get("KeyPairId", name)
                return self.read_actual(pair)
        return None

    def create(self, cloud):
        def find_by_token(tag_key, token):
            found = cloud.ec2.describe_key_pairs(Filters=[{"Name": "tag:" + tag_key, "Values": [token]}])["KeyPairs"]
            return found[0].get("KeyPairId", self.fields["key_name"]) if found else None

        self.outputs["id"], _response = create_once(
            cloud, "import_key_pair", lambda r: r.get("KeyPairId", self.fields["key_name"]), find_by_token,
            tag_specification=("key-pair", self.fields["tags"]), **self.create_args())


class SharedVPC(Task):
    """A VPC the user brought (spec.networkID): looked up, never created, changed or rendered."""

    kind = "aws_vpc"
    cloudformation_type = "AWS::EC2::VPC"
    shared = True
    FIELDS = (Field("id"),)  # spec.networkID

    def find(self, cloud):
        import botocore.exceptions
        try:
            found = cloud.ec2.describe_vpcs(VpcIds=[self.fields["id"]])["Vpcs"]
        except botocore.exceptions.ClientError:
            found = []
        if not found:
            raise TaskError("spec.networkID: VPC %s not found in %s" % (self.fields["id"], cloud.region))
        self.outputs.update(id=found[0]["VpcId"], cidr_block=found[0]["CidrBlock"],
                            dhcp_options_id=found[0].get("DhcpOptionsId"))
        return {}

    def terraform_value(self, attribute):
        """The id as written in the spec; other attributes (CIDR blocks) from a data source, as kops does."""
        if attribute == "id":
            return self.fields["id"]
        return Expression("data.aws_vpc.%s.%s" % (self.terraform_name, attribute))

    def terraform_data(self):
        return [("aws_vpc", self.terraform_name, {"id": self.fields["id"]})]

    def terraform_outputs(self):
        return vpc_outputs(self)


class SharedInternetGateway(Task):
    """The internet gateway already attached to a shared VPC: looked up, never created.

    Terraform output refers to it through a data source (kops writes the id it
    looked up; rendering here needs no cloud access).
    """

    kind = "aws_internet_gateway"
    cloudformation_type = "AWS::EC2::InternetGateway"
    shared = True
    FIELDS = (Field("vpc_id"),)  # the shared VPC it is attached to (found by that attachment)

    def find(self, cloud):
        vpc = self.desired()["vpc_id"]
        found = cloud.ec2.describe_internet_gateways(
            Filters=[{"Name": "attachment.vpc-id", "Values": [vpc]}])["InternetGateways"]
        if not found:
            raise TaskError("shared VPC %s has no internet gateway attached" % vpc,
                            fix="attach one or use private subnets with egress")
        self.outputs["id"] = found[0]["InternetGatewayId"]
        return {}

    def terraform_value(self, attribute):
        return Expression("data.aws_internet_gateway.%s.%s" % (self.terraform_name, attribute))

    def terraform_data(self):
        return [("aws_internet_gateway", self.terraform_name,
                 {"filter": Block({"name": "attachment.vpc-id", "values": [to_terraform(self.fields["vpc_id"])]})})]


class VPCCIDRBlock(Task):
    """An additional IPv4 CIDR associated with the cluster's VPC (spec.additionalNetworkCIDRs)."""

    kind = "aws_vpc_ipv4_cidr_block_association"
    cloudformation_type = "AWS::EC2::VPCCidrBlock"
    FIELDS = (
        Field("vpc_id", api="VpcId", read="VpcId", cfn="VpcId"),
        Field("cidr_block", api="CidrBlock", read="CidrBlock", cfn="CidrBlock"),
    )

    def find(self, cloud):
        desired = self.desired()
        vpcs = cloud.lookup("cidr-associations:" + desired["vpc_id"],
                            lambda: cloud.ec2.describe_vpcs(VpcIds=[desired["vpc_id"]])["Vpcs"])
        for association in (vpcs[0].get("CidrBlockAssociationSet") or []) if vpcs else []:
            state = (association.get("CidrBlockState") or {}).get("State")
            if association.get("CidrBlock") == desired["cidr_block"] and state in ("associated", "associating"):
                self.outputs.update(id=association["AssociationId"], vpc_id=desired["vpc_id"])
                return self.read_actual(dict(association, VpcId=desired["vpc_id"]))
        return None

    def create(self, cloud):
        desired = self.desired()
        self.outputs["id"] = cloud.ec2.associate_vpc_cidr_block(**self.create_args(desired))[
            "CidrBlockAssociation"]["AssociationId"]
        self.outputs["vpc_id"] = desired["vpc_id"]
