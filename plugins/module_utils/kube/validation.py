# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops validate cluster (pkg/validation/validate_cluster.go) on plain data.

Inputs: the cluster's instance groups (spec), its cloud groups (providers/aws/groups.py: desired
size and member instances per group), and the API's Nodes and Pods as JSON.  Output: kops'
ValidationCluster (failures, nodes) and the three tables kops prints.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import tables

CRITICAL_PRIORITIES = ("system-cluster-critical", "system-node-critical")
# The kube-system pods (label k8s-app) every Ready node of a role must run.
ROLE_PODS = {"control-plane": ("kube-apiserver", "kube-controller-manager", "kube-scheduler"),
             "apiserver": ("kube-apiserver",)}
# InstanceGroup spec.role -> the role kops prints for its nodes.
NODE_ROLES = {"ControlPlane": "control-plane", "Master": "control-plane", "APIServer": "apiserver",
              "Node": "node", "Bastion": "bastion"}

# v1alpha2's Master is kops' ControlPlane (the internal API kops prints).
SPEC_ROLES = {"Master": "ControlPlane"}


def _failure(kind, name, message, group=None):
    return {"type": kind, "name": name, "message": message, "instance_group": group}


def node_ready(node):
    """The Ready condition's status: 'True', 'False' or 'Unknown'."""
    return next((c.get("status") for c in (node.get("status") or {}).get("conditions") or []
                 if c.get("type") == "Ready"), "Unknown")


def _instance_id(node):
    """aws:///us-east-1a/i-0123 -> i-0123 (the cloud's id of the node's machine)."""
    provider_id = (node.get("spec") or {}).get("providerID") or ""
    return provider_id.rstrip("/").rsplit("/", 1)[-1] if provider_id else None


def _match_nodes(nodes):
    by_id, by_name = {}, {}
    for node in nodes:
        if _instance_id(node):
            by_id[_instance_id(node)] = node
        by_name[node["metadata"]["name"]] = node
    return lambda member: by_id.get(member["id"]) or by_name.get(member.get("private_dns_name") or "")


def validate(instance_groups, cloud_groups, nodes, pods, max_unready_nodes=0):
    """{failures, nodes}: kops' checks, in kops' order.

    cloud_groups: {instance group name: {"desired": n, "instances": [{"id", "private_dns_name",
    "detached", "warm"}]}}; a group absent from it is missing from the cloud.
    """
    failures, node_rows, unready_workers = [], [], []
    node_of = _match_nodes(nodes)
    group_of_node = {}
    for group in instance_groups:
        name, role = group["metadata"]["name"], NODE_ROLES.get(group["spec"].get("role"), "node")
        cloud = cloud_groups.get(name)
        if cloud is None:
            failures.append(_failure("InstanceGroup", name, "InstanceGroup \"%s\" is missing from the cloud provider"
                                     % name, name))
            continue
        members = [m for m in cloud["instances"] if not m.get("warm")]
        joined = [m for m in members if not m.get("detached")]
        if len(joined) < cloud["desired"]:
            failures.append(_failure("InstanceGroup", name, "InstanceGroup \"%s\" did not have enough nodes %d vs %d"
                                     % (name, len(joined), cloud["desired"]), name))
        for member in members:
            node = node_of(member)
            if node is None:
                if role != "bastion" and not member.get("detached"):
                    failures.append(_failure("Machine", member["id"], "machine \"%s\" has not yet joined cluster"
                                             % member["id"], name))
                continue
            node_name = node["metadata"]["name"]
            group_of_node[node_name] = name
            ready = node_ready(node)
            node_rows.append({"name": node_name, "zone": (node["metadata"].get("labels") or {}).get(
                "topology.kubernetes.io/zone", ""), "hostname": member.get("private_dns_name") or "",
                "role": role, "status": ready, "instance_group": name})
            if ready != "True" and role in ("control-plane", "apiserver", "node"):
                failure = _failure("Node", node_name, "node \"%s\" of role \"%s\" is not ready" % (node_name, role), name)
                (unready_workers if role == "node" else failures).append(failure)
    # --max-unready-nodes: that many not-ready workers are tolerated.
    if len(unready_workers) > max_unready_nodes:
        failures.extend(unready_workers)
    failures.extend(_pod_failures(pods, group_of_node))
    failures.extend(_role_pod_failures(node_rows, pods))
    return {"failures": failures, "nodes": node_rows}


def _pod_failures(pods, group_of_node):
    failures = []
    for pod in pods:
        priority = (pod.get("spec") or {}).get("priorityClassName")
        if priority not in CRITICAL_PRIORITIES:
            continue
        status, name = pod.get("status") or {}, pod["metadata"]["name"]
        key = "%s/%s" % (pod["metadata"].get("namespace"), name)
        group = group_of_node.get((pod.get("spec") or {}).get("nodeName"))
        phase = status.get("phase")
        if phase == "Succeeded":
            continue
        if phase == "Pending":
            failures.append(_failure("Pod", key, "%s pod \"%s\" is pending" % (priority, name), group))
        elif phase == "Unknown":
            failures.append(_failure("Pod", key, "%s pod \"%s\" is unknown phase" % (priority, name), group))
        not_ready = [c["name"] for c in status.get("containerStatuses") or [] if not c.get("ready")]
        if not_ready:
            failures.append(_failure("Pod", key, "%s pod \"%s\" is not ready (%s)" % (priority, name, ",".join(not_ready)),
                                     group))
    return failures


def _role_pod_failures(node_rows, pods):
    running = set()
    for pod in pods:
        if pod["metadata"].get("namespace") == "kube-system":
            app = (pod["metadata"].get("labels") or {}).get("k8s-app")
            running.add(((pod.get("spec") or {}).get("nodeName"), app))
    failures = []
    for row in node_rows:
        if row["status"] != "True":
            continue
        for app in ROLE_PODS.get(row["role"], ()):
            if (row["name"], app) not in running:
                failures.append(_failure("Node", row["name"], "%s node \"%s\" is missing %s pod"
                                         % ("control-plane" if row["role"] == "control-plane" else row["role"],
                                            row["name"], app), row["instance_group"]))
    return failures


def report(cluster_name, instance_groups, result):
    """kops' table output: INSTANCE GROUPS, NODE STATUS, VALIDATION ERRORS and the verdict, as lines."""
    lines = ["Validating cluster %s" % cluster_name, "", "INSTANCE GROUPS"]
    lines += tables.render(["NAME", "ROLE", "MACHINETYPE", "MIN", "MAX", "SUBNETS"], [
        [g["metadata"]["name"], SPEC_ROLES.get(g["spec"].get("role"), g["spec"].get("role", "")), g["spec"].get("machineType", ""),
         g["spec"].get("minSize"), g["spec"].get("maxSize"), ",".join(g["spec"].get("subnets") or [])]
        for g in instance_groups])
    lines += ["", "NODE STATUS"]
    node_rows = [[n["name"], n["role"], n["status"]] for n in sorted(result["nodes"], key=lambda n: n["name"])]
    lines += tables.render(["NAME", "ROLE", "READY"], node_rows)
    if result["failures"]:
        lines += ["", "VALIDATION ERRORS"]
        lines += tables.render(["KIND", "NAME", "MESSAGE"],
                               [[f["type"], f["name"], f["message"]] for f in result["failures"]])
        lines += ["", "Validation Failed"]
    else:
        lines += ["", "Your cluster %s is ready" % cluster_name]
    return lines
