# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The etcd clusters a control-plane group's nodes run (roles/protokube's input).

What etcd-manager learns from its manifest and the volume tags, as data:
ports by cluster name (kops' wellknownports), etcd-manager's cluster name
(member DNS names are <clusterName>-<member><dnsSuffix>, e.g. etcd-a and
etcd-events-a), members from spec.etcdClusters[].etcdMembers, the backup
store, backup interval and retention, and how each member finds its EBS
volume (the tags model/aws/volumes.py puts on it).  What the node does with
them is decided here too, so roles/protokube only loops: each member's name,
DNS name and URLs, the unit, mount, data and PKI paths, and the certificates
each member needs (member_layout, member_certificates); on the node, with the
members' addresses known, node_clusters and restart_units (nodeup/etcd_members.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import etcd_assets
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.etcd_members import MEMBER_ADDRESS
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.manifests import parse_go_duration
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

# (client port, peer port) by etcd cluster name, as kops' wellknownports assigns them.
PORTS = {"main": (4001, 2380), "events": (4002, 2381), "cilium": (4003, 2382), "leases": (4004, 2383)}
BACKUP_INTERVAL_MINUTES = 15  # etcd-manager's default
BACKUP_RETENTION_DAYS = 90  # ETCD_MANAGER_DAILY_BACKUPS_RETENTION=90d
# Where a member's volume is mounted and its certificates live, on the node.
MOUNT_ROOT = "/mnt"
PKI_ROOT = "/etc/kubernetes/pki"
# The certificates a member needs, per etcd cluster: (file stem, signer, common name, usages, DNS names, IP
# addresses, CA file).  "{signer_peers}" is the cluster's peer CA; MEMBER_FQDN and MEMBER_ADDRESS stand for the
# member's DNS name and its address, which node_clusters fills in once the address is known.
MEMBER_FQDN = "{member_fqdn}"
MEMBER_NAME = "{member_name}"
CERTIFICATES = (
    ("peer", "etcd-peers-ca-{cluster}", MEMBER_NAME, ["client", "server"], [MEMBER_FQDN], [MEMBER_ADDRESS],
     "peers-ca.crt"),
    ("server", "etcd-clients-ca", MEMBER_NAME, ["client", "server"], [MEMBER_FQDN, "localhost"],
     [MEMBER_ADDRESS, "127.0.0.1"], "clients-ca.crt"),
    ("etcdctl", "etcd-clients-ca", "kubeops-etcdctl", ["client"], [], [], None),
)


def etcd_manager_cluster_name(etcd_name):
    """etcd-manager's --cluster-name as kops sets it: etcd for main, etcd-<name> otherwise."""
    return "etcd" if etcd_name == "main" else "etcd-%s" % etcd_name


def go_duration_minutes(text):
    """Minutes (at least 1) of a Go duration such as 1h0m0s or 30m."""
    try:
        nanoseconds = parse_go_duration(text or "")
    except ValueError:
        raise NodeConfigError("backupInterval %r: not a Go duration (for example 15m or 1h0m0s)" % text)
    return max(1, int(round(nanoseconds / 60e9)))


def backup_store(etcd, spec_config_base, config_base):
    """The spec's backup store, moved under config_base when it is kops' default location."""
    default = "%s/backups/etcd/%s" % (config_base.rstrip("/"), etcd["name"])
    configured = (etcd.get("backups") or {}).get("backupStore")
    if not configured or (spec_config_base and configured.startswith(spec_config_base.rstrip("/") + "/")):
        return default
    return configured


def etcd_clusters(completed_cluster, instance_group, config_base, etcd_sha256=None):
    """[etcd cluster] for the kubeops section of a control-plane group's nodeup config (etcd_sha256: the user's
    {version: {arch: sha256}} for versions asset_data does not pin, cloud_facts.etcd_sha256)."""
    name = completed_cluster["metadata"]["name"]
    spec = completed_cluster["spec"]
    clusters = []
    for etcd in spec.get("etcdClusters") or []:
        if etcd["name"] not in PORTS:
            raise NodeConfigError("etcd cluster %s: no well-known ports (use one of %s)"
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
                                                (spec.get("assets") or {}).get("fileRepository"), given=etcd_sha256),
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
        clusters[-1].update(member_layout(clusters[-1], objects.name_of(instance_group)))
        clusters[-1]["certificates"] = member_certificates(clusters[-1])
    return clusters


def member_layout(cluster, instance_group_name):
    """Names, URLs and paths of one etcd cluster as this instance group's node runs it: the unit, mount, data
    and PKI directories, the group's own member (localMember, None when the group runs none), and each member's
    etcd name (<clusterName>-<member>), DNS name and peer and client URLs."""
    members = [dict(member, memberName="%s-%s" % (cluster["clusterName"], member["name"]),
                    fqdn="%s-%s%s" % (cluster["clusterName"], member["name"], cluster["dnsSuffix"]))
               for member in cluster["members"]]
    for member in members:
        member["peerURL"] = "https://%s:%d" % (member["fqdn"], cluster["peerPort"])
        member["clientURL"] = "https://%s:%d" % (member["fqdn"], cluster["clientPort"])
    mount = "%s/etcd-%s" % (MOUNT_ROOT, cluster["name"])
    return {
        "unit": "etcd-%s" % cluster["name"],
        "mountPath": mount,
        "dataDir": mount + "/data",
        "pkiDir": "%s/etcd-%s" % (PKI_ROOT, cluster["name"]),
        "localMember": next((m["name"] for m in members if m["instanceGroup"] == instance_group_name), None),
        "members": members,
    }


def member_certificates(cluster):
    """The certificates the local member of one etcd cluster needs (kubeops.kops.node_certificates requests),
    with the member's address left as MEMBER_ADDRESS: [] when this group runs no member."""
    local = next((m for m in cluster["members"] if m["name"] == cluster["localMember"]), None)
    if local is None:
        return []
    names = {MEMBER_NAME: local["memberName"], MEMBER_FQDN: local["fqdn"]}
    requests = []
    for stem, signer, common_name, usages, dns_names, ip_addresses, ca_file in CERTIFICATES:
        request = {"signer": signer.format(cluster=cluster["name"]), "common_name": names.get(common_name, common_name),
                   "usages": usages, "cert_path": "%s/%s.crt" % (cluster["pkiDir"], stem),
                   "key_path": "%s/%s.key" % (cluster["pkiDir"], stem)}
        if dns_names:
            request["dns_names"] = [names.get(name, name) for name in dns_names]
        if ip_addresses:
            request["ip_addresses"] = ip_addresses
        if ca_file:
            request["ca_path"] = "%s/%s" % (cluster["pkiDir"], ca_file)
        requests.append(request)
    return requests
