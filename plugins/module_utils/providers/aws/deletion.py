# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What `kops delete cluster` finds and deletes on AWS (kops' pkg/resources/aws), as a table of kinds.

Every object is found by the cluster's ownership tags: ``KubernetesCluster=<c>``
and/or ``kubernetes.io/cluster/<c>=owned|shared`` (EC2 is asked once per tag,
as kops' buildEC2FiltersForCluster does, so objects other controllers tag with
only one of them are found too).  ``shared`` objects are the user's: the
cluster's tags are removed from them, nothing else.  For the VPC, security
groups, route tables and network interfaces an explicit ``owned`` is required,
as kops' HasOwnedTag does.  Services whose list calls cannot filter by tag are
narrowed by the names the cluster gives (SQS queues, EventBridge rules, as
kops does) and then decided by their tags; IAM comes from one
GetAccountAuthorizationDetails walk, which carries every role's tags, inline
policies and instance profiles.  Route53 records are identified as kops does
(A, AAAA and TXT records api., api.internal., bastion., kops-controller.internal.
and etcd-*. under the cluster name, in the zones the name falls in), and a
record whose target is another cluster's load balancer or instance is never
taken.

Before anything is deleted the cluster's VPC is scanned for what is not the
cluster's (network interfaces, VPC peerings, subnets, security groups,
instances, gateways, endpoints): what they hold is reported by name and left,
instead of being retried until the deadline.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import error_code, paginate, tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import TryAgain
from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import ALREADY_GONE, Resource
from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import each_object
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import queue_name_prefix
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

TAG_CLUSTER = "KubernetesCluster"
TAG_OWNERSHIP = "kubernetes.io/cluster/%s"
OWNED, SHARED = "owned", "shared"

# Error codes that mean the object is not there (any more): its deletion is done.
GONE_CODES = frozenset((
    "InvalidGroup.NotFound", "InvalidSubnetID.NotFound", "InvalidRouteTableID.NotFound", "InvalidVpcID.NotFound",
    "InvalidAllocationID.NotFound", "InvalidInternetGatewayID.NotFound", "InvalidNatGatewayID.NotFound",
    "InvalidNetworkInterfaceID.NotFound", "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateName.NotFoundException",
    "InvalidVolume.NotFound", "InvalidKeyPair.NotFound", "InvalidDhcpOptionID.NotFound", "InvalidDhcpOptionsID.NotFound",
    "InvalidEgressOnlyInternetGatewayId.NotFound", "InvalidInstanceID.NotFound", "NoSuchEntity", "LoadBalancerNotFound",
    "TargetGroupNotFound", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist", "ResourceNotFoundException",
    # A dependency already gone is done too (kops deletes in one pass): AWS drops a deleted subnet's route-table
    # association, a released address's association, a deleted group's rules, a detached gateway's attachment.
    "InvalidAssociationID.NotFound", "InvalidRouteTableAssociationID.NotFound", "InvalidPermission.NotFound",
    "InvalidSecurityGroupRuleId.NotFound", "Gateway.NotAttached", "InvalidAttachmentID.NotFound",
))
# Error codes that mean "not yet" while deleting: something of the cluster still uses the object.
BUSY_CODES = frozenset((
    "DependencyViolation", "VolumeInUse", "DeleteConflict", "InvalidIPAddress.InUse", "ResourceInUse",
    "InvalidNetworkInterface.InUse", "ScalingActivityInProgress", "IncorrectState", "OperationAborted",
    "ResourceContention", "InvalidParameterValue.InUse",
))
# kops' kinds of objects in the order they are listed, with the kinds that must be gone before each.
AFTER = {
    "autoscaling-group": (),
    "instance": ("autoscaling-group",),
    "launch-template": ("autoscaling-group",),
    "keypair": ("autoscaling-group", "instance"),
    "load-balancer": (),
    "classic-load-balancer": (),
    "target-group": ("load-balancer",),
    "nat-gateway": (),
    "elastic-ip": ("nat-gateway", "instance", "autoscaling-group"),
    "network-interface": ("instance", "autoscaling-group", "load-balancer", "classic-load-balancer", "nat-gateway"),
    "volume": ("instance", "autoscaling-group"),
    "security-group": ("instance", "autoscaling-group", "launch-template", "load-balancer", "classic-load-balancer",
                       "network-interface"),
    "internet-gateway": ("instance", "autoscaling-group", "nat-gateway", "elastic-ip", "load-balancer",
                         "classic-load-balancer"),
    "egress-only-internet-gateway": ("instance", "autoscaling-group"),
    "subnet": ("instance", "autoscaling-group", "nat-gateway", "load-balancer", "classic-load-balancer",
               "network-interface"),
    "route-table": ("subnet", "nat-gateway"),
    "vpc": ("subnet", "security-group", "route-table", "internet-gateway", "egress-only-internet-gateway",
            "network-interface", "nat-gateway", "target-group", "elastic-ip"),
    "dhcp-options": ("vpc",),
    "iam-instance-profile": ("instance", "autoscaling-group"),
    "iam-role": ("iam-instance-profile",),
    "oidc-provider": (),
    "eventbridge-rule": (),
    "sqs": ("eventbridge-rule",),
    "route53-record": (),
}


def ownership(cluster_name, tags, strict=False):
    """owned / shared / None for an object with these tags.

    strict: an object tagged only KubernetesCluster=<c> is shared, not owned (kops' HasOwnedTag,
    for the VPC, security groups, route tables and network interfaces)."""
    value = tags.get(TAG_OWNERSHIP % cluster_name)
    if value in (OWNED, SHARED):
        return value
    if tags.get(TAG_CLUSTER) == cluster_name:
        return SHARED if strict else OWNED
    return None


