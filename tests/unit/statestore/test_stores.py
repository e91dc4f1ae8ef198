"""The same behaviour on every backend: file://, memfs://, s3:// (moto server), gs:// (fake-gcs-server)."""

from __future__ import annotations

import itertools
import os
import stat

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

_buckets = itertools.count()


@pytest.fixture(params=["file", "memfs", "s3", "gs"])
def store(request, tmp_path, monkeypatch):
    kind = request.param
    if kind == "file":
        return vfs.open_store("file://%s" % (tmp_path / "state"))
    if kind == "memfs":
        return vfs.open_store("memfs://tests/state")
    if kind == "s3":
        request.getfixturevalue("aws")
        import boto3
        bucket = "kops-state-%d" % next(_buckets)
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=bucket)
        return vfs.open_store("s3://%s/prefix" % bucket)
    server = request.getfixturevalue("gcs_server")
    bucket = "kops-state-%d" % next(_buckets)
    server.create_bucket(bucket)
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    return vfs.open_store("gs://%s/prefix" % bucket)


def test_write_read_list_delete(store):
    store.write("c1/config", b"one")
    store.write("c1/instancegroup/nodes", "two")
    store.write("c2/config", b"three")
    assert store.read("c1/config") == b"one"
    assert store.read_text("c1/instancegroup/nodes") == "two"
    assert store.list("c1/") == ["c1/config", "c1/instancegroup/nodes"]
    assert store.list("") == ["c1/config", "c1/instancegroup/nodes", "c2/config"]
    store.write("c1/config", b"replaced")
    assert store.read("c1/config") == b"replaced"
    store.delete("c1/config")
    assert not store.exists("c1/config")
    with pytest.raises(vfs.NotFoundError) as error:
        store.read("c1/config")
    assert store.url("c1/config") in str(error.value)
    store.delete("c1/never-existed")  # deleting nothing is not an error


def test_cluster_store_round_trip(store):
    cluster = objects.new_cluster("k8s.example.com")
    cluster["spec"] = {"kubernetesVersion": "v1.34.2", "cloudProvider": "aws"}
    group = objects.new_instance_group("k8s.example.com", "nodes-a")
    group["spec"] = {"role": "Node", "minSize": 1, "maxSize": 2}
    clusters = layout.ClusterStore(store, "k8s.example.com")
    clusters.apply([(layout.CLUSTER_CONFIG, objects.dump_object(cluster).encode()),
                    (layout.instance_group_path("nodes-a"), objects.dump_object(group).encode())])
    assert clusters.exists()
    assert clusters.read_cluster() == cluster
    assert clusters.read_instance_groups() == [group]
    assert layout.list_clusters(store) == ["k8s.example.com"]
    assert clusters.config_base() == store.url("k8s.example.com")
    clusters.delete_cluster()
    assert store.list("") == [] and layout.list_clusters(store) == []


def test_apply_rolls_back_when_a_write_fails(store, monkeypatch):
    clusters = layout.ClusterStore(store, "k8s.example.com")
    store.write("k8s.example.com/config", b"old config")
    store.write("k8s.example.com/instancegroup/a", b"old a")
    real_write = type(store).write

    def failing_write(self, relpath, data):
        if relpath.endswith("instancegroup/b"):
            raise OSError("disk full")
        return real_write(self, relpath, data)

    monkeypatch.setattr(type(store), "write", failing_write)
    with pytest.raises(vfs.StoreError) as error:
        clusters.apply([("config", b"new config"), ("instancegroup/a", None), ("instancegroup/b", b"new b")])
    assert "rolled back" in str(error.value) and "instancegroup/b" in str(error.value)
    monkeypatch.setattr(type(store), "write", real_write)
    assert store.read("k8s.example.com/config") == b"old config"
    assert store.read("k8s.example.com/instancegroup/a") == b"old a"
    assert not store.exists("k8s.example.com/instancegroup/b")


def test_s3_objects_are_encrypted_and_listing_paginates(aws):
    import boto3
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="kops-big")
    store = vfs.open_store("s3://kops-big")
    store.write("c/pki/private/ca/keyset.yaml", b"secret")
    assert client.head_object(Bucket="kops-big", Key="c/pki/private/ca/keyset.yaml")["ServerSideEncryption"] == "AES256"
    for index in range(1005):  # over one list_objects_v2 page (1000 keys)
        client.put_object(Bucket="kops-big", Key="c/many/%04d" % index, Body=b"x")
    listed = store.list("c/many/")
    assert len(listed) == 1005 and listed[0] == "c/many/0000" and listed[-1] == "c/many/1004"


def test_s3_missing_bucket_names_the_url_and_the_fix(aws):
    store = vfs.open_store("s3://no-such-bucket/x")
    with pytest.raises(vfs.StoreError) as error:
        store.read("c/config")
    assert "s3://no-such-bucket/x" in str(error.value)
    assert "NoSuchBucket" in str(error.value)


def test_file_store_writes_atomically_and_keeps_keys_private(tmp_path, monkeypatch):
    store = vfs.open_store(str(tmp_path / "state"))  # a bare path works like kops
    assert store.url("") == "file://%s" % (tmp_path / "state")
    store.write("c/pki/private/kubernetes-ca/keyset.yaml", b"key")
    store.write("c/config", b"old")
    assert stat.S_IMODE(os.stat(tmp_path / "state/c/pki/private/kubernetes-ca/keyset.yaml").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "state/c/config").st_mode) == 0o644

    def broken_replace(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.write("c/config", b"new")
    monkeypatch.undo()
    assert store.read("c/config") == b"old"
    assert sorted(os.listdir(tmp_path / "state/c")) == ["config", "pki"]  # no temp file left behind


def test_file_store_refuses_paths_outside_it(tmp_path):
    store = vfs.open_store("file://%s" % tmp_path)
    with pytest.raises(vfs.StoreError):
        store.read("../etc/passwd")


def test_default_store_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("KOPS_STATE_STORE", raising=False)
    with pytest.raises(vfs.StoreError) as error:
        vfs.open_store(None)
    assert "KOPS_STATE_STORE" in str(error.value)
    monkeypatch.setenv("KOPS_STATE_STORE", "file://%s" % tmp_path)
    assert vfs.open_store(None).url("") == "file://%s" % tmp_path


def test_unknown_scheme_is_refused():
    with pytest.raises(vfs.StoreError) as error:
        vfs.open_store("ftp://example/state")
    assert "unsupported scheme" in str(error.value)
