# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Compute Engine kinds (kops' gcetasks): network, subnetwork, firewall rule, router and its NAT,
address, disk, instance template, instance group manager and the API load balancer's parts.

Networks, subnetworks, firewall rules, routers, addresses, health checks, target pools and
backend services carry no labels: kops owns them by name (each name ends with the cluster's
dashed name, or its hashed cut) and, for firewall rules, by being in the cluster's network.
Disks, instance templates and forwarding rules carry the k8s-io-cluster-name label and are
checked against it (docs/gce-model.md).
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import hash_string
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce.base import (
    GceTask, field, last, lasts, link, url)
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

NETWORK = "global/networks/{name}"
SUBNETWORK = "regions/{region}/subnetworks/{name}"


class Network(GceTask):
    kind = "google_compute_network"
    collection = "networks"
    FIELDS = (
        field("name", api="name", read="name"),
        field("auto_create_subnetworks", api="autoCreateSubnetworks", read="autoCreateSubnetworks",
              from_api=bool),
    )


class Subnetwork(GceTask):
    kind = "google_compute_subnetwork"
    scope = "region"
    collection = "subnetworks"
    FIELDS = (
        field("name", api="name", read="name"),
        field("network", api="network", read="network", to_api=link(NETWORK), from_api=last),
        field("region", read="region", from_api=last),
        field("ip_cidr_range", api="ipCidrRange", read="ipCidrRange"),
        field("stack_type", api="stackType", read="stackType"),
        field("ipv6_access_type", api="ipv6AccessType", read="ipv6AccessType"),
        field("secondary_ip_range", api="secondaryIpRanges", read="secondaryIpRanges", block=True,
              to_api=lambda ranges, cloud: [{"rangeName": r["range_name"], "ipCidrRange": r["ip_cidr_range"]}
                                            for r in ranges],
              from_api=lambda ranges: [{"ip_cidr_range": r.get("ipCidrRange"), "range_name": r.get("rangeName")}
                                       for r in ranges or []] or None),
    )


def _allowed_to_api(rules, cloud):
    return [dict({"IPProtocol": r["protocol"]}, **({"ports": r["ports"]} if r.get("ports") else {})) for r in rules]


def _allowed_from_api(rules):
    return [dict({"protocol": r.get("IPProtocol")}, **({"ports": r["ports"]} if r.get("ports") else {}))
            for r in rules or []]


class Firewall(GceTask):
    kind = "google_compute_firewall"
    collection = "firewalls"
    FIELDS = (
        field("name", api="name", read="name"),
        field("network", api="network", read="network", to_api=link(NETWORK), from_api=last),
        field("allow", api="allowed", read="allowed", mutable=True, to_api=_allowed_to_api, from_api=_allowed_from_api,
              block=True),
        field("source_ranges", api="sourceRanges", read="sourceRanges", mutable=True),
        field("source_tags", api="sourceTags", read="sourceTags", mutable=True),
        field("target_tags", api="targetTags", read="targetTags", mutable=True),
        field("disabled", api="disabled", read="disabled", mutable=True, from_api=bool),
    )

    def apply_changes(self, cloud, actual, changes):
        # A PATCH replaces the lists it names; an emptied list has to be sent empty, not left out.
        body = self.api_body(cloud, self.desired())
        for name in ("sourceRanges", "sourceTags", "targetTags"):
            body.setdefault(name, [])
        cloud.call(self.api, "PATCH", self.object_path(cloud), body)

    @classmethod
    def orphans(cls, cloud, wanted):
        """kops' firewall rules in the cluster's own network that the spec no longer asks for (a rule
        for a load balancer that was dropped): a name ending in the cluster's dashed name or its hash."""
        network = names.network_name(cloud.cluster_name)
        safe = names.safe_cluster_name(cloud.cluster_name)
        hashed = "-" + hash_string(safe)
        keep = {t.object_name for t in wanted}
        found = []
        for item in cloud.list("compute", "projects/%s/global/firewalls" % cloud.project):
            name = item.get("name", "")
            if last(item.get("network")) != network or name in keep:
                continue
            if not (name.endswith("-" + safe) or (len(name) == names.MAX_NAME and name.endswith(hashed))):
                continue
            path = "projects/%s/global/firewalls/%s" % (cloud.project, name)
            found.append(Deletion(cls.kind, name, name, lambda c, p=path: c.delete("compute", p)))
        return found