def other_cluster(cluster_name, tags):
    """Whether the tags name another cluster as owner."""
    if tags.get(TAG_CLUSTER) not in (None, cluster_name):
        return True
    return any(k.startswith("kubernetes.io/cluster/") and k != TAG_OWNERSHIP % cluster_name and v == OWNED
               for k, v in tags.items())


def _call(call, **kwargs):
    """call(**kwargs): None when done, ALREADY_GONE when the object was not there; "busy" errors become TryAgain."""
    import botocore.exceptions
    try:
        call(**kwargs)
    except botocore.exceptions.ClientError as exc:
        code = error_code(exc)
        message = ((exc.response.get("Error") or {}).get("Message") or "")
        if code in GONE_CODES or (code == "ValidationError" and "not found" in message.lower()):
            return ALREADY_GONE
        if code in BUSY_CODES:
            raise TryAgain("%s: %s" % (code, message))
        raise
    return None


class Scope(object):
    """What discovery learns along the way: the cluster's name, its spec (None when the store is gone)."""

    def __init__(self, cloud, spec=None):
        self.cloud = cloud
        self.name = cloud.cluster_name
        self.spec = spec
        self.nat_enis = set()
        self.foreign_targets = set()
        self.vpc_items = None   # the cluster's VPCs as described (discover fills it first)
        self.owned_vpc = None   # the id of the one VPC the cluster owns, if so
        self.in_vpc = {}        # describe operation -> every item in owned_vpc, the cluster's and others'

    def described_in_vpc(self, operation, key, extra_filters=()):
        """Every item an EC2 describe lists in the cluster's own VPC, whoever's it is: one call per kind gives
        both the cluster's objects (told apart by their tags) and what else is in the VPC (foreign_in_vpc reads
        them from here instead of asking again)."""
        if operation not in self.in_vpc:
            self.in_vpc[operation] = _describe(self.cloud, operation, key,
                                               [{"Name": "vpc-id", "Values": [self.owned_vpc]}] + list(extra_filters))
        return self.in_vpc[operation]


def _describe(cloud, operation, key, filters, page_size=None):
    api = cloud.ec2
    if api.can_paginate(operation):
        return paginate(api, operation, key, Filters=filters,
                        **({"PaginationConfig": {"PageSize": page_size}} if page_size else {}))
    return getattr(api, operation)(Filters=filters)[key]


# Which tags find a kind's objects (kops' listers: pkg/resources/aws).  Kinds a user may bring (network objects,
# shared with the cluster) or a controller may make with the ownership tag alone (security groups, interfaces) are
# asked by both tags, one call each; the kinds only the cluster's own tasks make, which carry both, by one.
BY_BOTH_TAGS = ("cluster", "ownership")
BY_CLUSTER_TAG = ("cluster",)
BY_OWNERSHIP_TAG = ("ownership",)


def _tag_filters(scope, which, ownership_values=(OWNED, SHARED)):
    filters = {"cluster": {"Name": "tag:" + TAG_CLUSTER, "Values": [scope.name]},
               "ownership": {"Name": "tag:" + TAG_OWNERSHIP % scope.name, "Values": list(ownership_values)}}
    return [filters[name] for name in which]


def tagged_ec2(scope, operation, key, id_key, extra_filters=(), by=BY_BOTH_TAGS, page_size=None):
    """Every item of an EC2 describe tagged for the cluster by the tags `by` names (one call per tag)."""
    found = {}
    for tag_filter in _tag_filters(scope, by):
        for item in _describe(scope.cloud, operation, key, [tag_filter] + list(extra_filters), page_size):
            found[item[id_key]] = item
    return [found[k] for k in sorted(found)]


def _tags_of(item):
    return tag_dict(item.get("Tags") or item.get("TagSet"))


class Kind(object):
    """One kind of object: found by tags, deleted one by one (override delete for a batch call)."""

    name = None
    strict = False

    @property
    def after(self):
        return AFTER[self.name]

    def find(self, scope):
        return []

    def resource(self, scope, object_id, item, tags=None, pending=False):
        tags = _tags_of(item) if tags is None else tags
        owner = ownership(scope.name, tags, self.strict)
        if owner is None:
            return None
        return Resource(self.name, object_id, tags.get("Name", ""), shared=owner == SHARED, data=item, pending=pending)

    def delete(self, cloud, resources):
        return each_object(resources, lambda r: self.delete_one(cloud, r))

    def delete_one(self, cloud, resource):
        raise NotImplementedError

    def untag(self, cloud, resource):
        raise CloudError("%s %s is shared; kubeops.kops cannot remove tags from it" % (self.name, resource.id))


class Ec2Kind(Kind):
    """An EC2 kind found by a describe call and deleted by one call with its id."""

    describe = ("", "", "")     # operation, result key, id key
    delete_call = ("", "")      # operation, id parameter
    by = BY_BOTH_TAGS
    page_size = None
    # Objects that live in a VPC (describe filter vpc-id): when the cluster owns its VPC, listed by it.
    in_vpc = False

    def items(self, scope):
        operation, key, id_key = self.describe
        if self.in_vpc and scope.owned_vpc:
            return sorted(scope.described_in_vpc(operation, key), key=lambda item: item[id_key])
        return tagged_ec2(scope, operation, key, id_key, by=self.by, page_size=self.page_size)

    def find(self, scope):
        id_key = self.describe[2]
        return [r for r in (self.resource(scope, item[id_key], item) for item in self.items(scope)) if r]

    def delete_one(self, cloud, resource):
        operation, parameter = self.delete_call
        return _call(getattr(cloud.ec2, operation), **{parameter: resource.id})

    def untag(self, cloud, resource):
        """Remove the cluster's tags (the ownership tag, and KubernetesCluster when it names this cluster)."""
        tags = _tags_of(resource.data)
        keys = [TAG_OWNERSHIP % cloud.cluster_name] + ([TAG_CLUSTER] if tags.get(TAG_CLUSTER) == cloud.cluster_name else [])
        present = [{"Key": k} for k in keys if k in tags]
        if present:
            cloud.ec2.delete_tags(Resources=[resource.id], Tags=present)


