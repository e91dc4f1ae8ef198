# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kops inventory of a toy cluster: its pools' machines (groups.py), one host each."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.inventory_hosts import ROLE_GROUPS, safe_group
from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import groups as toy_groups


def hosts(plugin, service, cluster, groups, region):
    del plugin
    cluster_name = cluster["metadata"]["name"]
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    found = []
    for group, cloud_group in sorted(toy_groups.cloud_groups(toy_groups.cloud(cluster_name, region)).items()):
        if group not in roles:
            continue  # a pool of a group the state store no longer has
        for machine in cloud_group["instances"]:
            variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group, "kops_role": roles[group],
                         "kops_state_store": service.store.url(""), "kops_instance_id": machine["id"],
                         "kops_zone": machine["zone"], "ansible_host": machine["private_ip"]}
            found.append((machine["name"], variables, ["kops_" + safe_group(cluster_name),
                                                       ROLE_GROUPS.get(roles[group], "role_node"),
                                                       "ig_" + safe_group(group)]))
    return found
