# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Removing a host from a metal cluster (kubespray's remove-node): which hosts may go, and the Kubernetes side
(drain with the rolling update's Drainer, so PodDisruptionBudgets are honoured, then the Node deleted).  The host
itself is reset by roles/enroll tasks/reset.yml between the two: its kubelet stopped, it cannot register again."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError

CONTROL_PLANE_ROLES = ("Master", "ControlPlane", "APIServer")


class RemovalRefused(RollingError):
    pass


def refusal(host, group, etcd_clusters, control_plane_hosts):
    """Why the host may not be removed (one line with the fix), or None.  group: its InstanceGroup;
    etcd_clusters: the completed spec's etcdClusters; control_plane_hosts: the inventory's control-plane hosts."""
    name = group["metadata"]["name"]
    members = ["%s member %s" % (cluster["name"], member["name"]) for cluster in etcd_clusters or []
               for member in cluster.get("etcdMembers") or [] if member.get("instanceGroup") == name]
    if members:
        return ("%s runs etcd (%s, instance group %s): removing an etcd member is not built; to take the host out, "
                "move the members to another control-plane group in spec.etcdClusters first (kops edit cluster, "
                "update_cluster.yml, enroll.yml), or delete the cluster (delete_cluster.yml -i <inventory>)"
                % (host, ", ".join(members), name))
    if group["spec"].get("role") in CONTROL_PLANE_ROLES and [h for h in control_plane_hosts if h != host] == []:
        return ("%s is the cluster's last control-plane host: the cluster would have no API; enroll another "
                "control-plane host first (enroll.yml -l <host>), or delete the cluster (delete_cluster.yml -i "
                "<inventory>)" % host)
    return None


def node_exists(core, node_name):
    try:
        core.read_node(node_name, _request_timeout=30)
    except Exception as exc:  # the kubernetes client's ApiException and transport errors
        if getattr(exc, "status", None) == 404:
            return False
        raise RemovalRefused("reading node %s: %s" % (node_name, getattr(exc, "reason", None) or exc))
    return True


def drain(drainer, node_name, timeout, check_mode, report=None):
    """Cordon and drain the node (kops' drain: PodDisruptionBudgets honoured); {found, evicted, pods}.  Check mode:
    the pods a drain would evict, nothing changed."""
    if not node_exists(drainer.core, node_name):
        return {"found": False, "evicted": 0, "pods": []}
    pods = ["%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]) for p in drainer.pods_to_evict(node_name)]
    if check_mode:
        return {"found": True, "evicted": 0, "pods": pods}
    drainer.cordon_and_label(node_name)
    return {"found": True, "evicted": drainer.drain(node_name, timeout, report), "pods": pods}


def delete_node(core, node_name, check_mode):
    """Delete the Node object; False when there is none."""
    if not node_exists(core, node_name):
        return False
    if not check_mode:
        try:
            core.delete_node(node_name, _request_timeout=30)
        except Exception as exc:
            if getattr(exc, "status", None) != 404:
                raise RemovalRefused("deleting node %s: %s" % (node_name, getattr(exc, "reason", exc)))
    return True
