"""IRSA's lifecycle on moto through the modules a user runs (kubeops.kops.cluster, cluster_update target direct,
keypair):

- turned off, the service-account roles, their policies and the IAM OIDC provider go on the next update: the
  check-mode run lists each deletion and makes no mutating call, the real run deletes them, the one after changes
  nothing; look-alike roles (another cluster's, an untagged one, one without kops' service-account tag) stay, even
  when the cluster's record names them;
- what may have become an orphan is looked for through the cluster's record in the store (providers/aws/
  made_objects.py), never by listing the account, except once for a cluster that has no record yet;
- an addon removed from the spec takes its role with it, the others stay;
- the service-account signing key rotated: after rotate both keys are published, after promote the control plane
  signs with the new key (its key files, as node_certificates writes them) and both are still published, after
  distrust only the new one is.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json

import boto3
import pathlib

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import service_accounts as addon_roles
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import made_objects
from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_update as cluster_update_module
from ansible_collections.kubeops.kops.plugins.modules import keypair as keypair_module
from ansible_collections.kubeops.kops.plugins.modules import node_certificates as node_certificates_module

from tests.integration.test_aws_update import ADMIN_KEY, MOTO_AMI, READ_ONLY
from tests.integration.test_noop_requests import unrelated_roles
from tests.unit.modules.conftest import run_module  # noqa: F401 pylint: disable=unused-import

CLUSTER = "irsa.example.com"
BUCKET = "irsa-lifecycle-discovery"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "image": MOTO_AMI}
SA_ROLES = ["aws-cloud-controller-manager", "aws-node-termination-handler", "cluster-autoscaler",
            "ebs-csi-controller-sa"]
OWNED = {"KubernetesCluster": CLUSTER, "kubernetes.io/cluster/%s" % CLUSTER: "owned"}
SA_TAG = "service-account.kops.k8s.io/name"
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
# Roles that look like ours and are not: they must outlive every run.
FOREIGN_ROLES = {
    # another cluster's service-account role, whose name starts like ours
    "ebs-csi-controller-sa.kube-system.sa.%s.au" % CLUSTER: {
        "KubernetesCluster": CLUSTER + ".au", "kubernetes.io/cluster/%s.au" % CLUSTER: "owned", SA_TAG: "x"},
    # our name pattern, no tags at all
    "old-addon.kube-system.sa.%s" % CLUSTER: {},
    # our ownership tags but not kops' service-account tag (made by hand, say)
    "by-hand.kube-system.sa.%s" % CLUSTER: dict(OWNED),
}


# A user's service account (spec.iam.serviceAccountExternalPermissions) whose role name is hashed down to 64
# characters, cutting off its ".sa.<cluster>": found by its tags all the same; its managed policy is detached.
USER_SA = ("a-long-service-account-name-for-the-reports", "reporting-namespace")
USER_POLICY = "arn:aws:iam::123456789012:policy/reports-read"


def _role(name, namespace="kube-system"):
    return addon_roles.role_name(CLUSTER, namespace, name)


@pytest.fixture
def calls(monkeypatch):
    """Every AWS operation the code under test sends, by name (clients made through cloud/aws.client)."""
    sent = collections.Counter()
    real_client = aws.client

    def counting_client(service, *args, **kwargs):
        api = real_client(service, *args, **kwargs)
        api.meta.events.register("before-call.*.*", lambda model, **_: sent.update([model.name]))
        return api

    monkeypatch.setattr(aws, "client", counting_client)
    return sent


def _mutating(calls):
    return {op: n for op, n in calls.items() if not op.startswith(READ_ONLY)}


def _definition(cluster, groups, **spec):
    cluster = json.loads(json.dumps(cluster))
    for key, value in spec.items():
        if value is None:
            cluster["spec"].pop(key, None)
        else:
            cluster["spec"][key] = value
    return "\n---\n".join(yaml.safe_dump(d) for d in [cluster] + groups)


def _irsa_spec(cluster):
    iam = dict(cluster["spec"].get("iam") or {}, useServiceAccountExternalPermissions=True,
               serviceAccountExternalPermissions=[{"name": USER_SA[0], "namespace": USER_SA[1], "aws": {
                   "policyARNs": [USER_POLICY]}}])
    return {"iam": iam, "serviceAccountIssuerDiscovery": {"discoveryStore": "s3://%s/%s" % (BUCKET, CLUSTER),
                                                          "enableAWSOIDCProvider": True},
            "clusterAutoscaler": {"enabled": True}}


def _replace(run_module, store, created, **spec):  # noqa: F811
    result = run_module(cluster_module, state_store=store, definition=_definition(
        created["cluster"], created["instance_groups"], **spec))
    assert "failed" not in result, result.get("msg")
    return result


def _update(run_module, store, calls, check_mode=False):  # noqa: F811
    calls.clear()
    result = run_module(cluster_update_module, check_mode=check_mode, state_store=store, cluster_name=CLUSTER,
                        ssh_public_key=ADMIN_KEY)
    assert "failed" not in result, result.get("msg")
    return result, dict(calls)


def _lists_the_account(calls):
    return bool(calls.get("ListRoles") or calls.get("ListOpenIDConnectProviders"))


def _record_path(store):
    return pathlib.Path(store[len("file://"):]) / CLUSTER / made_objects.RECORD


def _record(store):
    return json.loads(_record_path(store).read_text())


def _deletions(result):
    return sorted((e["kind"], e["name"]) for e in result["plan"] if e["action"] == "delete")


def _sa_roles(iam):
    """{role name: tags} of every role carrying kops' service-account tag, listed with plain boto3."""
    found = {}
    for role in iam.list_roles()["Roles"]:
        tags = {t["Key"]: t["Value"] for t in iam.list_role_tags(RoleName=role["RoleName"])["Tags"]}
        if SA_TAG in tags or ".sa." in role["RoleName"]:
            found[role["RoleName"]] = tags
    return found


