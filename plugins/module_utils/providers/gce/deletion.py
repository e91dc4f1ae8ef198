# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What `kops delete cluster` finds and deletes on GCE (kops' pkg/resources/gce), as a table of kinds.

How each kind is recognised as the cluster's (kops' rules, plus guards so that
another cluster's object or an unlabelled foreign one is never taken):

- labelled kinds: instances and disks by the label k8s-io-cluster-name=<cluster
  with dashes> (kops' gce.LabelForCluster); instance templates by their metadata
  item cluster-name=<cluster> (kops' FindInstanceTemplates); instance group
  managers by using one of those templates.
- named kinds (GCE firewalls, networks, subnetworks, routers, addresses, target
  pools, forwarding rules carry no labels, or may not): kops' names.  A name is
  the cluster's when it is `<id>-<cluster with dashes>` for an id of at most 8
  dash-separated tokens, or contains the 6-character hash kops puts in a name it
  truncated (kops' matchesClusterNameMultipart).  Guards: a forwarding rule or
  address labelled for another cluster is not ours; a firewall needs every target
  tag to be the cluster's (`<cluster with dashes>-...` or the hash) and, like
  kops, at most 5 tokens before the cluster name; a subnetwork must be used by
  the cluster's instance templates or lie in the cluster's network; the network
  is the one named kops' SafeTruncatedClusterName, never a network the spec names
  as shared (networking.networkID); a router must be in the cluster's network.
- target pools' HTTP health checks, regional backend services whose backends are
  all the cluster's instance groups, and their regional health checks: through
  the objects that use them (as kops).
- service accounts: the account ids kops gives them (control-plane, node and
  bastion, suffixed with the cluster name and cut to 30 characters); their
  bindings in the project's IAM policy are removed with them.
- Cloud DNS: A records api., api.internal. and bastion. under the cluster name,
  in the managed zones the name falls in, unless the cluster uses gossip or no DNS.

Anything else in the cluster's network (another cluster's instance, a user's
firewall rule) keeps the network, and is reported by name instead of retried.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceError, gce_cluster_label
from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import ALREADY_GONE, Resource
from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import each_object
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import hash_string, truncate
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

CLUSTER_LABEL = "k8s-io-cluster-name"
CLUSTER_METADATA = "cluster-name"
MAX_NAME_TOKENS = 8        # kops' matchesClusterName
MAX_FIREWALL_TOKENS = 5    # kops' maxPrefixTokens
SERVICE_ACCOUNT_ROLES = ("control-plane", "bastion", "node")  # kops' gce.ControlPlane, Bastion, Node
DNS_PREFIXES = ("api", "api.internal", "bastion")
ROUTE_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

# kops' kinds (its type names), with the kinds that must be gone before each (kops' Blocks / Blocked,
# and what GCE refuses to delete while something still uses it).
AFTER = {
    "InstanceGroupManager": ("BackendService",),  # a backend service uses its instance group
    "Instance": ("InstanceGroupManager",),
    "InstanceTemplate": ("InstanceGroupManager",),
    "Disk": ("Instance", "InstanceGroupManager"),
    "Route": ("Instance",),
    "ForwardingRule": (),
    "TargetPool": ("ForwardingRule", "InstanceGroupManager"),  # a group may name it (targetPools)
    "HTTP HealthCheck": ("TargetPool",),
    "BackendService": ("ForwardingRule",),
    "HealthCheck": ("BackendService",),
    "Address": ("ForwardingRule",),
    "Router": (),
    "FirewallRule": (),
    "Subnet": ("InstanceTemplate", "Instance", "InstanceGroupManager", "Router", "ForwardingRule", "Address",
               "BackendService"),
    "Network": ("Subnet", "FirewallRule", "Router", "Route", "Instance", "InstanceTemplate", "ForwardingRule"),
    "ServiceAccount": ("InstanceGroupManager", "Instance", "InstanceTemplate"),
    "DNSRecord": (),
}


def _last(link):
    return (link or "").rstrip("/").rsplit("/", 1)[-1]


def _rel(link):
    """A selfLink as the path under the Compute API's base (projects/...)."""
    return link.split("/compute/v1/", 1)[-1] if "/compute/v1/" in link else link


def _ref(project, link):
    """A reference as projects/<p>/...: a full URL, a projects/ path and a partial global/... all compare equal."""
    rel = _rel(link or "")
    return rel if not rel or rel.startswith("projects/") else "projects/%s/%s" % (project, rel)


def safe_name(cluster_name):
    """kops' gce.SafeClusterName."""
    return gce_cluster_label(cluster_name)


def network_name(cluster_name):
    """kops' SafeTruncatedClusterName(cluster, 63): the network kops makes for the cluster."""
    return truncate(safe_name(cluster_name), 63)


def service_account_id(role, cluster_name):
    """kops' gce.ServiceAccountName: ClusterSuffixedName(role, cluster, 30)."""
    prefix = role + "-"
    return prefix + truncate(safe_name(cluster_name), 30 - len(prefix))


def name_matches(cluster_name, name, max_tokens=MAX_NAME_TOKENS):
    """kops' matchesClusterNameMultipart: <id>-<cluster dashes> for an id of at most max_tokens tokens, or the hash."""
    safe = safe_name(cluster_name)
    if hash_string(safe) in name:
        return True
    tokens = name.split("-")
    return any(name == "%s-%s" % ("-".join(tokens[:i]), safe) for i in range(1, min(max_tokens, len(tokens)) + 1)
               if tokens[:i] != [""])


def _foreign_label(cluster_name, item):
    value = (item.get("labels") or {}).get(CLUSTER_LABEL)
    return value is not None and value != safe_name(cluster_name)


def _metadata(item):
    return {i.get("key"): i.get("value") for i in (item.get("metadata") or {}).get("items") or []}


class Scope(object):
    """What discovery learns along the way (the cluster's templates, network, groups ...), and its spec."""

    def __init__(self, cloud, spec=None):
        self.cloud = cloud
        self.name = cloud.cluster_name
        self.spec = spec
        self.project = cloud.project
        self.region = cloud.region
        self.templates = []
        self.groups = []           # instance group managers
        self.instances = []
        self.network_links = set()
        self.target_pools = []
        self.backend_services = []
        self.forwarding_rules = []
        self.found = {}            # kind name -> its resources, as discovery goes
        self.other_clusters = set()  # other clusters' names with dashes, as their labels and templates give them

    def owns_name(self, name, max_tokens=MAX_NAME_TOKENS):
        """kops' name rule, except for a name that is another cluster's by the same rule when that cluster's
        name ends in ours (eu.minimal.example.com's api-eu-minimal-example-com is also api-eu + ours)."""
        if not name_matches(self.name, name, max_tokens):
            return False
        ours = safe_name(self.name)
        return not any(other.endswith("-" + ours) and name_matches(other, name, max_tokens) for other in self.other_clusters)

    def owns_tag(self, tag):
        """A network tag of the cluster's instances (<cluster dashes>-k8s-io-role-...), or one with its hash; not one
        of another cluster whose name starts with ours (minimal.example.com.au's minimal-example-com-au-...)."""
        ours = safe_name(self.name)
        if hash_string(ours) in tag:
            return True
        return tag.startswith(ours + "-") and not any(
            tag.startswith(other + "-") for other in self.other_clusters if other.startswith(ours + "-"))

    def note_labels(self, items):
        for item in items:
            value = (item.get("labels") or {}).get(CLUSTER_LABEL)
            if value and value != safe_name(self.name):
                self.other_clusters.add(value)
        return items

    def compute(self, path, params=None):
        return self.cloud.list("compute", "projects/%s/%s" % (self.project, path), params=params)

    def regional(self, collection):
        return self.compute("regions/%s/%s" % (self.region, collection))

    def shared_network(self):
        return ((self.spec or {}).get("networking") or {}).get("networkID") or (self.spec or {}).get("networkID")


class Kind(object):
    """One kind: found by find(scope), deleted one object at a time by its selfLink (data["selfLink"])."""

    name = None
    api = "compute"

    @property
    def after(self):
        return AFTER[self.name]

    def find(self, scope):
        return []

    def resource(self, item, object_id=None):
        return Resource(self.name, object_id or item["name"], item["name"], data=item)

    def delete(self, cloud, resources):
        return each_object(resources, lambda r: self.delete_one(cloud, r))

    def delete_one(self, cloud, resource):
        return None if cloud.delete(self.api, _rel(resource.data["selfLink"])) else ALREADY_GONE

    def holders(self, cloud, resource, resources):
        """What outside the cluster uses it, by name (GCE's in-use error names one user)."""
        return []


class InstanceTemplates(Kind):
    name = "InstanceTemplate"

    def find(self, scope):
        templates = scope.compute("global/instanceTemplates")
        owners = {t["name"]: (_metadata(t.get("properties") or {}).get(CLUSTER_METADATA) or "").strip() for t in templates}
        scope.other_clusters.update(safe_name(o) for o in owners.values() if o and o != scope.name)
        scope.templates = [t for t in templates if owners[t["name"]] == scope.name]
        for template in scope.templates:
            for nic in (template.get("properties") or {}).get("networkInterfaces") or []:
                scope.network_links.add(nic.get("network"))
        return [self.resource(t) for t in scope.templates]


class InstanceGroupManagers(Kind):
    name = "InstanceGroupManager"

    def find(self, scope):
        templates = {t["selfLink"] for t in scope.templates}
        found = []
        for zone in scope.cloud.zones:
            for group in scope.compute("zones/%s/instanceGroupManagers" % zone):
                if group.get("instanceTemplate") in templates:
                    found.append(group)
        scope.groups = found
        return [self.resource(g, "%s/%s" % (_last(g["zone"]), g["name"])) for g in found]


class Instances(Kind):
    """Labelled instances (managed or not); a group's go with it, so this mostly finds them gone."""

    name = "Instance"

    def find(self, scope):
        label = "labels.%s = %s" % (CLUSTER_LABEL, safe_name(scope.name))
        scope.instances = [i for i in scope.compute("aggregated/instances", {"filter": label})
                           if (i.get("labels") or {}).get(CLUSTER_LABEL) == safe_name(scope.name)
                           and _last(i.get("zone")) in scope.cloud.zones]
        return [self.resource(i, "%s/%s" % (_last(i["zone"]), i["name"])) for i in scope.instances]


class Disks(Kind):
    name = "Disk"

    def find(self, scope):
        label = "labels.%s = %s" % (CLUSTER_LABEL, safe_name(scope.name))
        disks = [d for d in scope.compute("aggregated/disks", {"filter": label})
                 if (d.get("labels") or {}).get(CLUSTER_LABEL) == safe_name(scope.name)]
        return [self.resource(d, "%s/%s" % (_last(d["zone"]), d["name"])) for d in disks]

    def holders(self, cloud, resource, resources):
        ours = {r.data.get("selfLink") for r in resources if r.kind == "Instance"}
        current = cloud.get("compute", _rel(resource.data["selfLink"])) or {}
        return ["instance %s" % _last(u) for u in current.get("users") or [] if u not in ours]


class Routes(Kind):
    """Routes the cloud controller made for the cluster's pods (<cluster prefix>-<uuid>) via its instances."""

    name = "Route"

    def find(self, scope):
        prefix = safe_name(scope.name)
        if len(prefix) + 1 > 63 - 36:
            prefix = prefix[:63 - 36 - 1]
        ours = {i["selfLink"] for i in scope.instances}
        found = []
        for route in scope.compute("global/routes"):
            name = route["name"]
            if not (name.startswith(prefix + "-") and ROUTE_UUID.match(name[len(prefix) + 1:])):
                continue
            gone = any(w.get("code") == "NEXT_HOP_INSTANCE_NOT_FOUND" for w in route.get("warnings") or [])
            if gone or route.get("nextHopInstance") in ours:
                found.append(route)
        return [self.resource(r) for r in found]


class ForwardingRules(Kind):
    name = "ForwardingRule"

    def find(self, scope):
        scope.forwarding_rules = [f for f in scope.note_labels(scope.regional("forwardingRules"))
                                  if scope.owns_name(f["name"]) and not _foreign_label(scope.name, f)]
        return [self.resource(f) for f in scope.forwarding_rules]


class TargetPools(Kind):
    name = "TargetPool"

    def find(self, scope):
        scope.target_pools = [p for p in scope.regional("targetPools") if scope.owns_name(p["name"])]
        return [self.resource(p) for p in scope.target_pools]

    def holders(self, cloud, resource, resources):
        ours = {r.data.get("selfLink") for r in resources if r.kind == "ForwardingRule"}
        rules = cloud.list("compute", "projects/%s/regions/%s/forwardingRules" % (cloud.project, cloud.region))
        return ["forwarding rule %s" % r["name"] for r in rules
                if r.get("target") == resource.data["selfLink"] and r["selfLink"] not in ours]


class HttpHealthChecks(Kind):
    """The target pools' HTTP health checks (kops finds them through the pools), and those named for the
    cluster (a run interrupted after the pools went)."""

    name = "HTTP HealthCheck"

    def find(self, scope):
        links = {link for pool in scope.target_pools for link in pool.get("healthChecks") or [] if "/httpHealthChecks/" in link}
        checks = {c["selfLink"]: c for c in scope.compute("global/httpHealthChecks")
                  if c["selfLink"] in links or scope.owns_name(c["name"])}
        return [self.resource(c) for _l, c in sorted(checks.items())]


class BackendServices(Kind):
    """Regional backend services whose every backend is one of the cluster's instance groups (kops)."""

    name = "BackendService"

    def find(self, scope):
        groups = {g.get("instanceGroup") for g in scope.groups}
        scope.backend_services = [s for s in scope.regional("backendServices")
                                  if s.get("backends") and all(b.get("group") in groups for b in s["backends"])]
        return [self.resource(s) for s in scope.backend_services]


class HealthChecks(Kind):
    name = "HealthCheck"

    def find(self, scope):
        """The backend services' regional health checks, and those named for the cluster (an interrupted run)."""
        links = {link for service in scope.backend_services for link in service.get("healthChecks") or []}
        checks = {c["selfLink"]: c for c in scope.regional("healthChecks")
                  if c["selfLink"] in links or scope.owns_name(c["name"])}
        return [self.resource(c) for _l, c in sorted(checks.items())]


class Addresses(Kind):
    name = "Address"

    def find(self, scope):
        return [self.resource(a) for a in scope.note_labels(scope.regional("addresses"))
                if scope.owns_name(a["name"]) and not _foreign_label(scope.name, a)]

    def holders(self, cloud, resource, resources):
        ours = {r.data.get("selfLink") for r in resources}
        current = cloud.get("compute", _rel(resource.data["selfLink"])) or {}
        return ["%s" % _rel(u) for u in current.get("users") or [] if u not in ours]


class Networks(Kind):
    name = "Network"

    def find(self, scope):
        wanted = network_name(scope.name)
        if scope.shared_network():
            return []  # the user's network (networking.networkID): kops neither creates nor deletes it
        found = [n for n in scope.compute("global/networks", {"filter": "name = %s" % wanted}) if n["name"] == wanted]
        scope.network_links.update(n["selfLink"] for n in found)
        return [self.resource(n) for n in found]

    def holders(self, cloud, resource, resources):
        """Whatever in the network is not the cluster's: firewall rules, subnetworks, routers, instances."""
        ours = {_ref(cloud.project, r.data.get("selfLink")) for r in resources}
        link = _ref(cloud.project, resource.data["selfLink"])
        project = cloud.project
        found = []
        for path, what in (("global/firewalls", "firewall rule"), ("regions/%s/subnetworks" % cloud.region, "subnetwork"),
                           ("regions/%s/routers" % cloud.region, "router")):
            for item in cloud.list("compute", "projects/%s/%s" % (project, path)):
                if _ref(project, item.get("network")) == link and _ref(project, item["selfLink"]) not in ours:
                    found.append("%s %s" % (what, item["name"]))
        for instance in cloud.list("compute", "projects/%s/aggregated/instances" % project):
            if _ref(project, instance["selfLink"]) not in ours and any(
                    _ref(project, n.get("network")) == link for n in instance.get("networkInterfaces") or []):
                found.append("instance %s" % instance["name"])
        return found


class Subnets(Kind):
    name = "Subnet"

    def find(self, scope):
        used = {_ref(scope.project, nic.get("subnetwork")) for t in scope.templates
                for nic in (t.get("properties") or {}).get("networkInterfaces") or []}
        return [self.resource(s) for s in scope.regional("subnetworks") if scope.owns_name(s["name"]) and (
            _ref(scope.project, s["selfLink"]) in used or _ref(scope.project, s.get("network")) in _our_networks(scope))]


class Routers(Kind):
    name = "Router"

    def find(self, scope):
        return [self.resource(r) for r in scope.regional("routers")
                if scope.owns_name(r["name"]) and _ref(scope.project, r.get("network")) in _our_networks(scope) | _template_networks(scope)]


class FirewallRules(Kind):
    """kops' rules by name and target tags; and, as kops, what the cloud controller made for the cluster's
    LoadBalancer services: k8s-fw-<rule> (with its forwarding rule, target pool and k8s- HTTP health checks)
    and k8s-...-node-http-hc, when every target tag is the cluster's."""

    name = "FirewallRule"

    def find(self, scope):
        found = []
        for rule in scope.compute("global/firewalls"):
            tags = rule.get("targetTags") or []
            name = rule["name"]
            named = scope.owns_name(name, MAX_FIREWALL_TOKENS)
            if not tags or not (named or name.startswith("k8s-")) or not all(scope.owns_tag(t) for t in tags):
                continue
            if named or (name.startswith("k8s-") and name.endswith("-node-http-hc")):
                found.append(self.resource(rule))
            elif name.startswith("k8s-fw-"):
                found.extend(_service_load_balancer(scope, self.resource(rule)))
        return found


def _service_load_balancer(scope, firewall):
    """A LoadBalancer service's objects, found from its firewall rule as kops does.  The rule itself is the
    cluster's by its target tags even when its forwarding rule is gone (an interrupted run; kops would then
    leave it, and with it the network); health checks only when named k8s- (the controller's)."""
    found = [firewall]
    rule = scope.cloud.get("compute", "projects/%s/regions/%s/forwardingRules/%s" % (
        scope.project, scope.region, firewall.name[len("k8s-fw-"):]))
    if rule is None or _foreign_label(scope.name, rule):
        return found
    found.append(KINDS_BY_NAME["ForwardingRule"].resource(rule))
    pool = scope.cloud.get("compute", _rel(rule["target"])) if "/targetPools/" in (rule.get("target") or "") else None
    if pool is None:
        return found
    found.append(KINDS_BY_NAME["TargetPool"].resource(pool))
    for link in pool.get("healthChecks") or []:
        check = scope.cloud.get("compute", _rel(link)) if _last(link).startswith("k8s-") and "/httpHealthChecks/" in link else None
        if check is not None:
            found.append(KINDS_BY_NAME["HTTP HealthCheck"].resource(check))
    return found


class ServiceAccounts(Kind):
    """kops' service accounts; their members are taken out of the project's IAM policy first."""

    name = "ServiceAccount"
    api = "iam"

    def find(self, scope):
        wanted = {service_account_id(role, scope.name) for role in SERVICE_ACCOUNT_ROLES}
        accounts = scope.cloud.list("iam", "projects/%s/serviceAccounts" % scope.project, key="accounts")
        return [Resource(self.name, a["email"], a["email"], data=a) for a in accounts if a["email"].split("@")[0] in wanted]

    def delete(self, cloud, resources):
        members = {"serviceAccount:" + r.id for r in resources}
        try:
            _remove_policy_members(cloud, members)
        except GceError as exc:
            return {r.id: exc for r in resources}
        return each_object(resources, lambda r: None if cloud.delete("iam", r.data["name"]) else ALREADY_GONE)


def _remove_policy_members(cloud, members):
    """Drop members from every binding of the project's IAM policy (one read-modify-write, retried on a race)."""
    path = "projects/%s" % cloud.project
    for _attempt in range(5):
        policy = cloud.call("crm", "POST", path + ":getIamPolicy", {})
        bindings = policy.get("bindings") or []
        if not any(set(b.get("members") or []) & members for b in bindings):
            return
        policy["bindings"] = [dict(b, members=[m for m in b.get("members") or [] if m not in members]) for b in bindings]
        policy["bindings"] = [b for b in policy["bindings"] if b["members"]]
        try:
            cloud.call("crm", "POST", path + ":setIamPolicy", {"policy": policy})
            return
        except GceError as exc:
            if exc.status != 409:  # a concurrent change (etag): read again
                raise
    raise GceError(409, "aborted", "the project's IAM policy kept changing while removing %s" % ", ".join(sorted(members)))


class DnsRecords(Kind):
    """api., api.internal. and bastion. A records of the cluster in the zones its name falls in (kops)."""

    name = "DNSRecord"
    api = "dns"

    def find(self, scope):
        if not publishes_dns(scope.name, scope.spec):
            return []
        cluster_dns = scope.name.rstrip(".") + "."
        names = {"%s.%s" % (p, cluster_dns) for p in DNS_PREFIXES}
        found = []
        for zone in scope.cloud.list("dns", "projects/%s/managedZones" % scope.project, key="managedZones"):
            if not ("." + cluster_dns).endswith("." + zone["dnsName"]):  # the zone's name, label by label
                continue
            path = "projects/%s/managedZones/%s/rrsets" % (scope.project, zone["name"])
            for record in scope.cloud.list("dns", path, key="rrsets"):
                if record.get("type") == "A" and record.get("name") in names:
                    found.append(Resource(self.name, "%s/%s" % (zone["name"], record["name"]), record["name"],
                                          data={"zone": zone["name"], "record": record}))
        return found

    def delete(self, cloud, resources):
        """One change per zone (kops' group deleter); a record gone meanwhile: one by one then."""
        by_zone = {}
        for resource in resources:
            by_zone.setdefault(resource.data["zone"], []).append(resource)
        results = {}
        for zone, records in by_zone.items():
            path = "projects/%s/managedZones/%s/changes" % (cloud.project, zone)
            try:
                cloud.call("dns", "POST", path, {"kind": "dns#change", "deletions": [r.data["record"] for r in records]})
                results.update({r.id: None for r in records})
                continue
            except GceError as exc:
                if exc.status not in (404, 412):
                    results.update({r.id: exc for r in records})
                    continue
            for record in records:
                try:
                    cloud.call("dns", "POST", path, {"kind": "dns#change", "deletions": [record.data["record"]]})
                    results[record.id] = None
                except GceError as exc:
                    results[record.id] = ALREADY_GONE if exc.status in (404, 412) else exc
        return results


def publishes_dns(cluster_name, spec):
    """kops' PublishesDNSRecords: not gossip (.k8s.local) and DNS not None."""
    if cluster_name.endswith(".k8s.local"):
        return False
    topology = ((spec or {}).get("networking") or {}).get("topology") or (spec or {}).get("topology") or {}
    return (topology.get("dns") or {}).get("type") != "None"


def _our_networks(scope):
    return {_ref(scope.project, r.data["selfLink"]) for r in scope.found.get("Network", [])}


def _template_networks(scope):
    return {_ref(scope.project, link) for link in scope.network_links if link}


# The kinds in discovery order: a kind may use what an earlier one learnt (templates -> groups -> backend services).
KINDS = [InstanceTemplates(), InstanceGroupManagers(), Instances(), Disks(), Routes(), ForwardingRules(), TargetPools(),
         HttpHealthChecks(), BackendServices(), HealthChecks(), Addresses(), Networks(), Subnets(), Routers(),
         FirewallRules(), ServiceAccounts(), DnsRecords()]
KINDS_BY_NAME = {k.name: k for k in KINDS}


def cloud(cluster_name, region, profile=None, spec=None):
    """The cluster's GceCloud: its project from the spec (else the credentials' own, or GOOGLE_CLOUD_PROJECT)."""
    import os
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
    del profile  # an AWS option
    if not region:
        raise CloudError("region is needed to find the cluster's GCE objects",
                         fix="give the region option, or keep the cluster in the state store (its subnets name the "
                             "region)")
    project = (spec or {}).get("project") or os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("CLOUDSDK_CORE_PROJECT")
    return GceCloud(cluster_name, project, region)


def discover(gce_cloud, spec=None):
    """Every object the cluster owns, in kops' kinds."""
    scope = Scope(gce_cloud, spec)
    resources = {}
    for kind in KINDS:
        found = kind.find(scope)
        scope.found[kind.name] = found
        for resource in found:  # a service's load balancer may also be found by its names
            resources.setdefault(resource.key, resource)
    return list(resources.values())


def any_owned(gce_cloud):
    """The first object found that the cluster owns, or None: the cheap check before a store is removed."""
    scope = Scope(gce_cloud)
    for kind in (KINDS_BY_NAME["InstanceTemplate"], KINDS_BY_NAME["Instance"], KINDS_BY_NAME["Disk"], KINDS_BY_NAME["Network"]):
        for resource in kind.find(scope):
            return resource
    return None
