# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What etcd-manager does for one etcd member on a control-plane node, without etcd-manager.

* membership: form a new cluster when no member answers, join one that does
  (``etcdctl member add`` through a running member), never twice;
* backups in etcd-manager's layout: ``<backupStore>/<RFC 3339 time>-<seq>/etcd.backup.gz``
  plus ``_etcd_backup.meta`` (protojson of BackupInfo), taken only by the leader;
* etcd-manager's retention: everything younger than an hour, the first backup of
  each hour for 7 days, the first of each day for the daily retention (90 d);
* fetching a backup for ``etcdctl snapshot restore``.

Runs on the node: etcdctl (Debian's etcd-client) through subprocess, the store
through statestore.vfs, so file://, s3:// and gs:// all work.  Also usable
without Ansible: ``python -m ...module_utils.nodeup.etcd_node save CONFIG.json``
(the backup timer does that).
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.parse

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

DATA_FILENAME = "etcd.backup.gz"
META_FILENAME = "_etcd_backup.meta"
MIN_RETENTION = datetime.timedelta(hours=1)
HOURLY_RETENTION = datetime.timedelta(days=7)
NAME_PATTERN = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)-(\d+)$")
ETCDCTL_TIMEOUT = "5s"
# How long a connection to another member's client port may take before that member counts as not running.
CONNECT_TIMEOUT = 5.0


class EtcdError(NodeError):
    """etcdctl or the backup store failed; the message says which command or object."""


# -- etcdctl -------------------------------------------------------------------

def etcdctl(tls, endpoints, *args, **kwargs):
    """Run etcdctl (v3 API) against endpoints with the client TLS files; returns stdout text."""
    command = [tls.get("etcdctl") or "etcdctl", "--endpoints", ",".join(endpoints),
               "--cacert", tls["cacert"], "--cert", tls["cert"], "--key", tls["key"],
               "--dial-timeout", ETCDCTL_TIMEOUT, "--command-timeout", kwargs.get("timeout", "30s")] + list(args)
    proc = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"),
                          check=False)
    if proc.returncode != 0:
        raise EtcdError("%s failed (%d): %s" % (" ".join(command[:1] + list(args)), proc.returncode,
                                                proc.stderr.strip()[-500:]))
    return proc.stdout


def member_list(tls, endpoints):
    """[{id, name, peerURLs, clientURLs}] (ids as hex strings) from the first endpoint that answers."""
    data = json.loads(etcdctl(tls, endpoints, "member", "list", "-w", "json"))
    return [{"id": "%x" % m["ID"], "name": m.get("name") or "", "peerURLs": m.get("peerURLs") or [],
             "clientURLs": m.get("clientURLs") or []} for m in data.get("members") or []]


def accepts_connections(endpoint, timeout=CONNECT_TIMEOUT):
    """Whether something listens at a client URL's host and port.  etcdctl 3.4 keeps redialling a refused
    endpoint until its --command-timeout (30 s), so a member that is not running is told apart first, at once;
    one that listens gets the full etcdctl call."""
    parsed = urllib.parse.urlsplit(endpoint)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 2379), timeout=timeout):
            return True
    except OSError:
        return False


def endpoint_status(tls, endpoint):
    """etcd's status of one endpoint: version, leader, this member's id, revision."""
    data = json.loads(etcdctl(tls, [endpoint], "endpoint", "status", "-w", "json"))[0]["Status"]
    return {"version": data["version"], "leader": data["leader"], "member_id": data["header"]["member_id"],
            "revision": data["header"]["revision"]}


# -- membership ------------------------------------------------------------------

def initial_cluster(members):
    """etcd's --initial-cluster from [(name, peer URL)]."""
    return ",".join("%s=%s" % (name, url) for name, url in members)


def plan_membership(name, peer_url, all_members, running_members):
    """(state, initial cluster pairs, action) for a member without data.

    running_members: None when no other member answered, else member_list().
    action: None, ("add",) or ("replace", old id): a member of our name that has
    run before but whose data is gone (a new disk) is removed and added again.
    """
    if running_members is None:
        return "new", sorted(all_members.items()), None
    ours = [m for m in running_members if peer_url in m["peerURLs"]]
    action = ("add",)
    if ours and not ours[0]["name"]:
        action = None  # added already (an earlier run) or part of the initial cluster, not started yet
    elif ours:
        action = ("replace", ours[0]["id"])
    pairs = [(m["name"], m["peerURLs"][0]) for m in running_members
             if m["peerURLs"] and peer_url not in m["peerURLs"] and m["name"]]
    return "existing", sorted(pairs + [(name, peer_url)]), action


def ensure_membership(tls, name, peer_url, all_members, other_endpoints, data_dir, check_mode=False):
    """Decide how this member starts, adding it through a running member when needed."""
    if os.path.isdir(os.path.join(data_dir, "member")):
        return {"changed": False, "state": "existing", "initial_cluster": initial_cluster(sorted(all_members.items())),
                "action": "none", "reason": "member has data"}
    running = None
    answered = []
    for endpoint in other_endpoints:
        if not accepts_connections(endpoint):
            continue
        try:
            running = member_list(tls, [endpoint])
            answered = [endpoint]
            break
        except EtcdError:
            continue
    state, pairs, action = plan_membership(name, peer_url, all_members, running)
    result = {"changed": bool(action), "state": state, "initial_cluster": initial_cluster(pairs),
              "action": action[0] if action else "none",
              "reason": "no other member answers" if running is None else "cluster answers at %s" % answered[0]}
    if action and not check_mode:
        if action[0] == "replace":
            etcdctl(tls, answered, "member", "remove", action[1])
        etcdctl(tls, answered, "member", "add", name, "--peer-urls", peer_url)
    return result


