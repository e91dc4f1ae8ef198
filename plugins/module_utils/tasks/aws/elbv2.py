# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Network load balancers, target groups and listeners (elbv2), found by name."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Task, to_terraform


def _elbv2(cloud):
    return cloud.client("elbv2")


class LoadBalancer(Task):
    kind = "aws_lb"

    def find(self, cloud):
        balancers = cloud.lookup(self.kind, lambda: paginate(_elbv2(cloud), "describe_load_balancers", "LoadBalancers"))
        for balancer in balancers:
            if balancer["LoadBalancerName"] == self.fields["name"]:
                self.outputs.update(id=balancer["LoadBalancerArn"], arn=balancer["LoadBalancerArn"],
                                    dns_name=balancer.get("DNSName"), zone_id=balancer.get("CanonicalHostedZoneId"))
                return {"internal": balancer.get("Scheme") == "internal",
                        "subnets": sorted(z.get("SubnetId") for z in balancer.get("AvailabilityZones") or [])}
        return None

    def compare(self, actual):
        desired = self.desired()
        changes = {}
        if actual["internal"] != desired["internal"]:
            changes["internal"] = (actual["internal"], desired["internal"])
        wanted = sorted(m["subnet_id"] for m in desired["subnet_mapping"])
        if actual["subnets"] != wanted:
            changes["subnet_mapping"] = (actual["subnets"], wanted)
        return changes

    def create(self, cloud):
        desired = self.desired()
        extra = {"IpAddressType": desired["ip_address_type"]} if desired.get("ip_address_type") else {}
        created = _elbv2(cloud).create_load_balancer(
            Name=desired["name"], Type="network", Scheme="internal" if desired["internal"] else "internet-facing",
            SubnetMappings=[{"SubnetId": m["subnet_id"]} for m in desired["subnet_mapping"]],
            SecurityGroups=desired["security_groups"], Tags=tag_list(desired["tags"]), **extra)["LoadBalancers"][0]
        self.outputs.update(id=created["LoadBalancerArn"], arn=created["LoadBalancerArn"], dns_name=created.get("DNSName"),
                            zone_id=created.get("CanonicalHostedZoneId"))
        _elbv2(cloud).modify_load_balancer_attributes(
            LoadBalancerArn=self.outputs["arn"],
            Attributes=[{"Key": "load_balancing.cross_zone.enabled",
                         "Value": str(desired["enable_cross_zone_load_balancing"]).lower()}])

    def update(self, cloud, actual, changes):
        if "internal" in changes:
            raise ValueError("%s: the scheme (internal) of a load balancer cannot change in place" % self.key)
        _elbv2(cloud).set_subnets(LoadBalancerArn=self.outputs["arn"],
                                  SubnetMappings=[{"SubnetId": m["subnet_id"]} for m in self.desired()["subnet_mapping"]])

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        body["subnet_mapping"] = [Block(m) for m in body["subnet_mapping"]]
        return body


class TargetGroup(Task):
    kind = "aws_lb_target_group"
    compared = ("port", "protocol")

    def find(self, cloud):
        groups = cloud.lookup(self.kind, lambda: paginate(_elbv2(cloud), "describe_target_groups", "TargetGroups"))
        for group in groups:
            if group["TargetGroupName"] == self.fields["name"]:
                self.outputs.update(id=group["TargetGroupArn"], arn=group["TargetGroupArn"])
                return {"port": group.get("Port"), "protocol": group.get("Protocol")}
        return None

    def create(self, cloud):
        d = self.desired()
        check = d["health_check"]
        args = dict(Name=d["name"], Protocol=d["protocol"], Port=d["port"], VpcId=d["vpc_id"], TargetType="instance",
                    HealthCheckProtocol=check["protocol"], HealthCheckIntervalSeconds=check["interval"],
                    HealthyThresholdCount=check["healthy_threshold"],
                    UnhealthyThresholdCount=check["unhealthy_threshold"], Tags=tag_list(d["tags"]))
        if check.get("path"):
            args["HealthCheckPath"] = check["path"]
        created = _elbv2(cloud).create_target_group(**args)["TargetGroups"][0]
        self.outputs.update(id=created["TargetGroupArn"], arn=created["TargetGroupArn"])
        _elbv2(cloud).modify_target_group_attributes(
            TargetGroupArn=self.outputs["arn"],
            Attributes=[{"Key": "deregistration_delay.timeout_seconds", "Value": d["deregistration_delay"]},
                        {"Key": "deregistration_delay.connection_termination.enabled",
                         "Value": d["connection_termination"]}])

    def update(self, cloud, actual, changes):
        raise ValueError("%s: %s of a target group cannot change in place" % (self.key, ", ".join(sorted(changes))))

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        body["health_check"] = Block(body["health_check"])
        return body


