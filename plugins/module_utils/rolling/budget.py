# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A cluster-wide budget for the node groups of a roll (beyond kops: its issue #1718).

kops rolls node groups one after the other.  With a budget (``max_unavailable``, a count or a percentage of
all the cluster's node-group nodes, and optionally ``max_surge``) the node groups roll side by side:

- Surge first ("pre-scaling"): every group's surge instances are detached (the groups launch their
  replacements) before the first drain.  ``max_surge`` caps the surge of all groups together; the smallest
  groups get it first, so a 1-node group keeps a node while its instance is replaced.
- Then waves: in a wave each group replaces up to its own ``spec.rollingUpdate`` bound (its surge plus its
  maxUnavailable), and a group's instances beyond its surge count against the cluster's ``max_unavailable``.
  A wave ends when all its instances are replaced and the cluster validates; then the next starts.

Unavailable is counted against desired sizes: a group of desired size d that has s surge instances running
and replaces k at once has max(0, k - s) fewer than d available.  The schedule is plain data, computed
before anything moves; check mode prints it and the roll follows it wave by wave.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import planner
from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
# What the scheduler fits a pod on a node by, of the resources a pending pod may be waiting for.
RESOURCES = ("cpu", "memory", "pods")


def parse(max_unavailable, max_surge, nodes):
    """The budget as counts: {"max_unavailable", "max_surge" (None: each group's own), "nodes"}.

    A percentage is of ``nodes`` (all node-group nodes); max_unavailable rounds down and max_surge up, as a
    Deployment's.  Fails naming the option when the value is not a count or a percentage, or allows nothing."""
    unavailable = planner.scaled(max_unavailable, nodes, False, "budget_max_unavailable")
    surge = None if max_surge in (None, "") else planner.scaled(max_surge, nodes, True, "budget_max_surge")
    if unavailable < 0 or (surge or 0) < 0:
        raise planner.PlanError("budget_max_unavailable / budget_max_surge: must be 0 or more")
    if unavailable == 0 and not surge:
        raise planner.PlanError("budget_max_unavailable: %r of %d node(s) is 0 and budget_max_surge gives no surge: "
                                "nothing could be replaced; raise either" % (max_unavailable, nodes))
    return {"max_unavailable": unavailable, "max_surge": surge, "nodes": nodes}


def schedule(plans, budget, can_surge=True):
    """The node groups' roll under the budget: {"plans", "surge", "waves", "peak_unavailable", "notes"}.

    plans: the node phase's group plans (planner.group_plan); each is copied with its surge cut to the budget
    ("detach", "max_surge", "max_unavailable").  surge: [(plan, [instance])] to detach before the first drain.
    waves: [{"groups": [(plan, [instance])], "unavailable": n}].  can_surge: False where the cloud cannot detach
    (GCE).  Fails when the budget leaves a group no room."""
    notes = []
    surge_left = budget["max_surge"]
    adjusted = {}
    # Smallest groups first: a 1-node group without surge would go to 0 nodes while its instance is replaced.
    for plan in sorted(plans, key=lambda p: (p["group"].cloud["desired"], p["group"].name)):
        plan = dict(plan)
        already = [i for i in plan["update"] if i["status"] == "Detached"]
        if not can_surge and plan["detach"]:
            # GCE's managed instance groups cannot surge (kops neither): the group goes without.
            notes.append("%s: maxSurge %d impossible on this cloud, no surge" % (plan["group"].name, len(plan["detach"])))
            plan["detach"] = []
        wanted = len(already) + len(plan["detach"])
        allowed = wanted if surge_left is None else max(len(already), min(wanted, surge_left))
        if surge_left is not None:
            surge_left = max(0, surge_left - allowed)
        if allowed < wanted:
            notes.append("%s: surge %d cut to %d by budget_max_surge" % (plan["group"].name, wanted, allowed))
        fresh = allowed - len(already)
        plan["detach"] = plan["detach"][len(plan["detach"]) - fresh:] if fresh > 0 else []
        plan["max_surge"] = allowed
        if allowed == 0 and plan["max_unavailable"] == 0:
            # kops' rule for a group without surge: one unavailable at a time.
            plan["max_unavailable"] = 1
            notes.append("%s: no surge left in the budget, so one instance at a time is unavailable" % plan["group"].name)
        adjusted[plan["group"].name] = plan
    ordered = [adjusted[p["group"].name] for p in plans]
    queues = {p["group"].name: list(p["update"]) if p["drain_and_terminate"] else [] for p in ordered}
    surged = {p["group"].name: {i["id"] for i in p["update"] if i["status"] == "Detached"} | {i["id"] for i in p["detach"]}
              for p in ordered}
    waves = []
    while any(queues.values()):
        room = budget["max_unavailable"]
        wave = []
        # The groups with most left go first, so the budget shortens the longest roll.
        for plan in sorted(ordered, key=lambda p: (-len(queues[p["group"].name]), p["group"].name)):
            name = plan["group"].name
            queue = queues[name]
            if not queue:
                continue
            credit = sum(1 for i in queue if i["id"] in surged[name])
            take = min(len(queue), credit + min(plan["max_unavailable"], room))
            if take == 0:
                continue
            unavailable = max(0, take - credit)
            room -= unavailable
            wave.append((plan, queue[:take], unavailable))
            if unavailable >= plan["group"].cloud["desired"] > 0:
                notes.append("wave %d takes %s to 0 nodes (no surge for it; budget_max_unavailable allows it)"
                             % (len(waves) + 1, name))
            del queue[:take]
        if not wave:
            stuck = sorted(n for n, q in queues.items() if q)
            raise planner.PlanError("budget_max_unavailable %d leaves %s no room (no surge for them): raise "
                                    "budget_max_unavailable or budget_max_surge"
                                    % (budget["max_unavailable"], ", ".join(stuck)))
        wave.sort(key=lambda entry: entry[0]["group"].name)
        waves.append({"groups": [(plan, instances) for plan, instances, _u in wave],
                      "unavailable": sum(u for _p, _i, u in wave)})
    return {"plans": ordered, "budget": budget, "notes": notes,
            "surge": [(p, list(p["detach"])) for p in ordered if p["detach"]],
            "waves": waves, "peak_unavailable": max([w["unavailable"] for w in waves] or [0])}


