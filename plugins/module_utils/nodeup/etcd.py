# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The etcd clusters a control-plane group's nodes run (roles/protokube's input).

What etcd-manager learns from its manifest and the volume tags, as data:
ports by cluster name (kops' wellknownports), etcd-manager's cluster name
(member DNS names are <clusterName>-<member><dnsSuffix>, e.g. etcd-a and
etcd-events-a), members from spec.etcdClusters[].etcdMembers, the backup
store, backup interval and retention, and how each member finds its EBS
volume (the tags model/aws/volumes.py puts on it).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_assets
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.manifests import parse_go_duration

# (client port, peer port) by etcd cluster name, as kops' wellknownports assigns them.
PORTS = {"main": (4001, 2380), "events": (4002, 2381), "cilium": (4003, 2382), "leases": (4004, 2383)}
BACKUP_INTERVAL_MINUTES = 15  # etcd-manager's default
BACKUP_RETENTION_DAYS = 90  # ETCD_MANAGER_DAILY_BACKUPS_RETENTION=90d


def etcd_manager_cluster_name(etcd_name):
    """etcd-manager's --cluster-name as kops sets it: etcd for main, etcd-<name> otherwise."""
    return "etcd" if etcd_name == "main" else "etcd-%s" % etcd_name


def go_duration_minutes(text):
    """Minutes (at least 1) of a Go duration such as 1h0m0s or 30m."""
    try:
        nanoseconds = parse_go_duration(text or "")
    except ValueError:
        raise ValueError("backupInterval %r: not a Go duration (for example 15m or 1h0m0s)" % text)
    return max(1, int(round(nanoseconds / 60e9)))


def backup_store(etcd, spec_config_base, config_base):
    """The spec's backup store, moved under config_base when it is kops' default location."""
    default = "%s/backups/etcd/%s" % (config_base.rstrip("/"), etcd["name"])
    configured = (etcd.get("backups") or {}).get("backupStore")
    if not configured or (spec_config_base and configured.startswith(spec_config_base.rstrip("/") + "/")):
        return default
    return configured


def etcd_clusters(completed_cluster, instance_group, config_base):
    """[etcd cluster] for the kubeops section of a control-plane group's nodeup config."""
    name = completed_cluster["metadata"]["name"]
    spec = completed_cluster["spec"]
    clusters = []
    for etcd in spec.get("etcdClusters") or []:
        if etcd["name"] not in PORTS:
            raise ValueError("etcd cluster %s: no well-known ports (use one of %s)"
                             % (etcd["name"], ", ".join(sorted(PORTS))))
        client_port, peer_port = PORTS[etcd["name"]]
        manager = etcd.get("manager") or {}
        members = etcd.get("etcdMembers") or []
        all_names = ",".join(m["name"] for m in members)
        clusters.append({
            "name": etcd["name"],
            "clusterName": etcd_manager_cluster_name(etcd["name"]),
            "version": etcd.get("version"),
            "install": etcd_assets.install_plan(etcd["name"], etcd.get("version"),
                                                (spec.get("assets") or {}).get("fileRepository")),
            "clientPort": client_port,
            "peerPort": peer_port,
            "dnsSuffix": ".internal.%s" % name,
            "members": [{"name": m["name"], "instanceGroup": m["instanceGroup"],
                         "volumeTags": {"k8s.io/etcd/%s" % etcd["name"]: "%s/%s" % (m["name"], all_names),
                                        "k8s.io/role/control-plane": "1",
                                        "kubernetes.io/cluster/%s" % name: "owned"}}
                        for m in members],
            "backupStore": backup_store(etcd, spec.get("configBase"), config_base),
            "backupIntervalMinutes": (go_duration_minutes(manager["backupInterval"])
                                      if manager.get("backupInterval") else BACKUP_INTERVAL_MINUTES),
            "backupRetentionDays": int(manager.get("backupRetentionDays") or BACKUP_RETENTION_DAYS),
        })
    return clusters