class Router(GceTask):
    kind = "google_compute_router"
    scope = "region"
    collection = "routers"
    FIELDS = (
        field("name", api="name", read="name"),
        field("network", api="network", read="network", to_api=link(NETWORK), from_api=last),
    )


class RouterNat(GceTask):
    """Cloud NAT: a Terraform resource of its own, in the API an entry of its router's ``nats``."""

    kind = "google_compute_router_nat"
    scope = "region"
    collection = "routers"
    FIELDS = (
        field("name", api="name", read="name"),
        field("region"),
        field("router"),
        field("nat_ip_allocate_option", api="natIpAllocateOption", read="natIpAllocateOption", mutable=True),
        field("source_subnetwork_ip_ranges_to_nat", api="sourceSubnetworkIpRangesToNat",
              read="sourceSubnetworkIpRangesToNat", mutable=True),
        field("subnetwork", api="subnetworks", read="subnetworks", mutable=True, block=True,
              to_api=lambda subnets, cloud: [
                  {"name": url(cloud.project, SUBNETWORK.format(region=cloud.region, name=s["name"])),
                   "sourceIpRangesToNat": s["source_ip_ranges_to_nat"]} for s in subnets],
              from_api=lambda subnets: [{"name": last(s.get("name")),
                                         "source_ip_ranges_to_nat": s.get("sourceIpRangesToNat")}
                                        for s in subnets or []]),
    )

    def router_path(self, cloud):
        return "%s/%s" % (self.collection_path(cloud), self.desired()["router"])

    def find(self, cloud):
        router = cloud.get(self.api, self.router_path(cloud))
        nat = next((n for n in (router or {}).get("nats") or [] if n.get("name") == self.object_name), None)
        if nat is None:
            return None
        self.outputs.update({"id": "%s/%s" % (router["name"], self.object_name), "name": self.object_name})
        return self.read_actual(nat)

    def _put(self, cloud):
        router = cloud.get(self.api, self.router_path(cloud))
        if router is None:
            raise TaskError("%s: router %s not found" % (self.key, self.desired()["router"]))
        body = self.api_body(cloud, self.desired())
        nats = [n for n in router.get("nats") or [] if n.get("name") != self.object_name] + [body]
        cloud.call(self.api, "PATCH", self.router_path(cloud), {"nats": nats})
        self.outputs.update({"id": "%s/%s" % (router["name"], self.object_name), "name": self.object_name})

    def create(self, cloud):
        self._put(cloud)

    def apply_changes(self, cloud, actual, changes):
        self._put(cloud)


class Address(GceTask):
    """An IP address: regional external (no address_type) or internal on a subnetwork."""

    kind = "google_compute_address"
    scope = "region"
    collection = "addresses"
    FIELDS = (
        field("name", api="name", read="name"),
        field("address_type", api="addressType", read="addressType"),
        field("purpose", api="purpose", read="purpose"),
        field("subnetwork", api="subnetwork", read="subnetwork", to_api=link(SUBNETWORK), from_api=last),
    )

    def remember(self, item):
        GceTask.remember(self, item)
        self.outputs["address"] = item.get("address")


