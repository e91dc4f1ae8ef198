# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Route53 records, as kops' DNSModelBuilder: with the API behind a load balancer and a
cluster that publishes DNS records (not gossip, DNS not None), alias records A and AAAA
``api.<c>`` (and ``api.internal.<c>`` with ``useForInternalApi``) to the API NLB, in the
hosted zone spec.dnsZone.  Other names (api.internal without a load balancer, the nodes)
are dns-controller's, not the cloud model's.

Spec completion fills spec.dnsZone from the cloud facts (a lookup, or cloud_facts.hosted_zones);
a cluster that needs these records and still has no zone is an error, never a model without them."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import route53
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError


def publishes_dns_records(cluster):
    """kops' PublishesDNSRecords: not a gossip cluster (.k8s.local) and DNS not None."""
    spec = cluster["spec"]
    if cluster["metadata"]["name"].endswith(".k8s.local"):
        return False
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") != "None"


def hosted_zone(cluster, tasks):
    """The HostedZone task for spec.dnsZone (an id, or a name when it has a dot); None without one."""
    spec = cluster["spec"]
    zone = spec.get("dnsZone")
    if not zone or not publishes_dns_records(cluster):
        return None
    private = ((spec.get("topology") or {}).get("dns") or {}).get("type") == "Private"
    fields = {"dns_name": zone} if "." in zone else {"zone_id": zone}
    if private:
        fields["private"] = True
    task = route53.HostedZone(zone, **fields)
    return tasks.setdefault(task.key, task)


def alias_records(tasks, zone, name, balancer):
    """The A and AAAA alias records <name> and <name>-AAAA to a load balancer (kops' DNSName pair)."""
    records = []
    for task_name, record_type in ((name, "A"), (name + "-AAAA", "AAAA")):
        task = route53.Record(task_name, name=name, type=record_type, zone_id=Ref(zone),
                              alias={"name": Ref(balancer, "dns_name"), "zone_id": Ref(balancer, "zone_id"),
                                     "evaluate_target_health": False})
        records.append(tasks.setdefault(task.key, task))
    return records


class DNSZoneError(ModelError):
    pass


def build_dns(cluster, tasks, api_balancer):
    spec = cluster["spec"]
    if api_balancer is None or not publishes_dns_records(cluster):
        return []
    name = cluster["metadata"]["name"]
    zone = hosted_zone(cluster, tasks)
    if zone is None:
        raise DNSZoneError(
            "cluster %s publishes its API load balancer as %s in Route53, but no hosted zone was found for %s "
            "or a parent domain: set spec.dnsZone (create option dns_zone) to the zone's name or id, give "
            "cloud_facts.hosted_zones {<zone name>: <zone id>}, or create the hosted zone and let the module "
            "look it up (AWS credentials, cloud_lookup not false); a name ending in .k8s.local uses gossip instead"
            % (name, spec.get("masterPublicName") or "api." + name, name))
    records = []
    public_name = spec.get("masterPublicName") or "api." + name
    records += alias_records(tasks, zone, public_name, api_balancer)
    if ((spec.get("api") or {}).get("loadBalancer") or {}).get("useForInternalApi"):
        internal_name = "api.internal." + name  # kops' APIInternalName; it ignores spec.masterInternalName
        records += alias_records(tasks, zone, internal_name, api_balancer)
    return records
