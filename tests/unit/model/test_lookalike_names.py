"""Look-alike cluster names (model/aws/lookalike.py decides, the AWS driver asks the cloud: providers/aws/
update_facts.py): the unique names, and who gets them, decided from the ownership tags of the objects holding
kops' names, recorded once (the moto test: tests/integration/
test_aws_no_adoption.py)."""

from __future__ import annotations

import json

import botocore.exceptions
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import lookalike
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import update_facts
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.driver import DRIVER
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import aws as names

FIRST, SECOND = "a.example.com", "a-example.com"
ARN = "arn:aws:elasticloadbalancing:us-east-1:123456789012:"
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:"


def _tags(owner):
    return [{"Key": "KubernetesCluster", "Value": owner}, {"Key": "kubernetes.io/cluster/%s" % owner, "Value": "owned"}]


class FakeStore(object):
    def __init__(self, record=None):
        self.objects = {lookalike.RECORD: record} if record is not None else {}
        self.written = []

    def read(self, relpath):
        return self.objects.get(relpath)

    def apply(self, changes):
        self.written += changes
        self.objects.update(changes)

    def path(self, relpath):
        return "file:///state/%s/%s" % (SECOND, relpath)


class FakeCloud(object):
    def __init__(self, tagged):
        self.tagged = tagged

    def tagged_resources(self):
        return self.tagged


def _completed(name=SECOND, annotations=None):
    metadata = {"name": name}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": {}}


def test_unique_names_keep_kops_truncation_and_cannot_be_the_look_alikes():
    for prefix in names.RESOURCE_NAME_PREFIXES:
        kops = names.resource_name_32(FIRST, prefix)
        assert kops == names.resource_name_32(SECOND, prefix)  # the collision
        first, second = names.resource_name_32(FIRST, prefix, True), names.resource_name_32(SECOND, prefix, True)
        assert len({kops, first, second}) == 3
        assert second[:-7] == kops[:-7] and len(second) == len(kops) <= 32
    assert names.queue_name(SECOND) == "a-example-com-nth"
    unique = names.queue_name(SECOND, True)
    assert unique.startswith("a-example-com-") and unique.endswith("-nth") and len(unique) == len("a-example-com-") + 10
    assert unique != names.queue_name(FIRST, True)
    long_name = "x" * 70 + ".example.com"
    assert len(names.queue_name(long_name, True)) == 75 + 4
    # The delete lists the queues by a prefix every one of the cluster's queue names has (then keeps its own by tag).
    for name in (SECOND, long_name, "y" * 62 + ".com", "z" * 90 + ".com"):
        for unique in (False, True):
            assert names.queue_name(name, unique).startswith(names.queue_name_prefix(name))


def test_the_model_reads_the_annotation_only():
    assert names.balancer_name(_completed(), "api") == names.resource_name_32(SECOND, "api")
    unique = _completed(annotations={names.UNIQUE_NAMES_ANNOTATION: names.UNIQUE_NAMES})
    assert names.balancer_name(unique, "api") == names.resource_name_32(SECOND, "api", True)
    assert names.cluster_queue_name(unique) == names.queue_name(SECOND, True)


@pytest.mark.parametrize("arn, name", [
    (ARN + "loadbalancer/net/api-a-example-com-uu5t5q/50dc6c495c0c9188", "api-a-example-com-uu5t5q"),
    (ARN + "targetgroup/tcp-a-example-com-5urr68/73e2d6bc24d8a067", "tcp-a-example-com-5urr68"),
    (QUEUE_ARN + "a-example-com-nth", "a-example-com-nth"),
])
def test_name_in_arn(arn, name):
    assert update_facts.name_in_arn(arn) == name


def test_a_look_alike_holding_kops_names_makes_them_unique_and_recorded():
    held = {ARN + "loadbalancer/net/%s/1" % names.resource_name_32(FIRST, "api"): _tags(FIRST),
            QUEUE_ARN + names.queue_name(FIRST): _tags(FIRST),
            ARN + "loadbalancer/net/other-lb/2": _tags(FIRST)}  # not a derived name: no part in the decision
    store, completed = FakeStore(), _completed()
    entries = DRIVER.choose_names(FakeCloud(held), store, completed, dry_run=True)
    assert [(e.kind, e.action) for e in entries] == [(lookalike.PLAN_KIND, "create")]
    assert "look-alike cluster %s holds kops' names %s, %s" % (
        FIRST, names.queue_name(FIRST), names.resource_name_32(FIRST, "api")) in entries[0].name
    assert names.uses_unique_names(completed) and store.written == []  # check mode: said, not recorded

    completed = _completed()
    entries = DRIVER.choose_names(FakeCloud(held), store, completed, dry_run=False)
    assert [e.action for e in entries] == ["create"]
    assert [path for path, _data in store.written] == [lookalike.RECORD]
    record = json.loads(store.objects[lookalike.RECORD])
    assert record == {"names": "unique", "lookalikes": [FIRST],
                      "held": sorted([names.queue_name(FIRST), names.resource_name_32(FIRST, "api")])}
    # The next run reads the record and asks nothing, even once the look-alike is gone.
    completed = _completed()
    entries = DRIVER.choose_names(FakeCloud({}), store, completed, dry_run=False)
    assert [e.action for e in entries] == ["unchanged"] and names.uses_unique_names(completed)
    assert len(store.written) == 1


