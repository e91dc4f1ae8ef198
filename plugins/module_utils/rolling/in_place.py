# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A rolling update of a metal cluster: in place, on the inventory's hosts (docs/metal.md, "Rolling update").

A cloud roll replaces an instance whose launch template is old; a metal host is not replaced but re-enrolled: it
is drained, handed its group's current nodeup config (roles/enroll, which restarts what the new files name), waited
for Ready and uncordoned.  Which hosts are out of date: enroll records, on the host, the digest of the nodeup config
it applied (RECORD, written last, so a failed enroll leaves the old digest); a host whose record differs from the
digest of its group's `igconfig/<role>/<group>/nodeupconfig.yaml` in the store, or has none, needs an update.

The order is kops': the control-plane groups one host at a time (etcd keeps its quorum), then the API-server groups,
then the node hosts, `max_unavailable` at a time across the node groups (the cluster-wide budget of the cloud roll:
budget_max_unavailable, else max_unavailable, else spec.rollingUpdate.maxUnavailable, else 1).  Nothing surges:
there is no machine to add, so a surge asked for is said in the plan and ignored.

Pure: the module (plugins/modules/metal_roll.py) reads the store, the API and the hosts' records and calls this.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError
from ansible_collections.kubeops.kops.plugins.module_utils.rolling import planner

# What enroll writes on a host (roles/enroll's enroll_record_path) after a successful run.
RECORD = "/etc/kubernetes/kops/enrolled.json"
DIGEST_KEY = "nodeupConfigDigest"


class MetalRollError(RollingError):
    """A metal roll that cannot be planned as asked."""


