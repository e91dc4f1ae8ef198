"""The keyset bundle (<cluster>/.kubeops-public-keysets, nodeconfig/store.py): an update whose keysets are unchanged
reads their public parts in one object, on every backend; a keyset changed by anyone makes the run read the
keysets and write the bundle again; the bundle never holds a private key."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.unit.nodeconfig.test_store import _case, _cloud
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate


def _cluster():
    cluster, groups = _case("minimal-aws")
    return populate.populate_cluster_spec(cluster, groups, _cloud(cluster)), groups


def _run(store):
    """A new run on the same store (its own Store, nothing remembered) and the paths its backend reads."""
    fresh = vfs.open_store(store.base_url)
    reads = []
    raw_get = fresh._get

    def counted(relpath):
        reads.append(relpath)
        return raw_get(relpath)
    fresh._get = counted
    return fresh, reads


def _update(store, completed, groups):
    """What an update does with the node files (updates.apply_direct): write what differs, then the bundle."""
    cluster_store = layout.ClusterStore(store, completed["metadata"]["name"])
    changes, hashes = nodeup_store.node_files(cluster_store, completed, groups)
    differing = cluster_store.differing(changes)
    if differing:
        cluster_store.apply(differing)
    wrote_bundle = nodeup_store.refresh_keyset_bundle(cluster_store, completed)
    return hashes, differing, wrote_bundle


def _keyset_reads(reads):
    return [p for p in reads if "/pki/" in p]


def test_an_unchanged_update_reads_one_bundle_instead_of_each_keyset(store):
    completed, groups = _cluster()
    name = completed["metadata"]["name"]
    first = _run(store)[0]
    hashes, changes, wrote = _update(first, completed, groups)
    assert wrote and any(change[0].startswith("pki/") for change in changes)

    second, reads = _run(store)
    again, changes, wrote = _update(second, completed, groups)
    assert (again, changes, wrote) == (hashes, [], False)  # same configs, nothing written, bundle current
    assert _keyset_reads(reads) == []
    assert reads.count("%s/%s" % (name, layout.KEYSET_BUNDLE)) == 1

    bundle = vfs.open_store(store.base_url).read("%s/%s" % (name, layout.KEYSET_BUNDLE))
    assert b"privateMaterial" not in bundle and b"PRIVATE KEY" not in bundle
    assert sorted(json.loads(bundle)["keysets"]) == sorted(keystore.keyset_names(completed))


def test_a_keyset_changed_by_another_run_is_read_and_the_bundle_written_again(store):
    completed, groups = _cluster()
    name = completed["metadata"]["name"]
    hashes = _update(_run(store)[0], completed, groups)[0]
    other = layout.ClusterStore(vfs.open_store(store.base_url), name)
    other.apply([(keystore.path("kubernetes-ca"), keystore.dump(keystore.add_keypair(
        keystore.load(other, "kubernetes-ca"))))])  # kops create keypair, or kubeops.kops.keypair

    run, reads = _run(store)
    rotated, changes, wrote = _update(run, completed, groups)
    assert rotated != hashes and changes and wrote  # the new CA is in the configs; the bundle follows
    assert "%s/%s" % (name, keystore.path("kubernetes-ca")) in reads

    run, reads = _run(store)
    assert _update(run, completed, groups) == (rotated, [], False)
    assert _keyset_reads(reads) == []


def test_an_unreadable_bundle_is_written_again_from_the_keysets(store):
    completed, groups = _cluster()
    name = completed["metadata"]["name"]
    hashes = _update(_run(store)[0], completed, groups)[0]
    vfs.open_store(store.base_url).write("%s/%s" % (name, layout.KEYSET_BUNDLE), b"{not json")

    run, reads = _run(store)
    assert _update(run, completed, groups) == (hashes, [], True)
    assert len(_keyset_reads(reads)) == len(keystore.keyset_names(completed))


def test_a_check_mode_run_writes_no_bundle(store):
    completed, groups = _cluster()
    cluster_store = layout.ClusterStore(_run(store)[0], completed["metadata"]["name"])
    nodeup_store.node_files(cluster_store, completed, groups)  # keysets made in memory only
    assert nodeup_store.keyset_bundle(cluster_store, keystore.keyset_names(completed)) is None
    assert vfs.open_store(store.base_url).list("") == []


def test_the_public_view_copies_no_private_field():
    keyset = keystore.new_keyset("kubernetes-ca")
    keyset["spec"]["keys"][0]["somethingNew"] = "copied only if listed"
    public = nodeup_store.public_keyset(keyset)
    assert "privateMaterial" not in public["spec"]["keys"][0] and "somethingNew" not in public["spec"]["keys"][0]
    assert public["spec"]["keys"][0]["publicMaterial"] == keyset["spec"]["keys"][0]["publicMaterial"]
