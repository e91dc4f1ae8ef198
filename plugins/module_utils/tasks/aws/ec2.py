# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""EC2 network and firewall tasks: VPC, DHCP options, internet gateway, route tables,
routes, subnets, security groups and their rules.

Each kind is found with one describe call filtered by the cluster tag (cached
on the AwsCloud), matched by its Name tag, compared field by field, and
created or updated; nothing the cluster does not own is deleted.  Field names
are Terraform's, so render_terraform() is the fields themselves.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_dict, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Task


# Protocols whose rules carry ports (or ICMP type/code); EC2 ignores ports for all (-1) and others (IP-in-IP 4).
PORTED_PROTOCOLS = ("tcp", "udp", "icmp", "icmpv6", "6", "17", "1", "58")


def has_ports(protocol):
    return str(protocol).lower() in PORTED_PROTOCOLS


class TaggedEc2Task(Task):
    """An EC2 object identified by its Name tag among the cluster's tagged objects of its kind."""

    describe = ("", "")    # (operation, result key)
    resource_type = None   # TagSpecifications ResourceType
    id_key = None

    @classmethod
    def describe_cluster_objects(cls, cloud):
        operation, key = cls.describe
        return cloud.lookup(cls.kind, lambda: paginate(cloud.ec2, operation, key, Filters=cloud.cluster_filter()))

    def find(self, cloud):
        for item in self.describe_cluster_objects(cloud):
            if tag_dict(item.get("Tags")).get("Name") == self.fields["tags"]["Name"]:
                self.outputs["id"] = item[self.id_key]
                actual = self.normalize(item)
                actual["tags"] = tag_dict(item.get("Tags"))
                return actual
        return None

    def normalize(self, item):
        return {}

    def compare(self, actual):
        changes = Task.compare(self, actual)
        wanted = self.fields.get("tags") or {}
        if any(actual["tags"].get(k) != v for k, v in wanted.items()):
            changes["tags"] = (actual["tags"], wanted)
        return changes

    def tag_specifications(self):
        return [{"ResourceType": self.resource_type, "Tags": tag_list(self.fields["tags"])}]

    def update(self, cloud, actual, changes):
        immutable = sorted(set(changes) - {"tags"} - set(self.mutable))
        if immutable:
            raise ValueError("%s: %s cannot be changed in place (%s)" % (
                self.key, ", ".join(immutable), "; ".join("%s: %s -> %s" % (f, changes[f][0], changes[f][1])
                                                          for f in immutable)))
        if "tags" in changes:
            cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))
        self.update_mutable(cloud, {f: changes[f] for f in changes if f in self.mutable})

    mutable = ()

    def update_mutable(self, cloud, changes):
        pass


class VPC(TaggedEc2Task):
    kind = "aws_vpc"
    describe = ("describe_vpcs", "Vpcs")
    resource_type = "vpc"
    id_key = "VpcId"
    compared = ("cidr_block", "enable_dns_hostnames", "enable_dns_support")
    mutable = ("enable_dns_hostnames", "enable_dns_support")

    def find(self, cloud):
        actual = TaggedEc2Task.find(self, cloud)
        if actual is not None:
            self.outputs["cidr_block"] = actual["cidr_block"]
            for flag, attribute in (("enable_dns_hostnames", "enableDnsHostnames"),
                                    ("enable_dns_support", "enableDnsSupport")):
                described = cloud.ec2.describe_vpc_attribute(VpcId=self.outputs["id"], Attribute=attribute)
                actual[flag] = described[attribute[0].upper() + attribute[1:]]["Value"]
        return actual

    def normalize(self, item):
        self.outputs["dhcp_options_id"] = item.get("DhcpOptionsId")
        ipv6 = [a for a in item.get("Ipv6CidrBlockAssociationSet") or [] if a.get("Ipv6CidrBlock")]
        if ipv6:
            self.outputs["ipv6_cidr_block"] = ipv6[0]["Ipv6CidrBlock"]
        return {"cidr_block": item["CidrBlock"]}

    def create(self, cloud):
        desired = self.desired()
        created = cloud.ec2.create_vpc(CidrBlock=desired["cidr_block"],
                                       AmazonProvidedIpv6CidrBlock=bool(desired.get("assign_generated_ipv6_cidr_block")),
                                       TagSpecifications=self.tag_specifications())["Vpc"]
        self.outputs.update(id=created["VpcId"], cidr_block=created["CidrBlock"])
        self.update_mutable(cloud, {f: (None, desired[f]) for f in self.mutable if f in desired})

    def update_mutable(self, cloud, changes):
        for flag, attribute in (("enable_dns_support", "EnableDnsSupport"),
                                ("enable_dns_hostnames", "EnableDnsHostnames")):
            if flag in changes:
                cloud.ec2.modify_vpc_attribute(VpcId=self.outputs["id"], **{attribute: {"Value": changes[flag][1]}})


