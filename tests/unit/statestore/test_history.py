"""The spec's history (statestore/history.py) on file://, memfs://, s3:// (moto) and gs:// (fake-gcs-server)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, revisions
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history, layout, vfs

NAME = "hist.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
           "zones": ["us-east-1a", "us-east-1b"], "control_plane_zones": ["us-east-1a"]}  # config + 3 groups


def service(store):
    return clusters.ClusterService(store.base_url)


def create(store):
    run = service(store)
    run.execute(run.plan_create(OPTIONS))


def replace(store, field, value, revision=None):
    run = service(store)
    cluster = copy.deepcopy(run.read(NAME)[0])
    cluster["spec"][field] = value
    run.execute(run.plan_replace([cluster], revision=revision))


def stored(store):
    """{path under the cluster: bytes}, as a fresh run sees them."""
    fresh = vfs.open_store(store.base_url)
    prefix = NAME + "/"
    return {p[len(prefix):]: fresh.read(p) for p in fresh.list(prefix)}


def kops_files(files):
    """kops' own files: everything but ours (.kubeops-*)."""
    return {p: d for p, d in files.items() if not p.startswith(".kubeops-")}


def entries(store):
    return service(store).history(NAME).revisions()


def test_each_change_is_one_revision_whatever_files_it_writes(store):
    create(store)
    assert [(e["revision"], e["operation"]) for e in entries(store)] == [(1, "create")]
    assert sorted(entries(store)[0]["paths"]) == sorted(kops_files(stored(store)))  # 4 files, one revision
    replace(store, "sshAccess", ["10.1.0.0/16"])
    run = service(store)
    group = copy.deepcopy(run.read(NAME)[1][-1])
    group["spec"]["maxSize"] = 3
    run.execute(run.plan_instance_group(NAME, group))
    run = service(store)
    cluster, groups = run.read(NAME)
    upgraded = copy.deepcopy(cluster)
    upgraded["spec"]["kubernetesVersion"] = "v1.34.3"
    plan = run.plan_replace([upgraded] + groups)
    plan.operation = "upgrade"
    run.execute(plan)
    got = entries(store)
    assert [(e["revision"], e["operation"]) for e in got] == [
        (1, "create"), (2, "replace"), (3, "instance_group"), (4, "upgrade")]
    assert got[1]["paths"] == ["config"] and got[2]["paths"] == ["instancegroup/" + objects.name_of(group)]
    for entry in got:
        assert entry["user"] and entry["host"] and entry["time"].endswith("Z") and entry["sha256"]
    assert str(service(store).revision(NAME)) == "4"
    # A write that changes nothing is no revision.
    replace(store, "sshAccess", ["10.1.0.0/16"])
    assert len(entries(store)) == 4


def test_the_history_is_invisible_to_kops(store):
    create(store)
    before = kops_files(stored(store))
    for cidr in ("10.1.0.0/16", "10.2.0.0/16"):
        replace(store, "sshAccess", [cidr])
    files = stored(store)
    ours = sorted(p for p in files if p.startswith(".kubeops-"))
    assert ours == [history.INDEX, history.SNAPSHOT % 1, history.SNAPSHOT % 2, history.SNAPSHOT % 3]
    # kops finds clusters by the paths that end in /config (vfsclientset ClusterVFS.listNames): still just this one.
    listing = vfs.open_store(store.base_url).list("")
    assert [p[:-len("/config")] for p in listing if p.endswith("/config")] == [NAME]
    # kops' own files: the same names, each one object as dump_object writes it, the groups unchanged byte for byte.
    after = kops_files(files)
    assert sorted(after) == sorted(before)
    for path, data in after.items():
        assert objects.dump_object(yaml.safe_load(data)).encode("utf-8") == data
        if path != layout.CLUSTER_CONFIG:
            assert data == before[path]


def test_a_rollback_writes_the_revision_back_byte_for_byte_as_a_new_revision(store):
    create(store)
    for n in range(1, 6):
        replace(store, "sshAccess", ["10.%d.0.0/16" % n])
        if n == 2:
            at_three = kops_files(stored(store))
    # A group added after revision 3 goes away with the rollback.
    run = service(store)
    extra = copy.deepcopy(run.read(NAME)[1][-1])
    extra["metadata"] = {"name": "extra-nodes"}
    run.execute(run.plan_instance_group(NAME, extra))
    assert "instancegroup/extra-nodes" in stored(store)

    run = service(store)
    plan = run.plan_rollback(NAME, 3)
    assert plan.changed and plan.changed_paths == ["config", "instancegroup/extra-nodes"]
    assert "10.2.0.0/16" in plan.diff()["after"] and "10.5.0.0/16" in plan.diff()["before"]
    unchanged = stored(store)
    run.execute(plan)
    assert kops_files(stored(store)) == at_three  # byte for byte
    assert unchanged != stored(store)
    last = entries(store)[-1]
    assert (last["revision"], last["operation"], last["restores"]) == (8, "rollback", 3)
    assert last["snapshot"] == 3  # the same spec as revision 3: no new snapshot object
    assert history.SNAPSHOT % 8 not in stored(store)
    # Rolling back to where the store is changes nothing.
    assert not service(store).plan_rollback(NAME, 8).changed
    assert not service(store).plan_rollback(NAME, 3).changed


