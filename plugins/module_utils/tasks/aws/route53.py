# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Route53: the cluster's hosted zone (looked up, never created) and its alias records.

A record is found with one paginated ListResourceRecordSets per zone (cached on
the AwsCloud and shared by every record of the zone), matched by name and type,
and written with an UPSERT (ChangeResourceRecordSets), as kops' DNSName does.
Nothing is deleted.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Task, to_terraform

ZONE_PREFIX = "/hostedzone/"


def _route53(cloud):
    return cloud.client("route53")


def _dns_name(name):
    """Route53 answers names with a trailing dot and in lower case."""
    return (name or "").rstrip(".").lower()


def zone_id_of(value):
    """Z123 or /hostedzone/Z123 -> /hostedzone/Z123 (what the API returns and kops' Terraform writes)."""
    return value if value.startswith(ZONE_PREFIX) else ZONE_PREFIX + value


class HostedZone(Task):
    """spec.dnsZone: a zone id (no dot) or a zone name; the zone is the user's, never created or changed.

    Terraform gets the id as a literal (as kops writes it), or a ``data "aws_route53_zone"`` lookup
    for a zone given by name (kops resolves the name through the API when it renders).
    """

    kind = "aws_route53_zone"
    cloudformation_type = "AWS::Route53::HostedZone"

    @property
    def zone_id(self):
        return zone_id_of(self.fields["zone_id"]) if self.fields.get("zone_id") else None

    def find(self, cloud):
        zones = cloud.lookup(self.kind, lambda: paginate(_route53(cloud), "list_hosted_zones", "HostedZones"))
        private = bool(self.fields.get("private"))
        for zone in zones:
            if self.zone_id:
                matched = zone_id_of(zone["Id"]) == self.zone_id
            else:
                matched = _dns_name(zone["Name"]) == _dns_name(self.fields["dns_name"]) and \
                    bool((zone.get("Config") or {}).get("PrivateZone")) == private
            if matched:
                self.outputs.update(id=zone_id_of(zone["Id"]), name=_dns_name(zone["Name"]))
                return {}
        raise ValueError("spec.dnsZone: hosted zone %s not found (kops does not create it either)"
                         % (self.fields.get("zone_id") or self.fields.get("dns_name")))

    def create(self, cloud):
        raise ValueError("hosted zone %s is not created by the cluster" % self.name)

    def terraform_value(self, attribute):
        if self.zone_id:
            return self.zone_id
        return Expression("data.aws_route53_zone.%s.zone_id" % self.terraform_name)

    def terraform_data(self):
        if self.zone_id:
            return []
        body = {"name": _dns_name(self.fields["dns_name"])}
        if self.fields.get("private"):
            body["private_zone"] = True
        return [("aws_route53_zone", self.terraform_name, body)]

    def render_terraform(self):
        return None

    def render_cloudformation(self):
        return None


class Record(Task):
    """An alias record (A or AAAA) to a load balancer: fields name, type, zone_id (a HostedZone Ref),
    alias {name: balancer dns_name, zone_id: balancer zone_id, evaluate_target_health}."""

    kind = "aws_route53_record"
    cloudformation_type = "AWS::Route53::RecordSet"

    def _zone(self):
        return self.fields["zone_id"].task

    def find(self, cloud):
        desired = self.desired()
        zone = desired["zone_id"]
        records = cloud.lookup("aws_route53_record:" + zone, lambda: paginate(
            _route53(cloud), "list_resource_record_sets", "ResourceRecordSets", HostedZoneId=zone))
        for record in records:
            if record.get("Type") == desired["type"] and _dns_name(record.get("Name")) == _dns_name(desired["name"]):
                self.outputs["id"] = "%s_%s_%s" % (zone.rsplit("/", 1)[-1], _dns_name(desired["name"]), desired["type"])
                alias = record.get("AliasTarget") or {}
                return {"alias": {"name": _dns_name(alias.get("DNSName")), "zone_id": alias.get("HostedZoneId")},
                        "ttl": record.get("TTL"), "records": [r["Value"] for r in record.get("ResourceRecords") or []]}
        return None

    def compare(self, actual):
        desired = self.desired()
        alias = desired.get("alias")
        if alias:
            wanted = {"name": _dns_name(alias["name"]), "zone_id": alias["zone_id"]}
            return {} if actual["alias"] == wanted else {"alias": (actual["alias"], wanted)}
        wanted_records = list(desired.get("records") or [])
        if actual["records"] != wanted_records:
            return {"records": (actual["records"], wanted_records)}
        return {}

    def _record_set(self):
        desired = self.desired()
        record_set = {"Name": desired["name"], "Type": desired["type"]}
        if desired.get("alias"):
            alias = desired["alias"]
            record_set["AliasTarget"] = {"DNSName": alias["name"], "HostedZoneId": alias["zone_id"],
                                         "EvaluateTargetHealth": bool(alias.get("evaluate_target_health"))}
        else:
            record_set.update(TTL=int(desired.get("ttl") or 60),
                              ResourceRecords=[{"Value": v} for v in desired.get("records") or []])
        return record_set

    def _upsert(self, cloud):
        desired = self.desired()
        _route53(cloud).change_resource_record_sets(
            HostedZoneId=desired["zone_id"],
            ChangeBatch={"Changes": [{"Action": "UPSERT", "ResourceRecordSet": self._record_set()}]})
        self.outputs["id"] = "%s_%s_%s" % (desired["zone_id"].rsplit("/", 1)[-1], _dns_name(desired["name"]),
                                           desired["type"])

    def create(self, cloud):
        self._upsert(cloud)

    def update(self, cloud, actual, changes):
        self._upsert(cloud)

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        if body.get("alias"):
            body["alias"] = Block(body["alias"])
        return body

    def render_cloudformation(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import logical_id
        zone = self._zone()
        properties = {"Name": self.fields["name"], "Type": self.fields["type"]}
        if zone.zone_id:
            properties["HostedZoneId"] = zone.zone_id.rsplit("/", 1)[-1]
        else:
            properties["HostedZoneName"] = _dns_name(zone.fields["dns_name"]) + "."
        alias = self.fields.get("alias")
        if alias:
            balancer = logical_id(alias["name"].task)
            properties["AliasTarget"] = {"DNSName": {"Fn::GetAtt": [balancer, "DNSName"]},
                                         "HostedZoneId": {"Fn::GetAtt": [balancer, "CanonicalHostedZoneID"]},
                                         "EvaluateTargetHealth": bool(alias.get("evaluate_target_health"))}
        else:
            properties.update(TTL=str(self.fields.get("ttl") or 60), ResourceRecords=list(self.fields["records"]))
        return properties
