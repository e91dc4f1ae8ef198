# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kubeops.kops.kops inventory's GCE hosts: the managed instance groups' instances (providers/gce/groups.py,
the day-2 verbs' reader)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError
from ansible_collections.kubeops.kops.plugins.module_utils.providers.inventory_hosts import NEEDS_UPDATE_GROUP, ROLE_GROUPS, safe_group, through_bastion

# The inventory's hostname choices on GCE (providers/gce/groups' instance fields): the zonal internal DNS name, the
# instance's name.
HOSTNAME_FIELDS = {"private-ip-address": "private_ip", "public-ip-address": "public_ip",
                   "private-dns-name": "private_dns_name", "instance-id": "name"}


class InventoryError(CloudError):
    pass


def gce_instance_hosts(cluster_name, groups, cloud_groups, hostname, state_store, user, jump_host=None):
    """[(host name, {var: value}, [group names])] for a GCE cluster, from providers/gce/groups.cloud_groups (pure).

    The instance groups' managed instance groups' instances; the instance's name is its id (the last part of
    its node's providerID).  needs_update: the template it was made from is not its manager's current one."""
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    hosts = []
    for group_name, cloud_group in sorted(cloud_groups.items()):
        if group_name not in roles:
            continue  # a manager of an instance group the state store no longer has
        current = {m["name"]: m["instance_template"] for m in cloud_group["managers"]}
        for instance in sorted(cloud_group["instances"], key=lambda i: i["name"]):
            name = instance[HOSTNAME_FIELDS[hostname]]
            if not name:
                continue
            needs_update = instance["needs_update"]
            variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group_name,
                         "kops_role": roles[group_name], "kops_state_store": state_store,
                         "kops_instance_id": instance["name"], "kops_zone": instance["zone"],
                         "kops_private_ip": instance["private_ip"] or None, "kops_public_ip": instance["public_ip"] or None,
                         "kops_instance_group_manager": instance["manager"],
                         "kops_instance_template": instance["instance_template"] or None,
                         "kops_group_instance_template": current[instance["manager"]],
                         "kops_status": "NeedsUpdate" if needs_update else "UpToDate", "kops_needs_update": needs_update,
                         "ansible_host": instance["public_ip"] or instance["private_ip"]}
            names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(roles[group_name], "role_node"),
                     "ig_" + safe_group(group_name), "zone_" + safe_group(instance["zone"])]
            if needs_update:
                names.append(NEEDS_UPDATE_GROUP)
            hosts.append((name, variables, names))
    return through_bastion(hosts, user, jump_host)


def hosts(plugin, service, cluster, groups, region):
    """The managed instance groups' instances (providers/gce/groups: the day-2 verbs' reader)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups as gce_groups

    cluster_name = cluster["metadata"]["name"]
    try:
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceError
    except ImportError as exc:
        raise InventoryError("kops inventory: a GCE cluster needs google-auth and requests: %s" % exc)
    try:
        cloud = gce_groups.cloud(cluster_name, region, project=cluster["spec"].get("project"))
        cloud_groups = gce_groups.cloud_groups(cloud)
    except (GceError, ValueError) as exc:
        raise InventoryError("kops inventory: %s in %s: %s" % (cluster_name, region, exc))
    bastion = (cluster["spec"].get("topology") or {}).get("bastion") or {}
    return gce_instance_hosts(cluster_name, groups, cloud_groups, plugin.get_option("hostname"), service.store.url(""),
                              plugin.get_option("ansible_user"),
                              bastion.get("bastionPublicName") or bastion.get("publicName") or None)
