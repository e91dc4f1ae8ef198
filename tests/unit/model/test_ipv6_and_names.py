"""IPv6 networks and long cluster names, as kops builds them.

The IPv6 cluster is kops' own `create cluster --ipv6` output (create_cluster/ipv6); the expected
names are those of kops' update_cluster/minimal-ipv6* and minimal-longclustername fixtures.  When
kops' full fixture set is available (KOPS_CONFORMANCE_DIR pointing at kops' tests/integration), the
IPv6 and long-name fixtures are also compared resource for resource and body for body.
"""

from __future__ import annotations

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws_driver
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import aws as names
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ipv6

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import RESOURCE, _rendered, _tasks


IPV6_FIXTURES = ["minimal-ipv6", "minimal-ipv6-calico", "minimal-ipv6-cilium", "minimal-ipv6-dns-none",
                 "minimal-ipv6-kindnet", "minimal-ipv6-no-subnet-prefix"]
NETWORK = {"aws_vpc", "aws_subnet", "aws_route", "aws_route_table", "aws_route_table_association",
           "aws_egress_only_internet_gateway", "aws_nat_gateway", "aws_eip", "aws_internet_gateway", "aws_lb"}
LONG_NAME = "this.is.truly.a.really.really.really.really.really.long.cluster-name.minimal.example.com"


