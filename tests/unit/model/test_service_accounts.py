"""Per-service-account IAM (IRSA) on our own specs: which roles, their names, trust and tags, the OIDC provider,
user-defined service-account roles, the discovery documents (JWKS of every trusted key) and the pod identity
webhook's mapping.  kops' fixtures are compared by test_iam_policies.py (policies) and, with KOPS_SOURCE, by the
Terraform measurement of docs/aws-model.md."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel, pod_identity_webhook
from ansible_collections.kubeops.kops.plugins.module_utils.addons import service_accounts as addon_roles
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import Facts
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.iam import IAMPolicyError
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, discovery, keystore

from tests.unit.model.test_iam_policies import _minimal

ACCOUNT = "123456789012"
IRSA = {"iam": {"useServiceAccountExternalPermissions": True},
        "serviceAccountIssuerDiscovery": {"discoveryStore": "s3://discovery-bucket/minimal-aws",
                                          "enableAWSOIDCProvider": True}}


def _tasks(spec, groups_changes=None, account=ACCOUNT):
    completed, groups = _minimal(dict(IRSA, **spec), groups_changes)
    return completed, groups, aws_model.build_tasks(completed, groups, [], account_id=account)


def _roles(tasks):
    return {t.fields["name"]: t for t in tasks.values() if t.kind == "aws_iam_role" and ".sa." in t.fields["name"]}


def test_addon_roles_follow_the_addons_kops_gives_one():
    completed, _groups, tasks = _tasks({"clusterAutoscaler": {"enabled": True},
                                        "awsLoadBalancerController": {"enabled": True},
                                        "certManager": {"enabled": True, "hostedZoneIDs": ["Z1"]}})
    name = completed["metadata"]["name"]
    assert sorted(r.split(".")[0] for r in _roles(tasks)) == [
        "aws-cloud-controller-manager", "aws-load-balancer-controller", "aws-node-termination-handler",
        "cert-manager", "cluster-autoscaler", "ebs-csi-controller-sa"]
    role = _roles(tasks)["cluster-autoscaler.kube-system.sa.%s" % name]
    assert role.export_with_id == "kube-system-cluster-autoscaler"
    assert role.fields["tags"]["service-account.kops.k8s.io/namespace"] == "kube-system"
    issuer = completed["spec"]["kubeAPIServer"]["serviceAccountIssuer"]
    provider = issuer[len("https://"):]
    assert json.loads(role.fields["assume_role_policy"]) == {"Statement": [{
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {provider + ":sub": "system:serviceaccount:kube-system:cluster-autoscaler"}},
        "Effect": "Allow", "Principal": {"Federated": "arn:aws:iam::%s:oidc-provider/%s" % (ACCOUNT, provider)}}],
        "Version": "2012-10-17"}
    policy = json.loads(tasks["aws_iam_role_policy/cluster-autoscaler.kube-system.sa.%s" % name].fields["policy"])
    assert any("autoscaling:SetDesiredCapacity" in json.dumps(s) for s in policy["Statement"])
    cert_manager = json.loads(tasks["aws_iam_role_policy/cert-manager.kube-system.sa.%s" % name].fields["policy"])
    assert cert_manager["Statement"][0]["Resource"] == ["arn:aws:route53:::hostedzone/Z1"]
    oidc = tasks["aws_iam_openid_connect_provider/%s" % name]
    assert oidc.fields["url"] == issuer and oidc.fields["client_id_list"] == ["amazonaws.com"]
    assert ("iam_openid_connect_provider_issuer", provider, False) in oidc.terraform_outputs()


def test_without_irsa_no_role_and_no_account_needed():
    completed, groups = _minimal({})
    tasks = aws_model.build_tasks(completed, groups, [])
    assert not _roles(tasks) and not any(t.kind == "aws_iam_openid_connect_provider" for t in tasks.values())
    assert addon_roles.wanted(completed["spec"]) == []


def test_roles_need_the_account_and_say_so():
    with pytest.raises(IAMPolicyError, match="useServiceAccountExternalPermissions.*AWS credentials"):
        _tasks({}, account=None)


def test_long_names_are_hashed_to_64_as_kops_does():
    # kops' nth-imds-processor-irsa fixture names these roles so.
    cluster = "nthimdsprocessor.longclustername.example.com"
    assert addon_roles.role_name(cluster, "kube-system", "aws-cloud-controller-manager") == \
        "aws-cloud-controller-manager.kube-system.sa.nthimdsproces-25s838"
    assert addon_roles.role_name(cluster, "kube-system", "aws-node-termination-handler") == \
        "aws-node-termination-handler.kube-system.sa.nthimdsproces-vt9566"


def test_user_roles_wildcard_namespace_inline_policy_and_arns():
    statement = {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["*"]}
    completed, _groups, tasks = _tasks({"iam": {"serviceAccountExternalPermissions": [
        {"name": "app", "namespace": "team-*", "aws": {"inlinePolicy": json.dumps([statement]),
                                                       "policyARNs": ["arn:aws:iam::123:policy/x"]}}]}})
    name = completed["metadata"]["name"]
    role = _roles(tasks)["app.team-wildcard.sa.%s" % name]
    trust = json.loads(role.fields["assume_role_policy"])["Statement"][0]
    assert list(trust["Condition"]) == ["StringLike"]  # a namespace pattern
    assert role.fields["tags"]["service-account.kops.k8s.io/namespace"] == "team-wildcard"
    assert json.loads(tasks["aws_iam_role_policy/app.team-wildcard.sa.%s" % name].fields["policy"])["Statement"] == [
        statement]
    attachments = [t for t in tasks.values() if t.kind == "aws_iam_role_policy_attachment"]
    assert [a.fields["policy_arn"] for a in attachments] == ["arn:aws:iam::123:policy/x"]
    assert attachments[0].name.startswith("external-app.team-wildcard.sa.")
    with pytest.raises(IAMPolicyError, match=r"serviceAccountExternalPermissions\[0\].aws.inlinePolicy"):
        _tasks({"iam": {"serviceAccountExternalPermissions": [{"name": "a", "namespace": "b",
                                                               "aws": {"inlinePolicy": "{"}}]}})


def _service_account_keyset(keys=2, distrusted=0):
    keyset = keystore.new_keyset("service-account")
    for _key in range(keys - 1):
        keyset = keystore.add_keypair(keyset)
    for item in keyset["spec"]["keys"][:distrusted]:
        item["distrustTimestamp"] = "2026-01-01T00:00:00Z"
    return keyset


def test_jwks_publishes_every_trusted_key_with_kops_key_id():
    from cryptography.hazmat.primitives import serialization
    keyset = _service_account_keyset(keys=3, distrusted=1)
    document = discovery.jwks_document(keyset)
    assert document.startswith(b'{\n"keys": [\n{\n"use": "sig",\n"kty": "RSA",\n"kid": ')  # Go's MarshalIndent(v, "", "")
    keys = json.loads(document)["keys"]
    trusted = [i for i in keyset["spec"]["keys"] if not i.get("distrustTimestamp")]
    expected = []
    for item in trusted:
        public = certs.load_certificate(base64.b64decode(item["publicMaterial"])).public_key()
        der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        expected.append(base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("="))
    assert [k["kid"] for k in keys] == sorted(expected) and len(keys) == 2


def test_discovery_documents_as_terraform_objects_in_the_discovery_bucket():
    completed, groups, tasks = _tasks({})
    documents = discovery.documents(completed, _service_account_keyset(keys=1))
    covered = service_accounts.build_discovery_objects(completed, documents, tasks, public_read=True)
    assert covered == ["keys.json", "discovery.json"]
    body = tasks["aws_s3_object/discovery.json"].render_terraform()
    assert (body["bucket"], body["key"], body["acl"]) == (
        "discovery-bucket", "minimal-aws/.well-known/openid-configuration", "public-read")
    config = json.loads(tasks["aws_s3_object/discovery.json"].fields["content"])
    assert config["issuer"] == completed["spec"]["kubeAPIServer"]["serviceAccountIssuer"]
    text = terraform.render(list(tasks.values()), ([], {}), variables={})
    assert 'resource "aws_iam_openid_connect_provider"' in text and 'resource "aws_s3_object" "keys-json"' in text


def test_pod_identity_webhook_maps_the_users_service_accounts():
    completed, groups = _minimal({"podIdentityWebhook": {"enabled": True}, "certManager": {"enabled": True},
                                  "iam": {"serviceAccountExternalPermissions": [
                                      {"name": "app", "namespace": "default", "aws": {"policyARNs": ["arn:x"]}}]}})
    assert channel.needs_account_id(completed)
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    documents = [d for d in yaml.safe_load_all(files["addons/%s/k8s-1.16.yaml" % pod_identity_webhook.ADDON]) if d]
    config = next(d for d in documents if d["kind"] == "ConfigMap")["data"]["config"]
    name = completed["metadata"]["name"]
    assert json.loads(config) == {"default/app": {
        "RoleARN": "arn:aws:iam::%s:role/app.default.sa.%s" % (ACCOUNT, name), "Audience": "amazonaws.com",
        "UseRegionalSTS": True, "TokenExpiration": 0}}
    entry = next(e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
                 if e["name"] == pod_identity_webhook.ADDON)
    assert entry["needsPKI"] is True and entry["id"] == "k8s-1.16"
    assert pod_identity_webhook.ADDON not in channel.not_rendered(Facts(completed, groups))


@pytest.mark.parametrize("spec, field", [
    ({"karpenter": {"enabled": True}}, "spec.karpenter.enabled"),
    ({"certManager": {"enabled": True, "hostedZoneIDs": ["Z1"]}}, "spec.certManager"),
    ({"podIdentityWebhook": {"enabled": True}}, "spec.podIdentityWebhook.enabled"),
])
def test_kops_rules_for_what_needs_service_account_permissions(spec, field):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import validation
    completed, _groups = _minimal(spec)
    problems = [str(p) for p in validation.validate_cluster(completed)]
    assert any(p.startswith(field + ":") or field in p for p in problems), problems
    completed, _groups = _minimal(dict(spec, iam={"useServiceAccountExternalPermissions": True},
                                       certManager=dict(spec.get("certManager") or {}, enabled=True)))
    assert not [p for p in map(str, validation.validate_cluster(completed)) if field in p]


def test_cloudformation_renders_the_provider_and_roles():
    from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation
    completed, _groups, tasks = _tasks({})
    template = json.loads(cloudformation.render(list(tasks.values()), description="irsa"))
    kinds = {}
    for resource in template["Resources"].values():
        kinds.setdefault(resource["Type"], []).append(resource["Properties"])
    provider = kinds["AWS::IAM::OIDCProvider"][0]
    assert provider["Url"] == completed["spec"]["kubeAPIServer"]["serviceAccountIssuer"]
    assert provider["ClientIdList"] == ["amazonaws.com"] and len(provider["ThumbprintList"]) == 2
    trusts = [r["AssumeRolePolicyDocument"] for r in kinds["AWS::IAM::Role"] if ".sa." in r["RoleName"]]
    assert len(trusts) == 3 and all(t["Statement"][0]["Action"] == "sts:AssumeRoleWithWebIdentity" for t in trusts)
