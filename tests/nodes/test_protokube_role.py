"""roles/protokube on three real test hosts: a TLS etcd cluster (main and events) from a file:// state store.

The store is made by ClusterService (a three-zone HA cluster) and the keypair module (so the etcd CAs exist),
bind-mounted into the hosts at the same path; each host gets its own group's nodeup config.  Proves:
forming over TLS, health from a host with `endpoint health --cluster`, a unit restart and a host restart,
a backup in the store that restores (key written, backed up, deleted, restored, back), changed=0 on a
second run.  Times are printed (pytest -s) and written to <tmp>/protokube-times.json.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config

from tests.integration.conftest import BIN, REPO, ansible_env
from tests.nodes import boot_artifacts

pytestmark = pytest.mark.hosts

CLUSTER = "etcd.example.com"
ZONES = ["us-test-1a", "us-test-1b", "us-test-1c"]
COLLECTIONS = REPO / "build" / "collections"
VENV = "/opt/kubeops/venv"
PLAYBOOK = """
- name: etcd on the control plane
  hosts: control_plane
  gather_facts: false
  roles:
    - role: kubeops.kops.protokube
"""


def _ansible(*args, timeout=900):
    started = time.monotonic()
    proc = subprocess.run([str(BIN / args[0])] + list(args[1:]), env=ansible_env(COLLECTIONS),
                          capture_output=True, text=True, timeout=timeout, check=False)
    return proc, time.monotonic() - started


def _recap_changed(output):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)", output, re.M)}


def _make_store(tmp_path):
    """An HA cluster in a file:// store, its CAs from the keypair module; nodeup config per control-plane group."""
    store_url = "file://%s/store" % tmp_path
    service = ClusterService(store_url)
    plan = service.plan_create({"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ZONES,
                                "control_plane_zones": ZONES, "networking": "cni",
                                "kubernetes_version": "v1.34.2"})
    service.execute(plan)
    proc, _seconds = _ansible("ansible", "localhost", "-m", "kubeops.kops.keypair",
                              "-a", "state_store=%s cluster_name=%s" % (store_url, CLUSTER))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    service.store.refresh()  # the keypair module wrote the CAs in another process: read the store anew
    cluster, groups = service.read(CLUSTER)
    cluster_store = service.cluster_store(CLUSTER)
    completed = plan.completed
    keysets = nodeup_config.load_keysets(cluster_store, completed)
    assert "etcd-peers-ca-main" in keysets and "etcd-clients-ca" in keysets
    configs = {}
    for group in groups:
        if group["spec"]["role"] in ("ControlPlane", "Master"):  # the stored v1alpha2 spelling is Master
            completed_group = populate.populate_instance_group_spec(completed, group)
            configs[group["metadata"]["name"]] = nodeup_config.build_config(
                completed, completed_group, keysets, cluster_store.config_base())
    return store_url, cluster_store.config_base(), configs


def _etcdctl(host, cluster, command):
    port = {"main": 4001, "events": 4002}[cluster]
    pki = "/etc/kubernetes/pki/etcd-%s" % cluster
    return host.run("ETCDCTL_API=3 etcdctl --endpoints https://127.0.0.1:%d --cacert %s/clients-ca.crt "
                    "--cert %s/etcdctl.crt --key %s/etcdctl.key %s" % (port, pki, pki, pki, command))


