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
from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import get_att
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import ApiField, ComparedTask
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

ZONE_PREFIX = "/hostedzone/"
DEFAULT_TTL = 60


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

    Terraform gets the id as a literal (as kops writes it); a zone given by name, the id the cloud facts give for
    it (resolve_from_facts: kops resolves the name through the API when it renders), else a
    ``data "aws_route53_zone"`` lookup.
    """

    kind = "aws_route53_zone"
    cloudformation_type = "AWS::Route53::HostedZone"
    # Read from ListHostedZones to find the zone; nothing is compared or changed (the zone is the user's).
    FIELDS = (
        Field("zone_id", read="Id", from_api=zone_id_of, compare=False),
        Field("dns_name", read="Name", from_api=_dns_name, compare=False),
        Field("private", read="Config.PrivateZone", from_api=bool, compare=False),
    )

    @property
    def zone_id(self):
        return zone_id_of(self.fields["zone_id"]) if self.fields.get("zone_id") else None

    def find(self, cloud):
        zones = cloud.lookup(self.kind, lambda: paginate(_route53(cloud), "list_hosted_zones", "HostedZones"))
        private = bool(self.fields.get("private"))
        for zone in zones:
            actual = self.read_actual(zone)
            if self.zone_id:
                matched = actual["zone_id"] == self.zone_id
            else:
                matched = actual["dns_name"] == _dns_name(self.fields["dns_name"]) and actual["private"] == private
            if matched:
                self.outputs.update(id=actual["zone_id"], name=actual["dns_name"])
                return actual
        raise TaskError("spec.dnsZone: hosted zone %s not found (kops does not create it either)"
                        % (self.fields.get("zone_id") or self.fields.get("dns_name")))

    def create(self, cloud):
        raise TaskError("hosted zone %s is not created by the cluster" % self.name)

    def resolve_from_facts(self, facts):
        """A rendered target: the id of the zone given by name, from the cloud facts (given, or looked up), written
        as a literal as kops writes the id it looks up; unknown, Terraform looks the name up itself."""
        if not self.zone_id:
            found = facts.hosted_zone_id(self.fields["dns_name"])
            if found:
                self.outputs["rendered_id"] = zone_id_of(found)

    def terraform_value(self, attribute):
        if self.zone_id or self.outputs.get("rendered_id"):
            return self.zone_id or self.outputs["rendered_id"]
        return Expression("data.aws_route53_zone.%s.zone_id" % self.terraform_name)

    def terraform_data(self):
        if self.zone_id or self.outputs.get("rendered_id"):
            return []
        body = {"name": _dns_name(self.fields["dns_name"])}
        if self.fields.get("private"):
            body["private_zone"] = True
        return [("aws_route53_zone", self.terraform_name, body)]

    def render_terraform(self):
        return None

    def render_cloudformation(self):
        return None


def _alias_api(alias):
    return {"DNSName": alias["name"], "HostedZoneId": alias["zone_id"],
            "EvaluateTargetHealth": bool(alias.get("evaluate_target_health"))}


def _alias_fields(target):
    return {"name": _dns_name(target.get("DNSName")), "zone_id": target.get("HostedZoneId"),
            "evaluate_target_health": bool(target.get("EvaluateTargetHealth"))} if target else None


class Record(ComparedTask):
    """An alias record (A or AAAA) to a load balancer: fields name, type, zone_id (a HostedZone Ref),
    alias {name: balancer dns_name, zone_id: balancer zone_id, evaluate_target_health}; or a plain
    record (ttl, records).  The table's API fields are the UPSERT's ResourceRecordSet."""

    kind = "aws_route53_record"
    cloudformation_type = "AWS::Route53::RecordSet"
    FIELDS = (
        ApiField("name", api="Name", read="Name", compare=False),
        ApiField("type", api="Type", read="Type", compare=False),
        ApiField("alias", api="AliasTarget", read="AliasTarget", to_api=_alias_api, from_api=_alias_fields,
                 mutable=True, block=True),
        # Unset: the default TTL (a plain record's), whatever the record has.
        ApiField("ttl", api="TTL", read="TTL", to_api=int, mutable=True,
                 same=lambda actual, desired: desired is None or actual == desired),
        ApiField("records", api="ResourceRecords", read="ResourceRecords", to_api=lambda v: [{"Value": r} for r in v],
                 from_api=lambda v: [r["Value"] for r in v] if v else None, mutable=True),
    )

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
                return self.read_actual(record)
        return None

    def _record_set(self):
        record_set = self.create_args()
        if "AliasTarget" not in record_set:
            record_set.setdefault("TTL", DEFAULT_TTL)
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

    def render_cloudformation(self):
        zone = self._zone()
        properties = {"Name": self.fields["name"], "Type": self.fields["type"]}
        if zone.zone_id:
            properties["HostedZoneId"] = zone.zone_id.rsplit("/", 1)[-1]
        else:
            properties["HostedZoneName"] = _dns_name(zone.fields["dns_name"]) + "."
        alias = self.fields.get("alias")
        if alias:
            balancer = alias["name"].task
            properties["AliasTarget"] = {"DNSName": get_att(balancer, "DNSName"),
                                         "HostedZoneId": get_att(balancer, "CanonicalHostedZoneID"),
                                         "EvaluateTargetHealth": bool(alias.get("evaluate_target_health"))}
        else:
            properties.update(TTL=str(self.fields.get("ttl") or DEFAULT_TTL), ResourceRecords=list(self.fields["records"]))
        return properties