def describe(plan_schedule):
    """The schedule as lines, for check mode and the log."""
    budget = plan_schedule["budget"]
    lines = ["Schedule of the node groups (budget: max unavailable %d, max surge %s, of %d node(s)):"
             % (budget["max_unavailable"], "each group's own" if budget["max_surge"] is None else budget["max_surge"],
                budget["nodes"])]
    surge = ["%s: %s" % (p["group"].name, ", ".join(i["id"] for i in instances)) for p, instances in plan_schedule["surge"]]
    lines.append("  pre-scale: %s" % ("; ".join(surge) if surge else "no surge"))
    for number, wave in enumerate(plan_schedule["waves"], 1):
        lines.append("  wave %d: %s (unavailable %d)" % (number, wave_text(wave), wave["unavailable"]))
    lines.append("  peak unavailable: %d of %d allowed; %d wave(s)" % (
        plan_schedule["peak_unavailable"], budget["max_unavailable"], len(plan_schedule["waves"])))
    lines += ["  note: %s" % note for note in plan_schedule["notes"]]
    return lines


def as_result(plan_schedule):
    """The schedule as the module returns it (names and ids only)."""
    def groups(entries):
        return [{"group": p["group"].name, "instances": [i["id"] for i in instances]} for p, instances in entries]
    return dict(plan_schedule["budget"], surge=groups(plan_schedule["surge"]), notes=list(plan_schedule["notes"]),
                waves=[{"groups": groups(w["groups"]), "unavailable": w["unavailable"]} for w in plan_schedule["waves"]],
                peak_unavailable=plan_schedule["peak_unavailable"])


def wave_text(wave):
    return "; ".join("%s: %s" % (p["group"].name, ", ".join(i["id"] for i in instances)) for p, instances in wave["groups"])


def node_group_count(instance_groups, cloud_groups):
    """All node-group nodes of the cluster (desired sizes), what a percentage budget is of."""
    return sum(cloud_groups[g["metadata"]["name"]]["desired"] for g in instance_groups
               if planner.phase_of(g) == "node" and g["metadata"]["name"] in cloud_groups)


# -- pending pods ------------------------------------------------------------------------------------
def quantity(text):
    """A Kubernetes quantity ("100m", "1Gi", "2", "1e3") as a float; ValueError if it is none."""
    match = _QUANTITY.match(str(text).strip())
    if not match or match.group(2) not in _SUFFIX:
        raise RollingError("%r is not a Kubernetes quantity" % text)
    return float(match.group(1)) * _SUFFIX[match.group(2)]


def _requests(pod):
    total = {"cpu": 0.0, "memory": 0.0, "pods": 1.0}
    for container in (pod.get("spec") or {}).get("containers") or []:
        for resource, value in (((container.get("resources") or {}).get("requests")) or {}).items():
            if resource in total and resource != "pods":
                total[resource] += quantity(value)
    return total


def _key(pod):
    return "%s/%s" % (pod["metadata"].get("namespace"), pod["metadata"]["name"])


def waiting_for_capacity(nodes, pods, draining):
    """The Pending pods (not yet scheduled, no DaemonSet's) that the capacity of the node being drained may be
    needed for: all of them unless the other Ready, schedulable nodes have room for them (cpu, memory, pod
    count from status.allocatable, less what the pods already on them request).  A node without allocatable
    leaves the room unknown, so then every Pending pod counts."""
    pending = []
    for pod in pods:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), {})
        if ((pod.get("status") or {}).get("phase") == "Pending" and not spec.get("nodeName")
                and not meta.get("deletionTimestamp") and owner.get("kind") != "DaemonSet"):
            pending.append(pod)
    if not pending:
        return []
    room = {r: 0.0 for r in RESOURCES}
    on_node = {}
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            on_node.setdefault(node_name, []).append(pod)
    for node in nodes:
        name = node["metadata"]["name"]
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (node.get("status") or {}).get("conditions") or [])
        if name == draining or not ready or (node.get("spec") or {}).get("unschedulable"):
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if not all(r in allocatable for r in RESOURCES):
            return sorted(_key(p) for p in pending)
        used = [_requests(p) for p in on_node.get(name, [])]
        for resource in RESOURCES:
            room[resource] += quantity(allocatable[resource]) - sum(u[resource] for u in used)
    need = [_requests(p) for p in pending]
    if all(sum(n[r] for n in need) <= room[r] + 1e-9 for r in RESOURCES):
        return []
    return sorted(_key(p) for p in pending)