class AutoscalingGroups(Kind):
    name = "autoscaling-group"

    def find(self, scope):
        api = scope.cloud.client("autoscaling")
        found = {}
        # The groups' tags always hold KubernetesCluster (kops' FindAutoscalingGroups asks by it alone).
        for tag_filter in _tag_filters(scope, BY_CLUSTER_TAG):
            for group in paginate(api, "describe_auto_scaling_groups", "AutoScalingGroups", Filters=[tag_filter]):
                found[group["AutoScalingGroupName"]] = group
        resources = []
        for name in sorted(found):
            group = found[name]
            tags = {t["Key"]: t["Value"] for t in group.get("Tags") or []}
            resource = self.resource(scope, name, group, tags, pending=group.get("Status") == "Delete in progress")
            if resource:
                resource.name = name
                resources.append(resource)
        return resources

    def delete_one(self, cloud, resource):
        api = cloud.client("autoscaling")
        if resource.data.get("WarmPoolConfiguration"):
            # The pool's instances go with it; a pool being deleted already is fine.
            if _call(api.delete_warm_pool, AutoScalingGroupName=resource.id, ForceDelete=True) is ALREADY_GONE:
                return ALREADY_GONE
        # ForceDelete terminates the group's instances and drops its lifecycle hooks, as kops does.
        return _call(api.delete_auto_scaling_group, AutoScalingGroupName=resource.id, ForceDelete=True)

    def still_there(self, cloud, resources):
        groups = cloud.client("autoscaling").describe_auto_scaling_groups(
            AutoScalingGroupNames=[r.id for r in resources])["AutoScalingGroups"]
        return {g["AutoScalingGroupName"]: "deleting, %d instance(s) left" % len(g.get("Instances") or [])
                for g in groups}


class Instances(Ec2Kind):
    name = "instance"
    LIVE = ("pending", "running", "stopping", "stopped", "shutting-down")
    by = BY_CLUSTER_TAG  # the groups' tags, propagated to their instances (kops' ListInstances)
    in_vpc = True

    def items(self, scope):
        if scope.owned_vpc:
            return [i for r in scope.described_in_vpc("describe_instances", "Reservations")
                    for i in r.get("Instances") or [] if i["State"]["Name"] in self.LIVE]
        found = {}
        for tag_filter in _tag_filters(scope, self.by, (OWNED,)):
            for reservation in paginate(scope.cloud.ec2, "describe_instances", "Reservations", Filters=[
                    tag_filter, {"Name": "instance-state-name", "Values": list(self.LIVE)}]):
                for instance in reservation.get("Instances") or []:
                    found[instance["InstanceId"]] = instance
        return [found[k] for k in sorted(found)]

    def find(self, scope):
        return [r for r in (self.resource(scope, i["InstanceId"], i, pending=i["State"]["Name"] == "shutting-down")
                            for i in self.items(scope)) if r]

    def delete(self, cloud, resources):
        """One TerminateInstances for all (kops' DeleteInstances); ids already gone are retried one by one."""
        ids = [r.id for r in resources]
        try:
            outcome = _call(cloud.ec2.terminate_instances, InstanceIds=ids)
        except Exception as exc:  # pylint: disable=broad-except
            return {i: exc for i in ids}
        if outcome is ALREADY_GONE and len(ids) > 1:
            return each_object(resources, lambda r: _call(cloud.ec2.terminate_instances, InstanceIds=[r.id]))
        return {i: outcome for i in ids}

    def still_there(self, cloud, resources):
        still = {}
        for reservation in paginate(cloud.ec2, "describe_instances", "Reservations",
                                    InstanceIds=[r.id for r in resources]):
            for instance in reservation.get("Instances") or []:
                if instance["State"]["Name"] != "terminated":
                    still[instance["InstanceId"]] = instance["State"]["Name"]
        return still


class LaunchTemplates(Ec2Kind):
    name = "launch-template"
    describe = ("describe_launch_templates", "LaunchTemplates", "LaunchTemplateId")
    delete_call = ("delete_launch_template", "LaunchTemplateId")
    by = BY_OWNERSHIP_TAG  # kops' FindAutoScalingLaunchTemplates
    page_size = 200  # the most a page holds (moto, unasked, answers its first 15 with no NextToken)

    def resource(self, scope, object_id, item, tags=None, pending=False):
        resource = Ec2Kind.resource(self, scope, object_id, item, tags, pending)
        if resource:
            resource.name = item.get("LaunchTemplateName") or resource.name
        return resource


class KeyPairs(Ec2Kind):
    name = "keypair"
    describe = ("describe_key_pairs", "KeyPairs", "KeyPairId")
    by = BY_CLUSTER_TAG

    def delete_one(self, cloud, resource):
        # By name: every EC2 implementation takes KeyName (moto ignores KeyPairId).
        return _call(cloud.ec2.delete_key_pair, KeyName=resource.name)

    def resource(self, scope, object_id, item, tags=None, pending=False):
        resource = Ec2Kind.resource(self, scope, object_id, item, tags, pending)
        if resource:
            resource.name = item.get("KeyName") or resource.name
        return resource