def test_rollback_refuses_a_revision_it_does_not_keep_naming_the_kept_ones(store):
    create(store)
    for n in range(1, 6):
        run = service(store)
        run.store.history_limit = 3
        cluster = copy.deepcopy(run.read(NAME)[0])
        cluster["spec"]["sshAccess"] = ["10.%d.0.0/16" % n]
        run.execute(run.plan_replace([cluster]))
    assert [e["revision"] for e in entries(store)] == [4, 5, 6]
    assert sorted(p for p in stored(store) if p.startswith(history.HISTORY_DIR)) == [
        history.INDEX] + [history.SNAPSHOT % n for n in (4, 5, 6)]
    # The limit is kept in the index: a later write by a run that does not give it keeps to it.
    replace(store, "sshAccess", ["10.9.0.0/16"])
    assert [e["revision"] for e in entries(store)] == [5, 6, 7]
    with pytest.raises(clusters.ClusterError) as refused:
        service(store).plan_rollback(NAME, 2)
    assert str(refused.value).startswith("revision: revision 2 of cluster %s is not kept (kept: 5 to 7)" % NAME)
    with pytest.raises(clusters.ClusterError, match="'two' is not a revision number"):
        service(store).plan_rollback(NAME, "two")
    with pytest.raises(clusters.ClusterError, match="cluster 'other.example.com' does not exist in .*; a rollback needs"):
        service(store).plan_rollback("other.example.com", 1)


def test_a_change_by_another_tool_is_kept_as_its_own_revision_and_stops_a_stale_replace(store):
    create(store)
    replace(store, "sshAccess", ["10.1.0.0/16"])
    read_at = str(service(store).revision(NAME))
    assert read_at == "2"
    stale = copy.deepcopy(service(store).read(NAME)[0])
    # kops replace (or a hand edit) writes the config: no revision of ours.
    config = yaml.safe_load(stored(store)["config"])
    config["spec"]["kubernetesApiAccess"] = ["10.7.0.0/16"]
    by_kops = objects.dump_object(config).encode("utf-8")
    vfs.open_store(store.base_url).write(NAME + "/config", by_kops, expect=None)
    now = service(store).revision(NAME)
    assert not now.recorded and str(now).startswith("3 (unrecorded ")
    # A file read at 2 would undo kops' change: refused, naming it.
    stale["spec"]["sshAccess"] = ["10.2.0.0/16"]
    with pytest.raises(clusters.ClusterError, match=r"read at revision 2 \(it is at revision 3 \(unrecorded [0-9a-f]+\) "
                                                    r"now\): replacing would undo .*: spec.kubernetesApiAccess"):
        service(store).plan_replace([stale], revision=read_at)
    # One that holds kops' change (read at 2, kops' change taken in) does not undo it.
    holds = service(store)
    holds.plan_replace([dict(stale, spec=dict(stale["spec"], kubernetesApiAccess=["10.7.0.0/16"]))], revision=read_at)
    # A file read at that unrecorded state is accepted; its replace records kops' change first, then its own.
    replace(store, "sshAccess", ["10.2.0.0/16"], revision=str(now))
    got = entries(store)
    assert [(e["revision"], e["operation"]) for e in got[-2:]] == [(3, "outside"), (4, "replace")]
    assert service(store).history(NAME).spec_at(3)["config"] == by_kops


def test_a_cluster_stored_before_the_history_starts_it_at_its_first_write(store):
    create(store)
    raw = vfs.open_store(store.base_url)
    for path in raw.list(NAME + "/" + history.HISTORY_DIR):
        raw.delete(path)
    assert str(service(store).revision(NAME)).startswith("1 (unrecorded ")
    replace(store, "sshAccess", ["10.1.0.0/16"])
    assert [(e["revision"], e["operation"]) for e in entries(store)] == [(1, "found"), (2, "replace")]


def test_a_keypair_change_is_a_revision_without_a_new_snapshot(store):
    create(store)
    cluster_store = service(store).cluster_store(NAME)
    cluster_store.apply([("pki/private/kubernetes-ca/keyset.yaml", b"rotated")], operation="keypair",
                        record={"keysets": ["kubernetes-ca"], "action": "rotate"})
    last = entries(store)[-1]
    assert (last["revision"], last["operation"], last["snapshot"], last["keysets"]) == (2, "keypair", 1, ["kubernetes-ca"])
    assert history.SNAPSHOT % 2 not in stored(store)


def test_a_concurrent_writer_is_still_detected_and_numbers_no_revision_twice(store):
    create(store)
    runs = [service(store) for _run in range(2)]
    plans = []
    for run, cidr in zip(runs, ("10.1.0.0/16", "10.2.0.0/16")):
        cluster = copy.deepcopy(run.read(NAME)[0])
        cluster["spec"]["sshAccess"] = [cidr]
        plans.append(run.plan_replace([cluster]))
    runs[0].execute(plans[0])
    with pytest.raises(layout.ClusterConflict):
        runs[1].execute(plans[1])
    assert [e["revision"] for e in entries(store)] == [1, 2]
    assert yaml.safe_load(stored(store)["config"])["spec"]["sshAccess"] == ["10.1.0.0/16"]
    assert json.loads(stored(store)[history.SNAPSHOT % 2])["spec"]["config"] == stored(store)["config"].decode()


def test_deleting_the_cluster_removes_its_history(store):
    create(store)
    replace(store, "sshAccess", ["10.1.0.0/16"])
    run = service(store)
    run.execute(run.plan_delete(NAME, force=True))
    assert stored(store) == {}


def test_revision_text_is_checked():
    assert history.parse("12") == (12, None)
    assert history.parse("3 (unrecorded 0a1b2c)") == (3, "0a1b2c")
    for bad in ("3f1c0a9d5e7b2c41", "0", "3 (later 0a)"):
        with pytest.raises(history.HistoryError, match="is not a revision of kubeops.kops' history"):
            history.parse(bad)
    assert revisions.in_comment("# kubeops.kops revision: 4 (unrecorded 0a1b)\napiVersion: x\n") == "4 (unrecorded 0a1b)"
    assert revisions.in_comment("apiVersion: x\n") is None