def _providers(iam):
    return [p["Arn"] for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]]


def _jwks(s3):
    return json.loads(s3.get_object(Bucket=BUCKET, Key="%s/%s" % (CLUSTER, discovery.JWKS_PATH))["Body"].read())


@pytest.fixture
def irsa_cluster(aws, run_module, calls, tmp_path):  # noqa: F811
    """A cluster created with the cluster module and IRSA on, applied with cluster_update; the foreign roles made."""
    s3 = boto3.client("s3", region_name="us-east-1")
    iam = boto3.client("iam", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    iam.create_policy(PolicyName=USER_POLICY.rsplit("/", 1)[1], PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}))
    for name, tags in FOREIGN_ROLES.items():
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=TRUST, Tags=[{"Key": k, "Value": v}
                                                                             for k, v in tags.items()])
        iam.put_role_policy(RoleName=name, PolicyName=name, PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}))
    store = "file://%s" % (tmp_path / "state")
    created = run_module(cluster_module, state_store=store, options=OPTIONS)
    assert "failed" not in created, created.get("msg")
    _replace(run_module, store, created, **_irsa_spec(created["cluster"]))
    applied, applied_calls = _update(run_module, store, calls)
    assert applied["changed"] is True
    # Its first update finds no record (nothing was recorded before it): the account is listed once, and what the
    # tasks ask for is recorded.
    assert _lists_the_account(applied_calls)
    user_role = _role(*USER_SA)
    assert _record(store) == {"roles": sorted([_role(n) for n in SA_ROLES] + [user_role]),
                              "oidcProviders": [_providers(iam)[0].split(":oidc-provider/", 1)[1]]}
    assert len(user_role) == 64 and ".sa." not in user_role
    assert set(_sa_roles(iam)) == {_role(n) for n in SA_ROLES} | {user_role} | set(FOREIGN_ROLES)
    assert [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=user_role)["AttachedPolicies"]] == [
        USER_POLICY]
    assert len(_providers(iam)) == 1
    return store, created, s3, iam


