"""The instance roles' inline policies against kops' own (data/aws_iam_role_policy_<name>_policy), statement for
statement.  kops' policy files are in the shared fixtures for minimal-aws only; with KOPS_CONFORMANCE_DIR set to a
kops checkout's tests/integration every AWS fixture of kops is compared."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import iam as iam_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import iam_statements

from tests.conformance import kops_fixtures

POLICY_FILE = re.compile(r'policy\s*=\s*file\("\$\{path\.module\}/data/aws_iam_role_policy_(.+)_policy"\)')
# kops' test cloud lives in the partition "aws-test"; region us-test-1 is in "aws" for us.
INSTANCE_ROLE_PREFIXES = ("masters", "nodes", "bastions", "apiservers", "additional")
KOPS_TEST_PARTITION = ("arn:aws-test:", "arn:aws:")
ACCOUNT = "123456789012"  # kops' integration tests' AWS account (the service-account roles' trust policies name it)


# kops fixtures whose policies are known to differ, each with why (docs/aws-model.md); strict: fixed, it fails.
KNOWN_DIFFERENT = {
    "privatedns1": "its private hosted zone is named, not resolved to an ID, by the offline cloud facts",
    "privatedns2": "its private hosted zone is named, not resolved to an ID, by the offline cloud facts",
    "shared_subnet": "does not build: the offline cloud facts lack its shared subnets",
    "private-shared-subnet": "does not build: the offline cloud facts lack its shared subnets",
}


def _aws_cases():
    cases = []
    for directory in sorted(kops_fixtures.UPDATE_CLUSTER.iterdir()):
        tf = directory / "kubernetes.tf"
        source = directory / "in-v1alpha2.yaml"
        if tf.exists() and source.exists() and re.search(r"^\s*cloudProvider:\s*aws\s*$", source.read_text(), re.M):
            marks = [pytest.mark.xfail(reason=KNOWN_DIFFERENT[directory.name], strict=True)] \
                if directory.name in KNOWN_DIFFERENT else []
            cases.append(pytest.param(directory.name, marks=marks, id=directory.name))
    return cases


def _build(directory):
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()], account_id=ACCOUNT)
    return completed, {t.fields["name"]: json.loads(t.fields["policy"]) for t in tasks.values()
                       if t.kind == "aws_iam_role_policy"}


def _canonical(statement):
    return json.dumps(statement, sort_keys=True)


def _kops_policies(directory):
    """{policy name: document} of the inline policies kops writes, or None when its data/ is not here."""
    names = POLICY_FILE.findall((directory / "kubernetes.tf").read_text())
    files = {name: directory / "data" / ("aws_iam_role_policy_%s_policy" % name) for name in names}
    if not all(f.exists() for f in files.values()):
        return None
    # Instance roles and kops' service-account roles (IRSA, *.sa.<cluster>) but dns-controller's: this collection
    # runs no dns-controller (protokube's api_dns keeps the API records as the control plane's role).
    return {name: json.loads(f.read_text().replace(*KOPS_TEST_PARTITION)) for name, f in files.items()
            if name.split(".")[0] in INSTANCE_ROLE_PREFIXES or (".sa." in name and not name.startswith("dns-controller."))}


def accepted_differences(completed, name, ours):
    """Statements we grant and kops does not, each with its reason; asserted present, then set aside."""
    if name.startswith("nodes."):
        ctx = iam_model.RoleContext(completed, [], objects.ROLE_NODE)
        # Our workers read the pinned boot artefacts (boot/sha256/*) from an S3 store (docs/aws-model.md);
        # kops' workers read nothing (they download nodeup from its release URL).
        return [_canonical(s) for s in iam_model.node_store_statements(ctx)]
    spec = completed["spec"]
    if name.startswith("masters.") and (spec.get("iam") or {}).get("useServiceAccountExternalPermissions"):
        zone = iam_model.publishing_zone_id(spec)
        if zone:
            # Not kops under IRSA: protokube's api_dns keeps the API records from the control plane (kops gives
            # Route53 to dns-controller's own role).
            policy = iam_statements.Policy(completed["metadata"]["name"], "aws", "", zone)
            policy.add(iam_statements.DNS_CONTROLLER)
            return [_canonical(s) for s in policy.statements]
    return []


def compare(case):
    """Per kops policy: (name, statements equal as sets, kops' statement count, ours, missing, extra)."""
    directory = kops_fixtures.UPDATE_CLUSTER / case
    theirs = _kops_policies(directory)
    if theirs is None:
        pytest.skip("kops' data/ of %s is not in %s (set KOPS_CONFORMANCE_DIR to a kops checkout's tests/integration)"
                    % (case, kops_fixtures.UPDATE_CLUSTER))
    completed, ours = _build(directory)
    results = []
    for name in sorted(set(theirs) | set(ours)):
        mine = [_canonical(s) for s in (ours.get(name) or {}).get("Statement", [])]
        for accepted in accepted_differences(completed, name, ours):
            assert accepted in mine, "accepted difference %s not granted in %s" % (accepted, name)
            mine.remove(accepted)
        if not mine and name not in theirs:
            continue  # only our accepted statements: kops writes no policy for this role
        expected = [_canonical(s) for s in (theirs.get(name) or {}).get("Statement", [])]
        results.append((name, set(mine) == set(expected), sorted(set(expected) - set(mine)),
                        sorted(set(mine) - set(expected))))
    return results


@pytest.mark.parametrize("case", _aws_cases())
def test_role_policies_equal_kops(case):
    for name, equal, missing, extra in compare(case):
        assert equal, "%s: missing %s\nextra %s" % (name, "\n".join(missing), "\n".join(extra))


def _minimal(spec_changes, groups_changes=None):
    directory = kops_fixtures.UPDATE_CLUSTER / "minimal-aws"
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    cluster["spec"].update(spec_changes)
    for group in groups:
        group["spec"].update((groups_changes or {}).get(group["spec"]["role"], {}))
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    return completed, groups


def _actions(document):
    found = set()
    for statement in (document or {}).get("Statement", []):
        action = statement["Action"]
        found.update([action] if isinstance(action, str) else action)
    return found


def test_s3_store_scoped_as_kops_and_workers_read_two_paths():
    completed, groups = _minimal({"configBase": "s3://state-bucket/minimal-aws.example.com"})
    masters = iam_model.role_policy(completed, groups, objects.ROLE_CONTROL_PLANE)
    reads = [s for s in masters["Statement"] if s["Action"] == ["s3:Get*"]]
    assert reads == [{"Action": ["s3:Get*"], "Effect": "Allow",
                      "Resource": "arn:aws:s3:::state-bucket/minimal-aws.example.com/*"}]
    writes = sorted(s["Resource"] for s in masters["Statement"] if "s3:PutObject" in s["Action"])
    assert writes == ["arn:aws:s3:::state-bucket/minimal-aws.example.com/backups/etcd/events/*",
                      "arn:aws:s3:::state-bucket/minimal-aws.example.com/backups/etcd/main/*"]
    nodes = iam_model.role_policy(completed, groups, objects.ROLE_NODE)
    assert _actions(nodes) == {"s3:GetObject", "s3:GetBucketLocation"}


def test_feature_grants_follow_the_spec():
    completed, groups = _minimal(
        {"iam": {"allowContainerRegistry": True}, "networking": {"cilium": {"ipam": "eni"}},
         "containerd": {"nvidiaGPU": {"enabled": True}}, "warmPool": {"enableLifecycleHook": True}})
    nodes = _actions(iam_model.role_policy(completed, groups, objects.ROLE_NODE))
    assert {"ecr:GetAuthorizationToken", "ec2:DescribeInstanceTypes", "autoscaling:CompleteLifecycleAction",
            "autoscaling:DescribeLifecycleHooks"} <= nodes
    masters = _actions(iam_model.role_policy(completed, groups, objects.ROLE_CONTROL_PLANE))
    assert {"ec2:CreateNetworkInterface", "ecr:BatchGetImage"} <= masters
    assert "autoscaling:DescribeLifecycleHooks" not in masters  # warm pools are never for the control plane


def test_irsa_moves_addon_grants_off_the_control_plane():
    completed, groups = _minimal({"iam": {"useServiceAccountExternalPermissions": True}})
    masters = _actions(iam_model.role_policy(completed, groups, objects.ROLE_CONTROL_PLANE))
    assert "elasticloadbalancing:CreateLoadBalancer" not in masters and "ec2:CreateVolume" not in masters
    # Not kops: protokube's api_dns keeps the API records from the control plane (no dns-controller pod here).
    assert "route53:ChangeResourceRecordSets" in masters
    assert {"ec2:AttachVolume", "ec2:DescribeVolumes", "s3:Get*"} <= masters


def test_additional_and_external_policies_and_boundary():
    statement = {"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": ["*"]}
    completed, groups = _minimal({"additionalPolicies": {"node": json.dumps([statement])},
                                  "externalPolicies": {"master": ["arn:aws:iam::123:policy/b", "arn:aws:iam::123:policy/a"]},
                                  "iam": {"permissionsBoundary": "arn:aws:iam::123:policy/boundary"}})
    assert iam_model.additional_policy(completed, objects.ROLE_NODE) == {"Statement": [statement], "Version": "2012-10-17"}
    assert iam_model.external_policies(completed, objects.ROLE_CONTROL_PLANE) == [
        "arn:aws:iam::123:policy/a", "arn:aws:iam::123:policy/b"]
    assert iam_model.permissions_boundary(completed) == "arn:aws:iam::123:policy/boundary"
    broken = {"spec": {"additionalPolicies": {"node": "{not json"}}}
    with pytest.raises(iam_model.IAMPolicyError, match="additionalPolicies.node"):
        iam_model.additional_policy(broken, objects.ROLE_NODE)


def test_bastions_get_no_policy():
    completed, groups = _minimal({})
    assert iam_model.role_policy(completed, groups, objects.ROLE_BASTION) is None
