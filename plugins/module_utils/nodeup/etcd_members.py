# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""This node's etcd members, as roles/protokube uses them (through the kubeops.kops.etcd_node_clusters and
etcd_restart_units filters): the nodeup config's kubeops.etcdClusters, laid out on the controller
(nodeconfig/etcd.py), with the members' addresses, known only on the node, filled in."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

# The member's address in its certificate requests, left for node_clusters to fill in (nodeconfig/etcd.py
# writes it into the layout).
MEMBER_ADDRESS = "{member_address}"


def node_clusters(kubeops_section, peers, install_override=None):
    """The etcd clusters this node runs a member of, as roles/protokube uses them: the nodeup config's
    kubeops.etcdClusters with each member's address (peers: member name -> address, '' when unknown) and the
    local member's names, URLs and certificate requests picked out.  install_override (roles/protokube's
    protokube_etcd_install_override: {version, dir, assets}) replaces the config's pinned etcd release."""
    clusters = []
    for cluster in kubeops_section.get("etcdClusters") or []:
        if cluster.get("localMember") is None:
            continue
        if "unit" not in cluster:
            raise NodeError("etcd cluster %s: the nodeup config predates kubeops.kops' member layout (no unit, "
                            "members[].peerURL)" % cluster["name"],
                            fix="run kubeops.kops.cluster_update to write it again")
        members = [{"name": m["memberName"], "key": m["name"], "fqdn": m["fqdn"],
                    "address": peers.get(m["name"]) or "", "local": m["name"] == cluster["localMember"],
                    "peer_url": m["peerURL"], "client_url": m["clientURL"]} for m in cluster["members"]]
        local = next(m for m in members if m["local"])
        own = {MEMBER_ADDRESS: local["address"]}
        certificates = [dict(request, ip_addresses=[own.get(ip, ip) for ip in request["ip_addresses"]])
                        if "ip_addresses" in request else dict(request) for request in cluster["certificates"]]
        clusters.append({
            "name": cluster["name"], "unit": cluster["unit"], "version": str(cluster["version"]),
            "etcd_dir": (install_override or cluster["install"])["dir"],
            "member": local["name"], "member_key": local["key"],
            "volume_tags": next(m["volumeTags"] for m in cluster["members"] if m["name"] == local["key"]),
            "client_port": cluster["clientPort"], "peer_port": cluster["peerPort"],
            "mount": cluster["mountPath"], "data_dir": cluster["dataDir"], "pki": cluster["pkiDir"],
            "backup_store": cluster["backupStore"], "backup_interval_minutes": cluster["backupIntervalMinutes"],
            "backup_retention_days": cluster["backupRetentionDays"],
            "peer_url": local["peer_url"], "client_url": local["client_url"],
            "peer_urls": {m["name"]: m["peer_url"] for m in members},
            "other_client_urls": [m["client_url"] for m in members if not m["local"]],
            "initial_cluster": ",".join("%s=%s" % (m["name"], m["peer_url"]) for m in members),
            "certificates": certificates,
            "members": members,
        })
    return clusters


def restart_units(clusters, changed_file_units, changed_certificate_paths, active_states):
    """The etcd units to restart, in cluster order: those whose files (node_files' restart) or certificates
    (node_certificates' changed_paths) changed, among those that were active before this run (active_states:
    `systemctl is-active` lines, one per cluster in order).  A member this run starts for the first time is left
    alone: starting it reads the new configuration anyway."""
    changed_dirs = {path.rsplit("/", 1)[0] for path in changed_certificate_paths}
    changed = set(changed_file_units) | {c["unit"] for c in clusters if c["pki"] in changed_dirs}
    return [c["unit"] for c, state in zip(clusters, active_states) if state == "active" and c["unit"] in changed]