def _kops_resources(case):
    """Every resource of kops' kubernetes.tf but the state-store files (aws_s3_object)."""
    text = (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()
    return {r for r in RESOURCE.findall(text) if r[0] != "aws_s3_object"}


def _kops_fixture(case):
    if not (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").exists():
        pytest.skip("kops fixture %s is not in %s (set KOPS_CONFORMANCE_DIR to kops' tests/integration)"
                    % (case, kops_fixtures.UPDATE_CLUSTER))


def _ipv6_cluster():
    cluster, groups = objects.split_objects(kops_fixtures.load_expected("ipv6"))
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    assert [str(p) for p in validation.validate_cluster(completed, strict=True)] == []
    tasks = aws_model.build_tasks(completed, groups, [])
    return completed, tasks, hcl2.loads(terraform.render(list(tasks.values()), aws_driver.DRIVER.terraform_providers("us-test-1")))


def _resources(parsed, kind):
    return {n.strip('"'): kops_fixtures.unquoted(b) for block in parsed["resource"] for k, named in block.items()
            if k.strip('"') == kind for n, b in named.items()}


def test_ipv6_cluster_has_egress_only_gateway_nat64_and_ipv6_routes():
    completed, _tasks_by_key, parsed = _ipv6_cluster()
    assert "podCIDR" not in completed["spec"]
    gateways = _resources(parsed, "aws_egress_only_internet_gateway")
    assert list(gateways) == ["ipv6-example-com"]
    assert gateways["ipv6-example-com"]["vpc_id"] == "${aws_vpc.ipv6-example-com.id}"
    routes = _resources(parsed, "aws_route")
    assert routes["route-private-us-test-1a-64_ff9b__--96"] == {
        "destination_ipv6_cidr_block": "64:ff9b::/96", "nat_gateway_id": "${aws_nat_gateway.us-test-1a-ipv6-example-com.id}",
        "route_table_id": "${aws_route_table.private-us-test-1a-ipv6-example-com.id}", "__is_block__": True}
    assert routes["route-private-us-test-1a-__--0"] == {
        "destination_ipv6_cidr_block": "::/0",
        "egress_only_gateway_id": "${aws_egress_only_internet_gateway.ipv6-example-com.id}",
        "route_table_id": "${aws_route_table.private-us-test-1a-ipv6-example-com.id}", "__is_block__": True}


def test_ipv6_only_subnet_gets_its_slice_of_the_vpc_block():
    _completed, _tasks_by_key, parsed = _ipv6_cluster()
    subnets = _resources(parsed, "aws_subnet")
    private = subnets["us-test-1a-ipv6-example-com"]  # ipv6CIDR /64#0, no IPv4 CIDR
    assert "cidr_block" not in private
    assert private["ipv6_cidr_block"] == "${cidrsubnet(local.vpc_ipv6_cidr_block, 64 - local.vpc_ipv6_cidr_length, 0)}"
    assert private["ipv6_native"] is True and private["enable_dns64"] is True
    assert private["tags"]["SubnetType"] == "Private" and "kubernetes.io/role/internal-elb" not in private["tags"]
    dualstack = subnets["dualstack-us-test-1a-ipv6-example-com"]
    assert dualstack["cidr_block"] == "172.20.64.0/18" and "ipv6_native" not in dualstack
    assert dualstack["ipv6_cidr_block"].endswith("local.vpc_ipv6_cidr_length, 1)}")


def test_api_load_balancer_is_dualstack_in_ipv6_subnets():
    _completed, _tasks_by_key, parsed = _ipv6_cluster()
    assert _resources(parsed, "aws_lb")["api-ipv6-example-com"]["ip_address_type"] == "dualstack"


@pytest.mark.parametrize("block, notation, expected", [
    ("2001:db8::/56", "/64#0", "2001:db8::/64"),
    ("2001:db8::/56", "/64#a", "2001:db8:0:a::/64"),
    ("2001:db8::/56", "/64#ff", "2001:db8:0:ff::/64"),
])
def test_cidr_notation_is_terraforms_cidrsubnet(block, notation, expected):
    assert ipv6.subnet_of(block, notation) == expected


def test_cidr_notation_outside_the_block_says_so():
    with pytest.raises(ValueError, match="holds only 256 /64 subnets"):
        ipv6.subnet_of("2001:db8::/56", "/64#100")


def test_long_cluster_names_are_truncated_as_kops_does():
    """kops' minimal-longclustername names (IAM 64, SQS 80, EventBridge 64), from its kubernetes.tf."""
    assert names.iam_role_name("masters", LONG_NAME) == "masters.this.is.truly.a.really.really.really.really.reall-g6fsnu"
    assert names.iam_role_name("nodes", LONG_NAME) == "nodes.this.is.truly.a.really.really.really.really.really.-d86ibl"
    assert names.queue_name(LONG_NAME) == "this-is-truly-a-really-really-really-really-really-long-cluster-name-ueip1f-nth"
    assert names.event_rule_name(LONG_NAME, "ASGLifecycle") == "this.is.truly.a.really.really.rea-cbmd7d-ASGLifecycle"
    assert names.iam_role_name("masters", "minimal-aws.example.com") == "masters.minimal-aws.example.com"


def test_long_cluster_name_model_stays_within_aws_limits():
    directory = kops_fixtures.UPDATE_CLUSTER / "minimal-aws"
    text = (directory / "in-v1alpha2.yaml").read_text().replace("minimal-aws.example.com", LONG_NAME)
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all(text) if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()]).values()
    limits = {"aws_iam_role": 64, "aws_iam_instance_profile": 128, "aws_sqs_queue": 80,
              "aws_cloudwatch_event_rule": 64}
    named = [(t.kind, t.fields["name"]) for t in tasks if t.kind in limits]
    assert len(named) == 9
    assert all(len(name) <= limits[kind] for kind, name in named), named


@pytest.mark.parametrize("case", IPV6_FIXTURES + ["shared_vpc_ipv6", "minimal-longclustername"])
def test_kops_fixture_resources_match(case):
    _kops_fixture(case)
    _completed, tasks = _tasks(case)
    if case == "shared_vpc_ipv6":
        # The shared VPC's egress-only gateway has no Terraform data source: its two routes are refused
        # with a message (docs/aws-model.md), the rest matches.
        refused = {("aws_route", "route-private-us-test-1a-__--0"), ("aws_route", "route-private-us-test-1b-__--0")}
        with pytest.raises(ValueError, match="no data source"):
            terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1"))
        tasks = [t for t in tasks if "egress_only_gateway_id" not in t.fields]
    else:
        refused = set()
    assert {r for r in _rendered(tasks) if r[0] != "aws_s3_object"} == _kops_resources(case) - refused


@pytest.mark.parametrize("case", IPV6_FIXTURES)
def test_kops_fixture_network_bodies_match(case):
    _kops_fixture(case)
    _completed, tasks = _tasks(case)
    ours = hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1")))
    theirs = hcl2.loads((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text())
    for kind in NETWORK:
        assert _resources(ours, kind) == _resources(theirs, kind), kind
