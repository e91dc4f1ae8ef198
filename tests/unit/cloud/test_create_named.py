"""cloud/aws.create_named: a create of a uniquely named object is sent at most once; after a lost answer,
"already exists" means the lost call made it, but only an object of this cluster's own is taken."""

from __future__ import annotations

import botocore.exceptions
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws


def _error(code, status):
    return botocore.exceptions.ClientError(
        {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "CreateRole")


LOST = ("InternalError", 500)
EXISTS = ("EntityAlreadyExists", 409)


class FakeApi(object):
    """create_role answers each of `answers` in turn: an (error code, status) raises, anything else returns."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.sent = 0

    def create_role(self, **_kwargs):
        self.sent += 1
        answer = self.answers.pop(0)
        if isinstance(answer, tuple):
            raise _error(*answer)
        return answer


class FakeCloud(object):
    def __init__(self, api):
        self.api = api

    def single_attempt_client(self, _service):
        return self.api


def _create(api, find_made):
    return aws.create_named(FakeCloud(api), "iam", "create_role", find_made, sleep=lambda _s: None, RoleName="r")


def test_a_clean_create_is_sent_once_and_answers_its_response():
    api = FakeApi({"Role": {"RoleName": "r"}})
    assert _create(api, lambda: pytest.fail("no lookup without a lost answer")) == (None, {"Role": {"RoleName": "r"}})
    assert api.sent == 1


def test_after_a_lost_answer_the_object_is_found_by_name_before_a_second_create():
    api = FakeApi(LOST)
    assert _create(api, lambda: {"name": "r"}) == ({"name": "r"}, None)
    assert api.sent == 1


def test_already_exists_after_a_lost_answer_is_the_lost_calls_object():
    """The lookups right after the lost answer do not see it yet (eventual consistency); the second create
    says it exists; the next lookup finds it."""
    lookups = iter([None, None, {"name": "r"}])
    api = FakeApi(LOST, EXISTS)
    assert _create(api, lambda: next(lookups)) == ({"name": "r"}, None)
    assert api.sent == 2


def test_already_exists_without_a_lost_answer_stays_an_error():
    api = FakeApi(EXISTS)
    with pytest.raises(botocore.exceptions.ClientError, match="EntityAlreadyExists"):
        _create(api, lambda: pytest.fail("an object not made by this run is never looked up to be taken"))


def test_an_object_of_another_cluster_found_after_a_lost_answer_is_an_error():
    def find_made():
        raise ValueError("one of this name exists but does not carry this cluster's ownership tags")

    with pytest.raises(ValueError, match="ownership tags"):
        _create(FakeApi(LOST), find_made)


def test_already_exists_that_never_shows_up_is_the_create_error():
    api = FakeApi(LOST, EXISTS)
    with pytest.raises(botocore.exceptions.ClientError, match="EntityAlreadyExists"):
        _create(api, lambda: None)
