"""The same behaviour on every backend: file://, memfs://, s3:// (moto server), gs:// (fake-gcs-server)."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs


def snapshot(store):
    """Every path and its bytes: to compare a whole store before and after."""
    return {relpath: store.read(relpath) for relpath in store.list("")}


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


def test_list_prefix_need_not_end_at_a_directory(store):
    store.write("c/instancegroup/a", b"a")
    store.write("c/instance", b"file")
    store.write("c/config", b"config")
    store.write("cc/config", b"other cluster")
    assert store.list("c/instance") == ["c/instance", "c/instancegroup/a"]
    assert store.list("c/") == ["c/config", "c/instance", "c/instancegroup/a"]
    assert store.list("c/nothing") == []
    assert store.exists("c/instance") and not store.exists("c/instanc")


def test_stores_with_other_prefixes_do_not_see_each_other(store):
    sibling = vfs.open_store(store.url("").rsplit("/", 1)[0] + "/prefix2")
    store.write("c/config", b"mine")
    sibling.write("c/config", b"theirs")
    assert store.list("") == ["c/config"] and store.read("c/config") == b"mine"
    assert sibling.list("") == ["c/config"] and sibling.read("c/config") == b"theirs"
    assert store.url("c/config") == store.url("") + "/c/config"


def test_cluster_store_round_trip(store):
    cluster = objects.new_cluster("k8s.example.com")
    cluster["spec"] = {"kubernetesVersion": "v1.34.2", "cloudProvider": "aws"}
    groups = []
    for name in ("nodes-b", "control-plane-a", "nodes-a"):
        group = objects.new_instance_group("k8s.example.com", name)
        group["spec"] = {"role": "Node", "minSize": 1, "maxSize": 2}
        groups.append(group)
    clusters = layout.ClusterStore(store, "k8s.example.com")
    assert not clusters.exists() and clusters.read_cluster() is None and clusters.read_instance_groups() == []
    clusters.apply(layout.cluster_changes(cluster) + [c for g in groups for c in layout.instance_group_changes(g)])
    store.write("other.example.com/instancegroup/nodes", b"not a cluster: no config")
    assert clusters.exists()
    assert clusters.read_cluster() == cluster
    assert [objects.name_of(g) for g in clusters.read_instance_groups()] == ["control-plane-a", "nodes-a", "nodes-b"]
    assert clusters.read_instance_group("nodes-a") == groups[2]
    assert clusters.read_instance_group("missing") is None
    assert clusters.read_completed_spec() is None
    assert store.read_text("k8s.example.com/config") == objects.dump_object(cluster)
    assert layout.list_clusters(store) == ["k8s.example.com"]
    assert clusters.config_base() == store.url("k8s.example.com")
    completed = objects.deepcopy(cluster)
    completed["spec"]["configBase"] = clusters.config_base()
    clusters.apply([(layout.COMPLETED_SPEC, objects.dump_object(completed))])
    assert clusters.read_completed_spec() == completed
    assert clusters.read_cluster() == cluster  # the user spec is kept apart from the completed one
    clusters.delete_cluster()
    assert store.list("") == ["other.example.com/instancegroup/nodes"] and layout.list_clusters(store) == []


def test_cluster_names_that_would_leave_the_cluster_are_refused(store):
    for name in ("", "a/b"):
        with pytest.raises(vfs.StoreError):
            layout.ClusterStore(store, name)
    group = objects.new_instance_group("k8s.example.com", "../config")
    with pytest.raises(vfs.StoreError):
        layout.instance_group_changes(group)


def test_apply_rolls_back_when_a_write_fails(store, monkeypatch):
    clusters = layout.ClusterStore(store, "k8s.example.com")
    store.write("k8s.example.com/config", b"old config")
    store.write("k8s.example.com/instancegroup/a", b"old a")
    store.write("k8s.example.com/pki/private/ca/keyset.yaml", b"old key")
    before = snapshot(store)
    real_write = type(store).write

    def failing_write(self, relpath, data):
        if relpath.endswith("instancegroup/b"):
            real_write(self, relpath, data)  # it landed, but the answer was lost (a timeout)
            raise OSError("disk full")
        return real_write(self, relpath, data)

    monkeypatch.setattr(type(store), "write", failing_write)
    with pytest.raises(vfs.StoreError) as error:
        clusters.apply([("config", b"new config"), ("instancegroup/a", None), ("instancegroup/c", b"new c"),
                        ("pki/private/ca/keyset.yaml", b"new key"), ("instancegroup/b", b"new b"),
                        ("instancegroup/d", b"never reached")])
    message = str(error.value)
    assert "writing instancegroup/b failed (disk full)" in message and "4 earlier change(s) were rolled back" in message
    assert clusters.config_base() in message
    monkeypatch.setattr(type(store), "write", real_write)
    assert snapshot(store) == before


def test_apply_says_when_the_rollback_failed_too(store, monkeypatch):
    clusters = layout.ClusterStore(store, "k8s.example.com")
    store.write("k8s.example.com/config", b"old config")
    real_write, real_delete = type(store).write, type(store).delete

    def failing_write(self, relpath, data):
        if relpath.endswith("instancegroup/b") or data == b"old config":
            raise OSError("disk full")
        return real_write(self, relpath, data)

    def failing_delete(self, relpath):
        raise OSError("read-only")

    monkeypatch.setattr(type(store), "write", failing_write)
    monkeypatch.setattr(type(store), "delete", failing_delete)
    with pytest.raises(vfs.StoreError) as error:
        clusters.apply([("config", b"new config"), ("instancegroup/a", b"new a"), ("instancegroup/b", b"new b")])
    assert "restoring" in str(error.value) and "config" in str(error.value) and "instancegroup/a" in str(error.value)
    # The journal written first stays: the next run that writes the cluster finishes the write.
    assert "the next run that writes this cluster finishes the write" in str(error.value)
    monkeypatch.setattr(type(store), "write", real_write)
    monkeypatch.setattr(type(store), "delete", real_delete)
    store.delete("k8s.example.com/.kubeops-lease", expect=None)  # releasing it failed too; say it expired since
    next_run = layout.ClusterStore(vfs.open_store(store.base_url), "k8s.example.com")
    assert next_run.interrupted_write()
    with next_run.lease():
        pass
    assert {p: d for p, d in snapshot(vfs.open_store(store.base_url)).items() if "/.kubeops-history/" not in p} == {
        "k8s.example.com/config": b"new config", "k8s.example.com/instancegroup/a": b"new a",
        "k8s.example.com/instancegroup/b": b"new b"}
    # 3 of the spec, and its history: the config found there (revision 1), the new spec (2) and the index.
    assert any("finished an interrupted write of 6 object(s)" in note for note in next_run.store.notes)


def test_s3_objects_are_encrypted_and_listing_paginates(aws):
    import boto3
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="kops-big")
    store = vfs.open_store("s3://kops-big")
    store.write("c/pki/private/ca/keyset.yaml", b"secret")
    store.write("c/config", "text")
    for key in ("c/pki/private/ca/keyset.yaml", "c/config"):
        assert client.head_object(Bucket="kops-big", Key=key)["ServerSideEncryption"] == "AES256"
    for index in range(1005):  # over one list_objects_v2 page (1000 keys)
        client.put_object(Bucket="kops-big", Key="c/many/%04d" % index, Body=b"x")
    listed = store.list("c/many/")
    assert len(listed) == 1005 and listed[0] == "c/many/0000" and listed[-1] == "c/many/1004"


def test_s3_missing_bucket_names_the_url_and_the_fix(aws):
    store = vfs.open_store("s3://no-such-bucket/x")
    with pytest.raises(vfs.StoreError) as error:
        store.read("c/config")
    assert not isinstance(error.value, vfs.NotFoundError)
    assert "s3://no-such-bucket/x" in str(error.value)
    assert "NoSuchBucket" in str(error.value) and "create the bucket" in str(error.value)


def test_s3_store_asks_no_bucket_location_and_takes_an_explicit_endpoint(aws, monkeypatch):
    """The store's client is in the configured region; S3's redirect to another bucket region is followed by botocore
    (moto does not redirect, so that part is botocore's, not tested here). No GetBucketLocation is sent."""
    import boto3
    boto3.client("s3", region_name="eu-west-1").create_bucket(
        Bucket="kops-eu", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # only the explicit endpoint leads to the moto server now
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    store = vfs.open_store("s3://kops-eu/state", endpoint=aws.url)
    sent = []
    store.client.meta.events.register("before-call.s3", lambda model=None, **_: sent.append(model.name))
    store.write("c/config", b"x")
    assert store.client.meta.region_name == "eu-west-1"
    assert store.client.meta.endpoint_url == aws.url
    assert store.list("") == ["c/config"]
    assert "GetBucketLocation" not in sent and "PutObject" in sent


def test_s3_server_side_encryption_can_be_changed(aws, monkeypatch):
    import boto3
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="kops-kms")
    monkeypatch.setenv("KOPS_STATE_S3_SSE_ALGORITHM", "aws:kms")
    vfs.open_store("s3://kops-kms").write("c/config", b"x")
    assert client.head_object(Bucket="kops-kms", Key="c/config")["ServerSideEncryption"] == "aws:kms"


def test_gs_listing_follows_page_tokens(gcs, monkeypatch):
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import gcs as gcs_store
    gcs.create_bucket("kops-pages")
    store = vfs.open_store("gs://kops-pages/state")
    names = ["c/instancegroup/ig-%02d" % i for i in range(7)]
    for name in names:
        store.write(name, name)
    monkeypatch.setattr(gcs_store, "LIST_PAGE_SIZE", 2)  # 4 pages for 7 objects
    pages = []
    real_request = type(store.session).request

    def counting_request(session, method, url, *args, **kwargs):
        response = real_request(session, method, url, *args, **kwargs)
        pages.append(len(response.json().get("items") or []))
        return response

    monkeypatch.setattr(type(store.session), "request", counting_request)
    assert store.list("c/") == names
    assert pages == [2, 2, 2, 1]


def test_gs_explicit_endpoint_and_missing_bucket(gcs, monkeypatch):
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    store = vfs.open_store("gs://no-such-bucket/state", endpoint=gcs.url)
    for action in (lambda: store.read("c/config"), lambda: store.write("c/config", b"x"), lambda: store.list("")):
        with pytest.raises(vfs.StoreError) as error:
            action()
        assert not isinstance(error.value, vfs.NotFoundError)
        assert "gs://no-such-bucket/state" in str(error.value) and "create the bucket" in str(error.value)
    gcs.create_bucket("kops-endpoint")
    store = vfs.open_store("gs://kops-endpoint", endpoint=gcs.url)
    store.write("c/config", b"x")
    assert store.read("c/config") == b"x" and store.url("c/config") == "gs://kops-endpoint/c/config"


def test_file_store_writes_atomically_and_keeps_keys_private(tmp_path, monkeypatch):
    store = vfs.open_store(str(tmp_path / "state"))  # a bare path works like kops
    assert store.url("") == "file://%s" % (tmp_path / "state")
    old_umask = os.umask(0)  # the modes must not depend on the caller's umask
    try:
        store.write("c/pki/private/kubernetes-ca/keyset.yaml", b"key")
        store.write("c/secrets/dockerconfig", b"secret")
        store.write("c/config", b"old")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(os.stat(tmp_path / "state/c/pki/private/kubernetes-ca/keyset.yaml").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "state/c/secrets/dockerconfig").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "state/c/config").st_mode) == 0o644

    def broken_replace(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(vfs.StoreError, match="^state store file://%s: writing c/config failed: rename failed$"
                       % (tmp_path / "state")):
        store.write("c/config", b"new")
    monkeypatch.undo()
    assert store.read("c/config") == b"old"
    assert sorted(os.listdir(tmp_path / "state/c")) == ["config", "pki", "secrets"]  # no temp file left behind
    store.delete("c/secrets/dockerconfig")
    assert sorted(os.listdir(tmp_path / "state/c")) == ["config", "pki"]  # emptied directories go too


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


def test_file_stores_do_not_import_cloud_libraries(tmp_path):
    """file:// users (and AnsiballZ payloads using them) must not pay for boto3 or google-auth."""
    import subprocess
    import sys
    script = (
        "import sys\n"
        "from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs\n"
        "from ansible_collections.kubeops.kops.plugins.module_utils.api import objects\n"
        "clusters = layout.ClusterStore(vfs.open_store(sys.argv[1]), 'k.example.com')\n"
        "clusters.apply(layout.cluster_changes(objects.new_cluster('k.example.com')))\n"
        "assert clusters.read_cluster()['metadata']['name'] == 'k.example.com'\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'google', 'requests'))\n"
        "print(','.join(loaded))\n")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert result.stdout.strip() == ""


def test_gs_unreachable_endpoint_says_the_store_and_the_socket_error_only(monkeypatch):
    import socket
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = vfs.open_store("gs://kops-state/prefix", endpoint="http://127.0.0.1:%d" % port)
    with pytest.raises(vfs.StoreError) as error:
        store.read("c/config")
    assert str(error.value) == "state store gs://kops-state/prefix: reading c/config: Connection refused"


@pytest.mark.parametrize("config_base,expected", [
    ("s3://kops-state/k8s.example.com", ("s3://kops-state", "k8s.example.com")),
    ("s3://kops-state/team/k8s.example.com/", ("s3://kops-state/team", "k8s.example.com")),
    ("gs://kops-state/k8s.example.com", ("gs://kops-state", "k8s.example.com")),
    ("file:///srv/kops/k8s.example.com", ("file:///srv/kops", "k8s.example.com")),
    ("/srv/kops/k8s.example.com", ("/srv/kops", "k8s.example.com")),
])
def test_a_config_base_is_a_store_and_a_cluster_name(config_base, expected):
    assert layout.split_config_base(config_base) == expected


@pytest.mark.parametrize("config_base", ["s3://kops-state", "k8s.example.com", "kops/k8s.example.com",
                                         "file:///k8s.example.com", "", None])
def test_a_config_base_without_a_store_or_a_name_is_refused_with_an_example(config_base):
    with pytest.raises(vfs.StoreError) as error:
        layout.split_config_base(config_base)
    assert str(error.value) == ("config_base %r: expected <state store>/<cluster name>; "
                                "for example s3://my-kops-state/k8s.example.com" % config_base)