@pytest.mark.parametrize("held", [
    {},  # nobody holds them: kops' names
    # this cluster holds one already (built with kops' names, and a look-alike made another later): it keeps them
    {ARN + "loadbalancer/net/%s/1" % names.resource_name_32(SECOND, "api"): _tags(SECOND),
     ARN + "targetgroup/%s/2" % names.resource_name_32(FIRST, "bastion"): _tags(FIRST)},
    # held by a cluster that is no look-alike (it cannot be one: its tag says otherwise): the task refuses it
    {ARN + "loadbalancer/net/%s/1" % names.resource_name_32(SECOND, "api"): _tags("b.example.com")},
])
def test_kops_names_stay_unless_a_look_alike_alone_holds_them(held):
    store, completed = FakeStore(), _completed(annotations={names.UNIQUE_NAMES_ANNOTATION: names.UNIQUE_NAMES})
    assert DRIVER.choose_names(FakeCloud(held), store, completed, dry_run=False) == []
    # The record alone decides: an annotation the user's spec carried is dropped.
    assert not names.uses_unique_names(completed) and store.written == []


@pytest.mark.parametrize("record, message", [
    (b"{", "is not JSON"),
    (b'{"names": "kops"}', "names must be 'unique', not 'kops'"),
])
def test_a_damaged_record_fails_naming_it(record, message):
    with pytest.raises(ValueError) as raised:
        lookalike.apply_record(FakeStore(record), _completed())
    assert message in str(raised.value) and lookalike.RECORD in str(raised.value)


class FakeApi(object):
    """elbv2 and sqs answering by name from {name: owner}; NotFound errors as AWS sends them."""

    def __init__(self, balancers, groups, queues):
        self.balancers, self.groups, self.queues = balancers, groups, queues
        self.calls = []

    @staticmethod
    def _missing(code, operation):
        return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": "not found"}}, operation)

    def describe_load_balancers(self, Names):
        self.calls.append("DescribeLoadBalancers")
        if Names[0] not in self.balancers:
            raise self._missing("LoadBalancerNotFound", "DescribeLoadBalancers")
        return {"LoadBalancers": [{"LoadBalancerArn": "lb/" + Names[0]}]}

    def describe_target_groups(self, Names):
        self.calls.append("DescribeTargetGroups")
        if Names[0] not in self.groups:
            raise self._missing("TargetGroupNotFound", "DescribeTargetGroups")
        return {"TargetGroups": [{"TargetGroupArn": "tg/" + Names[0]}]}

    def describe_tags(self, ResourceArns):
        self.calls.append("DescribeTags")
        owners = dict(self.balancers, **self.groups)
        return {"TagDescriptions": [{"ResourceArn": arn, "Tags": _tags(owners[arn.split("/", 1)[1]])}
                                    for arn in ResourceArns]}

    def get_queue_url(self, QueueName):
        self.calls.append("GetQueueUrl")
        if QueueName not in self.queues:
            raise self._missing("AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl")
        return {"QueueUrl": "https://sqs/" + QueueName}

    def list_queue_tags(self, QueueUrl):
        self.calls.append("ListQueueTags")
        return {"Tags": {"KubernetesCluster": self.queues[QueueUrl.rsplit("/", 1)[1]]}}


class DeniedCloud(object):
    def __init__(self, api):
        self.api = api

    def tagged_resources(self):
        return None  # tag:GetResources denied

    def client(self, _service):
        return self.api


def test_without_tag_get_resources_each_name_is_asked():
    api = FakeApi({names.resource_name_32(FIRST, "api"): FIRST}, {names.resource_name_32(FIRST, "tcp"): FIRST},
                  {names.queue_name(FIRST): FIRST})
    held = update_facts.held_names(DeniedCloud(api), SECOND)
    assert held == {names.resource_name_32(FIRST, "api"): FIRST, names.resource_name_32(FIRST, "tcp"): FIRST,
                    names.queue_name(FIRST): FIRST}
    assert sorted(api.calls) == sorted(["DescribeLoadBalancers"] * 2 + ["DescribeTargetGroups"] * 4
                                       + ["DescribeTags", "GetQueueUrl", "ListQueueTags"])
    entries = DRIVER.choose_names(DeniedCloud(api), FakeStore(), _completed(), dry_run=True)
    assert [e.action for e in entries] == ["create"]
