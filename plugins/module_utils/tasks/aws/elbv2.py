# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Network load balancers, target groups and listeners (elbv2).

One table of Fields per kind (engine/task.Field): the create call, the read-back,
the comparison and CloudFormation derive from it; the Terraform bodies keep
kops' layout.  Attributes set by a second call after create (a balancer's
cross-zone load balancing, a target group's deregistration delay and connection
termination) are read back with Describe*Attributes and compared like the rest,
so a run cut off between the two calls leaves drift the next run fixes.

Balancers and target groups are found by name in one paginated describe per
kind and run (AwsCloud.lookup).  Their names are derived from the cluster name
with dots as dashes (a.example.com and a-example.com share them), so an object
found by name must carry this cluster's ownership tags (read for all of them
in one Resource Groups Tagging API call, AwsCloud.tags_of; DescribeTags for an
object it does not list): another cluster's is an error naming it, never adopted.
Listeners are found per balancer (one DescribeListeners per balancer and run).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import (
    ApiField, ComparedTask, _same_where_set, not_owned, own_tags)
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Task

CROSS_ZONE = "load_balancing.cross_zone.enabled"
DEREGISTRATION_DELAY = "deregistration_delay.timeout_seconds"
CONNECTION_TERMINATION = "deregistration_delay.connection_termination.enabled"


def _elbv2(cloud):
    return cloud.client("elbv2")


def _tags_of(cloud, arn):
    """An elbv2 object's tags: from the run's one tagging-API call (AwsCloud.tags_of), else one DescribeTags."""
    return cloud.lookup("elbv2-tags:" + arn, lambda: cloud.tags_of(arn, lambda: (
        _elbv2(cloud).describe_tags(ResourceArns=[arn])["TagDescriptions"] or [{}])[0].get("Tags") or []))


def _owned(cloud, arn):
    """The object's tags; an object without this cluster's ownership tags is an error (never adopted)."""
    tags = _tags_of(cloud, arn)
    if not cloud.owns(own_tags(tags)):
        raise not_owned(cloud, arn)
    return tags


def _attributes(items):
    return {a["Key"]: a["Value"] for a in items or []}


def _update_tags(cloud, arn, changes, wanted):
    if "tags" not in changes:
        return
    have = changes["tags"][0] or {}
    _elbv2(cloud).add_tags(ResourceArns=[arn], Tags=tag_list(wanted))
    extra = sorted(set(have) - set(wanted))
    if extra:
        _elbv2(cloud).remove_tags(ResourceArns=[arn], TagKeys=extra)
    cloud.forget("elbv2-tags:" + arn)
    cloud.forget_tags(arn)


def _bool_text(value):
    return str(bool(value)).lower()


def _subnet_ids(mappings):
    """Subnet mappings (the API's SubnetMappings or a describe's AvailabilityZones) as sorted subnet ids."""
    return sorted(m.get("SubnetId") for m in mappings or [])


ACCESS_LOG_KEYS = (("enabled", "access_logs.s3.enabled"), ("bucket", "access_logs.s3.bucket"),
                   ("prefix", "access_logs.s3.prefix"))


def _access_log_attributes(logs):
    """access_logs {bucket, prefix} as the load balancer's attributes; None: logging off."""
    logs = logs or {}
    return {"access_logs.s3.enabled": _bool_text(bool(logs.get("bucket"))),
            "access_logs.s3.bucket": logs.get("bucket") or "", "access_logs.s3.prefix": logs.get("prefix") or ""}


def _access_logs(attributes):
    """The attributes' access logs as the model writes them ({bucket, enabled, prefix when set}), None when off."""
    attributes = attributes or {}
    if attributes.get("access_logs.s3.enabled") != "true":
        return None
    logs = {"bucket": attributes.get("access_logs.s3.bucket"), "enabled": True}
    if attributes.get("access_logs.s3.prefix"):
        logs["prefix"] = attributes["access_logs.s3.prefix"]
    return logs