class Disk(GceTask):
    """An etcd member's persistent disk, found by etcd-manager (and protokube) through its labels."""

    kind = "google_compute_disk"
    scope = "zone"
    collection = "disks"
    labelled = True
    FIELDS = (
        field("name", api="name", read="name"),
        field("zone"),
        field("size", api="sizeGb", read="sizeGb", to_api=lambda v, cloud: str(v),
              from_api=lambda v: int(v) if v is not None else None),
        field("type", api="type", read="type", from_api=last),
        field("provisioned_iops", api="provisionedIops", read="provisionedIops",
              from_api=lambda v: int(v) if v is not None else None),
        field("provisioned_throughput", api="provisionedThroughput", read="provisionedThroughput",
              from_api=lambda v: int(v) if v is not None else None),
        field("labels", api="labels", read="labels", mutable=True),
    )

    def api_body(self, cloud, desired):
        body = GceTask.api_body(self, cloud, desired)
        body["type"] = url(cloud.project, "zones/%s/diskTypes/%s" % (desired["zone"], desired["type"]))
        return body

    def apply_changes(self, cloud, actual, changes):
        item = cloud.get(self.api, self.object_path(cloud))
        cloud.call(self.api, "POST", self.object_path(cloud) + "/setLabels",
                   {"labels": self.desired()["labels"], "labelFingerprint": item.get("labelFingerprint")})


# Short scope names kops writes in the model -> the URLs the API and Terraform hold.
SCOPES = {"compute-rw": "https://www.googleapis.com/auth/compute",
          "monitoring": "https://www.googleapis.com/auth/monitoring",
          "logging-write": "https://www.googleapis.com/auth/logging.write",
          "cloud-platform": "https://www.googleapis.com/auth/cloud-platform",
          "storage-ro": "https://www.googleapis.com/auth/devstorage.read_only",
          "storage-rw": "https://www.googleapis.com/auth/devstorage.read_write"}


def _disk_api(disk, cloud):
    params = {"sourceImage": disk["source_image"], "diskSizeGb": str(disk["disk_size_gb"]), "diskType": disk["disk_type"]}
    if disk.get("provisioned_iops"):
        params["provisionedIops"] = str(disk["provisioned_iops"])
    if disk.get("provisioned_throughput"):
        params["provisionedThroughput"] = str(disk["provisioned_throughput"])
    return [{"boot": True, "autoDelete": True, "deviceName": disk["device_name"], "mode": "READ_WRITE",
             "type": "PERSISTENT", "initializeParams": params}]


def _disk_read(disks):
    params = (disks or [{}])[0].get("initializeParams") or {}
    return (last(params.get("sourceImage")), str(params.get("diskSizeGb")), last(params.get("diskType")),
            str(params.get("provisionedIops") or ""), str(params.get("provisionedThroughput") or ""))


def _interface_api(nic, cloud):
    interface = {"network": url(cloud.project, NETWORK.format(name=nic["network"])),
                 "subnetwork": url(cloud.project, SUBNETWORK.format(region=cloud.region, name=nic["subnetwork"])),
                 "stackType": nic["stack_type"]}
    if "access_config" in nic:
        interface["accessConfigs"] = [{"type": "ONE_TO_ONE_NAT", "networkTier": "PREMIUM"}]
    if nic.get("alias_ip_range"):
        interface["aliasIpRanges"] = [{"subnetworkRangeName": r["subnetwork_range_name"], "ipCidrRange": r["ip_cidr_range"]}
                                      for r in nic["alias_ip_range"]]
    return [interface]


def _interface_read(nics):
    nic = (nics or [{}])[0]
    return (last(nic.get("network")), last(nic.get("subnetwork")), nic.get("stackType"), bool(nic.get("accessConfigs")),
            sorted((r.get("subnetworkRangeName"), r.get("ipCidrRange")) for r in nic.get("aliasIpRanges") or []))


def _scheduling_api(scheduling, cloud):
    return {"automaticRestart": scheduling["automatic_restart"], "onHostMaintenance": scheduling["on_host_maintenance"],
            "preemptible": scheduling["preemptible"], "provisioningModel": scheduling["provisioning_model"]}


