"""State-store requests of a no-op cluster_update (run by hand, not in the test suite).

    .venv/bin/python bench/store_requests.py

Creates the 2-group cluster (kops create cluster's defaults, one zone) on an
s3:// store in moto and on a file:// store, applies it once, then counts what
a second, no-op apply_direct asks of the store: on s3:// every S3 request the
store's client sends to moto (botocore's before-send event, so retries count
too), on file:// every backend call (read, write, delete, list).  The cloud's
own describe calls are counted apart (bench/aws_update.py reports those).
"""

from __future__ import annotations

import collections
import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs  # noqa: E402
from tests import servers  # noqa: E402

NAME = "bench2.example.com"
MOTO_AMI = "ami-1e749f67"


def make_cluster(store):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({
        "cluster_name": NAME, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
        "kubernetes_version": "v1.34.2", "image": MOTO_AMI}))
    updates.apply_direct(service, NAME, False, aws.AwsCloud)  # the create


def count_s3_requests(store):
    """(S3 requests, Counter of "METHOD target", other AWS requests) of one no-op update."""
    requests = collections.Counter()
    cloud_requests = collections.Counter()
    real_client = aws.client

    def counting_client(service, *args, **kwargs):
        api = real_client(service, *args, **kwargs)
        if service == "s3":
            api.meta.events.register("before-send.s3.*", lambda request, **_: requests.update(
                ["%s %s" % (request.method, _s3_target(request.url))]))
        else:
            api.meta.events.register("before-send.*.*", lambda **_: cloud_requests.update([service]))
        return api

    aws.client = counting_client
    try:
        updates.apply_direct(clusters.ClusterService(store), NAME, False, aws.AwsCloud)
    finally:
        aws.client = real_client
    return sum(requests.values()), requests, sum(cloud_requests.values())


def _s3_target(url):
    """'bucket/key' or 'bucket?operation' of a path-style S3 request URL."""
    path, _sep, query = url.partition("?")
    target = path.split("/", 3)[-1]
    operation = query.split("&")[0].split("=")[0]
    return target + ("?" + operation if operation and operation != "x-id" else "")


def count_file_calls(store):
    """(total, Counter of 'call path') of the file store backend's calls during one no-op update."""
    calls = collections.Counter()
    originals = {}
    for name in ("_get", "_put", "_remove", "_list", "read", "write", "delete", "list"):
        method = getattr(vfs.FileStore, name, None)
        if method is None or name in originals:
            continue
        originals[name] = method

        def counted(self, relpath="", *args, _method=method, _name=name, **kwargs):
            calls.update(["%s %s" % (_name, relpath)])
            return _method(self, relpath, *args, **kwargs)
        setattr(vfs.FileStore, name, counted)
    try:
        updates.apply_direct(clusters.ClusterService(store), NAME, False, aws.AwsCloud)
    finally:
        for name, method in originals.items():
            setattr(vfs.FileStore, name, method)
    return sum(calls.values()), calls


def backend_calls_only(counter):
    """With a raw layer (_get/_put/...), the public methods are the cache's: count the raw ones only."""
    raw = {k: v for k, v in counter.items() if k.startswith("_")}
    return (sum(raw.values()), collections.Counter(raw)) if raw else (sum(counter.values()), counter)


def main():
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    try:
        aws.client("s3", region="us-east-1").create_bucket(Bucket="kops-bench")
        make_cluster("s3://kops-bench/state")
        total, requests, cloud = count_s3_requests("s3://kops-bench/state")
        print("s3://   no-op update: %d S3 requests (and %d cloud API requests); most repeated: %s"
              % (total, cloud, requests.most_common(3)))
        if "-v" in sys.argv:
            for key, count in sorted(requests.items()):
                print("   %3d %s" % (count, key))
        with tempfile.TemporaryDirectory() as tmp:
            store = "file://%s/state" % tmp
            make_cluster(store)
            total, calls = backend_calls_only(count_file_calls(store)[1])
            print("file:// no-op update: %d backend calls; most repeated: %s" % (total, calls.most_common(3)))
            if "-v" in sys.argv:
                for key, count in sorted(calls.items()):
                    print("   %3d %s" % (count, key))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
