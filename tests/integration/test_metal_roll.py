"""rolling_update.yml on a metal cluster, planned as a user runs it from their own directory: a file:// store, an
inventory of hosts naming their instance groups (reached with the local connection, each with its enroll record in
a file of its own), --check. The plan (kops' table, the hosts to update in kops' order) is asserted, and that nothing
changed: not the store, not a record, no host rolled. The roll itself runs on real hosts (tests/realk8s)."""

from __future__ import annotations

import hashlib
import json

import yaml

from tests.integration.conftest import assert_kops_table, task_results
from tests.integration.test_metal import NAME, OPTIONS, _cloud_files, _files

HEADER = ["NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX", "NODES"]


def _digest(path):
    """What enroll records: sha256 of the nodeup config's canonical JSON (read here from the store's file)."""
    config = yaml.safe_load(path.read_text())
    return "sha256:" + hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _cluster(playbook, tmp_path):
    store = tmp_path / "state"
    (tmp_path / "metal.yml").write_text(yaml.safe_dump({"state_store": "file://%s" % store, "cluster_options": dict(
        OPTIONS, node_count=2, api_public_name="127.0.0.1")}))
    code, created = playbook("kubeops.kops.create_cluster", "-e", "@metal.yml", "-e", "target=direct")
    assert code == 0, created
    return store


def _inventory(tmp_path, records):
    """hosts.yml: vm0 the control plane, vm1 and vm2 nodes; records {host: text of its enroll record or None}."""
    hosts = {}
    for host, group in (("vm0", "control-plane-main"), ("vm1", "nodes-main"), ("vm2", "nodes-main")):
        record = tmp_path / ("record-%s.json" % host)
        if records.get(host) is not None:
            record.write_text(records[host])
        hosts[host] = {"ansible_connection": "local", "kops_instance_group": group, "enroll_record_path": str(record)}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))


def _roll(playbook, *args):
    # The API is not up (a closed port on the loopback): check mode plans without it, NODES 0.
    return playbook("kubeops.kops.rolling_update", "-i", "hosts.yml", "-e", "cluster_name=%s" % NAME, "-e",
                    "state_store=file://state", "-e", "api_server=https://127.0.0.1:9", "--check", *args)


def _rolled_hosts(run):
    """The hosts the roll's metal plays ran on (none in check mode)."""
    return sorted({host for play in run["plays"] for task in play["tasks"] for host in task["hosts"]
                   if host != "localhost"})


def test_check_mode_plans_the_in_place_roll_and_changes_nothing(playbook, tmp_path):
    store = _cluster(playbook, tmp_path)
    control = _digest(store / NAME / "igconfig/control-plane/control-plane-main/nodeupconfig.yaml")
    record = json.dumps({"cluster": NAME, "instanceGroup": "control-plane-main", "nodeupConfigDigest": control})
    stale = json.dumps({"cluster": NAME, "instanceGroup": "nodes-main", "nodeupConfigDigest": "sha256:0ld"})
    _inventory(tmp_path, {"vm0": record, "vm1": stale, "vm2": None})
    before = _cloud_files(_files(store))

    code, run = _roll(playbook, "-e", "max_surge=1")
    assert code == 0, run
    plan = task_results(run, "Plan the in-place roll of the hosts of %s" % NAME)
    rows = assert_kops_table(plan["lines"], HEADER)
    assert rows == [["control-plane-main", "Ready", "0", "1", "1", "1", "1", "0"],
                    ["nodes-main", "NeedsUpdate", "2", "0", "2", "2", "2", "0"]]
    assert plan["lines"][len(rows) + 2:] == [
        "nodes-main: 2 host(s) to update in place (vm1, vm2), 1 at a time across the node groups",
        "max_surge: no surge on metal (the hosts are the machines, there is none to add); each host is drained and "
        "updated in place"]
    assert plan["control_plane"] == [] and plan["nodes"] == ["vm1", "vm2"] and plan["changed"] is False
    assert any("Kubernetes API does not answer" in w for w in plan.get("warnings", [])), plan
    assert _rolled_hosts(run) == []  # the preview: no host was drained nor re-enrolled
    assert _cloud_files(_files(store)) == before
    assert (tmp_path / "record-vm1.json").read_text() == stale and not (tmp_path / "record-vm2.json").exists()

    # force: every host, the control plane first; the node hosts two at a time under the budget.
    code, run = _roll(playbook, "-e", "force=true", "-e", "budget_max_unavailable=2")
    assert code == 0, run
    plan = task_results(run, "Plan the in-place roll of the hosts of %s" % NAME)
    assert plan["control_plane"] == ["vm0"] and plan["nodes"] == ["vm1", "vm2"] and plan["node_batch"] == 2
    assert plan["lines"][-2:] == [
        "control-plane-main: 1 host(s) to update in place (vm0), one at a time",
        "nodes-main: 2 host(s) to update in place (vm1, vm2), 2 at a time across the node groups"]


def test_hosts_running_their_groups_config_need_no_roll(playbook, tmp_path):
    store = _cluster(playbook, tmp_path)
    records = {}
    for host, path in (("vm0", "control-plane/control-plane-main"), ("vm1", "node/nodes-main"),
                       ("vm2", "node/nodes-main")):
        records[host] = json.dumps({"nodeupConfigDigest": _digest(store / NAME / "igconfig" / path /
                                                                  "nodeupconfig.yaml")})
    _inventory(tmp_path, records)
    code, run = _roll(playbook)
    assert code == 0, run
    plan = task_results(run, "Plan the in-place roll of the hosts of %s" % NAME)
    assert plan["lines"][-1] == "No rolling-update required." and plan["nodes"] == plan["control_plane"] == []


def test_a_metal_roll_without_the_inventory_fails_in_one_line(playbook, tmp_path):
    _cluster(playbook, tmp_path)
    code, run = playbook("kubeops.kops.rolling_update", "-e", "cluster_name=%s" % NAME, "-e",
                         "state_store=file://state", "-e", "api_server=https://127.0.0.1:9", "--check")
    assert code != 0
    result = task_results(run, "Plan the in-place roll of the hosts of %s" % NAME)
    assert result["msg"].startswith("rolling update of metal cluster %s: no inventory host names" % NAME), result
    assert "\n" not in result["msg"]


def test_the_cloud_roll_module_names_the_playbook_a_metal_cluster_rolls_with(playbook, tmp_path):
    """kubeops.kops.rolling_update (and upgrade_cluster.yml's then_roll, which runs it) has no inventory."""
    _cluster(playbook, tmp_path)
    (tmp_path / "roll.yml").write_text(yaml.safe_dump([{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"},
        "tasks": [{"name": "Roll", "kubeops.kops.rolling_update": {
            "state_store": "file://%s" % (tmp_path / "state"), "cluster_name": NAME, "cloud_only": True}}]}]))
    code, run = playbook(tmp_path / "roll.yml", "--check")
    assert code != 0
    message = task_results(run, "Roll")["msg"]
    assert message.startswith("spec.cloudProvider: rolling update is not built for metal clusters; a metal cluster's "
                              "hosts are updated in place: run rolling_update.yml with the inventory"), message
    assert "\n" not in message and "Traceback" not in message
