"""The GCE model against kops' kubernetes.tf: the (type, name) set and the bodies, fixture by fixture.

The score per fixture is (kops' resources we render / kops' resources, resources we render that kops
does not, bodies equal / resources matched).  FLOOR holds the measured figures; a change that lowers
any of them fails here.  Run this file as a script for the table (python -m tests.unit.model.test_gce_terraform).

The fixtures: the 2 GCE cases of ../shared/conformance/kops (minimal_gce, ha_gce) and the 11 of a kops
checkout when KOPS_CONFORMANCE_DIR points at its tests/integration; a fixture not present is skipped.
"""

from __future__ import annotations

import functools
import os

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.providers.registry import driver_for
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.conformance import kops_fixtures

# case -> (google_* resources matched, kops' google_* resources, extra, bodies equal), as measured.
FLOOR = {
    "ha_gce": (30, 30, 0, 30), "many-addons-gce": (23, 23, 0, 23), "minimal_gce": (21, 21, 0, 21),
    "minimal_gce_dns-none": (34, 34, 0, 34), "minimal_gce_ilb": (28, 28, 0, 28),
    "minimal_gce_ilb_cilium_etcd": (32, 32, 0, 32), "minimal_gce_ilb_longclustername": (28, 28, 0, 28),
    "minimal_gce_longclustername": (21, 21, 0, 21), "minimal_gce_plb": (32, 32, 0, 32),
    "minimal_gce_plb_apiserver": (36, 36, 0, 36), "minimal_gce_private": (23, 23, 0, 23),
}
CASES = ["ha_gce", "many-addons-gce", "minimal_gce", "minimal_gce_dns-none", "minimal_gce_ilb",
         "minimal_gce_ilb_cilium_etcd", "minimal_gce_ilb_longclustername", "minimal_gce_longclustername",
         "minimal_gce_plb", "minimal_gce_plb_apiserver", "minimal_gce_private"]


def _bodies(text):
    found = {}
    for resource in hcl2.loads(text).get("resource") or []:
        for kind, named in resource.items():
            for name, body in named.items():
                found[(kind.strip('"'), name.strip('"'))] = kops_fixtures.unquoted(body)
    return found


@functools.lru_cache(maxsize=None)
def render(case):
    """(our kubernetes.tf, kops' kubernetes.tf) for a fixture; the store is the s3:// bucket kops' harness uses."""
    directory = kops_fixtures.UPDATE_CLUSTER / case
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    name = completed["metadata"]["name"]
    theirs = (directory / "kubernetes.tf").read_text()
    driver = driver_for(completed["spec"])
    keys = [(directory / "id_rsa.pub").read_text()]
    # The boot script's content lives in data/ files; the bodies refer to them by name.
    tasks = driver.build_tasks(completed, groups, keys, {objects.name_of(g): "#!/bin/bash\n" for g in groups})
    vfs.reset_memfs()
    store = layout.ClusterStore(vfs.open_store("memfs://%s" % case), name)
    node_changes, _hashes = nodeup_store.node_files(store, completed, groups)
    files = [(p, d) for p, d in updates.managed_files(completed) + node_changes
             if p not in (nodeup_store.BOOTSTRAP_ADDON_PATH, node_labeller_addon.PATH)]  # our own addons
    prefix = completed["spec"]["configBase"].split("://", 1)[1].rsplit("/", 1)[0]
    config_base = "s3://testingBucket/%s/%s" % (prefix.split("/", 1)[1] if "/" in prefix else prefix, name)
    driver.store_objects(name, config_base, files, tasks)
    spec = dict(completed["spec"], configBase=config_base)
    ours = terraform.render(list(tasks.values()), driver.terraform_providers("us-test1", spec=spec),
                            variables=updates.terraform_variables(completed))
    return ours, theirs


def score(case, kinds_prefix="google_"):
    ours, theirs = render(case)
    mine = {k: v for k, v in _bodies(ours).items() if k[0].startswith(kinds_prefix)}
    kops = {k: v for k, v in _bodies(theirs).items() if k[0].startswith(kinds_prefix)}
    matched = set(mine) & set(kops)
    equal = sorted(k for k in matched if mine[k] == kops[k])
    return {"matched": len(matched), "kops": len(kops), "extra": len(set(mine) - set(kops)), "equal": len(equal),
            "missing": sorted(set(kops) - set(mine)), "extras": sorted(set(mine) - set(kops)),
            "differ": sorted(matched - set(equal)), "ours": mine, "theirs": kops}


