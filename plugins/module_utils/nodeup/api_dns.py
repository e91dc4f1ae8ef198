# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""api.internal.<cluster> -> the running control-plane instances (kops' dns-controller, for that one record)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsError, paginate


def zone_id(route53, dns_zone):
    """The hosted zone id for spec.dnsZone, which may be a name or an id (as in kops)."""
    if "." not in dns_zone.rstrip("."):
        return dns_zone.split("/")[-1]
    wanted = dns_zone.rstrip(".") + "."
    zones = [z for z in paginate(route53, "list_hosted_zones", "HostedZones") if z["Name"] == wanted]
    public = [z for z in zones if not (z.get("Config") or {}).get("PrivateZone")]
    chosen = public or zones
    if len(chosen) != 1:
        raise AwsError("%s hosted zones are named %s; set spec.dnsZone to the zone id"
                       % (len(chosen) or "no", wanted))
    return chosen[0]["Id"].split("/")[-1]


def control_plane_addresses(ec2, cluster_name):
    """Sorted private IPv4 addresses of the cluster's running control-plane instances."""
    reservations = paginate(ec2, "describe_instances", "Reservations", Filters=[
        {"Name": "tag:KubernetesCluster", "Values": [cluster_name]},
        {"Name": "tag:k8s.io/role/control-plane", "Values": ["1"]},
        {"Name": "instance-state-name", "Values": ["running"]}])
    return sorted({i["PrivateIpAddress"] for r in reservations for i in r["Instances"] if i.get("PrivateIpAddress")})


def current_addresses(route53, zone, name):
    wanted = name.rstrip(".") + "."
    records = route53.list_resource_record_sets(HostedZoneId=zone, StartRecordName=wanted, StartRecordType="A",
                                                MaxItems="1")["ResourceRecordSets"]
    for record in records:
        if record["Name"] == wanted and record["Type"] == "A":
            return sorted(r["Value"] for r in record.get("ResourceRecords") or [])
    return []


def upsert(route53, zone, name, addresses, ttl):
    route53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{
        "Action": "UPSERT", "ResourceRecordSet": {
            "Name": name.rstrip(".") + ".", "Type": "A", "TTL": ttl,
            "ResourceRecords": [{"Value": a} for a in addresses]}}]})