class DHCPOptions(TaggedEc2Task):
    kind = "aws_vpc_dhcp_options"
    describe = ("describe_dhcp_options", "DhcpOptions")
    resource_type = "dhcp-options"
    id_key = "DhcpOptionsId"
    compared = ("domain_name", "domain_name_servers")

    def normalize(self, item):
        values = {c["Key"]: [v["Value"] for v in c.get("Values") or []] for c in item.get("DhcpConfigurations") or []}
        return {"domain_name": (values.get("domain-name") or [None])[0],
                "domain_name_servers": values.get("domain-name-servers")}

    def create(self, cloud):
        desired = self.desired()
        created = cloud.ec2.create_dhcp_options(
            DhcpConfigurations=[{"Key": "domain-name", "Values": [desired["domain_name"]]},
                                {"Key": "domain-name-servers", "Values": desired["domain_name_servers"]}])["DhcpOptions"]
        self.outputs["id"] = created["DhcpOptionsId"]
        # Tag after create, as kops does (moto also ignores TagSpecifications on this call).
        cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))


class VPCDHCPOptionsAssociation(Task):
    kind = "aws_vpc_dhcp_options_association"
    compared = ("dhcp_options_id",)

    def find(self, cloud):
        # The VPC's own lookup already says which options it uses.
        desired = self.desired()
        self.outputs["id"] = desired["vpc_id"]
        return {"dhcp_options_id": self.fields["vpc_id"].task.outputs.get("dhcp_options_id"),
                "vpc_id": desired["vpc_id"]}

    def create(self, cloud):
        self.update(cloud, None, None)

    def update(self, cloud, actual, changes):
        desired = self.desired()
        cloud.ec2.associate_dhcp_options(DhcpOptionsId=desired["dhcp_options_id"], VpcId=desired["vpc_id"])
        self.fields["vpc_id"].task.outputs["dhcp_options_id"] = desired["dhcp_options_id"]


class InternetGateway(TaggedEc2Task):
    kind = "aws_internet_gateway"
    describe = ("describe_internet_gateways", "InternetGateways")
    resource_type = "internet-gateway"
    id_key = "InternetGatewayId"
    compared = ("vpc_id",)

    def normalize(self, item):
        attached = [a["VpcId"] for a in item.get("Attachments") or []]
        return {"vpc_id": attached[0] if attached else None}

    def create(self, cloud):
        created = cloud.ec2.create_internet_gateway(TagSpecifications=self.tag_specifications())["InternetGateway"]
        self.outputs["id"] = created["InternetGatewayId"]
        self.update_mutable(cloud, {"vpc_id": (None, self.desired()["vpc_id"])})

    mutable = ("vpc_id",)

    def update_mutable(self, cloud, changes):
        if "vpc_id" in changes:
            cloud.ec2.attach_internet_gateway(InternetGatewayId=self.outputs["id"], VpcId=changes["vpc_id"][1])