class SecurityGroups(Ec2Kind):
    name = "security-group"
    strict = True
    describe = ("describe_security_groups", "SecurityGroups", "GroupId")
    delete_call = ("delete_security_group", "GroupId")
    in_vpc = True

    def delete_one(self, cloud, resource):
        """Revoke the rules that name other groups (and all ingress, as kops does) first: groups of one
        cluster refer to each other, and a group someone's rule names cannot be deleted."""
        import botocore.exceptions
        try:
            rules = paginate(cloud.ec2, "describe_security_group_rules", "SecurityGroupRules",
                             Filters=[{"Name": "group-id", "Values": [resource.id]}])
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in GONE_CODES:
                return ALREADY_GONE
            raise
        ingress = [r["SecurityGroupRuleId"] for r in rules if not r.get("IsEgress")]
        egress = [r["SecurityGroupRuleId"] for r in rules if r.get("IsEgress") and r.get("ReferencedGroupInfo")]
        if ingress:
            _call(cloud.ec2.revoke_security_group_ingress, GroupId=resource.id, SecurityGroupRuleIds=ingress)
        if egress:
            _call(cloud.ec2.revoke_security_group_egress, GroupId=resource.id, SecurityGroupRuleIds=egress)
        return Ec2Kind.delete_one(self, cloud, resource)

    def find(self, scope):
        return [r for r in Ec2Kind.find(self, scope) if r.data.get("GroupName") != "default"]


class Volumes(Ec2Kind):
    name = "volume"
    describe = ("describe_volumes", "Volumes", "VolumeId")
    delete_call = ("delete_volume", "VolumeId")
    by = BY_CLUSTER_TAG  # kops' ListVolumes; the EBS CSI driver's volumes carry it too (kops' --extra-tags)


class DhcpOptions(Ec2Kind):
    name = "dhcp-options"
    describe = ("describe_dhcp_options", "DhcpOptions", "DhcpOptionsId")
    delete_call = ("delete_dhcp_options", "DhcpOptionsId")
    by = BY_CLUSTER_TAG


class InternetGateways(Ec2Kind):
    name = "internet-gateway"
    describe = ("describe_internet_gateways", "InternetGateways", "InternetGatewayId")
    delete_call = ("delete_internet_gateway", "InternetGatewayId")

    def delete_one(self, cloud, resource):
        for attachment in resource.data.get("Attachments") or []:
            if _call(cloud.ec2.detach_internet_gateway, InternetGatewayId=resource.id,
                     VpcId=attachment["VpcId"]) is ALREADY_GONE:
                continue
        return Ec2Kind.delete_one(self, cloud, resource)


class EgressOnlyInternetGateways(Ec2Kind):
    name = "egress-only-internet-gateway"
    describe = ("describe_egress_only_internet_gateways", "EgressOnlyInternetGateways", "EgressOnlyInternetGatewayId")
    delete_call = ("delete_egress_only_internet_gateway", "EgressOnlyInternetGatewayId")
    by = BY_CLUSTER_TAG


class NatGateways(Ec2Kind):
    name = "nat-gateway"
    describe = ("describe_nat_gateways", "NatGateways", "NatGatewayId")
    delete_call = ("delete_nat_gateway", "NatGatewayId")
    in_vpc = True

    def find(self, scope):
        resources = []
        for item in self.items(scope):
            resource = self.resource(scope, item["NatGatewayId"], item, pending=item.get("State") == "deleting")
            if resource is None:
                continue
            # A deleted gateway stays listed for about an hour; its interface may linger as long.
            scope.nat_enis.update(a.get("NetworkInterfaceId") for a in item.get("NatGatewayAddresses") or [])
            if item.get("State") not in ("deleted", "failed"):
                resources.append(resource)
        return resources

    def still_there(self, cloud, resources):
        gateways = cloud.ec2.describe_nat_gateways(NatGatewayIds=[r.id for r in resources])["NatGateways"]
        return {g["NatGatewayId"]: g.get("State") for g in gateways if g.get("State") not in ("deleted", "failed")}


class ElasticIPs(Ec2Kind):
    name = "elastic-ip"
    describe = ("describe_addresses", "Addresses", "AllocationId")

    def resource(self, scope, object_id, item, tags=None, pending=False):
        resource = Ec2Kind.resource(self, scope, object_id, item, tags, pending)
        if resource:
            resource.name = resource.name or item.get("PublicIp", "")
        return resource

    def delete_one(self, cloud, resource):
        association = resource.data.get("AssociationId")
        if association and resource.data.get("NetworkInterfaceId") not in (resource.data.get("nat_enis") or ()):
            _call(cloud.ec2.disassociate_address, AssociationId=association)
        return _call(cloud.ec2.release_address, AllocationId=resource.id)


class RouteTables(Ec2Kind):
    name = "route-table"
    strict = True
    describe = ("describe_route_tables", "RouteTables", "RouteTableId")
    delete_call = ("delete_route_table", "RouteTableId")
    in_vpc = True

    def find(self, scope):
        return [r for r in Ec2Kind.find(self, scope)
                if not any(a.get("Main") for a in r.data.get("Associations") or [])]

    def delete_one(self, cloud, resource):
        # AWS drops a deleted subnet's association, and the cluster's own subnets are gone before their tables
        # (AFTER); a subnet the cluster only shares, or one someone associated by hand, keeps it: disassociated.
        deleted = set(resource.data.get("own_subnets") or ())
        for association in resource.data.get("Associations") or []:
            if not association.get("Main") and association.get("SubnetId") not in deleted:
                _call(cloud.ec2.disassociate_route_table, AssociationId=association["RouteTableAssociationId"])
        return Ec2Kind.delete_one(self, cloud, resource)


class Subnets(Ec2Kind):
    name = "subnet"
    describe = ("describe_subnets", "Subnets", "SubnetId")
    delete_call = ("delete_subnet", "SubnetId")
    in_vpc = True


class NetworkInterfaces(Ec2Kind):
    name = "network-interface"
    strict = True
    describe = ("describe_network_interfaces", "NetworkInterfaces", "NetworkInterfaceId")
    delete_call = ("delete_network_interface", "NetworkInterfaceId")
    in_vpc = True