def _subnet_mapping_api(mappings):
    """The model's subnet_mapping as SubnetMappings: the subnet, and the Elastic IP or private address kops
    pins for it (spec.api.loadBalancer.subnets[].allocationId / privateIPv4Address)."""
    keys = (("subnet_id", "SubnetId"), ("allocation_id", "AllocationId"), ("private_ipv4_address", "PrivateIPv4Address"))
    return [{api: m[name] for name, api in keys if m.get(name)} for m in mappings]


def _scheme(internal):
    return "internal" if internal else "internet-facing"


TAGS = ApiField("tags", api="Tags", read="Tags", to_api=tag_list, from_api=own_tags, mutable=True)


# -- load balancers --------------------------------------------------------------------------------

class LoadBalancer(ComparedTask):
    """aws_lb, a network load balancer; cross-zone load balancing is an attribute set after create."""

    kind = "aws_lb"
    cloudformation_type = "AWS::ElasticLoadBalancingV2::LoadBalancer"
    lookup_keys = ("aws_lb",)
    FIELDS = (
        ApiField("name", api="Name", read="LoadBalancerName", cfn="Name", compare=False),
        ApiField("load_balancer_type", api="Type", read="Type", cfn="Type"),
        ApiField("internal", api="Scheme", read="Scheme", cfn="Scheme", to_api=_scheme,
                 from_api=lambda v: None if v is None else v == "internal"),
        ApiField("subnet_mapping", api="SubnetMappings", read="AvailabilityZones", cfn="SubnetMappings",
                 to_api=_subnet_mapping_api, from_api=_subnet_ids, mutable=True, block=True),
        ApiField("security_groups", api="SecurityGroups", read="SecurityGroups", cfn="SecurityGroups",
                 to_api=list, from_api=lambda v: sorted(v or []), mutable=True),
        # Unset is IPv4 (what the API reports for it).
        ApiField("ip_address_type", api="IpAddressType", read="IpAddressType", cfn="IpAddressType",
                 from_api=lambda v: None if v in (None, "ipv4") else v, mutable=True),
        # Second call after create (ModifyLoadBalancerAttributes).
        ApiField("enable_cross_zone_load_balancing", read='Attributes."%s"' % CROSS_ZONE, to_api=_bool_text,
                 from_api=lambda v: v == "true", mutable=True),
        # spec.api.loadBalancer.accessLog: attributes too.
        ApiField("access_logs", read="Attributes", to_api=_access_log_attributes, from_api=_access_logs, mutable=True,
                 block=True),
        TAGS,
    )

    def find(self, cloud):
        balancers = cloud.lookup(self.kind, lambda: paginate(_elbv2(cloud), "describe_load_balancers", "LoadBalancers"))
        for balancer in balancers:
            if balancer["LoadBalancerName"] == self.fields["name"]:
                arn = balancer["LoadBalancerArn"]
                tags = _owned(cloud, arn)
                self.outputs.update(id=arn, arn=arn, dns_name=balancer.get("DNSName"),
                                    zone_id=balancer.get("CanonicalHostedZoneId"))
                attributes = _elbv2(cloud).describe_load_balancer_attributes(LoadBalancerArn=arn)["Attributes"]
                return self.read_actual(dict(balancer, Tags=tags, Attributes=_attributes(attributes)))
        return None

    def create(self, cloud):
        desired = self.desired()
        response = self.create_named(cloud, "elbv2", "create_load_balancer", **self.create_args(desired))
        if response is None:
            return  # made by a try whose answer was lost: found, its attributes brought in line
        created = response["LoadBalancers"][0]
        self.outputs.update(id=created["LoadBalancerArn"], arn=created["LoadBalancerArn"], dns_name=created.get("DNSName"),
                            zone_id=created.get("CanonicalHostedZoneId"))
        self._set_attributes(cloud, desired)

    def _set_attributes(self, cloud, desired):
        attributes = {CROSS_ZONE: _bool_text(desired["enable_cross_zone_load_balancing"])}
        if desired.get("access_logs"):
            attributes.update(_access_log_attributes(desired["access_logs"]))
        _elbv2(cloud).modify_load_balancer_attributes(LoadBalancerArn=self.outputs["arn"], Attributes=[
            {"Key": k, "Value": v} for k, v in attributes.items()])

    def update(self, cloud, actual, changes):
        self.immutable_changes(changes)
        desired, arn = self.desired(), self.outputs["arn"]
        api = _elbv2(cloud)
        if "subnet_mapping" in changes:
            api.set_subnets(LoadBalancerArn=arn, SubnetMappings=self.field_map()["subnet_mapping"].to_api(
                desired["subnet_mapping"]))
        if "security_groups" in changes:
            api.set_security_groups(LoadBalancerArn=arn, SecurityGroups=list(desired["security_groups"]))
        if "ip_address_type" in changes:
            api.set_ip_address_type(LoadBalancerArn=arn, IpAddressType=desired.get("ip_address_type") or "ipv4")
        if "access_logs" in changes:
            _elbv2(cloud).modify_load_balancer_attributes(LoadBalancerArn=arn, Attributes=[
                {"Key": k, "Value": v} for k, v in _access_log_attributes(desired.get("access_logs")).items()])
        if "enable_cross_zone_load_balancing" in changes:
            self._set_attributes(cloud, desired)
        _update_tags(cloud, arn, changes, desired["tags"])

    def render_cloudformation(self):
        properties = Task.render_cloudformation(self)
        attributes = {CROSS_ZONE: _bool_text(self.fields["enable_cross_zone_load_balancing"])}
        if self.fields.get("access_logs"):
            attributes.update(_access_log_attributes(self.fields["access_logs"]))
        properties["LoadBalancerAttributes"] = [{"Key": k, "Value": v} for k, v in attributes.items()]
        return properties


