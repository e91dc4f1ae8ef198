"""A create whose response is lost (the call lands, the client sees a 500) makes one object, not two
(cloud/aws.create_once), on moto's server; DHCP options are tagged although moto ignores their
TagSpecifications."""

from __future__ import annotations

import collections
import urllib.request

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import CREATE_TOKEN_TAG, tag_dict

from tests.integration.test_aws_update import ADMIN_KEY, CountingCloud, _mutating, _service

CLUSTER = "k8s.example.com"
OWNED = [{"Name": "tag:KubernetesCluster", "Values": [CLUSTER]}]
LOST = b"<Response><Errors><Error><Code>InternalError</Code><Message>lost on the way back</Message></Error>" \
       b"</Errors><RequestID>lost</RequestID></Response>"


class _Raw(object):
    def __init__(self, body):
        self.body = body

    def stream(self, **_kwargs):
        yield self.body


class LoseResponses(object):
    """A botocore before-send hook: the first `count` calls of each operation reach moto (so the object
    is made), and the client is answered HTTP 500 instead of moto's answer."""

    def __init__(self, operations, count=1):
        self.remaining = {operation: count for operation in operations}
        self.lost = collections.Counter()

    def register(self, api):
        for operation in self.remaining:
            api.meta.events.register("before-send.ec2.%s" % operation, self)

    def __call__(self, request, **kwargs):
        import botocore.awsrequest
        operation = kwargs["event_name"].rsplit(".", 1)[-1]
        if self.remaining[operation] <= 0:
            return None
        self.remaining[operation] -= 1
        body = request.body.encode() if isinstance(request.body, str) else request.body
        headers = {k: v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
        sent = urllib.request.Request(request.url, data=body, headers=headers, method=request.method)
        urllib.request.urlopen(sent, timeout=10).close()  # noqa: S310 - moto on 127.0.0.1
        self.lost[operation] += 1
        return botocore.awsrequest.AWSResponse(request.url, 500, {}, _Raw(LOST))


def _run(service, faults=None, dry_run=False):
    calls = collections.Counter()

    class FaultyCloud(CountingCloud):
        def _counted(self, api):
            if faults and not getattr(api, "_kubeops_faulty", False):
                faults.register(api)
                api._kubeops_faulty = True
            return CountingCloud._counted(self, api)

    def factory(name, region):
        cloud = FaultyCloud(name, region)
        cloud.calls = calls
        return cloud

    plan, _completed, _changed = updates.apply_direct(service, CLUSTER, dry_run, factory, ssh_public_key=ADMIN_KEY)
    return collections.Counter(e.action for e in plan), calls


def test_a_plain_retrying_client_duplicates_a_lost_create(aws):
    """Why create_once exists: botocore's retry of the 500 sends CreateVpc again."""
    faults = LoseResponses(["CreateVpc"])
    ec2 = boto3.client("ec2", region_name="us-east-1")
    faults.register(ec2)
    before = len(ec2.describe_vpcs()["Vpcs"])
    ec2.create_vpc(CidrBlock="10.9.0.0/16")
    assert faults.lost["CreateVpc"] == 1
    assert len(ec2.describe_vpcs()["Vpcs"]) == before + 2


@pytest.mark.parametrize("operations", [("CreateVpc", "AllocateAddress"),
                                        ("CreateInternetGateway", "CreateSecurityGroup", "CreateSubnet",
                                         "CreateRouteTable", "CreateNatGateway", "CreateVolume", "ImportKeyPair")])
def test_a_lost_create_response_makes_one_object(aws, tmp_path, operations):
    service = _service("file://%s" % tmp_path, topology="private")
    faults = LoseResponses(operations)
    counts, calls = _run(service, faults)
    assert sorted(faults.lost) == sorted(operations)  # every create lost its first answer
    ec2 = boto3.client("ec2", region_name="us-east-1")
    found = {
        "vpcs": len(ec2.describe_vpcs(Filters=OWNED)["Vpcs"]),
        "eips": len(ec2.describe_addresses(Filters=OWNED)["Addresses"]),
        "gateways": len(ec2.describe_internet_gateways(Filters=OWNED)["InternetGateways"]),
        "groups": len(ec2.describe_security_groups(Filters=OWNED)["SecurityGroups"]),
        "subnets": len(ec2.describe_subnets(Filters=OWNED)["Subnets"]),
        "tables": len(ec2.describe_route_tables(Filters=OWNED)["RouteTables"]),
        "nats": len(ec2.describe_nat_gateways(Filters=OWNED)["NatGateways"]),
        "volumes": len(ec2.describe_volumes(Filters=OWNED)["Volumes"]),
        "untagged vpcs": len([v for v in ec2.describe_vpcs()["Vpcs"] if not v.get("Tags")]),
    }
    # One zone, private: the VPC, one EIP / NAT gateway / internet gateway, three groups (masters,
    # nodes, api-elb), two subnets (private, utility), two tables, two etcd volumes; moto's default VPC.
    assert found == {"vpcs": 1, "eips": 1, "gateways": 1, "groups": 3, "subnets": 2, "tables": 2, "nats": 1,
                     "volumes": 2, "untagged vpcs": 1}
    # Each lost create was looked up by its token, not sent again: one call per object.
    objects = {"CreateVpc": 1, "AllocateAddress": 1, "CreateInternetGateway": 1, "CreateSecurityGroup": 3,
               "CreateSubnet": 2, "CreateRouteTable": 2, "CreateNatGateway": 1, "CreateVolume": 2, "ImportKeyPair": 1}
    assert {operation: calls[operation] for operation in operations} == {o: objects[o] for o in operations}
    # The token tag is gone once the object exists: tags equal Terraform's.
    assert not [v for v in ec2.describe_vpcs(Filters=OWNED)["Vpcs"] if CREATE_TOKEN_TAG in tag_dict(v["Tags"])]

    again, calls = _run(service, LoseResponses(operations))
    assert set(again) == {"unchanged"} and _mutating(calls) == {}
    assert len(ec2.describe_vpcs(Filters=OWNED)["Vpcs"]) == 1
    assert len(ec2.describe_addresses(Filters=OWNED)["Addresses"]) == 1


def test_dhcp_options_are_tagged_where_tag_specifications_are_ignored(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    _counts, calls = _run(service)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    options = ec2.describe_dhcp_options(Filters=OWNED)["DhcpOptions"]
    assert [tag_dict(o["Tags"]) for o in options] == [{
        "KubernetesCluster": CLUSTER, "Name": CLUSTER, "kubernetes.io/cluster/%s" % CLUSTER: "owned"}]
    # moto answers CreateDhcpOptions without the tags it was sent: then, and only then, a CreateTags follows.
    assert calls["CreateDhcpOptions"] == 1 and calls["CreateTags"] == 1


def test_a_lost_rule_or_route_answer_resent_by_botocore_converges(aws, tmp_path):
    """AuthorizeSecurityGroupIngress and CreateRoute take no token and no tags: botocore sends them
    again after the 500, AWS answers "duplicate" / "already exists", and the task takes the object."""
    service = _service("file://%s" % tmp_path)
    faults = LoseResponses(["AuthorizeSecurityGroupIngress", "CreateRoute"])
    counts, calls = _run(service, faults)
    assert faults.lost == {"AuthorizeSecurityGroupIngress": 1, "CreateRoute": 1}
    assert calls["ReplaceRoute"] <= 1
    again, calls = _run(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}
