"""spec.externalPolicies and spec.iam.permissionsBoundary on moto: applied, compared, and removed with the spec."""

from __future__ import annotations

import boto3

from tests.integration.test_aws_deletions import _replace_spec
from tests.integration.test_aws_update import _mutating, _service, _update

CLUSTER = "k8s.example.com"


def _policy(iam, name):
    return iam.create_policy(PolicyName=name, PolicyDocument='{"Version": "2012-10-17", "Statement": [{"Effect": '
                             '"Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"}]}')["Policy"]["Arn"]


def test_external_policies_and_boundary_follow_the_spec(aws, tmp_path):
    iam = boto3.client("iam", region_name="us-east-1")
    extra, other, boundary = _policy(iam, "extra"), _policy(iam, "other"), _policy(iam, "boundary")
    service = _service("file://%s" % tmp_path)

    def external(spec):
        spec["externalPolicies"] = {"node": [extra], "control-plane": [other]}
        spec.setdefault("iam", {})["permissionsBoundary"] = boundary

    _replace_spec(service, external)
    _update(service)
    nodes = "nodes.%s" % CLUSTER
    attached = [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=nodes)["AttachedPolicies"]]
    assert attached == [extra]
    assert iam.get_role(RoleName=nodes)["Role"]["PermissionsBoundary"]["PermissionsBoundaryArn"] == boundary
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}

    # A policy attached by hand to the role, and the spec's one removed: check mode lists the detach first.
    iam.attach_role_policy(RoleName=nodes, PolicyArn=other)

    def fewer(spec):
        spec["externalPolicies"] = {"node": [other]}
        del spec["iam"]["permissionsBoundary"]

    _replace_spec(service, fewer)
    preview, plan, calls = _update(service, dry_run=True)
    assert _mutating(calls) == {}
    assert sorted((e.kind, e.name) for e in plan if e.action == "delete") == [
        ("aws_iam_role_policy_attachment", "masters.%s:%s" % (CLUSTER, other)),  # all of a role's removed too
        ("aws_iam_role_policy_attachment", "%s:%s" % (nodes, extra))]
    _update(service)
    assert [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=nodes)["AttachedPolicies"]] == [other]
    assert iam.list_attached_role_policies(RoleName="masters.%s" % CLUSTER)["AttachedPolicies"] == []
    assert "PermissionsBoundary" not in iam.get_role(RoleName=nodes)["Role"]
