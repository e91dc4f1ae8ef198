# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kubeops.kops.kops inventory's metal hosts: the machines are the user's own inventory hosts, so the plugin
reads them from the inventory sources parsed before it (a hosts file listed before the kops one), not from a cloud.

A host is a machine of an instance group when it says so:
- its variable kops_instance_group (set on the host or on a group of its, in the inventory source), or
- its membership of the group ig_<instance group> (dashes and dots as underscores, as the plugin names it).
It then gets the groups and host variables the plugin gives an AWS or GCE instance of that group (kops_<cluster>,
role_*, ig_*, zone_*; kops_cluster_name, kops_instance_group, kops_role, kops_state_store, kops_zone, ...).
A host naming an instance group the cluster does not have, or two of them, fails in one line.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError
from ansible_collections.kubeops.kops.plugins.module_utils.providers.inventory_hosts import ROLE_GROUPS, safe_group

GROUP_VARIABLE = "kops_instance_group"
GROUP_PREFIX = "ig_"


class InventoryError(CloudError):
    pass


def _zone_of(cluster, group):
    """The zone of the group's first subnet (metal: kops' e2e names it main), else None."""
    zones = {s.get("name"): s.get("zone") for s in (cluster.get("spec") or {}).get("subnets") or []}
    return next((zones[s] for s in (group.get("spec") or {}).get("subnets") or [] if zones.get(s)), None)


def group_of(cluster_name, host_name, host_vars, host_groups, instance_groups):
    """The instance group a host names (None: not a machine of this cluster).  host_vars: its variables with its
    groups' (the inventory source's); host_groups: the names of the groups it is in."""
    by_safe_name = {GROUP_PREFIX + safe_group(name): name for name in instance_groups}
    named = []
    if host_vars.get(GROUP_VARIABLE) not in (None, ""):
        named.append(("%s: %s" % (GROUP_VARIABLE, host_vars[GROUP_VARIABLE]), str(host_vars[GROUP_VARIABLE])))
    named.extend(("group %s" % g, by_safe_name[g]) for g in sorted(host_groups) if g in by_safe_name)
    for how, name in named:
        if name not in instance_groups:
            raise InventoryError("kops inventory: host %s: %s is not an instance group of %s (it has %s); fix the "
                                 "host's %s" % (host_name, how, cluster_name, ", ".join(sorted(instance_groups)),
                                                GROUP_VARIABLE))
    chosen = sorted({name for _how, name in named})
    if len(chosen) > 1:
        raise InventoryError("kops inventory: host %s names instance groups %s (%s); a machine belongs to one"
                             % (host_name, " and ".join(chosen), ", ".join(how for how, _n in named)))
    return chosen[0] if chosen else None


def metal_hosts(cluster, groups, inventory_hosts, state_store):
    """[(host name, {var: value}, [group names])] for a metal cluster (pure).

    inventory_hosts: [(host name, its variables with its groups', [its group names])] of the inventory so far."""
    cluster_name = cluster["metadata"]["name"]
    by_name = {g["metadata"]["name"]: g for g in groups}
    hosts = []
    for host_name, host_vars, host_groups in sorted(inventory_hosts, key=lambda h: h[0]):
        name = group_of(cluster_name, host_name, host_vars, host_groups, by_name)
        if name is None:
            continue
        group = by_name[name]
        role = (group.get("spec") or {}).get("role") or "Node"
        zone = _zone_of(cluster, group)
        address = host_vars.get("ansible_host") or None
        variables = {"kops_cluster_name": cluster_name, "kops_instance_group": name, "kops_role": role,
                     "kops_state_store": state_store, "kops_instance_id": host_name, "kops_zone": zone,
                     "kops_private_ip": address, "kops_public_ip": None,
                     # Whether the host runs its group's current config is enroll's to tell (a later slice).
                     "kops_status": None, "kops_needs_update": None}
        if host_vars.get("ansible_user"):
            variables["ansible_user"] = host_vars["ansible_user"]  # the user's own, never the plugin's default
        names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(role, "role_node"),
                 GROUP_PREFIX + safe_group(name)]
        if zone:
            names.append("zone_" + safe_group(zone))
        hosts.append((host_name, variables, names))
    return hosts


def oversized(groups, hosts):
    """[(instance group, hosts, maxSize)] of the groups with more hosts than their maxSize."""
    count = {}
    for _name, variables, _groups in hosts:
        count[variables["kops_instance_group"]] = count.get(variables["kops_instance_group"], 0) + 1
    return [(g["metadata"]["name"], count[g["metadata"]["name"]], (g.get("spec") or {}).get("maxSize"))
            for g in groups if (g.get("spec") or {}).get("maxSize") is not None
            and count.get(g["metadata"]["name"], 0) > g["spec"]["maxSize"]]


def hosts(plugin, service, cluster, groups, region):
    """The inventory's hosts that name an instance group of the cluster (see the module's docstring)."""
    del region
    found = metal_hosts(cluster, groups, plugin.hosts_so_far(), service.store.url(""))
    name = cluster["metadata"]["name"]
    if not found:
        plugin.display.warning(
            "kops inventory: no host of the inventory names an instance group of metal cluster %s: set %s (or the "
            "group ig_<instance group>) on each machine, in an inventory source listed before the kops one"
            % (name, GROUP_VARIABLE))
    for group, count, most in oversized(groups, found):
        plugin.display.warning("kops inventory: instance group %s of %s has %d hosts but maxSize %d; raise its "
                               "minSize/maxSize to the machines it has" % (group, name, count, most))
    return found
