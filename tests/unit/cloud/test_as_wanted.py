"""cloud/aws.as_wanted and the failure hints: a mutating call that is not a create, retried after its answer was
lost, finds the object already as wanted; that is done, not an error, and only then (issue 22 item 6)."""

from __future__ import annotations

import botocore.exceptions
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws

ROLE_LIMIT = ("LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")


def _error(code, message, operation):
    return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": message},
                                            "ResponseMetadata": {"HTTPStatusCode": 409}}, operation)


def _refusing(code, message, operation):
    def call(**_kwargs):
        raise _error(code, message, operation)
    return call


def test_an_answer_meaning_already_so_is_done_when_a_fresh_read_agrees():
    asked = []
    call = _refusing(*ROLE_LIMIT, operation="AddRoleToInstanceProfile")
    assert aws.as_wanted(call, ("LimitExceeded",), lambda: asked.append(1) or True, RoleName="r") is None
    assert asked == [1]


def test_the_same_answer_for_another_reason_is_raised_as_it_came():
    call = _refusing(*ROLE_LIMIT, operation="AddRoleToInstanceProfile")
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        aws.as_wanted(call, ("LimitExceeded",), lambda: False, RoleName="r")
    assert aws.error_code(raised.value) == "LimitExceeded"
    # Another code is never read as "already so", and the read is not even made.
    with pytest.raises(botocore.exceptions.ClientError):
        aws.as_wanted(_refusing("AccessDenied", "no", "AddRoleToInstanceProfile"), ("LimitExceeded",),
                      lambda: pytest.fail("no read for another code"))


def test_a_call_that_succeeds_answers_its_response():
    assert aws.as_wanted(lambda **kwargs: {"ok": kwargs}, ("LimitExceeded",), lambda: pytest.fail("no read"),
                         VpcId="v") == {"ok": {"VpcId": "v"}}


def test_hints_are_true_no_quota_hint_where_no_quota_was_hit():
    cloud = aws.AwsCloud("c.example.com", "us-east-1")
    role = cloud.failure(_error(*ROLE_LIMIT, operation="AddRoleToInstanceProfile"))
    assert "quota" not in role.hint and "holds another role already" in role.hint
    gateway = cloud.failure(_error("Resource.AlreadyAssociated", "igw-1 is already associated", "AttachInternetGateway"))
    assert gateway.hint == "the gateway is attached to another VPC; detach it there"
    # A real quota keeps its hint.
    roles = cloud.failure(_error("LimitExceeded", "Cannot exceed quota for RolesPerAccount: 1000", "CreateRole"))
    assert "quota is used up" in roles.hint
