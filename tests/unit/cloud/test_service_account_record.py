"""The cluster's record of its service-account IAM objects (providers/aws/made_objects.py) and the orphans found
through it (tasks/aws/iam.py), on moto's server: what is read, listed and written before and after a run, and that
the record names candidates only (the tags decide).  Through the modules: tests/integration/
test_aws_irsa_lifecycle.py; the requests of a no-op: tests/integration/test_noop_requests.py."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import made_objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import iam
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import TAG_SERVICE_ACCOUNT_NAME

CLUSTER = "rec.example.com"
OWNED = {"KubernetesCluster": CLUSTER, "kubernetes.io/cluster/%s" % CLUSTER: "owned"}
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
ISSUER = "https://discovery.example.com/%s" % CLUSTER


def _sa_role(name):
    return "%s.kube-system.sa.%s" % (name, CLUSTER)


def _role_task(name, tags):
    return iam.IAMRole(name, name=name, assume_role_policy=TRUST, tags=tags)


def _provider_task(url=ISSUER):
    return iam.IAMOIDCProvider(CLUSTER, url=url, client_id_list=["amazonaws.com"], thumbprint_list=[], tags=OWNED)


def _names(roles=(), providers=()):
    return iam.ServiceAccountIAM(frozenset(roles), frozenset(providers))


@pytest.fixture
def store():
    return layout.ClusterStore(vfs.open_store("memfs://record-%s/state" % uuid.uuid4().hex), CLUSTER)


@pytest.fixture
def cloud(aws):
    return AwsCloud(CLUSTER, "us-east-1")


def _make_role(name, tags):
    boto3.client("iam", region_name="us-east-1").create_role(
        RoleName=name, AssumeRolePolicyDocument=TRUST, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def test_the_tasks_name_their_service_account_roles_and_providers_only():
    tasks = [_role_task(_sa_role("ebs"), dict(OWNED, **{TAG_SERVICE_ACCOUNT_NAME: "ebs"})),
             _role_task("nodes." + CLUSTER, OWNED), _provider_task()]
    assert iam.wanted_service_account_iam(tasks) == _names([_sa_role("ebs")], [ISSUER[len("https://"):]])


def test_without_a_record_the_account_is_listed_once_and_a_real_run_records_it(cloud, store):
    ours, theirs = _sa_role("gone"), "app.kube-system.sa.other.example.com"
    _make_role(ours, dict(OWNED, **{TAG_SERVICE_ACCOUNT_NAME: "gone"}))
    _make_role(theirs, {"KubernetesCluster": "other.example.com", TAG_SERVICE_ACCOUNT_NAME: "app"})
    wanted_task = _role_task(_sa_role("kept"), dict(OWNED, **{TAG_SERVICE_ACCOUNT_NAME: "kept"}))

    made_objects.recall(cloud, store, [wanted_task], dry_run=True)
    assert iam.recorded_service_account_iam(cloud) == _names([ours, _sa_role("kept")])
    assert store.read(made_objects.RECORD) is None  # check mode writes nothing

    real = AwsCloud(CLUSTER, "us-east-1")
    wanted = made_objects.recall(real, store, [wanted_task], dry_run=False)
    # Written before the run: what it found and what the tasks ask for (a run cut off after a create names it).
    assert json.loads(store.read(made_objects.RECORD)) == {"roles": sorted([ours, _sa_role("kept")]),
                                                           "oidcProviders": []}
    assert [d.name for d in iam.service_account_role_orphans(real, {_sa_role("kept")})] == [ours]
    made_objects.record(store, wanted, dry_run=False)
    assert json.loads(store.read(made_objects.RECORD)) == {"roles": [_sa_role("kept")], "oidcProviders": []}


def test_a_recorded_name_is_asked_for_by_name_and_deleted_only_when_its_tags_say_ours(cloud, store):
    ours, foreign, untagged, gone = (_sa_role("ours"), _sa_role("foreign"), _sa_role("untagged"), _sa_role("gone"))
    _make_role(ours, dict(OWNED, **{TAG_SERVICE_ACCOUNT_NAME: "ours"}))
    _make_role(foreign, {"KubernetesCluster": "other.example.com", TAG_SERVICE_ACCOUNT_NAME: "foreign"})
    _make_role(untagged, {})
    store.apply([(made_objects.RECORD, made_objects.encode(_names([ours, foreign, untagged, gone],
                                                                  ["old.example.com/issuer"])))])
    calls = []
    api = cloud.client("iam")
    api.meta.events.register("before-call.iam.*", lambda model, **_: calls.append(model.name))

    made_objects.recall(cloud, store, [], dry_run=True)
    roles = iam.service_account_role_orphans(cloud, set())
    assert [(d.kind, d.name) for d in roles] == [("aws_iam_role", ours)]
    assert iam.IAMOIDCProvider.orphans(cloud, []) == []  # recorded, but no provider of that ARN exists
    assert "ListRoles" not in calls and "ListOpenIDConnectProviders" not in calls
    assert calls.count("GetRole") == 4 and calls.count("GetOpenIDConnectProvider") == 1


def test_a_record_that_does_not_parse_is_rebuilt_from_the_account(cloud, store):
    ours = _sa_role("ours")
    _make_role(ours, dict(OWNED, **{TAG_SERVICE_ACCOUNT_NAME: "ours"}))
    store.apply([(made_objects.RECORD, b"{not json")])
    made_objects.recall(cloud, store, [], dry_run=False)
    assert iam.recorded_service_account_iam(cloud) == _names([ours])
    assert json.loads(store.read(made_objects.RECORD)) == {"roles": [ours], "oidcProviders": []}


def test_the_provider_is_found_by_its_arn_and_its_orphan_through_the_record(cloud, store):
    boto3.client("iam", region_name="us-east-1").create_open_id_connect_provider(
        Url=ISSUER, ClientIDList=["amazonaws.com"], ThumbprintList=[], Tags=[{"Key": k, "Value": v}
                                                                             for k, v in OWNED.items()])
    task = _provider_task()
    assert task.find(cloud) is not None
    assert task.outputs["arn"] == "arn:aws:iam::123456789012:oidc-provider/" + ISSUER[len("https://"):]
    made_objects.recall(cloud, store, [task], dry_run=True)  # no record: listed, found, and wanted
    assert iam.IAMOIDCProvider.orphans(cloud, [task]) == []
    later = AwsCloud(CLUSTER, "us-east-1")
    made_objects.recall(later, store, [_provider_task("https://discovery.example.com/moved")], dry_run=True)
    assert [d.id for d in iam.IAMOIDCProvider.orphans(later, [_provider_task("https://discovery.example.com/moved")])
            ] == [task.outputs["arn"]]


def test_orphans_without_the_record_recalled_fail_naming_the_step(cloud):
    with pytest.raises(TaskError, match="recall_made_objects"):
        iam.service_account_role_orphans(cloud, set())
