"""Two runs on one cluster, a run killed mid-write, the lease, and what a run asks of the store.

The racing and killed runs are the cluster module in processes of their own
(tests/unit/statestore/racing.py), on file://, s3:// (moto) and gs://
(fake-gcs-server); the lease and the conflict rule are checked on all four backends.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, revisions
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

REPO = pathlib.Path(__file__).resolve().parents[3]
NAME = "race.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
           "zones": ["us-east-1a", "us-east-1b", "us-east-1c"],
           "control_plane_zones": ["us-east-1a", "us-east-1b", "us-east-1c"]}  # 7 objects: config + 6 groups
_buckets = itertools.count()


@pytest.fixture(params=["file", "s3", "gs"])
def shared_url(request, tmp_path):
    """A store URL that other processes can open too."""
    if request.param == "file":
        return "file://%s" % (tmp_path / "state")
    bucket = "kops-race-%d" % next(_buckets)
    if request.param == "s3":
        request.getfixturevalue("aws")
        import boto3
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=bucket)
        return "s3://%s/state" % bucket
    request.getfixturevalue("gcs").create_bucket(bucket)
    return "gs://%s/state" % bucket


def start_module(tmp_path, name, args, *hook):
    """The cluster module in its own process (from another directory), as Ansible runs it."""
    request = tmp_path / ("%s.json" % name)
    request.write_text(json.dumps({"module": "cluster", "args": args}))
    env = dict(os.environ, PYTHONPATH="%s:%s" % (REPO / "build" / "collections", REPO))
    return subprocess.Popen([sys.executable, "-m", "tests.unit.statestore.racing", str(request)] + list(hook),
                            cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_of(process):
    out, err = process.communicate(timeout=120)
    assert out.strip(), "the module printed nothing (exit %s): %s" % (process.returncode, err[-2000:])
    return json.loads(out.strip().splitlines()[-1])


def stored(url):
    """Every path and its bytes, as a fresh run sees them."""
    fresh = vfs.open_store(url)
    return {p: fresh.read(p) for p in fresh.list("")}


def edited_cluster(url, field, cidr):
    cluster = clusters.ClusterService(url).read(NAME)[0]
    cluster["spec"][field] = [cidr]
    return yaml.safe_dump(cluster)


def test_two_concurrent_replaces_one_fails_saying_why_and_no_edit_is_lost(shared_url, tmp_path):
    service = clusters.ClusterService(shared_url)
    service.execute(service.plan_create(OPTIONS))
    edits = {"ssh": ("sshAccess", "10.1.0.0/16"), "api": ("kubernetesApiAccess", "10.2.0.0/16")}
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    racers = {name: start_module(tmp_path, name, {"state_store": shared_url,
                                                  "definition": edited_cluster(shared_url, *edit)},
                                 "race", str(barrier), "2")
              for name, edit in edits.items()}
    results = {name: result_of(process) for name, process in racers.items()}
    winners = [n for n, r in results.items() if not r.get("failed")]
    losers = [n for n, r in results.items() if r.get("failed")]
    assert len(winners) == 1 and len(losers) == 1, results
    assert results[winners[0]]["changed"] is True
    message = results[losers[0]]["msg"]
    # Whichever came second either found the lease held or its conditional write refused.
    assert (message == layout.CONFLICT % NAME
            or ("cluster %s is being changed by " % NAME in message and "(pid " in message and "expires at" in message)), message
    config = yaml.safe_load(stored(shared_url)["%s/config" % NAME])
    field, cidr = edits[winners[0]]
    assert config["spec"][field] == [cidr]  # the reported success is what is stored
    field, cidr = edits[losers[0]]
    assert config["spec"].get(field) != [cidr]  # and the failed run changed nothing
    assert sorted(p for p in stored(shared_url) if "/.kubeops-history/" not in p) == sorted(
        ["%s/config" % NAME] + ["%s/instancegroup/%s-us-east-1%s" % (NAME, role, zone)
                                for role in ("control-plane", "nodes") for zone in "abc"])


def test_a_run_that_planned_before_another_run_wrote_fails_with_one_line(store):
    first = clusters.ClusterService(store.base_url)
    first.execute(first.plan_create(OPTIONS))
    runs = [clusters.ClusterService(store.base_url) for _run in range(2)]
    plans = []
    for run, (field, cidr) in zip(runs, [("sshAccess", "10.1.0.0/16"), ("kubernetesApiAccess", "10.2.0.0/16")]):
        cluster = run.read(NAME)[0]
        cluster["spec"][field] = [cidr]
        plans.append(run.plan_replace([cluster]))
    runs[0].execute(plans[0])
    with pytest.raises(layout.ClusterConflict) as error:
        runs[1].execute(plans[1])
    assert str(error.value) == ("the cluster race.example.com was changed by another run while this one was "
                                "working; re-run to apply on top of it")
    config = clusters.ClusterService(store.base_url).read(NAME)[0]
    assert config["spec"]["sshAccess"] == ["10.1.0.0/16"] and config["spec"]["kubernetesApiAccess"] != ["10.2.0.0/16"]
    assert not vfs.open_store(store.base_url).exists("%s/%s" % (NAME, layout.LEASE))


def test_a_killed_multi_object_write_is_finished_by_the_next_run(shared_url, tmp_path):
    args = {"state_store": shared_url, "options": OPTIONS}
    # The journal and 3 of the 9 objects (7 of kops' and the spec history's first snapshot and index).
    killed = start_module(tmp_path, "killed", args, "kill-after", "4")
    killed.communicate(timeout=120)
    assert killed.returncode == -9
    left = stored(shared_url)
    assert sorted(p[len(NAME) + 1:] for p in left if not p.startswith(NAME + "/instancegroup/")) == [
        layout.JOURNAL, layout.LEASE, "config"]
    assert len([p for p in left if p.startswith(NAME + "/instancegroup/")]) == 2

    check = result_of(start_module(tmp_path, "check", dict(args, _ansible_check_mode=True), "kill-after", "99"))
    assert check["changed"] is True and check["changed_paths"] == [] and stored(shared_url) == left

    finished = result_of(start_module(tmp_path, "next", args, "kill-after", "99"))
    assert finished["changed"] is True, finished
    warnings = json.dumps(finished.get("warnings"))
    assert "took over the lease on cluster %s" % NAME in warnings and "its process is gone" in warnings
    assert "finished an interrupted write of 9 object(s) to cluster %s" % NAME in warnings
    after = stored(shared_url)
    assert len(after) == 9 and not any(layout.JOURNAL in p or layout.LEASE in p for p in after)
    again = result_of(start_module(tmp_path, "again", args, "kill-after", "99"))
    assert again["changed"] is False and not again.get("warnings") and stored(shared_url) == after


def lease_record(host, pid, expires):
    return json.dumps({"owner": "crashed_run", "host": host, "pid": pid, "acquired": "2026-01-01T00:00:00Z",
                       "expires": layout._utc(expires), "expiresEpoch": expires}).encode("utf-8")


def test_a_held_lease_stops_a_second_run_naming_its_holder(store):
    holder = layout.ClusterStore(store, "c")
    with holder.lease("first_run", ttl=0.6):
        time.sleep(0.8)  # past the first ttl: renewals keep it
        second = layout.ClusterStore(vfs.open_store(store.base_url), "c")
        with pytest.raises(layout.LeaseHeld) as error:
            with second.lease("second_run"):
                pass
    message = str(error.value)
    assert message.startswith("cluster c is being changed by first_run (pid %d on host " % os.getpid())
    assert "its lease expires at 20" in message and "re-run after that time" in message
    assert not vfs.open_store(store.base_url).exists("c/" + layout.LEASE)  # released
    with layout.ClusterStore(vfs.open_store(store.base_url), "c").lease("third_run"):
        pass  # free again


def test_an_expired_lease_is_taken_over_and_a_live_one_elsewhere_is_not(store):
    store.write("c/" + layout.LEASE, lease_record("another-host", 1, time.time() + 600))
    with pytest.raises(layout.LeaseHeld) as error:
        with layout.ClusterStore(vfs.open_store(store.base_url), "c").lease():
            pass
    assert "crashed_run (pid 1 on host another-host" in str(error.value)

    vfs.open_store(store.base_url).write("c/" + layout.LEASE, lease_record("another-host", 1, time.time() - 5),
                                         expect=None)
    successor = layout.ClusterStore(vfs.open_store(store.base_url), "c")
    with successor.lease("successor") as held:
        record = json.loads(vfs.open_store(store.base_url).read("c/" + layout.LEASE))
        assert record["owner"] == "successor" and record["pid"] == os.getpid() and held.owner == "successor"
    assert successor.store.notes and successor.store.notes[0].startswith(
        "took over the lease on cluster c from crashed_run (pid 1 on host another-host")
    assert "it expired at" in successor.store.notes[0]


def count_s3_requests(store):
    requests = collections.Counter()
    store.client.meta.events.register("before-send.s3.*", lambda request, **kwargs: requests.update(
        ["%s %s" % (request.method, request.url.split("?")[0].split("/", 3)[-1].replace("kops-count/state/", ""))]))
    return requests


def test_a_no_op_read_asks_for_each_object_once(aws):
    import boto3
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-count")
    url = "s3://kops-count/state"
    first = clusters.ClusterService(url)
    first.execute(first.plan_create(OPTIONS))
    service = clusters.ClusterService(url)
    requests = count_s3_requests(service.store)
    for _again in range(3):
        cluster, groups = service.read(NAME)
        service.plan_create(OPTIONS)  # what create_cluster.yml does when the cluster is there: no change
        assert service.cluster_store(NAME).read("pki/private/kubernetes-ca/keyset.yaml") is None
    assert cluster["metadata"]["name"] == NAME and len(groups) == 6
    # One listing of the cluster's files answers every "is it there", then one GET per object: 8 in all.
    assert sum(requests.values()) == 8 and max(requests.values()) == 1, requests
    assert [k for k in requests if not k.startswith("GET %s/" % NAME)] == ["GET kops-count"]


def test_a_delete_holds_the_cluster_and_every_other_run_is_refused_naming_it(store):
    deleting = layout.ClusterStore(store, "c")
    with deleting.lease("cluster_delete", ttl=0.6, deleting=True):
        first = json.loads(vfs.open_store(store.base_url).read("c/" + layout.LEASE))
        time.sleep(0.8)  # renewed meanwhile: the start time stays
        renewed = json.loads(vfs.open_store(store.base_url).read("c/" + layout.LEASE))
        assert first["deleting"] is True and renewed["acquired"] == first["acquired"]
        assert renewed["expiresEpoch"] > first["expiresEpoch"]
        other = layout.ClusterStore(vfs.open_store(store.base_url), "c")
        with pytest.raises(layout.ClusterBeingDeleted) as refused:
            with other.lease("cluster_update"):
                pass
        with pytest.raises(layout.ClusterBeingDeleted) as checked:
            layout.ClusterStore(vfs.open_store(store.base_url), "c").refuse_while_deleting("rolling_update")
    for error, action in ((refused, "cluster_update"), (checked, "rolling_update")):
        message = str(error.value)
        assert message.startswith("cluster c is being deleted by cluster_delete (pid %d on host %s, started %s); "
                                  "%s refused." % (os.getpid(), socket.gethostname(), first["acquired"], action))
        assert "\n" not in message
    # Released: the cluster is free again, and a free cluster is never refused.
    layout.ClusterStore(vfs.open_store(store.base_url), "c").refuse_while_deleting("rolling_update")


def test_a_live_update_refuses_a_delete_and_a_dead_delete_is_taken_over(store):
    with layout.ClusterStore(store, "c").lease("cluster_update"):
        with pytest.raises(layout.LeaseHeld) as refused:
            with layout.ClusterStore(vfs.open_store(store.base_url), "c").lease(deleting=True, action="cluster_delete"):
                pass
        # An update's lease is no delete: a rolling update beside it goes on.
        layout.ClusterStore(vfs.open_store(store.base_url), "c").refuse_while_deleting("rolling_update")
    assert not isinstance(refused.value, layout.ClusterBeingDeleted)
    assert str(refused.value).startswith("cluster c is being changed by cluster_update (pid %d on host %s, started "
                                         % (os.getpid(), socket.gethostname()))
    assert "; cluster_delete refused: its lease expires at 20" in str(refused.value)

    # A delete whose process is gone from this host: nothing is refused, the next run takes the lease over.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record = json.loads(lease_record(socket.gethostname(), dead.pid, time.time() + 600))
    record["deleting"] = True
    vfs.open_store(store.base_url).write("c/" + layout.LEASE, json.dumps(record).encode("utf-8"), expect=None)
    layout.ClusterStore(vfs.open_store(store.base_url), "c").refuse_while_deleting("rolling_update")
    successor = layout.ClusterStore(vfs.open_store(store.base_url), "c")
    with successor.lease("cluster_update"):
        pass
    assert "its process is gone from this host; that delete did not finish" in successor.store.notes[0]


def test_deleting_a_cluster_empties_the_store_in_batches_the_config_last(store):
    cluster = layout.ClusterStore(store, "c")
    cluster.apply([(layout.CLUSTER_CONFIG, b"config")] + [("pki/issued/k%04d" % i, b"x") for i in range(1203)])
    deleting = layout.ClusterStore(vfs.open_store(store.base_url), "c")
    deleting.open()
    requests = count_s3_requests(deleting.store) if store.scheme == "s3" else collections.Counter()
    order = []
    remove = deleting.store._remove
    deleting.store._remove = lambda relpath, expect: (order.append(relpath), remove(relpath, expect))[1]
    deleting.delete_cluster()
    assert vfs.open_store(store.base_url).list("c/") == []
    if store.scheme == "s3":
        # 1,206 objects (the config's write is revision 1 of the spec history: its index and snapshot): two
        # DeleteObjects (1,000 + 205), then the config, with the lease's PUT and DELETE.
        batches = sum(n for k, n in requests.items() if k.startswith("POST "))
        assert batches == 2 and requests["DELETE %s/prefix/c/config" % store.bucket] == 1 and sum(requests.values()) == 5, requests
        assert order == ["c/config", "c/" + layout.LEASE]
    else:
        assert order[-2:] == ["c/config", "c/" + layout.LEASE] and len(order) == 1207


def test_a_batched_delete_keeps_an_object_another_run_changed(store):
    if store.scheme == "gs":
        pytest.skip("fake-gcs-server ignores ifGenerationMatch on DELETE (GCS honours it; docs/state-store.md)")
    if store.scheme == "s3" and not _moto_checks_delete_etags(store):
        pytest.skip("moto ignores the ETag of a DeleteObjects key (S3 honours it)")
    cluster = layout.ClusterStore(store, "c")
    cluster.apply([(layout.CLUSTER_CONFIG, b"config"), ("a", b"1"), ("b", b"2")])
    deleting = layout.ClusterStore(vfs.open_store(store.base_url), "c")
    deleting.open()
    time.sleep(0.01)  # file:// versions include the mtime
    vfs.open_store(store.base_url).write("c/b", b"changed by another run", expect=None)
    with pytest.raises(layout.ClusterConflict):
        deleting.delete_cluster()
    left = vfs.open_store(store.base_url)
    assert left.list("c/") == ["c/b", "c/config"] and left.read("c/b") == b"changed by another run"


def _moto_checks_delete_etags(store):
    answer = store.client.put_object(Bucket=store.bucket, Key="etag-probe", Body=b"1")
    result = store.client.delete_objects(Bucket=store.bucket, Delete={"Objects": [
        {"Key": "etag-probe", "ETag": '"%s"' % ("0" * 32)}], "Quiet": True})
    checked = bool(result.get("Errors"))
    store.client.delete_object(Bucket=store.bucket, Key="etag-probe")
    return checked and answer is not None


def _replace_probe(tmp_path, url, tries, with_revision):
    """Issue 22's probe: two `cluster` module replaces at once, each of a definition read at the same revision with
    its own edit.  Returns {outcome: count}: both kept, refused (one failed saying why, the other's edit stored) or
    lost silently (both reported success, one edit is not stored)."""
    outcomes = collections.Counter()
    for attempt in range(tries):
        service = clusters.ClusterService(url)
        cluster, groups = service.read(NAME)
        read_at = service.revision(NAME)
        edits = {"ssh": ("sshAccess", "10.1.%d.0/24" % attempt), "api": ("kubernetesApiAccess", "10.2.%d.0/24" % attempt)}
        racers = {}
        for name, (field, cidr) in edits.items():
            edited = json.loads(json.dumps(cluster))
            edited["spec"][field] = [cidr]
            if with_revision:
                edited = revisions.annotate(edited, read_at)
            racers[name] = start_module(tmp_path, "%s-%d-%s" % (name, attempt, with_revision),
                                        {"state_store": url, "definition": yaml.safe_dump(edited)},
                                        "kill-after", "99")
        results = {name: result_of(process) for name, process in racers.items()}
        config = clusters.ClusterService(url).read(NAME)[0]["spec"]
        kept = {name for name, (field, cidr) in edits.items() if config.get(field) == [cidr]}
        failed = {name for name, result in results.items() if result.get("failed")}
        assert not (kept & failed), (results, config)  # a failed run wrote nothing
        if kept == set(edits):
            outcomes["both kept"] += 1
        elif failed and kept | failed == set(edits):
            outcomes["refused"] += 1
            for name in failed:
                message = results[name]["msg"]
                assert (("changed in the state store since this definition was read at revision" in message
                         and "it is at revision" in message) or message == layout.CONFLICT % NAME
                        or "is being changed by" in message), message
        else:
            outcomes["lost silently"] += 1
    return outcomes


def test_two_concurrent_replaces_of_one_revision_never_lose_an_edit_silently(tmp_path, capsys):
    url = "file://%s" % (tmp_path / "state")
    service = clusters.ClusterService(url)
    service.execute(service.plan_create(OPTIONS))
    with_revision = _replace_probe(tmp_path, url, 15, True)
    without = _replace_probe(tmp_path, url, 15, False)  # a file that never came from get_cluster.yml: kops' rule
    with capsys.disabled():
        print("\nconcurrent replaces, 15 tries: with the revision line %s; without it (kops replace) %s"
              % (dict(with_revision), dict(without)))
    assert with_revision["lost silently"] == 0 and sum(with_revision.values()) == 15


def test_a_replace_of_an_older_revision_is_refused_naming_both_unless_forced(store):
    service = clusters.ClusterService(store.base_url)
    service.execute(service.plan_create(OPTIONS))
    cluster, groups = service.read(NAME)
    read_at = str(service.revision(NAME))
    first = json.loads(json.dumps(cluster))
    first["spec"]["sshAccess"] = ["10.1.0.0/16"]
    runs = clusters.ClusterService(store.base_url)
    runs.execute(runs.plan_replace([first], revision=read_at))
    now = str(clusters.ClusterService(store.base_url).revision(NAME))
    assert (read_at, now) == ("1", "2")
    late = json.loads(json.dumps(cluster))
    late["spec"]["kubernetesApiAccess"] = ["10.2.0.0/16"]
    with pytest.raises(clusters.ClusterError) as refused:
        clusters.ClusterService(store.base_url).plan_replace([late], revision=read_at)
    assert str(refused.value).startswith("cluster %r changed in the state store since this definition was read at "
                                         "revision %s (it is at revision %s now)" % (NAME, read_at, now))
    forced = clusters.ClusterService(store.base_url)
    forced.execute(forced.plan_replace([late], revision=read_at, force=True))
    spec = clusters.ClusterService(store.base_url).read(NAME)[0]["spec"]
    assert spec["kubernetesApiAccess"] == ["10.2.0.0/16"] and spec.get("sshAccess") != ["10.1.0.0/16"]
    assert revisions.in_comment("# kubeops.kops revision: %s\napiVersion: x\n" % now) == now
    with pytest.raises(clusters.ClusterError, match="revision: revision '3f1c0a9d5e7b2c41' is not a revision"):
        clusters.ClusterService(store.base_url).plan_replace([late], revision="3f1c0a9d5e7b2c41")
    assert revisions.in_comment("apiVersion: x\n") is None