class InstanceTemplate(GceTask):
    """An instance group's template.  Templates cannot change: like kops, a template whose name starts
    with the prefix and whose properties are the wanted ones is found; otherwise a new one is made
    (<prefix>-<unix time>) and the instance group managers move to it.

    The table's API fields are the template's properties (kops' mapToGCE); each reads back in a form
    that leaves out what GCE adds (kinds, fingerprints, indexes) and holds links by name, and a template
    is the wanted one when all of them read the same (none is compared or changed on its own)."""

    kind = "google_compute_instance_template"
    restarts_instances = True  # instances pick a new template up when replaced (rolling update)
    collection = "instanceTemplates"
    labelled = True
    FIELDS = (
        field("name_prefix", compare=False),
        field("can_ip_forward", api="canIpForward", read="properties.canIpForward", from_api=bool, compare=False),
        field("disk", api="disks", read="properties.disks", to_api=_disk_api, from_api=_disk_read, compare=False,
              block=True),
        field("machine_type", api="machineType", read="properties.machineType", from_api=last, compare=False),
        field("metadata", api="metadata", read="properties.metadata", compare=False,
              to_api=lambda metadata, cloud: {"items": [{"key": k, "value": v} for k, v in sorted(metadata.items())]},
              from_api=lambda v: sorted((i.get("key"), i.get("value")) for i in (v or {}).get("items") or [])),
        field("network_interface", api="networkInterfaces", read="properties.networkInterfaces", to_api=_interface_api,
              from_api=_interface_read, compare=False, block=True, nested=("access_config", "alias_ip_range")),
        field("scheduling", api="scheduling", read="properties.scheduling", to_api=_scheduling_api,
              from_api=lambda v: sorted((v or {}).items()), compare=False, block=True),
        field("service_account", api="serviceAccounts", read="properties.serviceAccounts", compare=False, block=True,
              to_api=lambda account, cloud: [{"email": account["email"], "scopes": account["scopes"]}],
              from_api=lambda accounts: [(a.get("email"), sorted(a.get("scopes") or [])) for a in accounts or []]),
        field("labels", api="labels", read="properties.labels", from_api=lambda v: v or {}, compare=False),
        field("tags", api="tags", read="properties.tags", to_api=lambda tags, cloud: {"items": tags},
              from_api=lambda v: sorted((v or {}).get("items") or []), compare=False),
        field("lifecycle", block=True),  # Terraform's alone: a new template before the old one goes
    )

    def properties(self, cloud):
        """The template's API properties: the table's API fields."""
        desired = self.desired()
        return {f.api: f.to_api(desired[f.name], cloud) for f in self.FIELDS if f.sent(desired)}

    def _templates(self, cloud):
        return cloud.lookup("gce:instanceTemplates", lambda: cloud.list(
            self.api, "projects/%s/global/instanceTemplates" % cloud.project))

    def find(self, cloud):
        prefix = self.fields["name_prefix"]
        wanted = self.read_actual({"properties": self.properties(cloud)})
        for item in sorted(self._templates(cloud), key=lambda i: i.get("name", ""), reverse=True):
            if item.get("name", "").startswith(prefix) and cloud.owns((item.get("properties") or {}).get("labels")):
                actual = self.read_actual(item)
                if actual == wanted:
                    self.remember(item)
                    return actual
        return None

    def new_name(self, cloud):
        """kops' name: the prefix and the time in seconds; past the newest template of the prefix, so that a second
        change within the same second does not take a name that is already there."""
        prefix = self.fields["name_prefix"]
        taken = [int(name[len(prefix):]) for name in (item.get("name", "") for item in self._templates(cloud))
                 if name.startswith(prefix) and name[len(prefix):].isdigit()]
        return "%s%d" % (prefix, max([int(time.time())] + [number + 1 for number in taken]))

    def create(self, cloud):
        body = {"name": self.new_name(cloud), "properties": self.properties(cloud)}
        item = cloud.insert(self.api, "projects/%s/global/instanceTemplates" % cloud.project, body)
        cloud.forget("gce:instanceTemplates")
        self.remember(item)

    def terraform_files(self):
        return [(self.metadata_file(key), value.encode("utf-8")) for key, value in sorted(self.fields["metadata"].items())
                if key in BOOT_METADATA]

    def metadata_file(self, key):
        return "data/%s_%s_metadata_%s" % (self.kind, self.terraform_name, key)

    def render_terraform(self):
        body = GceTask.render_terraform(self)
        body["metadata"] = {k: Expression('file("${path.module}/%s")' % self.metadata_file(k)) if k in BOOT_METADATA
                            else v for k, v in self.fields["metadata"].items()}
        return body