def _wait_healthy(host, cluster, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        proc = _etcdctl(host, cluster, "endpoint health --cluster")
        output = proc.stdout + proc.stderr  # etcdctl 3.4 prints health on stderr
        if proc.returncode == 0 and output.count("is healthy") == 3:
            return output
        if time.monotonic() > deadline:
            raise AssertionError("etcd %s not healthy on %s: %s %s" % (cluster, host.name, proc.stdout, proc.stderr))
        time.sleep(1)


def test_three_member_tls_etcd_forms_survives_restarts_backs_up_and_restores(host_pool, tmp_path):
    times = {}
    store_url, config_base, configs = _make_store(tmp_path)
    wheels = boot_artifacts.wheelhouse()
    pool = host_pool(3, binds=[tmp_path, wheels, REPO])
    hosts = pool.hosts

    # What the boot script gives a node: a venv with ansible-core and the collection's requirements.
    started = time.monotonic()
    procs = [subprocess.Popen(h.ssh_command(
        "python3 -m venv %s && %s/bin/pip install -q --no-index --find-links %s ansible-core cryptography pyyaml"
        % (VENV, VENV, wheels)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for h in hosts]
    for proc in procs:
        output, _err = proc.communicate(timeout=600)
        assert proc.returncode == 0, output
    times["node_venv_s"] = round(time.monotonic() - started, 1)

    groups = sorted(configs)
    members = {m["instanceGroup"]: m["name"]
               for m in configs[groups[0]]["kubeops"]["etcdClusters"][0]["members"]}
    peers = {members[group]: host.address for group, host in zip(groups, hosts)}
    hostvars = {host.name: {"ansible_python_interpreter": "%s/bin/python" % VENV,
                            "protokube_nodeup_config": configs[group],
                            "protokube_etcd_peers": peers,
                            "protokube_etcd_install_override": boot_artifacts.debian_etcd_install(host),
                            "protokube_python": "%s/bin/python" % VENV,
                            "protokube_collections_path": str(COLLECTIONS),
                            "protokube_api_wait_timeout": 1}
                for group, host in zip(groups, hosts)}
    inventory = pool.inventory_file(tmp_path / "hosts.yml", groups={"control_plane": [h.name for h in hosts]},
                                    hostvars=hostvars)
    playbook = tmp_path / "protokube.yml"
    playbook.write_text(PLAYBOOK)

    # 1. Form main and events over TLS.
    proc, times["first_run_s"] = _ansible("ansible-playbook", "-i", str(inventory), str(playbook))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    # No etcd release is reachable here: the members run Debian's etcd, installed as a pinned tarball would be.
    assert _etcdctl(hosts[0], "main", "version").stdout.startswith("etcdctl version:")
    assert "did not answer within 1 s" in proc.stdout  # no kube-apiserver here: addons skipped with a reason
    for cluster in ("main", "events"):
        health = _wait_healthy(hosts[0], cluster)
        assert health.count("https://%s-" % ("etcd" if cluster == "main" else "etcd-events")) == 3, health
    members_out = _etcdctl(hosts[1], "main", "member list -w json")
    names = sorted(m["name"] for m in json.loads(members_out.stdout)["members"])
    assert names == ["etcd-%s" % peers_name for peers_name in sorted(peers)]
    events = json.loads(_etcdctl(hosts[1], "events", "member list -w json").stdout)["members"]
    assert sorted(m["name"] for m in events) == ["etcd-events-%s" % n for n in sorted(peers)]
    # TLS only: a client without a certificate is refused
    plain = hosts[2].run("ETCDCTL_API=3 etcdctl --endpoints https://127.0.0.1:4001 --insecure-skip-tls-verify "
                         "--dial-timeout 3s endpoint health")
    assert plain.returncode != 0

    # 2. A second run changes nothing.
    proc, times["second_run_s"] = _ansible("ansible-playbook", "-i", str(inventory), str(playbook))
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert set(_recap_changed(proc.stdout).values()) == {0}, proc.stdout[-4000:]

    # 3. One member's unit restarts; data is kept.
    assert _etcdctl(hosts[0], "main", "put /kubeops/survives yes").returncode == 0
    started = time.monotonic()
    assert hosts[1].run("systemctl restart etcd-main").returncode == 0
    _wait_healthy(hosts[0], "main")
    times["unit_restart_healthy_s"] = round(time.monotonic() - started, 1)
    assert _etcdctl(hosts[1], "main", "get /kubeops/survives --print-value-only").stdout.strip() == "yes"

    # 4. One host powers off and boots again; its members come back by themselves (units enabled).
    started = time.monotonic()
    hosts[2].stop()
    hosts[2].start()
    _wait_healthy(hosts[0], "main")
    _wait_healthy(hosts[0], "events")
    times["host_restart_healthy_s"] = round(time.monotonic() - started, 1)
    assert _etcdctl(hosts[2], "main", "get /kubeops/survives --print-value-only").stdout.strip() == "yes"

    # 5. Backup: the timer's service on every member; only the leader writes one.
    assert _etcdctl(hosts[0], "main", "put /kubeops/restored-key back").returncode == 0
    for host in hosts:
        run = host.run("systemctl start etcd-main-backup.service")
        assert run.returncode == 0, run.stderr + host.run("journalctl -u etcd-main-backup -n 20").stdout
    backups = sorted((tmp_path / "store" / CLUSTER / "backups" / "etcd" / "main").iterdir())
    assert len(backups) == 1, backups  # one leader
    assert sorted(p.name for p in backups[0].iterdir()) == ["_etcd_backup.meta", "etcd.backup.gz"]
    meta = json.loads((backups[0] / "_etcd_backup.meta").read_text())
    assert meta["clusterSpec"]["memberCount"] == 3
    assert _etcdctl(hosts[0], "main", "del /kubeops/restored-key").stdout.strip() == "1"

    # 6. Restore on every member.
    proc, times["restore_run_s"] = _ansible("ansible-playbook", "-i", str(inventory), str(playbook),
                                            "-e", "protokube_etcd_restore_backup=%s" % backups[0].name)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    _wait_healthy(hosts[0], "main")
    for host in hosts:
        assert _etcdctl(host, "main", "get /kubeops/restored-key --print-value-only").stdout.strip() == "back"
    proc, _seconds = _ansible("ansible-playbook", "-i", str(inventory), str(playbook),
                              "-e", "protokube_etcd_restore_backup=%s" % backups[0].name)
    assert set(_recap_changed(proc.stdout).values()) == {0}, proc.stdout[-4000:]  # a restore happens once

    (tmp_path / "protokube-times.json").write_text(json.dumps(times, indent=2))
    print("protokube times: %s" % json.dumps(times))
    yaml.safe_dump(times)
