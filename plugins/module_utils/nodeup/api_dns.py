# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""api.internal.<cluster> -> the running control-plane instances (kops' dns-controller, for that one record)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsError, paginate
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError


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


# Which address of an instance a record names: kops' dns-controller writes api.internal from the private ones and,
# without an API load balancer, api.<cluster> from the public ones.
ADDRESS_FIELDS = {"private": "PrivateIpAddress", "public": "PublicIpAddress"}


def control_plane_addresses(ec2, cluster_name, address_type="private"):
    """Sorted private (or public) IPv4 addresses of the cluster's running control-plane instances."""
    field = ADDRESS_FIELDS[address_type]
    reservations = paginate(ec2, "describe_instances", "Reservations", Filters=[
        {"Name": "tag:KubernetesCluster", "Values": [cluster_name]},
        {"Name": "tag:k8s.io/role/control-plane", "Values": ["1"]},
        {"Name": "instance-state-name", "Values": ["running"]}])
    return sorted({i[field] for r in reservations for i in r["Instances"] if i.get(field)})


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


# -- GCE: Cloud DNS ------------------------------------------------------------------------------------
GCE_CLUSTER_LABEL = "k8s-io-cluster-name"
# kops labels control-plane instances with both (templates carry k8s-io-role-master and k8s-io-role-control-plane).
GCE_CONTROL_PLANE_LABELS = ("k8s-io-role-control-plane", "k8s-io-role-master")


class CloudDnsError(NodeError):
    """The zone or the control plane cannot be found; the message says what to set."""


def gce_managed_zone(cloud, dns_zone):
    """The Cloud DNS managed zone (its name) for spec.dnsZone, which may be a DNS name or a zone's name."""
    if "." not in dns_zone.rstrip("."):
        return dns_zone
    wanted = dns_zone.rstrip(".") + "."
    zones = [z for z in cloud.list("dns", "projects/%s/managedZones" % cloud.project, key="managedZones")
             if z.get("dnsName") == wanted]
    public = [z for z in zones if z.get("visibility", "public") == "public"]
    chosen = public or zones
    if len(chosen) != 1:
        raise CloudDnsError("%s Cloud DNS managed zones are for %s; set spec.dnsZone to the zone's name"
                            % (len(chosen) or "no", wanted))
    return chosen[0]["name"]


def gce_control_plane_addresses(cloud):
    """Sorted internal addresses of the cluster's RUNNING control-plane instances, in the region's zones."""
    label = cloud.cluster_name.replace(".", "-")
    addresses = set()
    for zone in cloud.zones:
        for instance in cloud.list("compute", "projects/%s/zones/%s/instances" % (cloud.project, zone),
                                   params={"filter": 'labels.%s = "%s"' % (GCE_CLUSTER_LABEL, label)}):
            labels = instance.get("labels") or {}
            if (instance.get("status") == "RUNNING" and labels.get(GCE_CLUSTER_LABEL) == label
                    and any(k in labels for k in GCE_CONTROL_PLANE_LABELS)):
                address = ((instance.get("networkInterfaces") or [{}])[0]).get("networkIP")
                if address:
                    addresses.add(address)
    return sorted(addresses)


def gce_current_record(cloud, managed_zone, name):
    """The A record set named name, or None."""
    wanted = name.rstrip(".") + "."
    for record in cloud.list("dns", "projects/%s/managedZones/%s/rrsets" % (cloud.project, managed_zone),
                             params={"name": wanted, "type": "A"}, key="rrsets"):
        if record.get("name") == wanted and record.get("type") == "A":
            return record
    return None


def gce_replace(cloud, managed_zone, name, addresses, ttl, current=None):
    """One Cloud DNS change: the current record set out (when there is one), the new one in."""
    change = {"additions": [{"name": name.rstrip(".") + ".", "type": "A", "ttl": ttl, "rrdatas": list(addresses)}]}
    if current:
        change["deletions"] = [current]
    return cloud.call("dns", "POST", "projects/%s/managedZones/%s/changes" % (cloud.project, managed_zone), body=change)