class Vpcs(Ec2Kind):
    name = "vpc"
    strict = True
    describe = ("describe_vpcs", "Vpcs", "VpcId")
    delete_call = ("delete_vpc", "VpcId")

    def items(self, scope):
        return scope.vpc_items if scope.vpc_items is not None else Ec2Kind.items(self, scope)

    def holders(self, cloud, resource, resources):
        return foreign_in_vpc(cloud, resource.id, resources, resource.data.get("nat_enis") or ()).get(resource.key, [])


def _elb_tags(api, names, key, chunk=20):
    """{name or arn: tags} from DescribeTags, 20 at a time (its limit)."""
    tags = {}
    for start in range(0, len(names), chunk):
        batch = names[start:start + chunk]
        if key == "ResourceArns":
            described = api.describe_tags(ResourceArns=batch)["TagDescriptions"]
            tags.update({d["ResourceArn"]: tag_dict(d.get("Tags")) for d in described})
        else:
            described = api.describe_tags(LoadBalancerNames=batch)["TagDescriptions"]
            tags.update({d["LoadBalancerName"]: tag_dict(d.get("Tags")) for d in described})
    return tags


class LoadBalancers(Kind):
    """Network (and application) load balancers: all listed, then their tags 20 at a time."""

    name = "load-balancer"
    # (client, list operation, result key, id key, tag-call parameter, delete parameter)
    API = ("elbv2", "describe_load_balancers", "LoadBalancers", "LoadBalancerArn", "ResourceArns", "LoadBalancerArn")

    def find(self, scope):
        service, operation, key, id_key, tag_parameter, _delete = self.API
        api = scope.cloud.client(service)
        balancers = paginate(api, operation, key)
        tags = _elb_tags(api, [b[id_key] for b in balancers], tag_parameter)
        resources = []
        for balancer in balancers:
            balancer_tags = tags.get(balancer[id_key], {})
            if other_cluster(scope.name, balancer_tags):
                scope.foreign_targets.add(_dns(balancer.get("DNSName")))
            resource = self.resource(scope, balancer[id_key], balancer, balancer_tags)
            if resource and not resource.shared:
                resource.name = balancer["LoadBalancerName"]
                resources.append(resource)
        return resources

    def delete_one(self, cloud, resource):
        service, _operation, _key, _id, _tags, parameter = self.API
        return _call(cloud.client(service).delete_load_balancer, **{parameter: resource.id})


class ClassicLoadBalancers(LoadBalancers):
    """Classic load balancers (kops built them before 1.37): the same walk on the elb API, keyed by name."""

    name = "classic-load-balancer"
    API = ("elb", "describe_load_balancers", "LoadBalancerDescriptions", "LoadBalancerName", "LoadBalancerNames",
           "LoadBalancerName")


class TargetGroups(Kind):
    name = "target-group"

    def find(self, scope):
        api = scope.cloud.client("elbv2")
        groups = paginate(api, "describe_target_groups", "TargetGroups")
        tags = _elb_tags(api, [g["TargetGroupArn"] for g in groups], "ResourceArns")
        resources = []
        for group in groups:
            resource = self.resource(scope, group["TargetGroupArn"], group, tags.get(group["TargetGroupArn"], {}))
            if resource and not resource.shared:
                resource.name = group["TargetGroupName"]
                resources.append(resource)
        return resources

    def delete_one(self, cloud, resource):
        return _call(cloud.client("elbv2").delete_target_group, TargetGroupArn=resource.id)


class IamKind(Kind):
    """IAM objects count as the cluster's only with kubernetes.io/cluster/<c>=owned (kops' ListIAMRoles)."""

    def owned(self, scope, tags):
        return tag_dict(tags).get(TAG_OWNERSHIP % scope.name) == OWNED


def _role_details(scope):
    """Every role with its tags, inline policies, attached policies and instance profiles: one walk."""
    if not hasattr(scope, "roles"):
        scope.roles = paginate(scope.cloud.client("iam"), "get_account_authorization_details", "RoleDetailList",
                               Filter=["Role"])
    return scope.roles


class InstanceProfiles(IamKind):
    name = "iam-instance-profile"

    def find(self, scope):
        api = scope.cloud.client("iam")
        found = {}
        for role in _role_details(scope):
            for profile in role.get("InstanceProfileList") or []:
                if self.owned(scope, profile.get("Tags")):
                    found[profile["InstanceProfileName"]] = profile
        # A profile whose role was already removed (an interrupted delete) is in no role's list.
        for profile in paginate(api, "list_instance_profiles", "InstanceProfiles"):
            if profile.get("Roles") or profile["InstanceProfileName"] in found:
                continue
            try:
                tags = api.get_instance_profile(InstanceProfileName=profile["InstanceProfileName"])[
                    "InstanceProfile"].get("Tags")
            except Exception as exc:  # pylint: disable=broad-except
                if error_code(exc) == "NoSuchEntity":
                    continue
                raise
            if self.owned(scope, tags):
                found[profile["InstanceProfileName"]] = profile
        return [Resource(self.name, name, name, data=found[name]) for name in sorted(found)]

    def delete_one(self, cloud, resource):
        api = cloud.client("iam")
        try:
            profile = api.get_instance_profile(InstanceProfileName=resource.id)["InstanceProfile"]
        except Exception as exc:  # pylint: disable=broad-except
            if error_code(exc) == "NoSuchEntity":
                return ALREADY_GONE
            raise
        for role in profile.get("Roles") or []:
            _call(api.remove_role_from_instance_profile, InstanceProfileName=resource.id, RoleName=role["RoleName"])
        return _call(api.delete_instance_profile, InstanceProfileName=resource.id)


