"""AwsCloud.tags_of: the ownership tags of balancers, target groups and EventBridge rules from one paginated
Resource Groups Tagging API GetResources per run; the service's own call for an object it does not list, and
for every object when the credentials lack tag:GetResources."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws

CLUSTER = "a.example.com"
LB = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/api-a-example-com/1"
RULE = "arn:aws:events:us-east-1:123456789012:rule/a.example.com-ASGLifecycle"
OWNED = [{"Key": "KubernetesCluster", "Value": CLUSTER}, {"Key": "kubernetes.io/cluster/%s" % CLUSTER, "Value": "owned"}]
# The cluster and its look-alikes (whose balancer, target group and queue names are the same under kops' rules:
# model/aws/lookalike.py reads their ownership from the same call).
REQUEST = {"TagFilters": [{"Key": "KubernetesCluster", "Values": [CLUSTER, "a-example-com", "a-example.com",
                                                                  "a.example-com"]}],
           "ResourceTypeFilters": ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup",
                                   "events:rule", "sqs"]}


def _cloud():
    api = boto3.session.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1").client(
        "resourcegroupstaggingapi")
    cloud = aws.AwsCloud(CLUSTER, "us-east-1")
    cloud._clients["resourcegroupstaggingapi"] = api
    return cloud, Stubber(api)


def _no_own_call():
    pytest.fail("an object GetResources listed is not asked again")


def test_one_paginated_call_answers_every_object_it_lists():
    cloud, stub = _cloud()
    stub.add_response("get_resources", {"ResourceTagMappingList": [{"ResourceARN": LB, "Tags": OWNED}],
                                        "PaginationToken": "next"}, REQUEST)
    stub.add_response("get_resources", {"ResourceTagMappingList": [{"ResourceARN": RULE, "Tags": OWNED}],
                                        "PaginationToken": ""}, dict(REQUEST, PaginationToken="next"))
    with stub:
        assert cloud.tags_of(LB, _no_own_call) == OWNED
        assert cloud.tags_of(RULE, _no_own_call) == OWNED
    stub.assert_no_pending_responses()


def test_an_object_it_does_not_list_is_asked_with_the_services_own_call():
    # Another cluster's balancer of the same name, or one tagged a moment ago: its absence decides nothing.
    cloud, stub = _cloud()
    stub.add_response("get_resources", {"ResourceTagMappingList": []}, REQUEST)
    foreign = [{"Key": "KubernetesCluster", "Value": "a-example.com"}]
    with stub:
        assert cloud.tags_of(LB, lambda: foreign) == foreign


def test_changed_tags_are_asked_again():
    cloud, stub = _cloud()
    stub.add_response("get_resources", {"ResourceTagMappingList": [{"ResourceARN": LB, "Tags": OWNED}]}, REQUEST)
    with stub:
        assert cloud.tags_of(LB, _no_own_call) == OWNED
        cloud.forget_tags(LB)
        assert cloud.tags_of(LB, lambda: OWNED + [{"Key": "team", "Value": "x"}])[-1] == {"Key": "team", "Value": "x"}


def test_without_the_permission_every_object_is_asked_with_its_own_call():
    cloud, stub = _cloud()
    stub.add_client_error("get_resources", "AccessDeniedException", "not authorized to perform: tag:GetResources",
                          400, expected_params=REQUEST)
    with stub:
        assert cloud.tags_of(LB, lambda: OWNED) == OWNED
        assert cloud.tags_of(RULE, lambda: OWNED) == OWNED  # asked once: the denial is remembered for the run
    stub.assert_no_pending_responses()


def test_other_errors_fail_the_lookup():
    cloud, stub = _cloud()
    stub.add_client_error("get_resources", "InvalidParameterException", "bad", 400, expected_params=REQUEST)
    with stub, pytest.raises(Exception, match="InvalidParameterException"):
        cloud.tags_of(LB, _no_own_call)


def test_look_alike_names():
    assert aws.lookalike_cluster_names("a.example.com") == ["a-example-com", "a-example.com", "a.example-com"]
    assert aws.lookalike_cluster_names("my-cluster.k8s.local") == sorted(
        "my%scluster%sk8s%slocal" % (a, b, c) for a in ".-" for b in ".-" for c in ".-"
        if (a, b, c) != ("-", ".", "."))
    assert aws.lookalike_cluster_names("50%.x") == ["50%-x"]  # a "%" in a name is kept as it is
    assert aws.lookalike_cluster_names("local") == []


def test_many_look_alikes_are_asked_twenty_to_a_call():
    name = "a.b.c.d.e"  # 4 separators: itself and 15 look-alikes in one call; 5 would take two
    cloud = aws.AwsCloud(name, "us-east-1")
    api = boto3.session.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1").client(
        "resourcegroupstaggingapi")
    cloud._clients["resourcegroupstaggingapi"] = api
    stub = Stubber(api)
    values = [name] + aws.lookalike_cluster_names(name)
    assert len(values) == 16
    stub.add_response("get_resources", {"ResourceTagMappingList": []},
                      dict(REQUEST, TagFilters=[{"Key": "KubernetesCluster", "Values": values}]))
    with stub:
        assert cloud.tagged_resources() == {}
    stub.assert_no_pending_responses()

    longer = aws.AwsCloud("a.b.c.d.e.f", "us-east-1")
    longer._clients["resourcegroupstaggingapi"] = api
    values = ["a.b.c.d.e.f"] + aws.lookalike_cluster_names("a.b.c.d.e.f")
    for start in (0, 20):
        stub.add_response("get_resources", {"ResourceTagMappingList": []},
                          dict(REQUEST, TagFilters=[{"Key": "KubernetesCluster", "Values": values[start:start + 20]}]))
    with stub:
        assert longer.tagged_resources() == {}
    stub.assert_no_pending_responses()
