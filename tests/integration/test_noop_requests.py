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

NAME = "noop.example.com"
MOTO_AMI = "ami-1e749f67"
STORE = "s3://kops-noop/state"
# Measured 23 Nov 2026: 61 before (store 17, cloud 44), 59 with one DescribeSecurityGroupRules for all the cluster's
# groups.  What remains is per object and has no batch form in the APIs used (docs/state-store.md).  60 since a
# cluster without DNS (this one: no dns_zone) looks up its API balancer's addresses for the workers' boot script
# (one DescribeNetworkInterfaces: model/aws/kops_controller.py, kops' FindAddresses).
NOOP_REQUESTS = 60


def count_requests(monkeypatch):
    """A Counter of 'service Operation' of every request sent by clients made from now on."""
    sent = collections.Counter()
    real_client = aws.client

    def counting_client(service, *args, **kwargs):
        api = real_client(service, *args, **kwargs)
        api.meta.events.register("before-send.*.*", lambda **kw: sent.update(
            ["%s %s" % (service, kw["event_name"].rsplit(".", 1)[-1])]))
        return api

    monkeypatch.setattr(aws, "client", counting_client)
    return sent


def test_a_no_op_update_on_s3_stays_within_its_request_count(aws, monkeypatch):
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-noop")
    service = clusters.ClusterService(STORE)
    service.execute(service.plan_create({
        "cluster_name": NAME, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
        "kubernetes_version": "v1.34.2", "image": MOTO_AMI}))
    updates.apply_direct(service, NAME, False)  # the create
    sent = count_requests(monkeypatch)
    plan, _completed, _changed = updates.apply_direct(clusters.ClusterService(STORE), NAME, False)
    assert {entry.action for entry in plan} == {"unchanged"}
    store = sum(n for key, n in sent.items() if key.startswith("s3 "))
    total = sum(sent.values())
    print("no-op update on s3://: %d requests (store %d, cloud %d): %s"
          % (total, store, total - store, sorted(sent.items())))
    assert total <= NOOP_REQUESTS, sent
    # No describe is repeated: each kind is looked up once (cloud.lookup); what is asked twice is asked per object.
    assert sent["ec2 DescribeSecurityGroupRules"] == 1, sent