def config_digest(config):
    """sha256 of a nodeup config (the parsed document: the YAML's layout does not count), as enroll records it."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded_digest(record_text):
    """The digest in a host's enroll record (its JSON text), or "" when the host has none or it is unreadable.

    The text is what the host printed: over SSH with a terminal (Ansible's raw) the connection's own messages (a
    known-hosts warning) come in the same stream, so the record is the text from its first brace to its last."""
    text = record_text or ""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return ""
    try:
        return str((json.loads(text[start:end + 1]) or {}).get(DIGEST_KEY) or "")
    except (TypeError, ValueError, AttributeError):
        return ""


def record(cluster_name, instance_group, config):
    """The enroll record a host keeps (JSON), for roles/enroll."""
    return {"cluster": cluster_name, "instanceGroup": instance_group, DIGEST_KEY: config_digest(config)}


def cloud_groups(hosts, digests, applied):
    """{instance group: group} in rolling/planner.py's form: each host one instance (its id the host's name), needing
    an update when its recorded digest is not its group's.  hosts: {group: [host]}; digests: {group: digest};
    applied: {host: recorded digest or ""}."""
    return {group: {"name": group, "group_name": group, "desired": len(names), "min": len(names), "max": len(names),
                    "instances": [{"id": name, "name": name, "detached": False, "warm": False,
                                   "needs_update": applied.get(name, "") != digests.get(group)}
                                  for name in sorted(names)]}
            for group, names in hosts.items()}


def node_name(host):
    """A metal node registers under its host name, lowercased (a Node's name is a DNS name)."""
    return host.lower()


def statuses(instance_groups, groups_of_hosts, nodes):
    """planner.GroupStatus per instance group that has hosts, matching hosts to Nodes by name (no provider ID)."""
    by_name = {(n.get("metadata") or {}).get("name"): n for n in nodes}
    nodes_by_host = {host: by_name.get(node_name(host)) for group in groups_of_hosts.values()
                     for host in (i["id"] for i in group["instances"])}
    return [planner.GroupStatus(g, groups_of_hosts[g["metadata"]["name"]], nodes_by_host)
            for g in sorted(instance_groups, key=lambda g: g["metadata"]["name"])
            if g["metadata"]["name"] in groups_of_hosts]


def node_batch(cluster, node_hosts, max_unavailable=None, budget_max_unavailable=None):
    """How many node hosts are drained at once: the cluster-wide budget, the option, spec.rollingUpdate's, else 1;
    a percentage is of the node hosts, rounded down but at least 1."""
    spec = (cluster.get("spec") or {}).get("rollingUpdate") or {}
    for value, where in ((budget_max_unavailable, "budget_max_unavailable"), (max_unavailable, "max_unavailable"),
                         (spec.get("maxUnavailable"), "Cluster spec.rollingUpdate.maxUnavailable")):
        if value in (None, ""):
            continue
        count = planner.scaled(value, node_hosts, False, where)
        if count < 0:
            raise MetalRollError("%s: %r must not be negative" % (where, value))
        return max(count, 1)
    return 1


def surge_note(cluster, max_surge=None, budget_max_surge=None):
    """The line saying a surge is not made, when one was asked for (an option or spec.rollingUpdate.maxSurge)."""
    spec = (cluster.get("spec") or {}).get("rollingUpdate") or {}
    options = ((max_surge, "max_surge"), (budget_max_surge, "budget_max_surge"),
               (spec.get("maxSurge"), "spec.rollingUpdate.maxSurge"))
    asked = [where for value, where in options if value not in (None, "", 0, "0", "0%")]
    if not asked:
        return None
    return ("%s: no surge on metal (the hosts are the machines, there is none to add); each host is drained and "
            "updated in place" % ", ".join(asked))


def plan(cluster, instance_groups, hosts, digests, applied, nodes=(), force=False, names=None, roles=None,
         max_unavailable=None, budget_max_unavailable=None, max_surge=None, budget_max_surge=None):
    """What the roll does, decided before anything moves.

    cluster: the completed Cluster; instance_groups: the completed InstanceGroups; hosts: {group: [inventory host]};
    digests: {group: digest of its current nodeup config}; applied: {host: its recorded digest or ""}; nodes: the
    API's Nodes (JSON).  Returns {"groups": [GroupStatus], "lines": [table and plan], "control_plane": [hosts in
    order], "nodes": [hosts in order], "node_batch": n, "rolls": bool}."""
    known = {g["metadata"]["name"] for g in instance_groups}
    unknown = sorted(set(hosts) - known)
    if unknown:
        raise MetalRollError("the inventory names instance group(s) %s, which %s does not have (it has %s); fix the "
                             "hosts' kops_instance_group" % (", ".join(unknown), cluster["metadata"]["name"],
                                                             ", ".join(sorted(known))))
    selected = planner.select(instance_groups, names, roles)
    groups = statuses(selected, cloud_groups(hosts, digests, applied), nodes)
    lines = planner.table(groups, False)
    order = {phase: [] for phase in planner.PHASES}
    described = []
    for phase, phase_groups in planner.ordered(groups):
        for group in phase_groups:
            update = list(group.need_update) + (list(group.ready) if force else [])
            if not update:
                continue
            order[phase].extend(i["id"] for i in update)
            described.append((phase, group.name, [i["id"] for i in update]))
    control_plane = order["bastion"] + order["control-plane"] + order["apiserver"]
    node_hosts = sum(len(names_) for group, names_ in hosts.items()
                     if group in {g.name for g in groups if g.phase == "node"})
    batch = node_batch(cluster, node_hosts, max_unavailable, budget_max_unavailable)
    rolls = bool(control_plane or order["node"])
    if not rolls:
        lines += ["", "No rolling-update required."]
    else:
        lines.append("")
        for phase, name, update in described:
            at_once = "%d at a time across the node groups" % batch if phase == "node" else "one at a time"
            lines.append("%s: %d host(s) to update in place (%s), %s" % (name, len(update), ", ".join(update),
                                                                         at_once))
        note = surge_note(cluster, max_surge, budget_max_surge)
        if note:
            lines.append(note)
    return {"groups": groups, "lines": lines, "control_plane": control_plane, "nodes": order["node"],
            "node_batch": batch, "rolls": rolls}
