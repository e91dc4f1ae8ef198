# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a rolling update does, decided before anything moves (kops' GetCloudGroups result,
AdjustNeedUpdate, the table, resolveSettings and the group order).

Inputs are plain data: the InstanceGroup objects, the cloud's groups as a provider reads them
(``{ig name: {"group_name", "min", "desired", "max", "instances": [{"id", "needs_update",
"detached", "warm", ...}]}}``) and the Kubernetes Nodes as JSON.  Nothing here calls a cloud.
"""

from __future__ import annotations

import math
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError
from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, tables

NEEDS_UPDATE_ANNOTATION = "kops.k8s.io/needs-update"

# The phases, in kops' order (rollingupdate.go): bastions, control plane, API servers, nodes.
PHASES = ("bastion", "control-plane", "apiserver", "node")
# InstanceGroup spec.role (v1alpha2 and its newer spelling) -> phase.
ROLE_PHASE = {"Bastion": "bastion", "Master": "control-plane", "ControlPlane": "control-plane",
              "APIServer": "apiserver", "Node": "node"}
# What `roles` accepts (kops' ParseInstanceGroupRole, lenient), lower-cased -> phase.
ROLE_NAMES = {"bastion": "bastion", "master": "control-plane", "controlplane": "control-plane",
              "control-plane": "control-plane", "apiserver": "apiserver", "node": "node"}
KARPENTER = "Karpenter"


def surges_by_default(cloud):
    """Whether kops surges on cloud when nothing sets maxSurge (settings.go: AWS, unless Spotinst or Karpenter):
    the cloud's Provider.surges_by_default."""
    return provider_names.declared_value(cloud, "surges_by_default", False)


class PlanError(RollingError):
    """A request the rolling update cannot honour; the message says what to change."""


def phase_of(instance_group):
    role = (instance_group.get("spec") or {}).get("role", "Node")
    if role not in ROLE_PHASE:
        raise PlanError("InstanceGroup %s: unknown role %r (one of %s)"
                        % (instance_group["metadata"]["name"], role, ", ".join(sorted(ROLE_PHASE))))
    return ROLE_PHASE[role]


def select(instance_groups, names=None, roles=None):
    """kops' --instance-group and --instance-group-roles filters, with its errors."""
    selected = list(instance_groups)
    if names:
        by_name = {g["metadata"]["name"]: g for g in instance_groups}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise PlanError("InstanceGroup %s not found (the cluster has %s)"
                            % (", ".join(repr(n) for n in missing), ", ".join(sorted(by_name))))
        selected = [by_name[n] for n in names]
    if roles:
        unknown = [r for r in roles if r.lower() not in ROLE_NAMES]
        if unknown:
            raise PlanError("invalid instance group role %s (one of Bastion, ControlPlane, APIServer, Node)"
                            % ", ".join(repr(r) for r in unknown))
        wanted = [ROLE_NAMES[r.lower()] for r in roles]
        selected = [g for phase in wanted for g in selected if phase_of(g) == phase]
    return selected


def instance_id_of(node):
    """aws:///us-east-1a/i-0123 -> i-0123 (kops' GetNodeMap: the last part of spec.providerID)."""
    provider_id = (node.get("spec") or {}).get("providerID") or ""
    return provider_id.rsplit("/", 1)[-1] if provider_id else None


class GroupStatus(object):
    """One instance group as the roll sees it: kops' CloudInstanceGroup (Ready, NeedUpdate, sizes)."""

    def __init__(self, instance_group, cloud_group, nodes_by_id):
        self.instance_group = instance_group
        self.name = instance_group["metadata"]["name"]
        self.phase = phase_of(instance_group)
        self.cloud = cloud_group
        self.ready, self.need_update = [], []
        for instance in cloud_group["instances"]:
            instance["node"] = nodes_by_id.get(instance["id"])
            instance["status"] = ("Detached" if instance.get("detached") else
                                  "NeedsUpdate" if instance.get("needs_update") else "UpToDate")
            (self.ready if instance["status"] == "UpToDate" else self.need_update).append(instance)
        # AdjustNeedUpdate: a node annotated by channels (an addon that needs a roll) needs one.
        for instance in list(self.ready):
            annotations = ((instance["node"] or {}).get("metadata") or {}).get("annotations") or {}
            if NEEDS_UPDATE_ANNOTATION in annotations:
                self.ready.remove(instance)
                self.need_update.append(instance)
                instance["status"] = "NeedsUpdate"

    @property
    def status(self):
        return "NeedsUpdate" if self.need_update else "Ready"

    def nodes(self):
        return sum(1 for i in self.ready + self.need_update if i["node"] is not None)

    def as_result(self):
        return {"name": self.name, "role": self.phase, "status": self.status, "cloud_group": self.cloud.get("group_name"),
                "need_update": len(self.need_update), "ready": len(self.ready), "min": self.cloud["min"],
                "target": self.cloud["desired"], "max": self.cloud["max"], "nodes": self.nodes(),
                "instances": [{"id": i["id"], "status": i["status"],
                               "node": ((i["node"] or {}).get("metadata") or {}).get("name")}
                              for i in self.need_update + self.ready]}


def statuses(instance_groups, cloud_groups, nodes=()):
    """A GroupStatus per selected instance group that has a cloud group (kops lists only those), by name."""
    nodes_by_id = {instance_id_of(n): n for n in nodes if instance_id_of(n)}
    return [GroupStatus(g, cloud_groups[g["metadata"]["name"]], nodes_by_id)
            for g in sorted(instance_groups, key=lambda g: g["metadata"]["name"])
            if g["metadata"]["name"] in cloud_groups]


