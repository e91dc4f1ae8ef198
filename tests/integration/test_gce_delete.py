"""Create -> delete on GCE: two clusters made by the GCE model (updates.apply_direct) on tests/gce_server.py, one
deleted with kubeops.kops.cluster_delete as a task runs it (KOPS_GCE_ENDPOINT set by the `gce` fixture).

What is left is read from the server's store, not with the code under test: a kind the deletion forgets shows
up as left over, a neighbour's object taken shows up as missing.
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.modules import cluster_delete as cluster_delete_module

from tests.unit.modules.conftest import run_module  # noqa: F401 pylint: disable=unused-import

OURS = {"cluster_name": "minimal-gce.example.com", "cloud_provider": "gce", "networking": "cni",
        "kubernetes_version": "v1.32.0", "project": "testproject", "zones": ["us-test1-a"],
        "image": "ubuntu-os-cloud/ubuntu-2604-resolute-amd64-v20221018"}
# A neighbour whose name ends in ours: every kops name of it also ends in ours.
NEIGHBOUR = dict(OURS, cluster_name="eu.minimal-gce.example.com", zones=["us-test1-b"])


def _create(store, options):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create(dict(options)))
    updates.apply_direct(service, options["cluster_name"], False, deadline=120)
    return service


def _members(gce):
    return sorted(m for b in gce.policies.get("testproject", {}).get("bindings", []) for m in b["members"])


def test_create_then_delete_leaves_the_neighbour_whole(gce, run_module, tmp_path):  # noqa: F811
    store = "file://%s" % (tmp_path / "state")
    _create(store, NEIGHBOUR)
    neighbour_objects, neighbour_members = set(gce.objects()), _members(gce)
    _create(store, OURS)
    ours = set(gce.objects()) - neighbour_objects
    assert len(ours) > 30 and _members(gce) != neighbour_members

    del gce.requests[:]
    checked = run_module(cluster_delete_module, check_mode=True, state_store=store, cluster_name=OURS["cluster_name"],
                         yes=True, interval=0, timeout=120)
    assert checked["changed"] is True and gce.mutations() == []
    listed = {(o["kind"], o["name"]) for o in checked["objects"]}

    del gce.requests[:]
    start = time.monotonic()
    deleted = run_module(cluster_delete_module, state_store=store, cluster_name=OURS["cluster_name"], yes=True,
                         interval=0, timeout=120)
    took = time.monotonic() - start
    assert deleted.get("failed") is not True, deleted.get("msg")
    assert deleted["store_deleted"] is True
    assert clusters.ClusterService(store).cluster_store(OURS["cluster_name"]).read_cluster() is None  # read anew
    left = set(gce.objects())
    assert left == neighbour_objects, ("left over", sorted(left - neighbour_objects), "taken", sorted(neighbour_objects - left))
    assert _members(gce) == neighbour_members
    print("\ncreate->delete: %d objects created, %d listed, %d requests (%d mutating) in %.1f s"
          % (len(ours), len(listed), len(gce.requests), len(gce.mutations()), took))


def test_a_gce_cluster_whose_store_is_gone_is_deleted_by_provider_project_and_region(gce, run_module,  # noqa: F811
                                                                                     tmp_path):
    """kops deletes by name, region and project once the store is gone: so does cluster_delete, with
    cloud_provider and project; without cloud_provider it looks in AWS, and a project that contradicts a stored
    spec is refused."""
    store = "file://%s" % (tmp_path / "state")
    baseline = set(gce.objects())
    service = _create(store, OURS)
    stored = service.cluster_store(OURS["cluster_name"]).read_cluster()
    contradicted = run_module(cluster_delete_module, check_mode=True, state_store=store,
                              cluster_name=OURS["cluster_name"], project="otherproject")
    assert contradicted["failed"] is True and "'testproject', not 'otherproject'" in contradicted["msg"]
    assert stored["spec"]["project"] == "testproject"
    service.cluster_store(OURS["cluster_name"]).delete_cluster()

    del gce.requests[:]
    listed = run_module(cluster_delete_module, state_store=store, cluster_name=OURS["cluster_name"],
                        cloud_provider="gce", project="testproject", region="us-test1")
    assert listed.get("failed") is not True, listed.get("msg")
    assert listed["changed"] is False and gce.mutations() == [] and len(listed["objects"]) > 30

    deleted = run_module(cluster_delete_module, state_store=store, cluster_name=OURS["cluster_name"],
                         cloud_provider="gce", project="testproject", region="us-test1", yes=True, interval=0,
                         timeout=120)
    assert deleted.get("failed") is not True, deleted.get("msg")
    assert deleted["changed"] is True and deleted["store_deleted"] is False
    left = set(gce.objects())
    assert left == baseline, ("left over", sorted(left - baseline))