class Roles(IamKind):
    name = "iam-role"

    def find(self, scope):
        return [Resource(self.name, role["RoleName"], role["RoleName"], data=role)
                for role in sorted(_role_details(scope), key=lambda r: r["RoleName"])
                if self.owned(scope, role.get("Tags"))]

    def delete_one(self, cloud, resource):
        """Inline policies, then attached policies, then the role (kops' DeleteIAMRole)."""
        api = cloud.client("iam")
        try:
            policies = paginate(api, "list_role_policies", "PolicyNames", RoleName=resource.id)
            attached = paginate(api, "list_attached_role_policies", "AttachedPolicies", RoleName=resource.id)
        except Exception as exc:  # pylint: disable=broad-except
            if error_code(exc) == "NoSuchEntity":
                return ALREADY_GONE
            raise
        for policy in policies:
            _call(api.delete_role_policy, RoleName=resource.id, PolicyName=policy)
        for policy in attached:
            _call(api.detach_role_policy, RoleName=resource.id, PolicyArn=policy["PolicyArn"])
        return _call(api.delete_role, RoleName=resource.id)


class OidcProviders(IamKind):
    name = "oidc-provider"

    def find(self, scope):
        api = scope.cloud.client("iam")
        resources = []
        for provider in api.list_open_id_connect_providers().get("OpenIDConnectProviderList") or []:
            arn = provider["Arn"]
            tags = paginate(api, "list_open_id_connect_provider_tags", "Tags", OpenIDConnectProviderArn=arn)
            if ownership(scope.name, tag_dict(tags)) == OWNED:
                resources.append(Resource(self.name, arn, arn.rsplit("/", 1)[-1], data=provider))
        return resources

    def delete_one(self, cloud, resource):
        return _call(cloud.client("iam").delete_open_id_connect_provider, OpenIDConnectProviderArn=resource.id)


class Queues(Kind):
    """SQS queues: listed by the prefix the cluster's queue names carry (kops' ListSQSQueues), kept by tag."""

    name = "sqs"

    def find(self, scope):
        api = scope.cloud.client("sqs")
        urls = api.list_queues(QueueNamePrefix=queue_name_prefix(scope.name)).get("QueueUrls") or []
        resources = []
        for url in urls:
            try:
                tags = api.list_queue_tags(QueueUrl=url).get("Tags") or {}
            except Exception as exc:  # pylint: disable=broad-except
                if error_code(exc) in GONE_CODES:
                    continue
                raise
            if ownership(scope.name, tags) == OWNED:
                resources.append(Resource(self.name, url, url.rsplit("/", 1)[-1]))
        return resources

    def delete_one(self, cloud, resource):
        return _call(cloud.client("sqs").delete_queue, QueueUrl=resource.id)


class EventRules(Kind):
    """EventBridge rules: listed by the cluster-name prefix of their names (kops' ListEventBridgeRules), kept by tag."""

    name = "eventbridge-rule"

    def find(self, scope):
        api = scope.cloud.client("events")
        resources = []
        for rule in paginate(api, "list_rules", "Rules", NamePrefix=scope.name):
            tags = api.list_tags_for_resource(ResourceARN=rule["Arn"]).get("Tags") or []
            if ownership(scope.name, tag_dict(tags)) == OWNED:
                resources.append(Resource(self.name, rule["Name"], rule["Name"], data=rule))
        return resources

    def delete_one(self, cloud, resource):
        api = cloud.client("events")
        try:
            targets = paginate(api, "list_targets_by_rule", "Targets", Rule=resource.id)
        except Exception as exc:  # pylint: disable=broad-except
            if error_code(exc) in GONE_CODES:
                return ALREADY_GONE
            raise
        if targets:
            api.remove_targets(Rule=resource.id, Ids=[t["Id"] for t in targets])
        return _call(api.delete_rule, Name=resource.id)


def _dns(name):
    return (name or "").rstrip(".").lower()


# Record names kops' ListRoute53Records takes: <prefix>.<cluster> for these prefixes, and etcd-*.
DNS_PREFIXES = ("api", "api.internal", "bastion", "kops-controller.internal")
ETCD_NAME = re.compile(r"^etcd-[^.]+$")


def cluster_record(cluster_name, record):
    """Whether a record set is one kops creates for the cluster (by name and type, as kops decides)."""
    if record.get("Type") not in ("A", "AAAA", "TXT"):
        return False
    name = _dns(record.get("Name")).replace("\\052", "*")
    suffix = "." + _dns(cluster_name)
    if not name.endswith(suffix):
        return False
    prefix = name[:-len(suffix)]
    if record["Type"] == "TXT" and prefix.startswith("aaaa-"):
        prefix = prefix[len("aaaa-"):]  # the ownership record of an AAAA record (external-dns' registry)
    return prefix in DNS_PREFIXES or bool(ETCD_NAME.match(prefix))


