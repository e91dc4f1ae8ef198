# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The etcd clusters a control-plane group's nodes run (roles/protokube's input).

What etcd-manager learns from its manifest and the volume tags, as data:
ports by cluster name (kops' wellknownports), members from
spec.etcdClusters[].etcdMembers, the backup store and how each member finds
its EBS volume (the tags model/aws/volumes.py puts on it).
"""

from __future__ import annotations

# (client port, peer port) by etcd cluster name, as kops' wellknownports assigns them.
PORTS = {"main": (4001, 2380), "events": (4002, 2381), "cilium": (4003, 2382), "leases": (4004, 2383)}
BACKUP_INTERVAL_MINUTES = 15  # etcd-manager's default
BACKUP_RETENTION_DAYS = 90  # ETCD_MANAGER_DAILY_BACKUPS_RETENTION=90d


def etcd_clusters(completed_cluster, instance_group, config_base):
    """[etcd cluster] for the kubeops section of a control-plane group's nodeup config."""
    name = completed_cluster["metadata"]["name"]
    clusters = []
    for etcd in completed_cluster["spec"].get("etcdClusters") or []:
        if etcd["name"] not in PORTS:
            raise ValueError("etcd cluster %s: no well-known ports (use one of %s)"
                             % (etcd["name"], ", ".join(sorted(PORTS))))
        client_port, peer_port = PORTS[etcd["name"]]
        members = etcd.get("etcdMembers") or []
        all_names = ",".join(m["name"] for m in members)
        clusters.append({
            "name": etcd["name"],
            "version": etcd.get("version"),
            "clientPort": client_port,
            "peerPort": peer_port,
            "dnsSuffix": ".internal.%s" % name,
            "members": [{"name": m["name"], "instanceGroup": m["instanceGroup"],
                         "volumeTags": {"k8s.io/etcd/%s" % etcd["name"]: "%s/%s" % (m["name"], all_names),
                                        "k8s.io/role/control-plane": "1",
                                        "kubernetes.io/cluster/%s" % name: "owned"}}
                        for m in members],
            "backupStore": "%s/backups/etcd/%s" % (config_base.rstrip("/"), etcd["name"]),
            "backupIntervalMinutes": BACKUP_INTERVAL_MINUTES,
            "backupRetentionDays": BACKUP_RETENTION_DAYS,
        })
    return clusters