# Metadata written to data/ files in Terraform (the boot script), the rest inline.
BOOT_METADATA = ("user-data", "startup-script")


class InstanceGroupManager(GceTask):
    kind = "google_compute_instance_group_manager"
    scope = "zone"
    collection = "instanceGroupManagers"
    FIELDS = (
        field("name", api="name", read="name"),
        field("zone"),
        field("base_instance_name", api="baseInstanceName", read="baseInstanceName"),
        field("version", read="instanceTemplate", mutable=True, from_api=lambda v: {"instance_template": last(v)},
              block=True),
        field("target_size", api="targetSize", read="targetSize", mutable=True),
        field("target_pools", api="targetPools", read="targetPools", mutable=True, from_api=lasts),
        field("list_managed_instances_results", api="listManagedInstancesResults", read="listManagedInstancesResults"),
        field("update_policy", api="updatePolicy", read="updatePolicy", block=True,
              to_api=lambda p, cloud: {"minimalAction": p["minimal_action"], "type": p["type"]},
              from_api=lambda p: {"minimal_action": (p or {}).get("minimalAction"), "type": (p or {}).get("type")}),
        field("lifecycle", block=True),  # Terraform's alone: target_size is left to the autoscaler
    )

    def desired(self):
        desired = GceTask.desired(self)
        # Compared by names: the template's and the pools' links resolve to URLs.
        desired["version"] = {"instance_template": last(desired["version"]["instance_template"])}
        if desired.get("target_pools"):
            desired["target_pools"] = lasts(desired["target_pools"])
        return desired

    def api_body(self, cloud, desired):
        body = GceTask.api_body(self, cloud, desired)
        body["instanceTemplate"] = url(cloud.project, "global/instanceTemplates/" + desired["version"]["instance_template"])
        if desired.get("target_pools"):
            body["targetPools"] = [url(cloud.project, "regions/%s/targetPools/%s" % (cloud.region, p))
                                   for p in desired["target_pools"]]
        return body

    def remember(self, item):
        GceTask.remember(self, item)
        self.outputs["instance_group"] = item.get("instanceGroup")

    def apply_changes(self, cloud, actual, changes):
        desired = self.api_body(cloud, self.desired())
        path = self.object_path(cloud)
        if "version" in changes:
            cloud.call(self.api, "POST", path + "/setInstanceTemplate", {"instanceTemplate": desired["instanceTemplate"]})
        if "target_pools" in changes:
            cloud.call(self.api, "POST", path + "/setTargetPools", {"targetPools": desired.get("targetPools") or []})
        if "target_size" in changes:
            cloud.call(self.api, "POST", path + "/resize", params={"size": desired["targetSize"]})


class HttpHealthCheck(GceTask):
    """The public API load balancer's legacy HTTP health check (kube-apiserver-healthcheck's port)."""

    kind = "google_compute_http_health_check"
    collection = "httpHealthChecks"
    FIELDS = (
        field("name", api="name", read="name"),
        field("port", api="port", read="port"),
        field("request_path", api="requestPath", read="requestPath"),
    )


class TargetPool(GceTask):
    kind = "google_compute_target_pool"
    scope = "region"
    collection = "targetPools"
    FIELDS = (
        field("name", api="name", read="name"),
        field("health_checks", api="healthChecks", read="healthChecks", to_api=lambda v, cloud: v, from_api=lasts),
    )

    def desired(self):
        desired = GceTask.desired(self)
        desired["health_checks"] = lasts(desired.get("health_checks"))
        return desired

    def api_body(self, cloud, desired):
        body = GceTask.api_body(self, cloud, desired)
        body["healthChecks"] = [url(cloud.project, "global/httpHealthChecks/" + h) for h in desired["health_checks"]]
        return body