# -- target groups ---------------------------------------------------------------------------------

HEALTH_CHECK_API = (("protocol", "HealthCheckProtocol"), ("interval", "HealthCheckIntervalSeconds"),
                    ("healthy_threshold", "HealthyThresholdCount"), ("unhealthy_threshold", "UnhealthyThresholdCount"),
                    ("path", "HealthCheckPath"))


def _health_check_api(check):
    return {api: check[name] for name, api in HEALTH_CHECK_API if check.get(name) is not None}


def _health_check_fields(item):
    return {name: item.get(api) for name, api in HEALTH_CHECK_API} if item else None


class TargetGroup(ComparedTask):
    """aws_lb_target_group (instance targets); deregistration delay and connection termination are
    attributes set after create.  The health check is compared where the model sets it (AWS fills in
    the rest)."""

    kind = "aws_lb_target_group"
    cloudformation_type = "AWS::ElasticLoadBalancingV2::TargetGroup"
    lookup_keys = ("aws_lb_target_group",)
    FIELDS = (
        ApiField("name", api="Name", read="TargetGroupName", cfn="Name", compare=False),
        ApiField("port", api="Port", read="Port", cfn="Port"),
        ApiField("protocol", api="Protocol", read="Protocol", cfn="Protocol"),
        ApiField("vpc_id", api="VpcId", read="VpcId", cfn="VpcId"),
        ApiField("health_check", read="@", to_api=_health_check_api, from_api=_health_check_fields,
                 same=_same_where_set, mutable=True, block=True),
        # Second call after create (ModifyTargetGroupAttributes).
        ApiField("deregistration_delay", read='Attributes."%s"' % DEREGISTRATION_DELAY, mutable=True),
        ApiField("connection_termination", read='Attributes."%s"' % CONNECTION_TERMINATION, mutable=True),
        TAGS,
    )

    def find(self, cloud):
        groups = cloud.lookup(self.kind, lambda: paginate(_elbv2(cloud), "describe_target_groups", "TargetGroups"))
        for group in groups:
            if group["TargetGroupName"] == self.fields["name"]:
                arn = group["TargetGroupArn"]
                tags = _owned(cloud, arn)
                self.outputs.update(id=arn, arn=arn)
                attributes = _elbv2(cloud).describe_target_group_attributes(TargetGroupArn=arn)["Attributes"]
                return self.read_actual(dict(group, Tags=tags, Attributes=_attributes(attributes)))
        return None

    def create_args(self, desired=None):
        desired = self.desired() if desired is None else desired
        args = Task.create_args(self, desired)
        args.update(_health_check_api(desired["health_check"]), TargetType="instance")
        return args

    def create(self, cloud):
        desired = self.desired()
        response = self.create_named(cloud, "elbv2", "create_target_group", **self.create_args(desired))
        if response is None:
            return  # made by a try whose answer was lost: found, its attributes brought in line
        created = response["TargetGroups"][0]
        self.outputs.update(id=created["TargetGroupArn"], arn=created["TargetGroupArn"])
        self._set_attributes(cloud, desired)

    def _attribute_list(self, fields):
        return [{"Key": DEREGISTRATION_DELAY, "Value": fields["deregistration_delay"]},
                {"Key": CONNECTION_TERMINATION, "Value": fields["connection_termination"]}]

    def _set_attributes(self, cloud, desired):
        _elbv2(cloud).modify_target_group_attributes(TargetGroupArn=self.outputs["arn"],
                                                     Attributes=self._attribute_list(desired))

    def update(self, cloud, actual, changes):
        self.immutable_changes(changes)
        desired, arn = self.desired(), self.outputs["arn"]
        if "health_check" in changes:
            _elbv2(cloud).modify_target_group(TargetGroupArn=arn, **_health_check_api(desired["health_check"]))
        if {"deregistration_delay", "connection_termination"} & set(changes):
            self._set_attributes(cloud, desired)
        _update_tags(cloud, arn, changes, desired["tags"])

    def render_cloudformation(self):
        properties = Task.render_cloudformation(self)
        properties.update(_health_check_api(self.fields["health_check"]), TargetType="instance",
                          TargetGroupAttributes=self._attribute_list(self.fields))
        return properties


