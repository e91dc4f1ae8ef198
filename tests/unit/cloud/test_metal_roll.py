"""The in-place roll of a metal cluster, planned (rolling/in_place.py): which hosts need an update, kops' order
and table, the node batch under the budget, and the surge that hosts cannot make."""

from __future__ import annotations

import hashlib
import json

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place as roll

CLUSTER = {"metadata": {"name": "metal.k8s.local"}, "spec": {"cloudProvider": "metal"}}


def _group(name, role="Node"):
    return {"metadata": {"name": name}, "spec": {"role": role, "minSize": 1, "maxSize": 1}}


GROUPS = [_group("nodes-main"), _group("control-plane-main", "Master"), _group("nodes-edge")]
HOSTS = {"control-plane-main": ["vm0"], "nodes-main": ["vm1", "VM2"], "nodes-edge": ["vm3"]}
DIGESTS = {"control-plane-main": "sha256:cp", "nodes-main": "sha256:n", "nodes-edge": "sha256:e"}
CURRENT = {"vm0": "sha256:cp", "vm1": "sha256:n", "VM2": "sha256:n", "vm3": "sha256:e"}


def _node(name, ready=True):
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}


def test_the_digest_is_of_the_document_not_its_layout():
    config = {"b": [1, 2], "a": {"y": True, "x": "v"}}
    expected = "sha256:" + hashlib.sha256(b'{"a":{"x":"v","y":true},"b":[1,2]}').hexdigest()
    assert roll.config_digest(config) == expected
    assert roll.config_digest(json.loads(json.dumps(config, indent=4))) == expected


@pytest.mark.parametrize("text, digest", [
    ('{"cluster": "c", "nodeupConfigDigest": "sha256:x"}', "sha256:x"),
    # raw over SSH with a terminal: the connection's warning in the same stream, Windows line ends.
    ("Warning: Permanently added '10.0.0.1' (ED25519) to the list of known hosts.\r\n{\r\n"
     '    "nodeupConfigDigest": "sha256:y"\r\n}\r\n', "sha256:y"),
    ("", ""), ("not json", ""), ("[]", ""), ('{"cluster": "c"}', ""), ("{broken", ""), ("} {", "")])
def test_a_record_reads_as_its_digest_or_nothing(text, digest):
    assert roll.recorded_digest(text) == digest


def test_hosts_up_to_date_roll_nothing():
    found = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, CURRENT)
    assert not found["rolls"] and found["control_plane"] == [] and found["nodes"] == []
    assert found["lines"][-1] == "No rolling-update required."


def test_a_host_with_another_digest_or_no_record_needs_an_update_in_kops_order():
    applied = dict(CURRENT, vm0="sha256:old", VM2="")
    nodes = [_node("vm0"), _node("vm1"), _node("vm2"), _node("vm3")]
    found = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, applied, nodes)
    assert found["control_plane"] == ["vm0"] and found["nodes"] == ["VM2"]
    header, *rows = found["lines"][:4]
    assert header.split() == ["NAME", "STATUS", "NEEDUPDATE", "READY", "MIN", "TARGET", "MAX", "NODES"]
    assert [r.split() for r in rows] == [["control-plane-main", "NeedsUpdate", "1", "0", "1", "1", "1", "1"],
                                         ["nodes-edge", "Ready", "0", "1", "1", "1", "1", "1"],
                                         ["nodes-main", "NeedsUpdate", "1", "1", "2", "2", "2", "2"]]
    assert found["lines"][5:] == ["control-plane-main: 1 host(s) to update in place (vm0), one at a time",
                                  "nodes-main: 1 host(s) to update in place (VM2), 1 at a time across the node groups"]


def test_force_rolls_every_host_of_the_selected_groups():
    found = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, CURRENT, force=True)
    # kops' order: the node groups by name, each group's hosts by name.
    assert found["control_plane"] == ["vm0"] and found["nodes"] == ["vm3", "VM2", "vm1"]
    selected = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, CURRENT, force=True, roles=["Node"])
    assert selected["control_plane"] == [] and set(selected["nodes"]) == {"vm1", "VM2", "vm3"}
    named = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, CURRENT, force=True, names=["nodes-edge"])
    assert named["nodes"] == ["vm3"]


@pytest.mark.parametrize("options, spec, batch", [
    ({}, {}, 1),
    ({"max_unavailable": 2}, {}, 2),
    ({"max_unavailable": "50%"}, {}, 2),
    ({"max_unavailable": "10%"}, {}, 1),  # rounded down, at least 1
    ({"budget_max_unavailable": 3, "max_unavailable": 1}, {}, 3),  # the cluster-wide budget wins
    ({}, {"maxUnavailable": "100%"}, 4),
])
def test_the_node_batch_is_the_budget_of_the_node_hosts(options, spec, batch):
    cluster = {"metadata": CLUSTER["metadata"], "spec": {"rollingUpdate": spec}}
    assert roll.node_batch(cluster, 4, options.get("max_unavailable"), options.get("budget_max_unavailable")) == batch


def test_the_node_batch_counts_the_node_hosts_only():
    found = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, {}, max_unavailable="50%")
    assert found["node_batch"] == 1  # half of the 3 node hosts, rounded down (the control-plane host not counted)
    assert found["lines"][-1].endswith("1 at a time across the node groups")


def test_a_surge_asked_for_is_said_and_not_made():
    found = roll.plan(CLUSTER, GROUPS, HOSTS, DIGESTS, {}, max_surge=1)
    assert found["lines"][-1].startswith("max_surge: no surge on metal")
    spec = {"metadata": CLUSTER["metadata"], "spec": {"rollingUpdate": {"maxSurge": 0}}}
    assert not roll.plan(spec, GROUPS, HOSTS, DIGESTS, {})["lines"][-1].startswith("max_surge")


def test_a_host_naming_a_group_the_cluster_lacks_is_refused_in_one_line():
    with pytest.raises(roll.MetalRollError, match="nodes-gone, which metal.k8s.local does not have"):
        roll.plan(CLUSTER, GROUPS, dict(HOSTS, **{"nodes-gone": ["vm9"]}), DIGESTS, CURRENT)
    with pytest.raises(roll.RollingError, match="not a number or a percentage"):
        roll.node_batch(CLUSTER, 3, "many")
