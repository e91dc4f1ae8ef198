# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A running GCE cluster, as the day-2 verbs see it (kops' gce GetCloudGroups and GetApiIngressStatus).

cloud_groups(): per instance group, the cluster's managed instance groups (one per zone) and their
instances.  As in kops, a manager is the cluster's when its instance template is one of the cluster's
(template metadata cluster-name = the cluster's name); the instance group is the template's metadata
kops-k8s-io-instance-group-name (what kops' NameForInstanceGroupManager encodes in the manager's name).
An instance needs an update when the template it was made from (listManagedInstances' version) is not
its manager's current one.  api_endpoint(): the IP address of the cluster's api-* forwarding rule.

Reads only, and never one call per instance: one instanceTemplates list, per zone one
instanceGroupManagers list and one instances list, per manager one listManagedInstances.
listManagedInstances is a POST in the Compute API, but it changes nothing.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

CLUSTER_NAME_METADATA = "cluster-name"
INSTANCE_GROUP_METADATA = "kops-k8s-io-instance-group-name"
CLUSTER_LABEL = "k8s-io-cluster-name"
# Managed instances on their way out are not members (as the AWS reader ignores terminating instances).
LEAVING_ACTIONS = ("DELETING", "ABANDONING")
# API load balancer schemes, external first (kops' kubeconfig prefers a public endpoint).
SCHEMES = {"EXTERNAL": 0, "EXTERNAL_MANAGED": 0, "INTERNAL": 1, "INTERNAL_MANAGED": 1, "INTERNAL_SELF_MANAGED": 1}


class GceReadError(CloudError):
    """What the cloud holds cannot be read as a kops cluster; the message names the object."""


def last_component(url):
    """kops' LastComponent: what follows the last slash of a URL (a name), or the whole string."""
    return (url or "").rsplit("/", 1)[-1]


def resource_path(url):
    """A resource URL without its host and API version (from "projects/"), so links from different
    endpoints (Google's, a test server's) compare equal."""
    url = url or ""
    index = url.find("projects/")
    return url[index:] if index >= 0 else url


def metadata_items(metadata):
    return {item.get("key"): item.get("value") for item in (metadata or {}).get("items") or []}


def cluster_templates(cloud):
    """{template path: (instance group name, template)} for the cluster's instance templates (kops'
    FindInstanceTemplates: metadata cluster-name equal to the cluster's name)."""
    found = {}
    for template in cloud.list("compute", "projects/%s/global/instanceTemplates" % cloud.project):
        items = metadata_items((template.get("properties") or {}).get("metadata"))
        if (items.get(CLUSTER_NAME_METADATA) or "").strip() != cloud.cluster_name:
            continue
        group = items.get(INSTANCE_GROUP_METADATA) or ((template.get("properties") or {}).get("labels") or {}).get(
            "k8s-io-instance-group")
        if not group:
            raise GceReadError("instance template %s of cluster %s names no instance group (metadata %s); it was not "
                               "made by kops or kubeops.kops" % (template.get("name"), cloud.cluster_name,
                                                                 INSTANCE_GROUP_METADATA))
        found[resource_path(template.get("selfLink") or "projects/%s/global/instanceTemplates/%s"
                            % (cloud.project, template["name"]))] = (group, template)
    return found


def _addresses(instance):
    interfaces = instance.get("networkInterfaces") or [{}]
    access = interfaces[0].get("accessConfigs") or [{}]
    return interfaces[0].get("networkIP", ""), access[0].get("natIP", "")


def _roles(labels):
    """kops' addCloudInstanceData: the k8s-io-role-* labels, master spelt control-plane."""
    roles = sorted({"control-plane" if k[len("k8s-io-role-"):] in ("master", "control-plane") else k[len("k8s-io-role-"):]
                    for k in labels or {} if k.startswith("k8s-io-role-")})
    return roles


def cloud_groups(cloud):
    """{instance group name: {"name", "group_name", "managers", "min", "desired", "max", "current", "instances"}}.

    An instance group spread over zones has a manager per zone; its sizes are their sums (kops shows
    one row per manager; these verbs one per instance group).  Each instance: {"id" (its name, the last
    part of the node's providerID), "name", "zone", "manager", "private_ip", "public_ip",
    "private_dns_name", "lifecycle_state" (the instance status), "current_action", "instance_template",
    "needs_update", "machine_type", "roles", "detached": False, "warm": False}.
    """
    templates = cluster_templates(cloud)
    groups = {}
    for zone in cloud.zones:
        managers = [m for m in cloud.list("compute", "projects/%s/zones/%s/instanceGroupManagers" % (cloud.project, zone))
                    if resource_path(m.get("instanceTemplate")) in templates]
        if not managers:
            continue
        label = 'labels.%s = "%s"' % (CLUSTER_LABEL, cloud.ownership_tags()[CLUSTER_LABEL])
        instances = {i["name"]: i for i in cloud.list("compute", "projects/%s/zones/%s/instances" % (cloud.project, zone),
                                                      params={"filter": label})}
        for manager in sorted(managers, key=lambda m: m["name"]):
            name, _template = templates[resource_path(manager["instanceTemplate"])]
            group = groups.setdefault(name, {"name": name, "group_name": "", "managers": [], "min": 0, "desired": 0,
                                             "max": 0, "current": last_component(manager["instanceTemplate"]),
                                             "instances": []})
            size = int(manager.get("targetSize") or 0)
            group["managers"].append({"name": manager["name"], "zone": zone, "target_size": size,
                                      "instance_template": last_component(manager["instanceTemplate"])})
            group["group_name"] = ",".join(m["name"] for m in group["managers"])
            for key in ("min", "desired", "max"):  # kops: MinSize = TargetSize = MaxSize = the manager's targetSize
                group[key] += size
            group["instances"].extend(_members(cloud, zone, manager, instances))
    return groups


def managed_instances(cloud, zone, manager_name):
    """The manager's listManagedInstances (a read, though a POST)."""
    answer = cloud.call("compute", "POST", "projects/%s/zones/%s/instanceGroupManagers/%s/listManagedInstances"
                        % (cloud.project, zone, manager_name), wait=False) or {}
    return answer.get("managedInstances") or []


def _members(cloud, zone, manager, instances):
    current = resource_path(manager["instanceTemplate"])
    members = []
    for managed in managed_instances(cloud, zone, manager["name"]):
        if managed.get("currentAction") in LEAVING_ACTIONS:
            continue
        name = last_component(managed.get("instance"))
        instance = instances.get(name)
        if instance is None:  # kops: "Instance not found, it may not have been created"
            continue
        running = resource_path((managed.get("version") or {}).get("instanceTemplate"))
        private_ip, public_ip = _addresses(instance)
        members.append({"id": name, "name": name, "zone": zone, "manager": manager["name"],
                        "private_ip": private_ip, "public_ip": public_ip,
                        "private_dns_name": instance.get("hostname") or "%s.%s.c.%s.internal" % (name, zone, cloud.project),
                        "lifecycle_state": instance.get("status", ""), "current_action": managed.get("currentAction", ""),
                        "instance_template": last_component(running), "needs_update": not running or running != current,
                        "machine_type": last_component(instance.get("machineType")), "roles": _roles(instance.get("labels")),
                        "detached": False, "warm": False})
    return members


def api_endpoint(cloud):
    """The IP address of the cluster's API forwarding rule (kops' GetApiIngressStatus: a regional rule named
    api-* labelled with the cluster), an external one before an internal one; None without one."""
    wanted = cloud.ownership_tags()[CLUSTER_LABEL]
    rules = [r for r in cloud.list("compute", "projects/%s/regions/%s/forwardingRules" % (cloud.project, cloud.region))
             if r.get("name", "").startswith("api-") and (r.get("labels") or {}).get(CLUSTER_LABEL) == wanted]
    for rule in rules:
        if not rule.get("IPAddress"):
            raise GceReadError("forwarding rule %s of cluster %s has no IP address yet" % (rule["name"], cloud.cluster_name))
        if rule.get("loadBalancingScheme", "EXTERNAL") not in SCHEMES:
            raise GceReadError("forwarding rule %s has an unknown loadBalancingScheme %r"
                               % (rule["name"], rule.get("loadBalancingScheme")))
    rules.sort(key=lambda r: (SCHEMES[r.get("loadBalancingScheme", "EXTERNAL")], r["name"]))
    return rules[0]["IPAddress"] if rules else None


def cloud(cluster_name, region, profile=None, project=None):
    """The cluster's GCE view (cloud/gce.GceCloud) these lookups run on; project: the spec's spec.project.
    Credentials: GOOGLE_APPLICATION_CREDENTIALS or the application default credentials.  profile is the
    modules' AWS option (it also comes from AWS_PROFILE in the environment, so it cannot be refused here):
    it has no meaning on GCE."""
    del profile
    if not project:
        raise GceReadError("cluster %s has no spec.project: the GCE project its objects are in" % cluster_name)
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
    return GceCloud(cluster_name, project, region)
