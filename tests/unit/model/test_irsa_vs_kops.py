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

import json
import os
import pathlib
import re

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.pki import discovery, keystore

ACCOUNT = "123456789012"  # kops' integration tests' AWS account
FIXTURES = ["aws-lb-controller", "external_dns_irsa", "irsa", "karpenter", "many-addons-ccm-irsa",
            "nth-imds-processor-irsa", "public-jwks-apiserver"]
IRSA = re.compile(r"^aws_iam_openid_connect_provider\.|^aws_iam_role(_policy|_policy_attachment)?\..*-sa-|"
                  r"^aws_s3_object\.(discovery-json|keys-json)$")
NOT_MADE = re.compile(r"\.dns-controller-kube-system-sa-")
FILE = re.compile(r'^\$\{file\("\$\{path\.module\}/([^"]+)"\)\}$')
SOURCE = os.environ.get("KOPS_SOURCE")
pytestmark = pytest.mark.skipif(not SOURCE, reason="KOPS_SOURCE is not set: point it at a kops checkout to compare "
                                                   "kops' IRSA fixtures")


def _unquoted(value):
    if isinstance(value, dict):
        return {k.strip('"'): _unquoted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unquoted(v) for v in value]
    return value.strip('"') if isinstance(value, str) else value


def _value(value, read):
    if isinstance(value, dict):
        return {k: _value(v, read) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v, read) for v in value]
    if not isinstance(value, str):
        return value
    match = FILE.match(value)
    if match:
        value = read(match.group(1))
    elif "\\" in value:  # a document written inline: HCL escapes
        value = value.encode("utf-8").decode("unicode_escape")
    value = value.replace("arn:aws-test:", "arn:aws:")
    if value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def _resources(text, read):
    found = {}
    for resource in hcl2.loads(text).get("resource", []):
        for kind, named in resource.items():
            for name, body in named.items():
                key = "%s.%s" % (kind.strip('"'), name.strip('"'))
                if IRSA.search(key):
                    found[key] = _value(_unquoted(body), read)
    return found


def _ours(directory):
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()], account_id=ACCOUNT)
    documents = discovery.documents(completed, keystore.new_keyset(discovery.SIGNING_KEYSET))
    service_accounts.build_discovery_objects(completed, documents, tasks)
    tasks = list(tasks.values())
    files = {path: data.decode("utf-8") if isinstance(data, bytes) else data for path, data in terraform.data_files(tasks)}
    text = terraform.render(tasks, ([], {}), variables={})
    return _resources(text, files.__getitem__)


def _jwks_shape(document):
    return sorted({(k["use"], k["kty"], k["alg"], k["e"], len(k["kid"])) for k in document["keys"]})


@pytest.mark.parametrize("fixture", FIXTURES)
def test_irsa_resources_equal_kops(fixture):
    directory = pathlib.Path(SOURCE) / "tests" / "integration" / "update_cluster" / fixture
    theirs = _resources((directory / "kubernetes.tf").read_text(), lambda path: (directory / path).read_text())
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