class RouteTable(TaggedEc2Task):
    kind = "aws_route_table"
    describe = ("describe_route_tables", "RouteTables")
    resource_type = "route-table"
    id_key = "RouteTableId"
    compared = ("vpc_id",)

    def normalize(self, item):
        self.outputs["routes"] = item.get("Routes") or []
        self.outputs["associations"] = item.get("Associations") or []
        return {"vpc_id": item.get("VpcId")}

    def create(self, cloud):
        created = cloud.ec2.create_route_table(VpcId=self.desired()["vpc_id"],
                                               TagSpecifications=self.tag_specifications())["RouteTable"]
        self.outputs.update(id=created["RouteTableId"], routes=[], associations=[])


class Route(Task):
    kind = "aws_route"
    TARGETS = (("gateway_id", "GatewayId"), ("nat_gateway_id", "NatGatewayId"), ("instance_id", "InstanceId"),
               ("transit_gateway_id", "TransitGatewayId"), ("egress_only_gateway_id", "EgressOnlyInternetGatewayId"),
               ("vpc_peering_connection_id", "VpcPeeringConnectionId"))
    compared = tuple(field for field, _api in TARGETS)

    def _destination(self):
        desired = self.desired()
        if desired.get("destination_ipv6_cidr_block"):
            return "DestinationIpv6CidrBlock", desired["destination_ipv6_cidr_block"]
        return "DestinationCidrBlock", desired["destination_cidr_block"]

    def _table(self):
        return self.fields["route_table_id"].task

    def find(self, cloud):
        key, value = self._destination()
        for route in self._table().outputs.get("routes") or []:
            if route.get(key) == value:
                self.outputs["id"] = "%s-%s" % (self.desired()["route_table_id"], value)
                return {field: route.get(api) for field, api in self.TARGETS}
        return None

    def _target_args(self):
        desired = self.desired()
        return {api: desired[field] for field, api in self.TARGETS if desired.get(field)}

    def create(self, cloud):
        key, value = self._destination()
        cloud.ec2.create_route(RouteTableId=self.desired()["route_table_id"], **dict({key: value}, **self._target_args()))
        self.outputs["id"] = "%s-%s" % (self.desired()["route_table_id"], value)

    def update(self, cloud, actual, changes):
        key, value = self._destination()
        cloud.ec2.replace_route(RouteTableId=self.desired()["route_table_id"],
                                **dict({key: value}, **self._target_args()))


class Subnet(TaggedEc2Task):
    kind = "aws_subnet"
    describe = ("describe_subnets", "Subnets")
    resource_type = "subnet"
    id_key = "SubnetId"
    compared = ("cidr_block", "availability_zone", "vpc_id")

    def normalize(self, item):
        return {"cidr_block": item["CidrBlock"], "availability_zone": item["AvailabilityZone"],
                "vpc_id": item["VpcId"]}

    def create(self, cloud):
        desired = self.desired()
        created = cloud.ec2.create_subnet(VpcId=desired["vpc_id"], CidrBlock=desired["cidr_block"],
                                          AvailabilityZone=desired["availability_zone"],
                                          TagSpecifications=self.tag_specifications())["Subnet"]
        self.outputs["id"] = created["SubnetId"]
        # Set once at create: moto ignores it, so comparing it would never converge there.
        cloud.ec2.modify_subnet_attribute(SubnetId=self.outputs["id"], PrivateDnsHostnameTypeOnLaunch=desired.get(
            "private_dns_hostname_type_on_launch", "resource-name"))
        cloud.ec2.modify_subnet_attribute(SubnetId=self.outputs["id"],
                                          EnableResourceNameDnsARecordOnLaunch={"Value": True})


class RouteTableAssociation(Task):
    kind = "aws_route_table_association"

    def find(self, cloud):
        desired = self.desired()
        for association in self.fields["route_table_id"].task.outputs.get("associations") or []:
            if association.get("SubnetId") == desired["subnet_id"]:
                self.outputs["id"] = association["RouteTableAssociationId"]
                return {}
        return None

    def create(self, cloud):
        desired = self.desired()
        self.outputs["id"] = cloud.ec2.associate_route_table(RouteTableId=desired["route_table_id"],
                                                             SubnetId=desired["subnet_id"])["AssociationId"]