class RegionHealthCheck(GceTask):
    """The internal load balancer's health check: TCP on the API's port, SSL on kops-controller's."""

    kind = "google_compute_region_health_check"
    scope = "region"
    collection = "healthChecks"
    FIELDS = (
        field("name", api="name", read="name"),
        field("tcp_health_check", api="tcpHealthCheck", read="tcpHealthCheck", block=True,
              from_api=lambda v: {"port": v["port"]} if v else None),
        field("ssl_health_check", api="sslHealthCheck", read="sslHealthCheck", block=True,
              from_api=lambda v: {"port": v["port"]} if v else None),
    )

    def api_body(self, cloud, desired):
        body = GceTask.api_body(self, cloud, desired)
        body["type"] = "TCP" if desired.get("tcp_health_check") else "SSL"
        return body


class RegionBackendService(GceTask):
    kind = "google_compute_region_backend_service"
    scope = "region"
    collection = "backendServices"
    FIELDS = (
        field("name", api="name", read="name"),
        field("protocol", api="protocol", read="protocol"),
        field("load_balancing_scheme", api="loadBalancingScheme", read="loadBalancingScheme"),
        field("health_checks", api="healthChecks", read="healthChecks", from_api=lasts),
        field("backend", api="backends", read="backends", mutable=True, block=True,
              to_api=lambda backends, cloud: [{"group": b["group"], "balancingMode": b["balancing_mode"]}
                                              for b in backends],
              from_api=lambda backends: [{"balancing_mode": b.get("balancingMode"), "group": last(b.get("group"))}
                                         for b in backends or []]),
    )

    def desired(self):
        desired = GceTask.desired(self)
        desired["health_checks"] = lasts(desired["health_checks"])
        desired["backend"] = [dict(b, group=last(b["group"])) for b in desired["backend"]]
        return desired

    def api_body(self, cloud, desired):
        raw = GceTask.desired(self)  # the instance groups' full URLs (zonal)
        body = GceTask.api_body(self, cloud, raw)
        body["healthChecks"] = [url(cloud.project, "regions/%s/healthChecks/%s" % (cloud.region, h))
                                for h in desired["health_checks"]]
        return body

    def apply_changes(self, cloud, actual, changes):
        cloud.call(self.api, "PATCH", self.object_path(cloud), {"backends": self.api_body(cloud, self.desired())["backends"]})


class ForwardingRule(GceTask):
    """The API's forwarding rule: external to the target pool, or internal to the backend service."""

    kind = "google_compute_forwarding_rule"
    scope = "region"
    collection = "forwardingRules"
    labelled = True
    FIELDS = (
        field("name", api="name", read="name"),
        field("ip_address", api="IPAddress", read="IPAddress"),
        field("ip_protocol", api="IPProtocol", read="IPProtocol"),
        field("load_balancing_scheme", api="loadBalancingScheme", read="loadBalancingScheme"),
        field("port_range", api="portRange", read="portRange"),
        field("ports", api="ports", read="ports"),
        field("target", api="target", read="target", from_api=last),
        field("backend_service", api="backendService", read="backendService", from_api=last),
        field("network", api="network", read="network", to_api=link(NETWORK), from_api=last),
        field("subnetwork", api="subnetwork", read="subnetwork", to_api=link(SUBNETWORK), from_api=last),
        field("labels", api="labels", read="labels", mutable=True),
    )

    def desired(self):
        desired = GceTask.desired(self)
        for name in ("target", "backend_service"):
            if desired.get(name):
                desired[name] = last(desired[name])
        return desired

    def api_body(self, cloud, desired):
        body = GceTask.api_body(self, cloud, desired)
        if desired.get("target"):
            body["target"] = url(cloud.project, "regions/%s/targetPools/%s" % (cloud.region, desired["target"]))
        if desired.get("backend_service"):
            body["backendService"] = url(cloud.project, "regions/%s/backendServices/%s"
                                         % (cloud.region, desired["backend_service"]))
        return body

    def apply_changes(self, cloud, actual, changes):
        item = cloud.get(self.api, self.object_path(cloud))
        cloud.call(self.api, "POST", self.object_path(cloud) + "/setLabels",
                   {"labels": self.desired()["labels"], "labelFingerprint": item.get("labelFingerprint")})