def table(groups, cloud_only):
    """kops' table: NAME STATUS NEEDUPDATE READY MIN TARGET MAX [NODES]."""
    columns = ["NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX"] + ([] if cloud_only else ["NODES"])
    return tables.render(columns, [[g.name, g.status, len(g.need_update), len(g.ready), g.cloud["min"],
                                    g.cloud["desired"], g.cloud["max"]] + ([] if cloud_only else [g.nodes()])
                                   for g in groups])


def needs_roll(groups, force):
    return force or any(g.need_update for g in groups)


def scaled(value, total, round_up, where):
    """intstr.GetScaledValueFromIntOrPercent: an int as is, "N%" of total rounded up or down."""
    if isinstance(value, bool):
        raise PlanError("%s: %r is not a number or a percentage" % (where, value))
    if isinstance(value, int):
        return value
    match = re.match(r"^(\d+)%$", str(value).strip())
    if not match:
        if str(value).strip().isdigit():
            return int(str(value).strip())
        raise PlanError("%s: %r is not a number or a percentage like 25%%" % (where, value))
    exact = int(match.group(1)) * total / 100.0
    return int(math.ceil(exact) if round_up else math.floor(exact))


def settings(cluster, instance_group, num_instances, max_surge=None, max_unavailable=None):
    """kops' resolveSettings: the group's spec.rollingUpdate over the cluster's, over kops' defaults.

    max_surge / max_unavailable (the module's options) override both specs, as a value in
    spec.rollingUpdate would.  Returns {"max_surge", "max_unavailable", "drain_and_terminate"} as ints.
    """
    group_spec = (instance_group.get("spec") or {}).get("rollingUpdate") or {}
    cluster_spec = (cluster.get("spec") or {}).get("rollingUpdate") or {}
    name = instance_group["metadata"]["name"]

    def pick(key, option):
        if option is not None:
            return option, "the %s option" % key
        for spec, where in ((group_spec, "InstanceGroup %s spec.rollingUpdate" % name),
                            (cluster_spec, "Cluster spec.rollingUpdate")):
            if spec.get(key) is not None:
                return spec[key], "%s.%s" % (where, key)
        return None, None

    drain, _where = pick("drainAndTerminate", None)
    surge, where = pick("maxSurge", max_surge)
    if surge is None:
        surging = surges_by_default((cluster.get("spec") or {}).get("cloudProvider"))
        surge = 1 if surging and (instance_group.get("spec") or {}).get("manager") != KARPENTER else 0
    surge = scaled(surge, num_instances, True, where)
    unavailable, where = pick("maxUnavailable", max_unavailable)
    if unavailable is None:
        unavailable = 1 if surge == 0 else 0
    elif not isinstance(unavailable, int) and str(unavailable).strip().endswith("%"):
        # While kops rounds down, a percentage resolves to at least 1.
        unavailable = max(scaled(unavailable, num_instances, False, where), 1)
    else:
        unavailable = scaled(unavailable, num_instances, False, where)
    return {"max_surge": surge, "max_unavailable": unavailable,
            "drain_and_terminate": True if drain is None else bool(drain)}


def prioritize(update):
    """kops' prioritizeUpdate: already-detached instances last (they are the surge already made)."""
    return [i for i in update if i["status"] != "Detached"] + [i for i in update if i["status"] == "Detached"]


def group_plan(cluster, group, force, cloud_only, max_surge=None, max_unavailable=None):
    """What rollingUpdateInstanceGroup will do to one group: the instances in order, which are surged
    (detached first), and how many drains run at once.  None when the group has nothing to roll."""
    update = list(group.need_update) + (list(group.ready) if force else [])
    if not update:
        return None
    num_instances = len(group.ready) + len(group.need_update)
    resolved = settings(cluster, group.instance_group, num_instances, max_surge, max_unavailable)
    warm = [i for i in update if i.get("warm")]
    update = prioritize([i for i in update if not i.get("warm")])
    surge = min(resolved["max_surge"], len(update))
    concurrency = surge + resolved["max_unavailable"]
    if (group.instance_group.get("spec") or {}).get("manager") == KARPENTER:
        surge = 0
    if group.phase == "control-plane" and surge:
        # The control plane never surges (etcd members are tied to volumes): one (or maxUnavailable) at a time.
        surge, concurrency = 0, resolved["max_unavailable"] or 1
    # kops detaches the last maxSurge instances, and never without the Kubernetes API (cloudonly).
    detach = [] if cloud_only else [i for i in update[len(update) - surge:] if i["status"] != "Detached"]
    return {"group": group, "update": update, "warm": warm, "detach": detach, "max_surge": surge,
            "max_unavailable": resolved["max_unavailable"], "concurrency": max(concurrency, 1),
            "drain_and_terminate": resolved["drain_and_terminate"], "none_ready": not group.ready}


def ordered(groups):
    """The groups by phase in kops' order, each phase sorted by name: [(phase, [GroupStatus])]."""
    return [(phase, sorted((g for g in groups if g.phase == phase), key=lambda g: g.name)) for phase in PHASES]


def describe(plan):
    """One line per group plan, for the plan a user reads in check mode."""
    group = plan["group"]
    return ("%s: %d instance(s) to replace (%s), max surge %d, max unavailable %d, %d at a time%s"
            % (group.name, len(plan["update"]), ", ".join(i["id"] for i in plan["update"]), plan["max_surge"],
               plan["max_unavailable"], plan["concurrency"],
               "" if plan["drain_and_terminate"] else "; drainAndTerminate is false: detach only"))
