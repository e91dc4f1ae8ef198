"""The AWS model against kops' Terraform output: same resources, same names, file parses."""

from __future__ import annotations

import json
import re

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws_driver
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import aws as names

from tests.conformance import kops_fixtures

# The resource kinds the model builds today.
NETWORK = {"aws_vpc", "aws_vpc_dhcp_options", "aws_vpc_dhcp_options_association", "aws_internet_gateway",
           "aws_route_table", "aws_route", "aws_subnet", "aws_route_table_association", "aws_eip", "aws_nat_gateway"}
FIREWALL = {"aws_security_group", "aws_security_group_rule"}
IAM = {"aws_iam_role", "aws_iam_instance_profile", "aws_iam_role_policy", "aws_key_pair"}
VOLUMES = {"aws_ebs_volume"}
LOAD_BALANCER = {"aws_lb", "aws_lb_listener", "aws_lb_target_group"}
NODE_TERMINATION = {"aws_sqs_queue", "aws_cloudwatch_event_rule", "aws_cloudwatch_event_target"}
AUTOSCALING = {"aws_launch_template", "aws_autoscaling_group", "aws_autoscaling_lifecycle_hook"}
MODELLED = NETWORK | FIREWALL | IAM | VOLUMES | LOAD_BALANCER | NODE_TERMINATION | AUTOSCALING
RESOURCE = re.compile(r'^resource "(\w+)" "([^"]+)"', re.M)


def _tasks(case):
    directory = kops_fixtures.UPDATE_CLUSTER / case
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    keys = [(directory / "id_rsa.pub").read_text()]
    return completed, list(aws_model.build_tasks(completed, groups, keys).values())


def _kops_resources(case, kinds=None):
    kinds = kinds or MODELLED
    text = (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()
    return {m for m in RESOURCE.findall(text) if m[0] in kinds}


def _rendered(tasks):
    return {(t.kind, t.terraform_name) for t in tasks if t.render_terraform() is not None}


@pytest.mark.parametrize("case", ["minimal-aws", "ha", "existing_iam", "minimal-dns-none"])
def test_modelled_resources_match_kops(case):
    _completed, tasks = _tasks(case)
    assert _rendered(tasks) == _kops_resources(case)


def test_shared_vpc_is_referred_to_not_managed():
    network = NETWORK | VOLUMES | IAM
    _completed, tasks = _tasks("shared_vpc")
    assert {r for r in _rendered(tasks) if r[0] in network} == _kops_resources("shared_vpc", network)
    parsed = hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1")))
    assert not any('"aws_vpc"' in block for block in parsed["resource"])
    subnet = next(b['"aws_subnet"'] for b in parsed["resource"] if '"aws_subnet"' in b)
    assert list(subnet.values())[0]["vpc_id"] == '"vpc-12345678"'
    assert parsed["data"], "the shared VPC's internet gateway is looked up by a data source"


def test_private_topology_network_and_volumes_match_kops():
    kinds = NETWORK | VOLUMES | {"aws_iam_role", "aws_iam_instance_profile"}
    _completed, tasks = _tasks("privatecalico")
    assert {r for r in _rendered(tasks) if r[0] in kinds} == _kops_resources("privatecalico", kinds)


def test_resource_bodies_match_kops_for_minimal_aws():
    completed, tasks = _tasks("minimal-aws")
    ours = hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1")))
    theirs = hcl2.loads((kops_fixtures.UPDATE_CLUSTER / "minimal-aws" / "kubernetes.tf").read_text())

    def bodies(parsed):
        found = {}
        for resource in parsed["resource"]:
            for kind, named in resource.items():
                for name, body in named.items():
                    if kind in NETWORK | FIREWALL | VOLUMES:  # IAM documents are files in kops' output
                        found[(kind, name)] = body
        return found

    assert bodies(ours) == bodies(theirs)


def test_event_patterns_are_kops_patterns():
    _completed, tasks = _tasks("minimal-aws")
    data = kops_fixtures.UPDATE_CLUSTER / "minimal-aws" / "data"
    rules = [t for t in tasks if t.kind == "aws_cloudwatch_event_rule"]
    assert len(rules) == 4
    for rule in rules:
        kops_pattern = (data / ("aws_cloudwatch_event_rule_%s_event_pattern" % rule.name)).read_text()
        assert json.loads(rule.fields["event_pattern"]) == json.loads(kops_pattern)


def _unquote(value):
    if isinstance(value, list):
        return [_unquote(v) for v in value]
    return value.strip('"').replace("${", "").replace("}", "") if isinstance(value, str) else value


# The fixtures of ../shared/conformance/kops, then those of a kops checkout (KOPS_CONFORMANCE_DIR; skipped when
# absent) whose outputs the tasks write: security group overrides, a public table named private-..., hashed
# IAM role names, a bastion, IPv6, mixed instances, an additional CIDR.
OUTPUT_CASES = ["minimal-aws", "ha", "existing_iam", "minimal-dns-none", "shared_vpc", "complex", "privatecalico",
                "existing_sg", "private-shared-ip", "minimal-longclustername", "bastionadditional_user-data",
                "minimal-ipv6", "mixed_instances", "privatekopeio"]


@pytest.mark.parametrize("case", OUTPUT_CASES)
def test_outputs_are_kops_outputs(case):
    """Every output kops writes, with the same value (references and literals), each written by its task."""
    directory = kops_fixtures.UPDATE_CLUSTER / case
    if not (directory / "kubernetes.tf").exists():
        pytest.skip("fixture %s is not in %s (set KOPS_CONFORMANCE_DIR to a kops checkout's tests/integration)"
                    % (case, kops_fixtures.UPDATE_CLUSTER))
    completed, tasks = _tasks(case)
    rendered = terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1"),
                                variables=updates.terraform_variables(completed))
    parsed, theirs = hcl2.loads(rendered), hcl2.loads((directory / "kubernetes.tf").read_text())

    def outputs(tree):
        return {name.strip('"'): _unquote(body["value"]) for block in tree["output"] for name, body in block.items()}

    assert outputs(parsed) == outputs(theirs)
    assert parsed["provider"][1]['"aws"']["alias"].strip('"') == "files"


@pytest.mark.parametrize("cluster, prefix, expected", [
    ("privatecilium.example.com", "api", "api-privatecilium-example-fnt793"),
    ("privatecilium.example.com", "tcp", "tcp-privatecilium-example-rga1vh"),
])
def test_load_balancer_names_are_kops_hashes(cluster, prefix, expected):
    assert names.resource_name_32(cluster, prefix) == expected


def test_terraform_names():
    assert names.terraform_name("nodes.minimal-aws.example.com") == "nodes-minimal-aws-example-com"
    assert names.terraform_name("route-::/0") == "route-__--0"
    assert names.terraform_name("1a.example.com") == "prefix_1a-example-com"