class SecurityGroup(TaggedEc2Task):
    kind = "aws_security_group"
    describe = ("describe_security_groups", "SecurityGroups")
    resource_type = "security-group"
    id_key = "GroupId"
    compared = ("description", "vpc_id")

    def normalize(self, item):
        return {"description": item.get("Description"), "vpc_id": item.get("VpcId")}

    def create(self, cloud):
        desired = self.desired()
        self.outputs["id"] = cloud.ec2.create_security_group(
            GroupName=desired["name"], Description=desired["description"], VpcId=desired["vpc_id"],
            TagSpecifications=self.tag_specifications())["GroupId"]


class SecurityGroupRule(Task):
    kind = "aws_security_group_rule"

    def _signature(self):
        d = self.desired()
        protocol = str(d["protocol"])
        ports = (d["from_port"], d["to_port"]) if has_ports(protocol) else (None, None)
        peer = (d.get("cidr_blocks") or [None])[0] or (d.get("ipv6_cidr_blocks") or [None])[0] \
            or (d.get("prefix_list_ids") or [None])[0] or d.get("source_security_group_id")
        return (d["type"] == "egress", protocol, ports, peer)

    @staticmethod
    def _rule_signature(rule):
        protocol = str(rule.get("IpProtocol"))
        ports = (rule.get("FromPort"), rule.get("ToPort")) if has_ports(protocol) else (None, None)
        peer = rule.get("CidrIpv4") or rule.get("CidrIpv6") or rule.get("PrefixListId") \
            or (rule.get("ReferencedGroupInfo") or {}).get("GroupId")
        return (bool(rule.get("IsEgress")), protocol, ports, peer)

    def find(self, cloud):
        group = self.desired()["security_group_id"]
        rules = cloud.lookup("rules:" + group, lambda: paginate(
            cloud.ec2, "describe_security_group_rules", "SecurityGroupRules",
            Filters=[{"Name": "group-id", "Values": [group]}]))
        wanted = self._signature()
        for rule in rules:
            if self._rule_signature(rule) == wanted:
                self.outputs["id"] = rule["SecurityGroupRuleId"]
                return {}
        return None

    def create(self, cloud):
        d = self.desired()
        permission = {"IpProtocol": str(d["protocol"])}
        # Sent for every protocol but all (-1): EC2 ignores them for others such as IP-in-IP (4), as the
        # signature does; moto fails without them.
        if permission["IpProtocol"] != "-1":
            permission.update(FromPort=d["from_port"], ToPort=d["to_port"])
        if d.get("cidr_blocks"):
            permission["IpRanges"] = [{"CidrIp": c} for c in d["cidr_blocks"]]
        if d.get("ipv6_cidr_blocks"):
            permission["Ipv6Ranges"] = [{"CidrIpv6": c} for c in d["ipv6_cidr_blocks"]]
        if d.get("prefix_list_ids"):
            permission["PrefixListIds"] = [{"PrefixListId": p} for p in d["prefix_list_ids"]]
        if d.get("source_security_group_id"):
            permission["UserIdGroupPairs"] = [{"GroupId": d["source_security_group_id"]}]
        authorize = cloud.ec2.authorize_security_group_egress if d["type"] == "egress" \
            else cloud.ec2.authorize_security_group_ingress
        result = authorize(GroupId=d["security_group_id"], IpPermissions=[permission])
        rules = result.get("SecurityGroupRules") or [{}]
        self.outputs["id"] = rules[0].get("SecurityGroupRuleId", self.name)
        cloud.forget("rules:" + d["security_group_id"])


class ElasticIP(TaggedEc2Task):
    kind = "aws_eip"
    describe = ("describe_addresses", "Addresses")
    resource_type = "elastic-ip"
    id_key = "AllocationId"

    @classmethod
    def describe_cluster_objects(cls, cloud):
        # DescribeAddresses is not paginated.
        return cloud.lookup(cls.kind, lambda: cloud.ec2.describe_addresses(Filters=cloud.cluster_filter())["Addresses"])

    def create(self, cloud):
        self.outputs["id"] = cloud.ec2.allocate_address(Domain="vpc", TagSpecifications=self.tag_specifications())[
            "AllocationId"]


