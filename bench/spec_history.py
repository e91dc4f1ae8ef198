"""The spec's history on S3 (moto on 127.0.0.1), through the modules (run by hand, not in the test suite).

    .venv/bin/python bench/spec_history.py [--replaces 100] [--rollback-to 50]

Creates a cluster with the `cluster` module, then makes 100 replaces the way a user does: `cluster_info` reads the
YAML and its revision (what get_cluster.yml writes), one field is edited (the Cluster's sshAccess every time, an
instance group's maxSize every tenth time), and the `cluster` module replaces it with that revision line.  Then it
rolls back to revision 50 (`cluster` with name and revision, as replace_cluster.yml does), first in check and diff
mode, and lists the kept revisions (`cluster_info` history=true).

Checks (each a failure when it does not hold):
  - the config and instance groups after the rollback equal, byte for byte, what S3 held right after the write that
    made revision 50 (read from S3 directly, not through the history);
  - check mode writes nothing; a second rollback changes nothing;
  - kops' files keep their names and format (one kops.k8s.io/v1alpha2 object each, as written before the history
    existed), and kops' way of finding clusters (paths ending in /config) still finds exactly one.
Measures: store objects added per write, S3 requests per replace (and without the history, for 10 replaces), time to
list the revisions.  tests/integration/test_spec_history.py runs measure() on a smaller count.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import io
import json
import os
import pathlib
import statistics
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

import yaml  # noqa: E402

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history  # noqa: E402

NAME = "history.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
           "zones": ["us-east-1a", "us-east-1b"], "control_plane_zones": ["us-east-1a"]}  # config + 3 groups


class S3Requests(object):
    """Counts the S3 requests the modules send (botocore's before-send event on every client they make)."""

    def __init__(self):
        self.counts = collections.Counter()
        self._real = aws.client

    def __enter__(self):
        def counting_client(service, *args, **kwargs):
            api = self._real(service, *args, **kwargs)
            if service == "s3":
                api.meta.events.register("before-send.s3.*", lambda request, **_: self.counts.update([request.method]))
            return api
        aws.client = counting_client
        return self

    def __exit__(self, *exc):
        aws.client = self._real

    def take(self):
        counts, self.counts = self.counts, collections.Counter()
        return counts


def run_module(name, args, check=False, diff=False):
    """A kubeops.kops module's result, run in this process as Ansible runs it (its JSON on stdout)."""
    from ansible.module_utils.testing import patch_module_args
    module = importlib.import_module("ansible_collections.kubeops.kops.plugins.modules." + name)
    args = dict(args, _ansible_check_mode=check, _ansible_diff=diff)
    out = io.StringIO()
    with patch_module_args(args), contextlib.redirect_stdout(out):
        try:
            module.main()
        except SystemExit:
            pass
    return json.loads(out.getvalue().strip().splitlines()[-1])


def ok(result):
    assert not result.get("failed"), result.get("msg")
    return result


class Bucket(object):
    """What S3 holds under the cluster, read with a client of its own (not through the store's code)."""

    def __init__(self, bucket, prefix):
        import boto3
        self.client = boto3.client("s3", region_name="us-east-1")
        self.bucket, self.prefix = bucket, prefix

    def keys(self, under=""):
        """{key relative to the store: ETag}"""
        found = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix + under):
            for item in page.get("Contents", []):
                found[item["Key"][len(self.prefix):]] = item["ETag"]
        return found

    def kops_files(self):
        """{path under the cluster: bytes} of kops' spec files: the config and the instance groups."""
        base = NAME + "/"
        return {k[len(base):]: self.client.get_object(Bucket=self.bucket, Key=self.prefix + k)["Body"].read()
                for k in self.keys(base) if history.is_spec_path(k[len(base):])}