# -- backups ---------------------------------------------------------------------

def backup_name(now, sequence):
    """etcd-manager's backup name: RFC 3339 UTC time and a six-digit tie-breaker."""
    return "%s-%06d" % (now.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), sequence % 1000000)


def backup_time(name):
    match = NAME_PATTERN.match(name)
    if not match:
        return None
    return datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def backup_meta(etcd_version, member_count, now):
    """_etcd_backup.meta as etcd-manager writes it (protojson of BackupInfo: int64 as a string)."""
    return json.dumps({"etcdVersion": etcd_version, "timestamp": str(int(now.timestamp())),
                       "clusterSpec": {"memberCount": member_count, "etcdVersion": etcd_version}}, indent=2)


def list_backups(store):
    """Backup names that have a metadata file, oldest first."""
    names = set()
    for path in store.list(""):
        parts = path.split("/")
        if len(parts) == 2 and parts[1] == META_FILENAME:
            names.add(parts[0])
    return sorted(names)


def backups_to_remove(names, now, daily_retention_days):
    """Names etcd-manager's cleanup would remove (unparseable names are left alone)."""
    daily = datetime.timedelta(days=daily_retention_days)
    keep, earliest = set(), {}
    for name in names:
        taken = backup_time(name)
        if taken is None:
            keep.add(name)
            continue
        age = now - taken
        if age < MIN_RETENTION:
            keep.add(name)
        elif age < HOURLY_RETENTION or age < daily:
            width = datetime.timedelta(hours=1) if age < HOURLY_RETENTION else datetime.timedelta(days=1)
            bucket = (width, (taken - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // width)
            if bucket not in earliest or backup_time(earliest[bucket]) > taken:
                earliest[bucket] = name
    keep.update(earliest.values())
    return [n for n in names if n not in keep]


def remove_backup(store, name):
    for path in store.list(name + "/"):
        store.delete(path)


def resolve_name(store, name):
    names = list_backups(store)
    if not names:
        raise EtcdError("no backups in %s" % store.url())
    if name in (None, "", "latest"):
        return names[-1]
    if name not in names:
        raise EtcdError("backup %s not in %s (have: %s)" % (name, store.url(), ", ".join(names[-5:])))
    return name


def fetch_backup(store, name, dest):
    """Write the backup's snapshot (gunzipped) to dest; returns the resolved name."""
    name = resolve_name(store, name)
    data = gzip.decompress(store.read("%s/%s" % (name, DATA_FILENAME)))
    atomic_write(dest, 0o600, data)
    return name


def save_backup(store, tls, endpoint, now, only_if_leader=True):
    """Snapshot the member at endpoint into the store; None when it is not the leader (and only_if_leader)."""
    status = endpoint_status(tls, endpoint)
    if only_if_leader and status["leader"] != status["member_id"]:
        return None
    members = member_list(tls, [endpoint])
    directory = tempfile.mkdtemp(prefix="etcd-backup-")
    try:
        snapshot = os.path.join(directory, "snapshot.db")
        etcdctl(tls, [endpoint], "snapshot", "save", snapshot, timeout="300s")
        with open(snapshot, "rb") as handle:
            data = gzip.compress(handle.read())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    name = backup_name(now, status["revision"])
    store.write("%s/%s" % (name, DATA_FILENAME), data)
    store.write("%s/%s" % (name, META_FILENAME), backup_meta(status["version"], len(members), now))
    return name


def open_backup_store(url, endpoint=None):
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
    return vfs.open_store(url, endpoint=endpoint)


def run_action(params, check_mode=False, now=None):
    """One action of the etcd_backup module (also the timer's entry point) -> result dict."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    store = open_backup_store(params["backup_store"], params.get("store_endpoint"))
    action = params.get("action") or "save"
    tls = {k: params.get(k) for k in ("cacert", "cert", "key", "etcdctl")}
    if action == "list":
        return {"changed": False, "backups": list_backups(store)}
    if action == "fetch":
        name = resolve_name(store, params.get("name"))
        if not check_mode:
            fetch_backup(store, name, params["dest"])
        return {"changed": True, "name": name, "dest": params["dest"]}
    result = {"changed": False, "name": None, "removed": []}
    if action == "save":
        if check_mode:
            result.update(changed=True, name=backup_name(now, 0))
        else:
            result["name"] = save_backup(store, tls, params["endpoint"], now, params.get("only_if_leader", True))
            result["changed"] = result["name"] is not None
            if result["name"] is None:
                result["skipped_reason"] = "this member is not the leader; the leader takes the backups"
                return result
    if action in ("save", "prune"):
        removed = backups_to_remove(list_backups(store), now, int(params.get("retention_days") or 90))
        if not check_mode:
            for name in removed:
                remove_backup(store, name)
        result["removed"] = removed
        result["changed"] = result["changed"] or bool(removed)
    return result


def main(argv=None):
    """python -m ...module_utils.nodeup.etcd_node save CONFIG.json (the backup timer's command)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("save", "prune", "list"):
        sys.stderr.write("usage: etcd_node {save|prune|list} CONFIG.json\n")
        return 2
    with open(argv[1]) as handle:
        params = json.load(handle)
    params["action"] = argv[0]
    try:
        result = run_action(params)
    except (ValueError, OSError) as exc:
        sys.stderr.write("etcd backup failed: %s\n" % exc)
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