def test_irsa_turned_off_deletes_its_roles_and_provider(irsa_cluster, run_module, calls):  # noqa: F811
    store, created, _s3, iam = irsa_cluster
    provider = _providers(iam)[0]
    foreign_before = {name: iam.get_role(RoleName=name)["Role"]["Arn"] for name in FOREIGN_ROLES}

    # A record that names roles which are not this cluster's (edited by hand, say): the tags decide, never the record.
    record = _record(store)
    _record_path(store).write_text(json.dumps(dict(record, roles=sorted(record["roles"] + list(FOREIGN_ROLES)))))
    _replace(run_module, store, created)  # the spec as it was created: no IRSA, no discovery, no autoscaler
    check, check_calls = _update(run_module, store, calls, check_mode=True)
    assert _mutating(check_calls) == {} and not _lists_the_account(check_calls)
    roles = [_role(n) for n in SA_ROLES] + [_role(*USER_SA)]
    expected = sorted([("aws_iam_role", r) for r in roles]
                      + [("aws_iam_role_policy", "%s:%s" % (r, r)) for r in roles[:-1]]
                      + [("aws_iam_role_policy_attachment", "%s:%s" % (_role(*USER_SA), USER_POLICY)),
                         ("aws_iam_openid_connect_provider", provider.split(":oidc-provider/", 1)[1])])
    assert _deletions(check) == expected
    assert check["changed"] is True and check["summary"]["delete"] == len(expected)
    # The plan as printed lists what goes away first.
    assert sorted(check["lines"][:len(expected)]) == sorted(
        "- %s %s (%s)" % (kind, name, next(e["id"] for e in check["plan"] if (e["kind"], e["name"]) == (kind, name)))
        for kind, name in expected)
    # Nothing was deleted by the check.
    assert {_role(n) for n in SA_ROLES} <= set(_sa_roles(iam)) and _providers(iam) == [provider]

    applied, applied_calls = _update(run_module, store, calls)
    assert _deletions(applied) == expected and not _lists_the_account(applied_calls)
    assert applied_calls.get("DeleteRole") == len(roles) and applied_calls.get("DeleteOpenIDConnectProvider") == 1
    assert _record(store) == {"roles": [], "oidcProviders": []}
    assert applied_calls.get("DetachRolePolicy") == 1
    assert set(_sa_roles(iam)) == set(FOREIGN_ROLES)
    assert _providers(iam) == []
    # The look-alikes are untouched, their inline policies too.
    for name, arn in foreign_before.items():
        assert iam.get_role(RoleName=name)["Role"]["Arn"] == arn
        assert iam.list_role_policies(RoleName=name)["PolicyNames"] == [name]
    # The control plane's role got its addon grants back (the cloud controller runs with the instance role).
    masters = json.dumps(iam.get_role_policy(RoleName="masters." + CLUSTER, PolicyName="masters." + CLUSTER)[
        "PolicyDocument"])
    assert "elasticloadbalancing:CreateLoadBalancer" in masters

    again, again_calls = _update(run_module, store, calls)
    assert again["changed"] is False and _deletions(again) == [] and _mutating(again_calls) == {}
    # The control plane's and the nodes' roles are asked for; no recorded name is left to ask.
    assert not _lists_the_account(again_calls) and again_calls.get("GetRole") == 2


def test_a_cluster_without_a_record_is_listed_once_then_recorded(irsa_cluster, run_module, calls):  # noqa: F811
    """A cluster last applied by kops or an earlier kubeops.kops has no record: its first update lists the account,
    as before the record, and finds the same orphans; the record it writes spares every later run the listing."""
    store, created, _s3, iam = irsa_cluster
    _record_path(store).unlink()
    spec = _irsa_spec(created["cluster"])
    spec["clusterAutoscaler"] = None
    _replace(run_module, store, created, **spec)
    removed = _role("cluster-autoscaler")
    check, check_calls = _update(run_module, store, calls, check_mode=True)
    assert _lists_the_account(check_calls) and _mutating(check_calls) == {}
    assert _deletions(check) == [("aws_iam_role", removed), ("aws_iam_role_policy", "%s:%s" % (removed, removed))]
    assert not _record_path(store).exists()  # check mode writes nothing
    applied, applied_calls = _update(run_module, store, calls)
    assert _lists_the_account(applied_calls) and _deletions(applied) == _deletions(check)
    assert removed not in _sa_roles(iam)
    assert set(_record(store)["roles"]) == {_role(n) for n in SA_ROLES if n != "cluster-autoscaler"} | {_role(*USER_SA)}
    again, again_calls = _update(run_module, store, calls)
    assert again["changed"] is False and not _lists_the_account(again_calls) and _mutating(again_calls) == {}