class Listener(Task):
    kind = "aws_lb_listener"

    def find(self, cloud):
        balancer = self.desired()["load_balancer_arn"]
        listeners = cloud.lookup("listeners:" + balancer, lambda: paginate(
            _elbv2(cloud), "describe_listeners", "Listeners", LoadBalancerArn=balancer))
        for listener in listeners:
            if listener["Port"] == self.fields["port"]:
                self.outputs["id"] = listener["ListenerArn"]
                actions = listener.get("DefaultActions") or [{}]
                certificates = listener.get("Certificates") or [{}]
                return {"target_group_arn": actions[0].get("TargetGroupArn"), "protocol": listener.get("Protocol"),
                        "certificate_arn": certificates[0].get("CertificateArn"),
                        "ssl_policy": listener.get("SslPolicy")}
        return None

    def compare(self, actual):
        d = self.desired()
        wanted = {"target_group_arn": d["default_action"]["target_group_arn"], "protocol": d["protocol"]}
        # A TLS listener's certificate and policy (spec.api.loadBalancer.sslCertificate / sslPolicy).
        wanted.update({k: d[k] for k in ("certificate_arn", "ssl_policy") if d.get(k)})
        return {k: (actual.get(k), v) for k, v in wanted.items() if actual.get(k) != v}

    def _actions(self):
        return [{"Type": "forward", "TargetGroupArn": self.desired()["default_action"]["target_group_arn"]}]

    def _tls_args(self):
        d = self.desired()
        args = {}
        if d.get("certificate_arn"):
            args["Certificates"] = [{"CertificateArn": d["certificate_arn"]}]
        if d.get("ssl_policy"):
            args["SslPolicy"] = d["ssl_policy"]
        return args

    def create(self, cloud):
        d = self.desired()
        created = _elbv2(cloud).create_listener(LoadBalancerArn=d["load_balancer_arn"], Protocol=d["protocol"],
                                                Port=d["port"], DefaultActions=self._actions(),
                                                **self._tls_args())["Listeners"][0]
        self.outputs["id"] = created["ListenerArn"]

    def update(self, cloud, actual, changes):
        _elbv2(cloud).modify_listener(ListenerArn=self.outputs["id"], Protocol=self.desired()["protocol"],
                                      DefaultActions=self._actions(), **self._tls_args())

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        body["default_action"] = Block(body["default_action"])
        return body


def _tags(task):
    return [{"Key": k, "Value": v} for k, v in sorted(task.fields["tags"].items())]


LoadBalancer.cloudformation_type = "AWS::ElasticLoadBalancingV2::LoadBalancer"
LoadBalancer.render_cloudformation = lambda t: {
    "Name": t.fields["name"], "Type": "network", "Scheme": "internal" if t.fields["internal"] else "internet-facing",
    "SubnetMappings": [{"SubnetId": m["subnet_id"]} for m in t.fields["subnet_mapping"]],
    "SecurityGroups": t.fields["security_groups"],
    **({"IpAddressType": t.fields["ip_address_type"]} if t.fields.get("ip_address_type") else {}),
    "LoadBalancerAttributes": [{"Key": "load_balancing.cross_zone.enabled",
                                "Value": str(t.fields["enable_cross_zone_load_balancing"]).lower()}],
    "Tags": _tags(t)}


def _target_group_properties(task):
    check = task.fields["health_check"]
    properties = {
        "Name": task.fields["name"], "Port": task.fields["port"], "Protocol": task.fields["protocol"],
        "VpcId": task.fields["vpc_id"], "TargetType": "instance", "HealthCheckProtocol": check["protocol"],
        "HealthCheckIntervalSeconds": check["interval"], "HealthyThresholdCount": check["healthy_threshold"],
        "UnhealthyThresholdCount": check["unhealthy_threshold"],
        "TargetGroupAttributes": [
            {"Key": "deregistration_delay.timeout_seconds", "Value": task.fields["deregistration_delay"]},
            {"Key": "deregistration_delay.connection_termination.enabled",
             "Value": task.fields["connection_termination"]}],
        "Tags": _tags(task)}
    if check.get("path"):
        properties["HealthCheckPath"] = check["path"]
    return properties


TargetGroup.cloudformation_type = "AWS::ElasticLoadBalancingV2::TargetGroup"
TargetGroup.render_cloudformation = _target_group_properties
Listener.cloudformation_type = "AWS::ElasticLoadBalancingV2::Listener"
Listener.render_cloudformation = lambda t: {
    "LoadBalancerArn": t.fields["load_balancer_arn"], "Port": t.fields["port"], "Protocol": t.fields["protocol"],
    "DefaultActions": [{"Type": "forward", "TargetGroupArn": t.fields["default_action"]["target_group_arn"]}],
    **({"Certificates": [{"CertificateArn": t.fields["certificate_arn"]}]} if t.fields.get("certificate_arn") else {}),
    **({"SslPolicy": t.fields["ssl_policy"]} if t.fields.get("ssl_policy") else {})}