class NatGateway(TaggedEc2Task):
    kind = "aws_nat_gateway"
    describe = ("describe_nat_gateways", "NatGateways")
    resource_type = "natgateway"
    id_key = "NatGatewayId"
    compared = ("subnet_id",)

    @classmethod
    def describe_cluster_objects(cls, cloud):
        # Deleted gateways linger in the listing for an hour; they are not ours any more.
        items = TaggedEc2Task.describe_cluster_objects.__func__(cls, cloud)
        return [g for g in items if g.get("State") not in ("deleted", "deleting", "failed")]

    def normalize(self, item):
        return {"subnet_id": item.get("SubnetId")}

    def create(self, cloud):
        desired = self.desired()
        self.outputs["id"] = cloud.ec2.create_nat_gateway(
            AllocationId=desired["allocation_id"], SubnetId=desired["subnet_id"],
            TagSpecifications=self.tag_specifications())["NatGateway"]["NatGatewayId"]


class EBSVolume(TaggedEc2Task):
    kind = "aws_ebs_volume"
    describe = ("describe_volumes", "Volumes")
    resource_type = "volume"
    id_key = "VolumeId"
    compared = ("availability_zone", "size", "type", "encrypted")

    def normalize(self, item):
        return {"availability_zone": item["AvailabilityZone"], "size": item["Size"], "type": item["VolumeType"],
                "encrypted": item.get("Encrypted", False)}

    def create(self, cloud):
        d = self.desired()
        args = dict(AvailabilityZone=d["availability_zone"], Size=d["size"], VolumeType=d["type"],
                    Encrypted=bool(d.get("encrypted")), TagSpecifications=self.tag_specifications())
        if d["type"] in ("gp3", "io1", "io2") and d.get("iops"):
            args["Iops"] = d["iops"]
        if d["type"] == "gp3" and d.get("throughput"):
            args["Throughput"] = d["throughput"]
        self.outputs["id"] = cloud.ec2.create_volume(**args)["VolumeId"]


class KeyPair(Task):
    kind = "aws_key_pair"
    compared = ()

    def find(self, cloud):
        name = self.fields["key_name"]
        pairs = cloud.lookup(self.kind, lambda: cloud.ec2.describe_key_pairs()["KeyPairs"])
        for pair in pairs:
            if pair["KeyName"] == name:
                self.outputs["id"] = pair.get("KeyPairId", name)
                return {}
        return None

    def create(self, cloud):
        created = cloud.ec2.import_key_pair(KeyName=self.fields["key_name"],
                                            PublicKeyMaterial=self.fields["public_key"].encode("utf-8"),
                                            TagSpecifications=[{"ResourceType": "key-pair",
                                                                "Tags": tag_list(self.fields["tags"])}])
        self.outputs["id"] = created.get("KeyPairId", self.fields["key_name"])


class SharedVPC(Task):
    """A VPC the user brought (spec.networkID): looked up, never created, changed or rendered."""

    kind = "aws_vpc"
    shared = True

    def find(self, cloud):
        import botocore.exceptions
        try:
            found = cloud.ec2.describe_vpcs(VpcIds=[self.fields["id"]])["Vpcs"]
        except botocore.exceptions.ClientError:
            found = []
        if not found:
            raise ValueError("spec.networkID: VPC %s not found in %s" % (self.fields["id"], cloud.region))
        self.outputs.update(id=found[0]["VpcId"], cidr_block=found[0]["CidrBlock"],
                            dhcp_options_id=found[0].get("DhcpOptionsId"))
        return {}

    def terraform_value(self, attribute):
        """The id as written in the spec; other attributes (CIDR blocks) from a data source, as kops does."""
        if attribute == "id":
            return self.fields["id"]
        from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
        return Expression("data.aws_vpc.%s.%s" % (self.terraform_name, attribute))

    def terraform_data(self):
        return [("aws_vpc", self.terraform_name, {"id": self.fields["id"]})]

    def render_terraform(self):
        return None