def test_a_no_op_of_an_irsa_cluster_does_not_grow_with_the_account(irsa_cluster, run_module, calls):  # noqa: F811
    """With its roles and provider recorded, a no-op asks IAM for the cluster's own objects only: 250 more roles of
    others in the account change no request (70 and 122 on s3:// while the account was listed; 68 with the record)."""
    store, _created, _s3, _iam = irsa_cluster
    noop, noop_calls = _update(run_module, store, calls)
    assert noop["changed"] is False and not _lists_the_account(noop_calls)
    unrelated_roles(250)
    again, again_calls = _update(run_module, store, calls)
    assert again["changed"] is False and again_calls == noop_calls


def test_an_addon_removed_takes_its_role(irsa_cluster, run_module, calls):  # noqa: F811
    store, created, _s3, iam = irsa_cluster
    spec = _irsa_spec(created["cluster"])
    spec["clusterAutoscaler"] = None
    _replace(run_module, store, created, **spec)
    check, check_calls = _update(run_module, store, calls, check_mode=True)
    assert _mutating(check_calls) == {}
    removed = _role("cluster-autoscaler")
    assert _deletions(check) == [("aws_iam_role", removed), ("aws_iam_role_policy", "%s:%s" % (removed, removed))]
    applied, applied_calls = _update(run_module, store, calls)
    assert _deletions(applied) == _deletions(check) and not _lists_the_account(applied_calls)
    assert set(_sa_roles(iam)) == ({_role(n) for n in SA_ROLES if n != "cluster-autoscaler"} | {_role(*USER_SA)}
                                   | set(FOREIGN_ROLES))
    assert len(_providers(iam)) == 1
    assert removed not in _record(store)["roles"]
    again, again_calls = _update(run_module, store, calls)
    assert again["changed"] is False and _mutating(again_calls) == {} and not _lists_the_account(again_calls)


def _kid(public_key):
    from cryptography.hazmat.primitives import serialization
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode("ascii").rstrip("=")


def _b64url_int(text):
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def _signed_token(key_pem, kid):
    """A service-account token as kube-apiserver signs it (RS256, its key id in the header)."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding
    key = serialization.load_pem_private_key(key_pem, password=None)

    def encode(data):
        return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")
    header = encode(json.dumps({"alg": "RS256", "kid": kid}).encode())
    claims = encode(json.dumps({"iss": "issuer", "sub": "system:serviceaccount:kube-system:test"}).encode())
    signature = key.sign(("%s.%s" % (header, claims)).encode(), padding.PKCS1v15(), hashes.SHA256())
    return "%s.%s.%s" % (header, claims, encode(signature))


def _verifies(token, jwks):
    """Whether a published key verifies the token: the key its header names, as an OIDC relying party does."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    header, claims, signature = token.split(".")
    kid = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]
    key = next((k for k in jwks["keys"] if k["kid"] == kid), None)
    if key is None:
        return False
    public = rsa.RSAPublicNumbers(_b64url_int(key["e"]), _b64url_int(key["n"])).public_key()
    try:
        public.verify(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)),
                      ("%s.%s" % (header, claims)).encode(), padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _control_plane_key_files(run_module, store, root):  # noqa: F811
    """The control plane's service-account key files as its nodeup writes them: service-account.key (the signing
    key, node_certificates) and service-account.pub (the keys kube-apiserver accepts, the nodeup config)."""
    from cryptography.hazmat.primitives import serialization
    from tests.unit.modules.conftest import store_files
    files = store_files(store)
    config_path = next(p for p in files if p.startswith(CLUSTER + "/igconfig/control-plane/")
                       and p.endswith("nodeupconfig.yaml"))
    config = yaml.safe_load(files[config_path])
    result = run_module(node_certificates_module, config_base="%s/%s" % (store, CLUSTER), nodeup_config=config,
                        node_name="control-plane-1", root=str(root))
    assert "failed" not in result, result.get("msg")
    key_pem = (root / "srv/kubernetes/kube-apiserver/service-account.key").read_bytes()
    signing_kid = _kid(serialization.load_pem_private_key(key_pem, password=None).public_key())
    public_keys = config["APIServerConfig"]["ServiceAccountPublicKeys"].encode()
    accepted = sorted(_kid(serialization.load_pem_public_key(b"-----BEGIN" + block))
                      for block in public_keys.split(b"-----BEGIN")[1:])
    return key_pem, signing_kid, accepted