def _present(case):
    return (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").exists()


@pytest.mark.parametrize("case", CASES)
def test_score_does_not_regress(case):
    if not _present(case):
        pytest.skip("fixture %s is not in %s (set KOPS_CONFORMANCE_DIR to a kops checkout's tests/integration)"
                    % (case, kops_fixtures.UPDATE_CLUSTER))
    result = score(case)
    floor = FLOOR[case]
    assert (result["matched"], result["kops"]) == (floor[0], floor[1]), result["missing"]
    assert result["extra"] <= floor[2], result["extras"]
    assert result["equal"] >= floor[3], result["differ"]


if __name__ == "__main__":
    total = [0, 0, 0, 0]
    print("%-34s %9s %6s %8s" % ("fixture", "matched", "extra", "bodies="))
    for case in CASES:
        if not _present(case):
            print("%-34s absent" % case)
            continue
        r = score(case)
        for i, key in enumerate(("matched", "kops", "extra", "equal")):
            total[i] += r[key]
        print("%-34s %4d/%-4d %6d %4d/%-4d" % (case, r["matched"], r["kops"], r["extra"], r["equal"], r["matched"]))
        if os.environ.get("VERBOSE"):
            for key in r["missing"]:
                print("   missing", key)
            for key in r["extras"]:
                print("   extra", key)
            for key in r["differ"]:
                print("   differs", key)
                print("     ours  ", r["ours"][key])
                print("     theirs", r["theirs"][key])
    print("%-34s %4d/%-4d %6d %4d/%-4d" % ("total", total[0], total[1], total[2], total[3], total[0]))


def _blocks(text, kind):
    return kops_fixtures.unquoted(hcl2.loads(text).get(kind))


@pytest.mark.parametrize("case", CASES)
def test_outputs_and_providers_are_kops(case, monkeypatch):
    if not _present(case):
        pytest.skip("fixture %s is not in %s" % (case, kops_fixtures.UPDATE_CLUSTER))
    ours, theirs = render(case)
    for kind in ("locals", "output"):
        assert _blocks(ours, kind) == _blocks(theirs, kind), kind
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import driver as gce
    monkeypatch.setenv("AWS_REGION", "us-test-1")  # the AWS provider of an s3:// store takes the environment's region
    providers = gce.DRIVER.terraform_providers("us-test1", spec={"project": "testproject", "configBase": "s3://b/c"})
    assert _blocks(terraform.render([], providers), "provider") == _blocks(theirs, "provider")


@pytest.mark.parametrize("case", ["minimal_gce", "ha_gce"])
def test_store_objects_on_s3_are_kops(case):
    """The store files this collection writes become kops' aws_s3_object resources, body for body; kops' addon
    and etcd-manager manifests have no counterpart here (as on AWS)."""
    result = score(case, "aws_s3_object")
    assert result["extra"] == 0 and result["equal"] == result["matched"] >= 6, result["extras"] + result["differ"]
    wanted = {"cluster-completed-spec", "kops-version-txt", "etcd-cluster-spec-main", "etcd-cluster-spec-events"}
    assert {n for _k, n in result["ours"]} >= wanted


def test_gs_store_renders_bucket_objects_and_google_only():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import driver as gce
    tasks = {}
    covered = gce.DRIVER.store_objects("c.example.com", "gs://bucket/prefix/c.example.com",
                                       [("cluster-completed.spec", b"spec"), ("pki/private/ca/keyset.yaml", b"key")],
                                       tasks)
    assert covered == ["cluster-completed.spec"]
    assert len(tasks) == 1
    task = next(iter(tasks.values()))
    assert task.kind == "google_storage_bucket_object"
    assert task.render_terraform()["name"] == "prefix/c.example.com/cluster-completed.spec"
    assert task.terraform_files() == [("data/google_storage_bucket_object_cluster-completed.spec_content", b"spec")]
    blocks, required = gce.DRIVER.terraform_providers("us-central1", spec={"project": "p", "configBase": "gs://b/c"})
    assert blocks == [("google", {"project": "p", "region": "us-central1"})] and list(required) == ["google"]