# -- listeners -------------------------------------------------------------------------------------

def _actions_api(action):
    return [{"Type": action["type"], "TargetGroupArn": action["target_group_arn"]}]


def _action_fields(actions):
    first = (actions or [{}])[0]
    return {"target_group_arn": first.get("TargetGroupArn"), "type": first.get("Type")} if actions else None


class Listener(ComparedTask):
    """aws_lb_listener, found by port on its balancer; a TLS listener's certificate and policy
    (spec.api.loadBalancer.sslCertificate / sslPolicy; an unset policy is AWS's default)."""

    kind = "aws_lb_listener"
    cloudformation_type = "AWS::ElasticLoadBalancingV2::Listener"
    FIELDS = (
        ApiField("load_balancer_arn", api="LoadBalancerArn", read="LoadBalancerArn", cfn="LoadBalancerArn",
                 compare=False),
        ApiField("port", api="Port", read="Port", cfn="Port", compare=False),
        ApiField("protocol", api="Protocol", read="Protocol", cfn="Protocol", mutable=True),
        ApiField("default_action", api="DefaultActions", read="DefaultActions", cfn="DefaultActions",
                 to_api=_actions_api, from_api=_action_fields, mutable=True, block=True),
        ApiField("certificate_arn", api="Certificates", read="Certificates", cfn="Certificates",
                 to_api=lambda v: [{"CertificateArn": v}],
                 from_api=lambda v: (v or [{}])[0].get("CertificateArn") if v else None, mutable=True),
        ApiField("ssl_policy", api="SslPolicy", read="SslPolicy", cfn="SslPolicy", mutable=True,
                 same=lambda actual, desired: desired is None or actual == desired),
    )

    @property
    def lookup_keys(self):
        return ("listeners:" + self.desired()["load_balancer_arn"],)

    def find(self, cloud):
        balancer = self.desired()["load_balancer_arn"]
        listeners = cloud.lookup("listeners:" + balancer, lambda: paginate(
            _elbv2(cloud), "describe_listeners", "Listeners", LoadBalancerArn=balancer))
        for listener in listeners:
            if listener["Port"] == self.fields["port"]:
                self.outputs["id"] = listener["ListenerArn"]
                return self.read_actual(listener)
        return None

    def create(self, cloud):
        response = self.create_named(cloud, "elbv2", "create_listener", **self.create_args())
        if response is not None:
            self.outputs["id"] = response["Listeners"][0]["ListenerArn"]

    def update(self, cloud, actual, changes):
        args = self.create_args()
        del args["LoadBalancerArn"]
        _elbv2(cloud).modify_listener(ListenerArn=self.outputs["id"], **args)
