"""Per-service-account IAM (IRSA) applied directly on moto: the OIDC provider, the service-account roles with their
trust and inline policies, the discovery documents in the discovery store, the addons wired to their roles, a
second run that changes nothing, and a service-account key rotation publishing both keys."""

from __future__ import annotations

import json

import boto3
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery, keystore

from tests.integration.test_aws_deletions import _replace_spec
from tests.integration.test_aws_update import _mutating, _service, _update

CLUSTER = "k8s.example.com"
BUCKET = "irsa-discovery"
ACCOUNT = "123456789012"  # moto's account
ROLES = ["aws-cloud-controller-manager", "aws-node-termination-handler", "ebs-csi-controller-sa"]


def _irsa(spec):
    spec.setdefault("iam", {})["useServiceAccountExternalPermissions"] = True
    spec["serviceAccountIssuerDiscovery"] = {"discoveryStore": "s3://%s/%s" % (BUCKET, CLUSTER),
                                             "enableAWSOIDCProvider": True}


def _object(s3, key):
    return s3.get_object(Bucket=BUCKET, Key="%s/%s" % (CLUSTER, key))["Body"].read()


def test_irsa_cluster_on_moto(aws, tmp_path):
    s3 = boto3.client("s3", region_name="us-east-1")
    iam = boto3.client("iam", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    service = _service("file://%s" % tmp_path)
    _replace_spec(service, _irsa)
    _update(service)

    completed = service.cluster_store(CLUSTER).read_completed_spec()
    issuer = completed["spec"]["kubeAPIServer"]["serviceAccountIssuer"]
    assert issuer.startswith("https://%s.s3." % BUCKET) and issuer.endswith("/" + CLUSTER)
    provider_id = issuer[len("https://"):]

    providers = [p["Arn"] for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]]
    assert providers == ["arn:aws:iam::%s:oidc-provider/%s" % (ACCOUNT, provider_id)]
    provider = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=providers[0])
    assert provider["ClientIDList"] == ["amazonaws.com"] and len(provider["ThumbprintList"]) == 2
    assert {t["Key"]: t["Value"] for t in provider["Tags"]}["kubernetes.io/cluster/%s" % CLUSTER] == "owned"

    for name in ROLES:
        role_name = "%s.kube-system.sa.%s" % (name, CLUSTER)
        role = iam.get_role(RoleName=role_name)["Role"]
        statement = role["AssumeRolePolicyDocument"]["Statement"][0]
        assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert statement["Principal"] == {"Federated": providers[0]}
        assert statement["Condition"] == {"StringEquals": {provider_id + ":sub": "system:serviceaccount:kube-system:"
                                                           + name}}
        tags = {t["Key"]: t["Value"] for t in role["Tags"]}
        assert tags["service-account.kops.k8s.io/name"] == name
        assert iam.get_role_policy(RoleName=role_name, PolicyName=role_name)["PolicyDocument"]["Statement"]
    # The addon grants left the control plane's role; its own (etcd volumes, the API records) stayed.
    masters = json.dumps(iam.get_role_policy(RoleName="masters." + CLUSTER, PolicyName="masters." + CLUSTER)[
        "PolicyDocument"])
    assert "elasticloadbalancing:CreateLoadBalancer" not in masters and "ec2:AttachVolume" in masters

    config = json.loads(_object(s3, discovery.DISCOVERY_PATH))
    assert config["issuer"] == issuer and config["jwks_uri"] == issuer + "/openid/v1/jwks"
    keys = json.loads(_object(s3, discovery.JWKS_PATH))["keys"]
    assert len(keys) == 1 and keys[0]["alg"] == "RS256" and keys[0]["e"] == "AQAB"
    # The bucket is not public: each document is readable by anyone through its ACL (kops' PublicACL).
    grants = s3.get_object_acl(Bucket=BUCKET, Key="%s/%s" % (CLUSTER, discovery.JWKS_PATH))["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("/global/AllUsers") and g["Permission"] == "READ" for g in grants)

    store = service.cluster_store(CLUSTER)
    manifest = store.read("addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml")
    pod = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["AWS_ROLE_ARN"] == "arn:aws:iam::%s:role/aws-cloud-controller-manager.kube-system.sa.%s" % (
        ACCOUNT, CLUSTER)

    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}

    # A service-account key rotation: the new key is trusted beside the old one, and both are published.
    keyset = keystore.load(store, discovery.SIGNING_KEYSET)
    store.apply([(keystore.path(discovery.SIGNING_KEYSET), keystore.dump(keystore.add_keypair(keyset)))])
    _update(service)
    assert len(json.loads(_object(s3, discovery.JWKS_PATH))["keys"]) == 2
