"""Per-service-account IAM (IRSA) in Terraform, against kops' own rendering of its 7 fixtures that have it
(opt-in: KOPS_SOURCE=<kops checkout>; CI has none of them).

Each fixture's spec is completed offline (kops' test cloud facts), its tasks built with kops' test account and a
fresh service-account keyset, rendered to kubernetes.tf, and the IRSA resources compared with kops' kubernetes.tf:
the OIDC provider, every ``*.sa.*`` role, inline policy and managed-policy attachment, ``discovery.json`` and
``keys.json``; bodies compared with file() contents read and JSON parsed, kops' test partition ``aws-test`` read
as ``aws``.  Accepted: dns-controller's role and policy are not made (this collection runs no dns-controller,
docs/aws-model.md); ``keys.json`` holds other keys (kops' tests sign with their own), so only its shape is compared.
"""

from __future__ import annotations

import re

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery, keystore
from tests.conformance import kops_fixtures

ACCOUNT = "123456789012"  # kops' integration tests' AWS account
FIXTURES = ["aws-lb-controller", "external_dns_irsa", "irsa", "karpenter", "many-addons-ccm-irsa",
            "nth-imds-processor-irsa", "public-jwks-apiserver"]
IRSA = re.compile(r"^aws_iam_openid_connect_provider\.|^aws_iam_role(_policy|_policy_attachment)?\..*-sa-|"
                  r"^aws_s3_object\.(discovery-json|keys-json)$")
NOT_MADE = re.compile(r"\.dns-controller-kube-system-sa-")
TEST_PARTITION = ((re.compile(r"arn:aws-test:"), "arn:aws:"),)  # kops' tests name their partition aws-test
SOURCE = kops_fixtures.source_update_cluster()
pytestmark = pytest.mark.skipif(SOURCE is None, reason=kops_fixtures.SKIP_WITHOUT_SOURCE)


def _ours(directory):
    cluster, groups = objects.split_objects(kops_fixtures.fixture_objects(directory))
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()], account_id=ACCOUNT)
    documents = discovery.documents(completed, keystore.new_keyset(discovery.SIGNING_KEYSET))
    service_accounts.build_discovery_objects(completed, documents, tasks)
    tasks = list(tasks.values())
    files = {path: data.decode("utf-8") if isinstance(data, bytes) else data for path, data in terraform.data_files(tasks)}
    text = terraform.render(tasks, ([], {}), variables={})
    return kops_fixtures.terraform_resources(text, files.get, TEST_PARTITION, IRSA.search)


def _jwks_shape(document):
    return sorted({(k["use"], k["kty"], k["alg"], k["e"], len(k["kid"])) for k in document["keys"]})


@pytest.mark.parametrize("fixture", FIXTURES)
def test_irsa_resources_equal_kops(fixture):
    directory = SOURCE / fixture
    theirs = kops_fixtures.fixture_resources(directory, TEST_PARTITION, IRSA.search)
    ours = _ours(directory)
    missing = sorted(k for k in set(theirs) - set(ours) if not NOT_MADE.search(k))
    assert missing == [] and sorted(set(ours) - set(theirs)) == []
    assert any(k.startswith("aws_iam_openid_connect_provider.") for k in ours) and "aws_s3_object.keys-json" in ours
    for key in sorted(set(ours) & set(theirs)):
        if key == "aws_s3_object.keys-json":
            assert _jwks_shape(ours[key]["content"]) == _jwks_shape(theirs[key]["content"])[:1]
            assert dict(ours[key], content=None) == dict(theirs[key], content=None)
            continue
        assert ours[key] == theirs[key], key