class DnsRecords(Kind):
    """The cluster's records in the hosted zones its name falls in; deleted per zone in one change batch."""

    name = "route53-record"

    def find(self, scope):
        if scope.spec is not None and not publishes_dns(scope.name, scope.spec):
            return []
        api = scope.cloud.client("route53")
        wanted = "." + _dns(scope.name)
        resources = []
        foreign = scope.foreign_targets | _foreign_instance_addresses(scope)
        for zone in paginate(api, "list_hosted_zones", "HostedZones"):
            if not wanted.endswith("." + _dns(zone["Name"])):
                continue
            for record in paginate(api, "list_resource_record_sets", "ResourceRecordSets", HostedZoneId=zone["Id"]):
                if not cluster_record(scope.name, record):
                    continue
                targets = {_dns((record.get("AliasTarget") or {}).get("DNSName"))} | {
                    r["Value"] for r in record.get("ResourceRecords") or []}
                if targets & foreign:
                    continue  # it points at another cluster's balancer or instance: that cluster's record
                record_id = "%s/%s/%s" % (zone["Id"].rsplit("/", 1)[-1], record["Type"], _dns(record["Name"]))
                resources.append(Resource(self.name, record_id, _dns(record["Name"]),
                                          data={"zone": zone["Id"], "record": record}))
        return resources

    def delete(self, cloud, resources):
        """One ChangeResourceRecordSets per zone (kops' group deleter)."""
        api = cloud.client("route53")
        by_zone = {}
        for resource in resources:
            by_zone.setdefault(resource.data["zone"], []).append(resource)
        results = {}
        for zone, records in by_zone.items():
            changes = [{"Action": "DELETE", "ResourceRecordSet": r.data["record"]} for r in records]
            try:
                api.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": changes})
                results.update({r.id: None for r in records})
            except Exception as exc:  # a record already gone fails the batch: one by one then; pylint: disable=broad-except
                if error_code(exc) != "InvalidChangeBatch":
                    results.update({r.id: exc for r in records})
                    continue
                for record in records:
                    try:
                        api.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [
                            {"Action": "DELETE", "ResourceRecordSet": record.data["record"]}]})
                        results[record.id] = None
                    except Exception as one:  # pylint: disable=broad-except
                        results[record.id] = ALREADY_GONE if error_code(one) == "InvalidChangeBatch" else one
        return results


def publishes_dns(cluster_name, spec):
    """kops' PublishesDNSRecords: not gossip (.k8s.local) and DNS not None."""
    if cluster_name.endswith(".k8s.local"):
        return False
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") != "None"


def _foreign_instance_addresses(scope):
    """Addresses of instances another cluster owns (a record pointing at them is not ours)."""
    addresses = set()
    for reservation in paginate(scope.cloud.ec2, "describe_instances", "Reservations",
                                Filters=[{"Name": "tag-key", "Values": [TAG_CLUSTER]}]):
        for instance in reservation.get("Instances") or []:
            if other_cluster(scope.name, _tags_of(instance)):
                addresses.update(a for a in (instance.get("PrivateIpAddress"), instance.get("PublicIpAddress")) if a)
    return addresses


# The kinds, in kops' listing order.
KINDS = [AutoscalingGroups(), Instances(), LaunchTemplates(), KeyPairs(), SecurityGroups(), Volumes(), DhcpOptions(),
         InternetGateways(), EgressOnlyInternetGateways(), NatGateways(), ElasticIPs(), RouteTables(), Subnets(),
         NetworkInterfaces(), LoadBalancers(), ClassicLoadBalancers(), TargetGroups(), InstanceProfiles(), Roles(),
         OidcProviders(), Queues(), EventRules(), DnsRecords(), Vpcs()]
KINDS_BY_NAME = {k.name: k for k in KINDS}


def cloud(cluster_name, region, profile=None, spec=None):  # spec: what GCE needs (its project); pylint: disable=unused-argument
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
    if not region:
        raise CloudError("region is needed to find the cluster's AWS objects",
                         fix="give the region option, or keep the cluster in the state store (its zones name the "
                             "region)")
    return AwsCloud(cluster_name, region, profile=profile)


# What something running in the cluster may make while a delete runs (the cloud controller's and load balancer
# controller's balancers, groups and interfaces, the CSI driver's volumes, dns-controller's records), and of those
# the kinds outside any VPC: once the delete removed the cluster's VPC, none of the others can be left.
MADE_BY_CONTROLLERS = ("instance", "volume", "load-balancer", "classic-load-balancer", "target-group", "security-group",
                       "network-interface", "route53-record")
OUTSIDE_THE_VPC = ("volume", "route53-record")


def rediscover(aws_cloud, spec, handled):
    """What a delete pass leaves to look for again (deletion._delete): the kinds the cluster's controllers make,
    only those outside the VPC when this pass deleted the cluster's own VPC (handled: the pass's reports).  The
    first discovery saw everything else, and the cluster's own runs are refused while the delete holds it."""
    vpc_gone = any(entry["kind"] == "vpc" and not entry["shared"] and entry["result"] in ("deleted", "already gone")
                   for entry in handled)
    return discover(aws_cloud, spec, kinds=OUTSIDE_THE_VPC if vpc_gone else MADE_BY_CONTROLLERS)


def discover(aws_cloud, spec=None, kinds=None):
    """Every object the cluster owns or shares (of the named kinds, or all), with what outside the cluster holds
    any of them."""
    scope = Scope(aws_cloud, spec)
    if kinds is None or "vpc" in kinds:
        # The VPC first: when the cluster owns it, the kinds inside it are listed by it (Scope.described_in_vpc).
        scope.vpc_items = KINDS_BY_NAME["vpc"].items(scope)
        owned = [v["VpcId"] for v in scope.vpc_items if ownership(scope.name, _tags_of(v), True) == OWNED]
        scope.owned_vpc = owned[0] if len(owned) == 1 else None
    resources = []
    for kind in KINDS:
        if kinds is None or kind.name in kinds:
            resources.extend(kind.find(scope))
    own_subnets = sorted(r.id for r in resources if r.kind == "subnet" and not r.shared)
    for resource in resources:
        if resource.kind in ("elastic-ip", "vpc"):
            resource.data["nat_enis"] = sorted(scope.nat_enis - {None})
        if resource.kind == "route-table":
            resource.data["own_subnets"] = own_subnets
    owned_vpcs = [r for r in resources if r.kind == "vpc" and not r.shared]
    scan = {}
    for vpc in owned_vpcs:
        listed = scope.in_vpc if vpc.id == scope.owned_vpc else {}
        for key, holders in foreign_in_vpc(aws_cloud, vpc.id, resources, scope.nat_enis, listed).items():
            scan.setdefault(key, []).extend(holders)
    for resource in resources:
        resource.held_by = scan.get(resource.key, [])
    return resources


