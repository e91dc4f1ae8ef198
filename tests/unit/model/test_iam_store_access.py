"""Who may read what in an S3 state store: the control plane all of its cluster, workers only the boot artefacts."""

from __future__ import annotations

import json

import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model

from tests.conformance import kops_fixtures


def _policies(config_base):
    directory = kops_fixtures.UPDATE_CLUSTER / "minimal-aws"
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    cluster["spec"]["configBase"] = config_base
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()])
    return {t.name: json.loads(t.fields["policy"]) for t in tasks.values() if t.kind == "aws_iam_role_policy"}


def _resources(policy, action):
    found = []
    for statement in policy["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        if any(a == action or (a.endswith("*") and action.startswith(a[:-1])) for a in actions):
            found += statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
    return found


def test_workers_read_only_the_boot_artefacts_never_config_secrets_or_pki():
    """Their nodeup config comes from the bootstrap service (nodeconfig/bootstrap.py's config_server), as kops' from
    kops-controller: no igconfig/ read either."""
    policies = _policies("s3://state-bucket/minimal-aws.example.com")
    nodes = policies["nodes.minimal-aws.example.com"]
    assert sorted(_resources(nodes, "s3:GetObject")) == [
        "arn:aws:s3:::state-bucket/minimal-aws.example.com/boot/sha256/*"]
    masters = policies["masters.minimal-aws.example.com"]
    assert "arn:aws:s3:::state-bucket/minimal-aws.example.com/*" in _resources(masters, "s3:GetObject")


def test_no_store_statements_for_other_stores():
    assert "nodes.minimal-aws.example.com" not in _policies("memfs://clusters.example.com/minimal-aws.example.com")
