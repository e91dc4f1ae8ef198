"""etcd backups in etcd-manager's layout, retention and membership decisions (module_utils/nodeup/etcd_node.py).

The last tests run a real TLS etcd (Debian's etcd-server, when installed) on 127.0.0.1.
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_node
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 16, 0, 0, tzinfo=UTC)


def _store(tmp_path):
    return vfs.open_store("file://%s/backups/etcd/main" % tmp_path)


def _add(store, when, sequence=1):
    name = etcd_node.backup_name(when, sequence)
    store.write("%s/%s" % (name, etcd_node.DATA_FILENAME), gzip.compress(b"snapshot " + name.encode()))
    store.write("%s/%s" % (name, etcd_node.META_FILENAME), etcd_node.backup_meta("3.4.23", 3, when))
    return name


def test_backup_names_sort_by_time_and_parse_back():
    name = etcd_node.backup_name(NOW, 42)
    assert name == "2026-11-22T16:00:00Z-000042"
    assert etcd_node.backup_time(name) == NOW
    assert etcd_node.backup_time("not-a-backup") is None


def test_meta_is_etcd_manager_backup_info_json():
    meta = json.loads(etcd_node.backup_meta("3.4.23", 3, NOW))
    assert meta == {"etcdVersion": "3.4.23", "timestamp": str(int(NOW.timestamp())),
                    "clusterSpec": {"memberCount": 3, "etcdVersion": "3.4.23"}}


def test_retention_like_etcd_manager_cleanup():
    minutes = [NOW - datetime.timedelta(minutes=m) for m in (5, 20, 50)]                    # < 1 h: all kept
    hourly = [NOW - datetime.timedelta(hours=3, minutes=m) for m in (50, 35, 5)]           # one hour bucket
    daily = [NOW - datetime.timedelta(days=20, hours=h) for h in (1, 3, 5)]                # one day bucket
    ancient = [NOW - datetime.timedelta(days=100)]                                         # beyond 90 d
    names = sorted(etcd_node.backup_name(t, i) for i, t in enumerate(minutes + hourly + daily + ancient))
    removed = etcd_node.backups_to_remove(names + ["manual-copy"], NOW, 90)
    kept = set(names) - set(removed)
    assert {etcd_node.backup_name(t, i) for i, t in enumerate(minutes)} <= kept
    assert etcd_node.backup_name(hourly[0], 3) in kept  # the first of its hour (03:10 UTC bucket 12:00)
    assert etcd_node.backup_name(daily[2], 8) in kept   # the earliest of that day
    assert len(kept) == 3 + 1 + 1
    assert "manual-copy" not in removed
    assert etcd_node.backup_name(ancient[0], 9) in removed


def test_list_fetch_and_prune_in_a_file_store(tmp_path):
    store = _store(tmp_path)
    old = _add(store, NOW - datetime.timedelta(days=200))
    new = _add(store, NOW - datetime.timedelta(minutes=3))
    store.write("not-a-backup/readme", "ignored")
    assert etcd_node.list_backups(store) == [old, new]
    dest = tmp_path / "restore" / "snapshot.db"
    assert etcd_node.fetch_backup(store, "latest", str(dest)) == new
    assert dest.read_bytes() == b"snapshot " + new.encode() and (dest.stat().st_mode & 0o777) == 0o600
    params = {"backup_store": store.url(), "action": "prune", "retention_days": 90}
    assert etcd_node.run_action(params, check_mode=True, now=NOW)["removed"] == [old]
    assert etcd_node.list_backups(store) == [old, new]  # check mode removed nothing
    result = etcd_node.run_action(params, now=NOW)
    assert result["changed"] and result["removed"] == [old]
    store.refresh()  # a store remembers what one run saw; the prune was another run
    assert etcd_node.list_backups(store) == [new]
    assert not (tmp_path / "backups/etcd/main" / old).exists()
    with pytest.raises(etcd_node.EtcdError, match="not in"):
        etcd_node.fetch_backup(store, old, str(dest))


MEMBERS = {"etcd-a": "https://etcd-a.internal.c:2380", "etcd-b": "https://etcd-b.internal.c:2380",
           "etcd-c": "https://etcd-c.internal.c:2380"}


def test_membership_forms_when_nobody_answers():
    state, pairs, action = etcd_node.plan_membership("etcd-a", MEMBERS["etcd-a"], MEMBERS, None)
    assert (state, action) == ("new", None) and dict(pairs) == MEMBERS


def test_membership_joins_a_running_cluster():
    running = [{"id": "1", "name": "etcd-b", "peerURLs": [MEMBERS["etcd-b"]]},
               {"id": "2", "name": "etcd-c", "peerURLs": [MEMBERS["etcd-c"]]}]
    state, pairs, action = etcd_node.plan_membership("etcd-a", MEMBERS["etcd-a"], MEMBERS, running)
    assert (state, action, dict(pairs)) == ("existing", ("add",), MEMBERS)


def test_membership_does_not_add_a_listed_member_twice_and_replaces_a_lost_one():
    listed = [{"id": "1", "name": "etcd-b", "peerURLs": [MEMBERS["etcd-b"]]},
              {"id": "3", "name": "", "peerURLs": [MEMBERS["etcd-a"]]}]
    assert etcd_node.plan_membership("etcd-a", MEMBERS["etcd-a"], MEMBERS, listed)[2] is None
    lost = [{"id": "1", "name": "etcd-b", "peerURLs": [MEMBERS["etcd-b"]]},
            {"id": "3", "name": "etcd-a", "peerURLs": [MEMBERS["etcd-a"]]}]
    assert etcd_node.plan_membership("etcd-a", MEMBERS["etcd-a"], MEMBERS, lost)[2] == ("replace", "3")


def test_member_with_data_changes_nothing(tmp_path):
    (tmp_path / "member").mkdir()
    tls = {"cacert": "/nonexistent", "cert": "/nonexistent", "key": "/nonexistent"}
    result = etcd_node.ensure_membership(tls, "etcd-a", MEMBERS["etcd-a"], MEMBERS, ["https://x:4001"],
                                         str(tmp_path))
    assert (result["changed"], result["action"]) == (False, "none")


# -- a real etcd ---------------------------------------------------------------------

def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def tls_etcd(tmp_path):
    if not (shutil.which("etcd") and shutil.which("etcdctl")):
        pytest.skip("needs Debian's etcd-server and etcd-client (apt-get install etcd-server etcd-client)")
    ca, ca_key = certs.new_ca("etcd-clients-ca")
    files = {}
    for name, usages in (("server", ("client", "server")), ("client", ("client",))):
        cert, key = certs.issue(ca, ca_key, "etcd-a" if name == "server" else "etcdctl", (), usages,
                                ["localhost"], ["127.0.0.1"])
        (tmp_path / ("%s.crt" % name)).write_bytes(certs.certificate_pem(cert))
        (tmp_path / ("%s.key" % name)).write_bytes(certs.key_pem(key))
    (tmp_path / "ca.crt").write_bytes(certs.certificate_pem(ca))
    files = {"cacert": str(tmp_path / "ca.crt"), "cert": str(tmp_path / "client.crt"),
             "key": str(tmp_path / "client.key")}
    client, peer = _free_port(), _free_port()
    endpoint = "https://127.0.0.1:%d" % client
    process = subprocess.Popen([
        "etcd", "--name", "etcd-a", "--data-dir", str(tmp_path / "data"),
        "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
        "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
        "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
        "--initial-cluster", "etcd-a=http://127.0.0.1:%d" % peer,
        "--cert-file", str(tmp_path / "server.crt"), "--key-file", str(tmp_path / "server.key"),
        "--trusted-ca-file", str(tmp_path / "ca.crt"), "--client-cert-auth"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                etcd_node.endpoint_status(files, endpoint)
                break
            except etcd_node.EtcdError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield files, endpoint
    finally:
        process.terminate()
        process.wait(10)


def test_save_on_the_leader_then_restore_brings_the_key_back(tmp_path, tls_etcd):
    files, endpoint = tls_etcd
    store = _store(tmp_path)
    etcd_node.etcdctl(files, [endpoint], "put", "/registry/kept", "yes")
    params = dict(files, backup_store=store.url(), action="save", endpoint=endpoint, retention_days=90)
    result = etcd_node.run_action(params)
    assert result["changed"] and result["name"] in etcd_node.list_backups(store)
    meta = json.loads(store.read("%s/%s" % (result["name"], etcd_node.META_FILENAME)))
    assert meta["etcdVersion"].startswith("3.") and meta["clusterSpec"]["memberCount"] == 1
    snapshot = tmp_path / "restore.db"
    etcd_node.fetch_backup(store, result["name"], str(snapshot))
    restored = tmp_path / "restored"
    subprocess.run(["etcdctl", "snapshot", "restore", str(snapshot), "--data-dir", str(restored)],
                   env=dict(os.environ, ETCDCTL_API="3"), check=True, capture_output=True)
    assert (restored / "member" / "snap" / "db").exists()


def test_membership_through_a_running_member_adds_us(tmp_path, tls_etcd):
    files, endpoint = tls_etcd
    members = {"etcd-a": "http://127.0.0.1:1", "etcd-z": "https://127.0.0.9:2380"}
    result = etcd_node.ensure_membership(files, "etcd-z", members["etcd-z"], members, [endpoint],
                                         str(tmp_path / "z-data"), check_mode=True)
    assert (result["state"], result["action"]) == ("existing", "add")
    assert len(etcd_node.member_list(files, [endpoint])) == 1  # check mode added nothing
    result = etcd_node.ensure_membership(files, "etcd-z", members["etcd-z"], members, [endpoint],
                                         str(tmp_path / "z-data"))
    assert result["changed"] and "etcd-z=https://127.0.0.9:2380" in result["initial_cluster"]
    assert [m["peerURLs"] for m in etcd_node.member_list(files, [endpoint]) if not m["name"]] == \
        [["https://127.0.0.9:2380"]]
    again = etcd_node.ensure_membership(files, "etcd-z", members["etcd-z"], members, [endpoint],
                                        str(tmp_path / "z-data"))
    assert again["action"] == "none"  # listed, never started: not added twice


def test_a_member_that_is_not_running_is_passed_over_at_once(tmp_path, monkeypatch):
    """etcdctl 3.4 keeps redialling a refused endpoint for its whole --command-timeout (30 s): a first member of a
    new cluster would wait that long per other member.  A closed port is seen at once and etcdctl is not called;
    a listening one is asked."""
    closed = "https://127.0.0.1:%d" % _free_port()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        open_endpoint = "https://127.0.0.1:%d" % listening.getsockname()[1]
        assert etcd_node.accepts_connections(open_endpoint) is True
        assert etcd_node.accepts_connections(closed) is False
        asked = []

        def member_list(_tls, endpoints):
            asked.extend(endpoints)
            raise etcd_node.EtcdError("no answer")
        monkeypatch.setattr(etcd_node, "member_list", member_list)
        started = time.monotonic()
        result = etcd_node.ensure_membership({}, "etcd-a", MEMBERS["etcd-a"], MEMBERS, [closed, open_endpoint],
                                             str(tmp_path / "data"))
    assert asked == [open_endpoint]
    assert (result["state"], result["reason"]) == ("new", "no other member answers")
    assert time.monotonic() - started < 5
