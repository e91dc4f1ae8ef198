"""Requests of a no-op update on an s3:// store (issue 9, Deliver 6), counted on moto: every request that the
store and the cloud reconcile send (botocore's before-send event of every client made through cloud/aws.client,
so botocore's retries count too), for the 2-group cluster (create_cluster.yml's defaults, one zone).

bench/store_requests.py prints the same figure with each request named (`.venv/bin/python bench/store_requests.py
-v`); docs/state-store.md gives it."""

from __future__ import annotations

import collections

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

NAME = "noop.example.com"
MOTO_AMI = "ami-1e749f67"
STORE = "s3://kops-noop/state"
# Measured 23 Nov 2026: 61 before (store 17, cloud 44), 59 with one DescribeSecurityGroupRules for all the cluster's
# groups, 45 (store 8, cloud 37) with the keyset bundle (one GET for 9 keysets) and the elbv2 / EventBridge
# ownership tags from one tagging-API GetResources (for 3 DescribeTags + 4 ListTagsForResource); still 45 (store 7,
# cloud 38) with the API balancer's addresses this cluster's workers pin (it has no DNS: one
# DescribeNetworkInterfaces, model/aws/kops_controller.py) and no GetBucketLocation (botocore follows S3's
# redirect to the bucket's region: statestore/s3.py).
# 47 (store 7, cloud 40) on 26 Nov 2026: one ListRoles and one ListOpenIDConnectProviders find the service-account
# roles and the OIDC provider the spec no longer asks for (IRSA turned off: tasks/aws/iam.py).
# What remains is per object and has no batch form in the APIs used (docs/state-store.md).
NOOP_REQUESTS = 47
# The same no-op on a file:// store: backend calls (read, write, delete, list), bench/store_requests.py's figure:
# one read per managed file (21, then 22 with the node labeller's RBAC addon, docs/node-labels.md).
FILE_NOOP_CALLS = 22


def count_requests(monkeypatch, s3_paths=None):
    """A Counter of 'service Operation' of every request sent by clients made from now on
    (and of 'METHOD path' of the S3 ones in s3_paths, a Counter, when given)."""
    sent = collections.Counter()
    real_client = aws.client

    def counting_client(service, *args, **kwargs):
        api = real_client(service, *args, **kwargs)
        api.meta.events.register("before-send.*.*", lambda **kw: sent.update(
            ["%s %s" % (service, kw["event_name"].rsplit(".", 1)[-1])]))
        if service == "s3" and s3_paths is not None:
            api.meta.events.register("before-send.s3.*", lambda request, **_: s3_paths.update(
                ["%s %s" % (request.method, request.url.split("?")[0])]))
        return api

    monkeypatch.setattr(aws, "client", counting_client)
    return sent


def create(store):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({
        "cluster_name": NAME, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
        "kubernetes_version": "v1.34.2", "image": MOTO_AMI}))
    updates.apply_direct(service, NAME, False)  # the create


def test_a_no_op_update_on_s3_stays_within_its_request_count(aws, monkeypatch):
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-noop")
    create(STORE)
    s3_paths = collections.Counter()
    sent = count_requests(monkeypatch, s3_paths)
    plan, _completed, _changed = updates.apply_direct(clusters.ClusterService(STORE), NAME, False)
    assert {entry.action for entry in plan} == {"unchanged"}
    store = sum(n for key, n in sent.items() if key.startswith("s3 "))
    total = sum(sent.values())
    print("no-op update on s3://: %d requests (store %d, cloud %d): %s"
          % (total, store, total - store, sorted(sent.items())))
    assert total <= NOOP_REQUESTS, sent
    # No describe is repeated: each kind is looked up once (cloud.lookup); what is asked twice is asked per object.
    assert sent["ec2 DescribeSecurityGroupRules"] == 1, sent
    # The keysets' public parts come from the bundle; AWS workers use no bootstrap token (GCE's do).
    gets = [path for path in s3_paths if path.startswith("GET ")]
    assert not [p for p in gets if "/pki/" in p or "/secrets/" in p], gets
    assert any(p.endswith("/" + layout.KEYSET_BUNDLE) for p in gets), gets
    # The ownership tags of balancers, target groups and rules: one GetResources, no call per object.
    assert sent["resourcegroupstaggingapi GetResources"] == 1, sent
    assert not sent["elbv2 DescribeTags"] and not sent["events ListTagsForResource"], sent


def test_a_no_op_update_on_file_stays_within_its_backend_calls(aws, monkeypatch, tmp_path):
    store = "file://%s/state" % tmp_path
    create(store)
    calls = collections.Counter()
    for name in ("_get", "_put", "_remove", "_list"):  # as the bench counts (a _head under _put is its check)
        method = getattr(vfs.FileStore, name)

        def counted(self, relpath="", *args, _method=method, _name=name, **kwargs):
            calls.update(["%s %s" % (_name, relpath)])
            return _method(self, relpath, *args, **kwargs)
        monkeypatch.setattr(vfs.FileStore, name, counted)
    plan, _completed, _changed = updates.apply_direct(clusters.ClusterService(store), NAME, False)
    assert {entry.action for entry in plan} == {"unchanged"}
    print("no-op update on file://: %d backend calls: %s" % (sum(calls.values()), sorted(calls.items())))
    assert sum(calls.values()) <= FILE_NOOP_CALLS, calls
    assert not [c for c in calls if "/pki/" in c], calls
