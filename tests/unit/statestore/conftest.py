"""The store fixture: the same test on file://, memfs://, s3:// (moto server) and gs:// (fake-gcs-server)."""

from __future__ import annotations

import itertools

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

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
    server = request.getfixturevalue("gcs")
    bucket = "kops-state-%d" % next(_buckets)
    server.create_bucket(bucket)
    return vfs.open_store("gs://%s/prefix" % bucket)