def any_owned(aws_cloud):
    """The first object found that the cluster owns, or None: the cheap check before a store is removed."""
    scope = Scope(aws_cloud)
    for kind in (KINDS_BY_NAME["vpc"], KINDS_BY_NAME["security-group"], KINDS_BY_NAME["instance"],
                 KINDS_BY_NAME["autoscaling-group"]):
        for resource in kind.find(scope):
            if not resource.shared:
                return resource
    return None


def _eni_is_ours(eni, ours, nat_enis):
    attachment = eni.get("Attachment") or {}
    if eni["NetworkInterfaceId"] in ours["network-interface"] | nat_enis:
        return True
    if attachment.get("InstanceId") in ours["instance"]:
        return True
    description = eni.get("Description") or ""
    if any(n in description for n in ours["nat-gateway"]):
        return True
    match = re.match(r"^ELB (?:net/|app/)?([^/]+)", description)
    return bool(match and match.group(1) in ours["balancer-names"])


def foreign_in_vpc(aws_cloud, vpc_id, resources, nat_enis=frozenset(), listed=None):
    """{resource key: [what holds it]} for what in the VPC is not the cluster's.

    A foreign network interface holds the VPC, and its subnet and security groups when they are the
    cluster's; a peering, a VPN gateway or an endpoint holds the VPC; a foreign subnet, security
    group, instance or internet gateway in the VPC holds the VPC.
    """
    ec2 = aws_cloud.ec2
    ours = {kind: set() for kind in AFTER}
    ours["balancer-names"] = set()
    for resource in resources:
        ours[resource.kind].add(resource.id)
        if resource.kind in ("load-balancer", "classic-load-balancer"):
            ours["balancer-names"].add(resource.name)
    vpc_key = "vpc:" + vpc_id
    held = {}

    def hold(key, text):
        held.setdefault(key, [])
        if text not in held[key]:
            held[key].append(text)

    in_vpc = [{"Name": "vpc-id", "Values": [vpc_id]}]
    listed = listed or {}

    def described(operation, key):
        """What discovery listed in this VPC already (Scope.in_vpc), else one describe by vpc-id."""
        return listed[operation] if operation in listed else _describe(aws_cloud, operation, key, in_vpc)

    dead_or_ours = set()
    for reservation in described("describe_instances", "Reservations"):
        for instance in reservation.get("Instances") or []:
            if instance["InstanceId"] in ours["instance"]:
                continue
            if instance["State"]["Name"] not in Instances.LIVE or ownership(
                    aws_cloud.cluster_name, _tags_of(instance)) == OWNED:
                # Gone or going (an interrupted run terminated it), or the cluster's: its interfaces go with it.
                dead_or_ours.add(instance["InstanceId"])
            else:
                hold(vpc_key, "instance %s" % instance["InstanceId"])
    for eni in described("describe_network_interfaces", "NetworkInterfaces"):
        if _eni_is_ours(eni, ours, set(nat_enis)) or (eni.get("Attachment") or {}).get("InstanceId") in dead_or_ours:
            continue
        attachment = eni.get("Attachment") or {}
        what = "network interface %s (%s%s%s)" % (
            eni["NetworkInterfaceId"], eni.get("Description") or eni.get("InterfaceType") or "no description",
            ", attached to %s" % attachment["InstanceId"] if attachment.get("InstanceId") else "",
            ", in %s" % eni["SubnetId"] if eni.get("SubnetId") else "")
        hold(vpc_key, what)
        if eni.get("SubnetId") in ours["subnet"]:
            hold("subnet:" + eni["SubnetId"], what)
        for group in eni.get("Groups") or []:
            if group["GroupId"] in ours["security-group"]:
                hold("security-group:" + group["GroupId"], what)
    # The region's peerings in one listing (filters on the two sides would be ANDed), told apart here.
    for peering in paginate(ec2, "describe_vpc_peering_connections", "VpcPeeringConnections"):
        if (peering.get("Status") or {}).get("Code") in ("deleted", "rejected", "failed", "expired", "deleting"):
            continue
        sides = {side: (peering.get(side) or {}).get("VpcId") for side in ("RequesterVpcInfo", "AccepterVpcInfo")}
        if vpc_id in sides.values():
            other = sides["AccepterVpcInfo"] if sides["RequesterVpcInfo"] == vpc_id else sides["RequesterVpcInfo"]
            hold(vpc_key, "VPC peering %s (with %s)" % (peering["VpcPeeringConnectionId"], other))
    checks = (("describe_subnets", "Subnets", "SubnetId", "subnet", "subnet"),
              ("describe_security_groups", "SecurityGroups", "GroupId", "security-group", "security group"),
              ("describe_vpc_endpoints", "VpcEndpoints", "VpcEndpointId", None, "VPC endpoint"))
    for operation, key, id_key, kind, label in checks:
        for item in described(operation, key):
            if kind and item[id_key] in ours[kind]:
                continue
            if operation == "describe_security_groups" and item.get("GroupName") == "default":
                continue
            name = _tags_of(item).get("Name")
            hold(vpc_key, "%s %s%s" % (label, item[id_key], " (%s)" % name if name else ""))
    attached = [{"Name": "attachment.vpc-id", "Values": [vpc_id]}]
    for gateway in _describe(aws_cloud, "describe_internet_gateways", "InternetGateways", attached):
        if gateway["InternetGatewayId"] not in ours["internet-gateway"]:
            hold(vpc_key, "internet gateway %s (not tagged for the cluster)" % gateway["InternetGatewayId"])
    for gateway in ec2.describe_vpn_gateways(Filters=attached).get("VpnGateways") or []:
        if any(a.get("State") in ("attaching", "attached") for a in gateway.get("VpcAttachments") or []):
            hold(vpc_key, "VPN gateway %s" % gateway["VpnGatewayId"])
    return held