def _keypair(run_module, store, action):  # noqa: F811
    result = run_module(keypair_module, state_store=store, cluster_name=CLUSTER, keysets=["service-account"],
                        action=action)
    assert "failed" not in result and result["changed"] is True, result
    return result


def test_service_account_key_rotation_publishes_both_keys(irsa_cluster, run_module, calls, tmp_path):  # noqa: F811
    store, _created, s3, _iam = irsa_cluster
    old_key, old_kid, accepted = _control_plane_key_files(run_module, store, tmp_path / "before")
    assert [k["kid"] for k in _jwks(s3)["keys"]] == [old_kid] and accepted == [old_kid]
    old_token = _signed_token(old_key, old_kid)

    _keypair(run_module, store, "rotate")
    check, check_calls = _update(run_module, store, calls, check_mode=True)
    assert check["changed"] is True and _mutating(check_calls) == {}
    assert [k["kid"] for k in _jwks(s3)["keys"]] == [old_kid]  # the check published nothing
    _update(run_module, store, calls)
    kids = [k["kid"] for k in _jwks(s3)["keys"]]
    assert len(kids) == 2 and old_kid in kids
    new_kid = next(k for k in kids if k != old_kid)
    # Rotated, not promoted: the control plane still signs with the old key and accepts both.
    signing_key, signing_kid, accepted = _control_plane_key_files(run_module, store, tmp_path / "rotated")
    assert signing_kid == old_kid and accepted == sorted(kids)

    _keypair(run_module, store, "promote")
    _update(run_module, store, calls)
    signing_key, signing_kid, accepted = _control_plane_key_files(run_module, store, tmp_path / "promoted")
    assert signing_kid == new_kid and accepted == sorted(kids)
    jwks = _jwks(s3)
    assert sorted(k["kid"] for k in jwks["keys"]) == sorted(kids)
    new_token = _signed_token(signing_key, signing_kid)
    # Tokens signed before the promotion still verify, and so do the new ones.
    assert _verifies(new_token, jwks) and _verifies(old_token, jwks)

    _keypair(run_module, store, "distrust")
    _update(run_module, store, calls)
    jwks = _jwks(s3)
    assert [k["kid"] for k in jwks["keys"]] == [new_kid]
    assert _verifies(new_token, jwks) and not _verifies(old_token, jwks)
    _signing_key, signing_kid, accepted = _control_plane_key_files(run_module, store, tmp_path / "distrusted")
    assert signing_kid == new_kid and accepted == [new_kid]
    again, again_calls = _update(run_module, store, calls)
    assert again["changed"] is False and _mutating(again_calls) == {}


def test_cluster_delete_removes_the_discovery_documents(irsa_cluster, run_module):  # noqa: F811
    """kops' DeleteCluster removes the two discovery documents from the discovery store; the roles and the provider
    go with the cluster's other IAM objects (kops' delete takes every role with the cluster's ownership tags, the
    hand-made one too), the other cluster's and the untagged look-alike stay."""
    from ansible_collections.kubeops.kops.plugins.modules import cluster_delete as cluster_delete_module
    store, _created, s3, iam = irsa_cluster
    prefix = CLUSTER + "/"
    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents") or [])
    assert listed == [prefix + discovery.DISCOVERY_PATH, prefix + discovery.JWKS_PATH]
    check = run_module(cluster_delete_module, check_mode=True, state_store=store, cluster_name=CLUSTER, yes=True)
    assert "failed" not in check, check.get("msg")
    assert len(s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents") or []) == 2
    deleted = run_module(cluster_delete_module, state_store=store, cluster_name=CLUSTER, region="us-east-1", yes=True)
    assert "failed" not in deleted, deleted.get("msg")
    assert deleted["store_deleted"] is True
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents") is None
    assert sum("discovery document" in line for line in deleted["log"]) == 2
    assert set(_sa_roles(iam)) == set(FOREIGN_ROLES) - {"by-hand.kube-system.sa.%s" % CLUSTER}
    assert _providers(iam) == []
