"""Requests of a no-op update on an s3:// store (issue 9, Deliver 6), counted on moto: every request that the
store and the cloud reconcile send (botocore's before-send event of every client made through cloud/aws.client,
so botocore's retries count too), for the 2-group cluster (create_cluster.yml's defaults, one zone).

bench/store_requests.py prints the same figure with each request named (`.venv/bin/python bench/store_requests.py
-v`); docs/state-store.md gives it."""

from __future__ import annotations

import collections
import json
import subprocess

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import made_objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.integration.conftest import BIN, REPO, ansible_env

NAME = "noop.example.com"
MOTO_AMI = "ami-1e749f67"
STORE = "s3://kops-noop/state"
# Measured 23 Nov 2026: 61 before (store 17, cloud 44), 59 with one DescribeSecurityGroupRules for all the cluster's
# groups, 45 (store 8, cloud 37) with the keyset bundle (one GET for 9 keysets) and the elbv2 / EventBridge
# ownership tags from one tagging-API GetResources (for 3 DescribeTags + 4 ListTagsForResource); still 45 (store 7,
# cloud 38) with the API balancer's addresses this cluster's workers pin (it has no DNS: one
# DescribeNetworkInterfaces, providers/aws/update_facts.py) and no GetBucketLocation (botocore follows S3's
# redirect to the bucket's region: statestore/s3.py).
# 47 (store 7, cloud 40) on 26 Nov 2026: one ListRoles and one ListOpenIDConnectProviders find the service-account
# roles and the OIDC provider the spec no longer asks for (IRSA turned off: tasks/aws/iam.py).
# 45 (store 7, cloud 38) on 29 Nov 2026: the service-account roles and OIDC provider that may have become orphans are
# looked for among the names the cluster's own record in the store holds (providers/aws/made_objects.py), each asked
# by name, instead of listing every role of the account; the record is not read when the listing's md5 says it holds
# what the tasks ask for, so a no-op asks nothing for it.
# What remains is per object and has no batch form in the APIs used (docs/state-store.md).
NOOP_REQUESTS = 45
# The same no-op on a file:// store: backend calls (read, write, delete, list), bench/store_requests.py's figure:
# one read per managed file (21, then 22 with the node labeller's RBAC addon, docs/node-labels.md; 23 with the
# service-account IAM record, which file:// has no md5 to compare without reading).
FILE_NOOP_CALLS = 23
# The no-op as a user runs it: ansible-playbook kubeops.kops.update_cluster on the s3:// store, every AWS API call of
# every process of the run counted (tests/integration/call_log: botocore's calls, each page of a paginated one; the
# retries botocore makes on its own are not calls).  Measured 29 Nov 2026: 49 when the account was listed (the 47 then
# plus the zone checks' DescribeAvailabilityZones and DescribeInstanceTypeOfferings), and 101 with 250 more roles in
# the account, 206 with 750 (ListRoles' pages, ListRoleTags of each role named like a service account's); 47 with
# the record, whatever the account holds.
PLAYBOOK_NOOP_REQUESTS = 47
CALL_LOG_SITE = REPO / "tests" / "integration" / "call_log"  # its sitecustomize records botocore calls


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
    # What the cluster may have left behind in IAM is looked for through its own record, never by listing the
    # account; the record holds what the tasks ask for, which the listing's md5 says without reading it.
    assert not sent["iam ListRoles"] and not sent["iam ListOpenIDConnectProviders"], sent
    assert not [p for p in gets if p.endswith("/" + made_objects.RECORD)], gets


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


def _playbook_update(tmp_path, call_log):
    """ansible-playbook kubeops.kops.update_cluster of the cluster on STORE, from a user's directory: (its result,
    the AWS calls every process of the run made, as 'service Operation')."""
    env = ansible_env(REPO / "build" / "collections")
    env.update(PYTHONPATH=str(CALL_LOG_SITE), KOPS_TEST_CALL_LOG=str(call_log),
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_STDOUT_CALLBACK="test_json")
    call_log.write_text("")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "kubeops.kops.update_cluster", "-e", "cluster_name=" + NAME,
                           "-e", "state_store=" + STORE], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout), collections.Counter(call_log.read_text().split("\n")[:-1])


def unrelated_roles(count):
    """count IAM roles of others in the account: most plain, one in five named like another cluster's service-account
    role and tagged as kops tags one (the account listing asked each of those for its tags)."""
    iam = boto3.client("iam", region_name="us-east-1")
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    for index in range(count):
        if index % 5:
            iam.create_role(RoleName="team-app-%03d" % index, AssumeRolePolicyDocument=trust)
        else:
            other = "other-%03d.example.com" % index
            tags = {"KubernetesCluster": other, "kubernetes.io/cluster/" + other: "owned",
                    "service-account.kops.k8s.io/name": "app"}
            iam.create_role(RoleName="app.kube-system.sa." + other, AssumeRolePolicyDocument=trust,
                            Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def test_a_no_op_update_cluster_playbook_does_not_grow_with_the_account(aws, tmp_path):
    """The no-op's requests depend on the cluster, not on the account: 250 more IAM roles of others (3 pages of
    ListRoles and 50 ListRoleTags when the account was listed) change nothing."""
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-noop")
    create(STORE)
    run, calls = _playbook_update(tmp_path, tmp_path / "calls.log")
    assert run["stats"]["localhost"]["changed"] == 0 and run["stats"]["localhost"]["failures"] == 0
    total = sum(calls.values())
    print("no-op update_cluster.yml on s3://: %d AWS calls: %s" % (total, sorted(calls.items())))
    assert total <= PLAYBOOK_NOOP_REQUESTS, calls
    assert not calls["iam ListRoles"] and not calls["iam ListOpenIDConnectProviders"], calls

    unrelated_roles(250)
    again_run, again = _playbook_update(tmp_path, tmp_path / "calls.log")
    assert again_run["stats"]["localhost"]["changed"] == 0
    print("the same with 250 more IAM roles in the account: %d AWS calls" % sum(again.values()))
    assert again == calls