def edited(info, step):
    """The YAML cluster_info read (its Cluster annotated with the revision read), edited as a user would."""
    documents = list(yaml.safe_load_all(info["yaml"]))
    documents[0]["spec"]["sshAccess"] = ["10.%d.%d.0/24" % (step // 250, step % 250)]
    if step % 10 == 0:
        group = documents[-1]
        group["spec"]["maxSize"] = 1 + step // 10
    return objects.dump_objects(documents)


def measure(url, bucket, prefix, replaces=100, rollback_to=50, report=print):
    store = Bucket(bucket, prefix)
    base = {"state_store": url, "cloud_lookup": False}
    results = {}
    with S3Requests() as requests:
        ok(run_module("cluster", dict(base, options=OPTIONS, change_cause="bench: create")))
        requests.take()
        kops_names = sorted(store.kops_files())
        added, per_replace, seconds, at_target = [], [], [], None
        for step in range(1, replaces + 1):
            info = ok(run_module("cluster_info", dict(base, name=NAME)))
            before = store.keys()
            requests.take()
            started = time.monotonic()
            result = ok(run_module("cluster", dict(base, definition=edited(info, step), change_cause="bench: replace %d" % step)))
            seconds.append(time.monotonic() - started)
            per_replace.append(requests.take())
            added.append(len(store.keys()) - len(before))
            assert result["changed"] and result["revision"] == str(step + 1), result.get("revision")
            if step + 1 == rollback_to:
                at_target = store.kops_files()
        assert at_target is not None, "revision %d is not among 1..%d" % (rollback_to, replaces + 1)
        results["replace_seconds_mean"] = statistics.mean(seconds)
        results["objects_added_per_write"] = dict(collections.Counter(added))
        results["s3_requests_per_replace"] = {m: statistics.mean(c[m] for c in per_replace)
                                              for m in sorted({m for c in per_replace for m in c})}
        results["history_bytes"] = {"index": len(store.client.get_object(
            Bucket=bucket, Key=prefix + NAME + "/" + history.INDEX)["Body"].read()),
            "snapshot": store.client.head_object(Bucket=bucket, Key=prefix + NAME + "/" + history.SNAPSHOT % rollback_to)
            ["ContentLength"]}

        # The rollback: check and diff mode first (writes nothing), then for real, then again (no change).
        untouched = store.keys()
        check = ok(run_module("cluster", dict(base, name=NAME, revision=str(rollback_to)), check=True, diff=True))
        assert check["changed"] and store.keys() == untouched
        assert check["diff"]["after_header"] == "%s (revision %d)" % (NAME, rollback_to), check["diff"]
        results["rollback_check_changed_paths"] = check["changed_paths"]
        requests.take()
        started = time.monotonic()
        rolled = ok(run_module("cluster", dict(base, name=NAME, revision=str(rollback_to), change_cause="bench: rollback")))
        results["rollback_seconds"] = time.monotonic() - started
        results["rollback_requests"] = dict(requests.take())
        results["rollback_objects_added"] = len(store.keys()) - len(untouched)
        after = store.kops_files()
        results["rollback_equal_bytes"] = after == at_target
        assert after == at_target, "the spec after the rollback differs from revision %d" % rollback_to
        assert rolled["changed"] and rolled["restored"] == rollback_to and rolled["revision"] == str(replaces + 2)
        rolled_back = store.keys()
        again = ok(run_module("cluster", dict(base, name=NAME, revision=str(rollback_to))))
        assert not again["changed"] and store.keys() == rolled_back

        # kops' layout: the same names, each one kops object as dump_object writes it; one cluster by kops' rule.
        assert sorted(after) == kops_names, (sorted(after), kops_names)
        for path, data in after.items():
            document = yaml.safe_load(data)
            assert document["apiVersion"] == objects.API_VERSION and objects.dump_object(document).encode() == data, path
        assert [k[:-len("/config")] for k in store.keys() if k.endswith("/config")] == [NAME]
        assert not any(k.endswith("/config") for k in store.keys(NAME + "/" + history.HISTORY_DIR))
        results["kops_layout_unchanged"] = True

        # Listing the kept revisions (who, when, which playbook).
        timings = []
        requests.take()
        for _attempt in range(5):
            started = time.monotonic()
            listed = ok(run_module("cluster_info", dict(base, name=NAME, history=True)))
            timings.append(time.monotonic() - started)
        results["list_requests"] = {m: n / len(timings) for m, n in requests.take().items()}
        results["listed_revisions"] = len(listed["history"])
        results["list_seconds_median"] = statistics.median(timings)
        from ansible_collections.kubeops.kops.plugins.module_utils import clusters
        reader = clusters.ClusterService(url).history(NAME)
        reader.cluster_store.open()  # the run's one listing of the cluster (and the S3 client's set-up) apart
        started = time.monotonic()
        entries = reader.revisions()
        results["list_seconds_index_read"] = time.monotonic() - started
        assert [e["revision"] for e in entries] == [e["revision"] for e in listed["history"]]
        results["last_entries"] = listed["history"][-2:]
    report(json.dumps(results, indent=1, sort_keys=True, default=str))
    return results


def requests_without_history(url, replaces=10):
    """S3 requests per replace when the history writes nothing (the cost of the history, by difference)."""
    real = history.History.changes_for
    history.History.changes_for = lambda self, changes, operation=None, context=None: []
    try:
        base = {"state_store": url, "cloud_lookup": False}
        counts, seconds = [], []
        with S3Requests() as requests:
            ok(run_module("cluster", dict(base, options=dict(OPTIONS, cluster_name="plain.example.com"))))
            for step in range(1, replaces + 1):
                info = ok(run_module("cluster_info", dict(base, name="plain.example.com")))
                documents = list(yaml.safe_load_all(info["yaml"]))
                documents[0]["spec"]["sshAccess"] = ["10.9.%d.0/24" % step]
                requests.take()
                started = time.monotonic()
                ok(run_module("cluster", dict(base, definition=objects.dump_objects(documents))))
                seconds.append(time.monotonic() - started)
                counts.append(requests.take())
        return {"s3_requests_per_replace": {m: statistics.mean(c[m] for c in counts)
                                            for m in sorted({m for c in counts for m in c})},
                "replace_seconds_mean": statistics.mean(seconds)}
    finally:
        history.History.changes_for = real


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replaces", type=int, default=100)
    parser.add_argument("--rollback-to", type=int, default=50)
    args = parser.parse_args()
    from tests import servers
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    try:
        import boto3
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-history")
        measure("s3://kops-history/state", "kops-history", "state/", args.replaces, args.rollback_to)
        print("the same replace without the history (10 replaces):",
              json.dumps(requests_without_history("s3://kops-history/plain")))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