class SharedInternetGateway(Task):
    """The internet gateway already attached to a shared VPC: looked up, never created.

    Terraform output refers to it through a data source (kops writes the id it
    looked up; rendering here needs no cloud access).
    """

    kind = "aws_internet_gateway"
    shared = True

    def find(self, cloud):
        vpc = self.desired()["vpc_id"]
        found = cloud.ec2.describe_internet_gateways(
            Filters=[{"Name": "attachment.vpc-id", "Values": [vpc]}])["InternetGateways"]
        if not found:
            raise ValueError("shared VPC %s has no internet gateway attached; attach one or use private subnets "
                             "with egress" % vpc)
        self.outputs["id"] = found[0]["InternetGatewayId"]
        return {}

    def terraform_value(self, attribute):
        from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
        return Expression("data.aws_internet_gateway.%s.%s" % (self.terraform_name, attribute))

    def terraform_data(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block
        from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import to_terraform
        return [("aws_internet_gateway", self.terraform_name,
                 {"filter": Block({"name": "attachment.vpc-id", "values": [to_terraform(self.fields["vpc_id"])]})})]

    def render_terraform(self):
        return None


# -- CloudFormation: each kind's resource type and properties ---------------------------------

def _cfn_tags(task):
    from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import tags
    return tags(task.fields.get("tags"))


def _set(kind, cfn_type, render):
    kind.cloudformation_type = cfn_type
    kind.render_cloudformation = render


_set(VPC, "AWS::EC2::VPC", lambda t: {
    "CidrBlock": t.fields["cidr_block"], "EnableDnsHostnames": t.fields["enable_dns_hostnames"],
    "EnableDnsSupport": t.fields["enable_dns_support"], "Tags": _cfn_tags(t)})
_set(DHCPOptions, "AWS::EC2::DHCPOptions", lambda t: {
    "DomainName": t.fields["domain_name"], "DomainNameServers": t.fields["domain_name_servers"], "Tags": _cfn_tags(t)})
_set(VPCDHCPOptionsAssociation, "AWS::EC2::VPCDHCPOptionsAssociation", lambda t: {
    "DhcpOptionsId": t.fields["dhcp_options_id"], "VpcId": t.fields["vpc_id"]})
_set(InternetGateway, "AWS::EC2::InternetGateway", lambda t: {"Tags": _cfn_tags(t)})
InternetGateway.extra_cloudformation = lambda t: [("VPCGatewayAttachment", "AWS::EC2::VPCGatewayAttachment", {
    "InternetGatewayId": _self_ref(t), "VpcId": t.fields["vpc_id"]})]
_set(RouteTable, "AWS::EC2::RouteTable", lambda t: {"VpcId": t.fields["vpc_id"], "Tags": _cfn_tags(t)})
_set(Route, "AWS::EC2::Route", lambda t: {k: v for k, v in {
    "RouteTableId": t.fields["route_table_id"], "DestinationCidrBlock": t.fields.get("destination_cidr_block"),
    "DestinationIpv6CidrBlock": t.fields.get("destination_ipv6_cidr_block"), "GatewayId": t.fields.get("gateway_id"),
    "NatGatewayId": t.fields.get("nat_gateway_id")}.items() if v is not None})
_set(Subnet, "AWS::EC2::Subnet", lambda t: {
    "VpcId": t.fields["vpc_id"], "CidrBlock": t.fields["cidr_block"], "AvailabilityZone": t.fields["availability_zone"],
    "PrivateDnsNameOptionsOnLaunch": {"HostnameType": t.fields["private_dns_hostname_type_on_launch"],
                                      "EnableResourceNameDnsARecord": True},
    "Tags": _cfn_tags(t)})
_set(RouteTableAssociation, "AWS::EC2::SubnetRouteTableAssociation", lambda t: {
    "RouteTableId": t.fields["route_table_id"], "SubnetId": t.fields["subnet_id"]})
_set(SecurityGroup, "AWS::EC2::SecurityGroup", lambda t: {
    "GroupName": t.fields["name"], "GroupDescription": t.fields["description"], "VpcId": t.fields["vpc_id"],
    "Tags": _cfn_tags(t)})
_set(ElasticIP, "AWS::EC2::EIP", lambda t: {"Domain": "vpc", "Tags": _cfn_tags(t)})
_set(NatGateway, "AWS::EC2::NatGateway", lambda t: {
    "AllocationId": t.fields["allocation_id"], "SubnetId": t.fields["subnet_id"], "Tags": _cfn_tags(t)})
_set(EBSVolume, "AWS::EC2::Volume", lambda t: {k: v for k, v in {
    "AvailabilityZone": t.fields["availability_zone"], "Size": t.fields["size"], "VolumeType": t.fields["type"],
    "Encrypted": t.fields["encrypted"], "Iops": t.fields.get("iops"), "Throughput": t.fields.get("throughput"),
    "KmsKeyId": t.fields.get("kms_key_id"), "Tags": _cfn_tags(t)}.items() if v is not None})
_set(KeyPair, "AWS::EC2::KeyPair", lambda t: {
    "KeyName": t.fields["key_name"], "PublicKeyMaterial": t.fields["public_key"], "Tags": _cfn_tags(t)})
_set(SharedVPC, "AWS::EC2::VPC", lambda t: None)
_set(SharedInternetGateway, "AWS::EC2::InternetGateway", lambda t: None)


def _self_ref(task):
    from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref
    return Ref(task)


def _rule_properties(rule):
    egress = rule.fields["type"] == "egress"
    properties = {"GroupId": rule.fields["security_group_id"], "IpProtocol": str(rule.fields["protocol"])}
    if has_ports(properties["IpProtocol"]):
        properties.update(FromPort=rule.fields["from_port"], ToPort=rule.fields["to_port"])
    if rule.fields.get("cidr_blocks"):
        properties["CidrIp"] = rule.fields["cidr_blocks"][0]
    if rule.fields.get("ipv6_cidr_blocks"):
        properties["CidrIpv6"] = rule.fields["ipv6_cidr_blocks"][0]
    if rule.fields.get("prefix_list_ids"):
        properties["DestinationPrefixListId" if egress else "SourcePrefixListId"] = rule.fields["prefix_list_ids"][0]
    if rule.fields.get("source_security_group_id"):
        key = "DestinationSecurityGroupId" if egress else "SourceSecurityGroupId"
        properties[key] = rule.fields["source_security_group_id"]
    return properties


SecurityGroupRule.cloudformation_type = property(
    lambda self: "AWS::EC2::SecurityGroupEgress" if self.fields["type"] == "egress" else "AWS::EC2::SecurityGroupIngress")
SecurityGroupRule.render_cloudformation = _rule_properties


class VPCCIDRBlock(Task):
    """An additional IPv4 CIDR associated with the cluster's VPC (spec.additionalNetworkCIDRs)."""

    kind = "aws_vpc_ipv4_cidr_block_association"
    cloudformation_type = "AWS::EC2::VPCCidrBlock"

    def find(self, cloud):
        desired = self.desired()
        vpcs = cloud.lookup("cidr-associations:" + desired["vpc_id"],
                            lambda: cloud.ec2.describe_vpcs(VpcIds=[desired["vpc_id"]])["Vpcs"])
        for association in (vpcs[0].get("CidrBlockAssociationSet") or []) if vpcs else []:
            state = (association.get("CidrBlockState") or {}).get("State")
            if association.get("CidrBlock") == desired["cidr_block"] and state in ("associated", "associating"):
                self.outputs.update(id=association["AssociationId"], vpc_id=desired["vpc_id"])
                return {}
        return None

    def create(self, cloud):
        desired = self.desired()
        self.outputs["id"] = cloud.ec2.associate_vpc_cidr_block(VpcId=desired["vpc_id"], CidrBlock=desired["cidr_block"])[
            "CidrBlockAssociation"]["AssociationId"]
        self.outputs["vpc_id"] = desired["vpc_id"]

    def render_cloudformation(self):
        return {"VpcId": self.fields["vpc_id"], "CidrBlock": self.fields["cidr_block"]}
