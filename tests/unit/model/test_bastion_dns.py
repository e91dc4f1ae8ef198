"""The bastion (groups, rules, NLB) and the Route53 records against kops' Terraform output."""

from __future__ import annotations

import json

import hcl2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws_driver
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation, terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import dns

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import RESOURCE, _rendered, _tasks

CASES = ["minimal-aws", "ha", "complex", "privatecalico", "shared_vpc", "existing_iam", "minimal-dns-none"]
LOAD_BALANCER = {"aws_lb", "aws_lb_listener", "aws_lb_target_group"}


def _kops(case):
    text = (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()
    return set(RESOURCE.findall(text))


def _bastion_or_dns(resources):
    """Our kinds: Route53 records, and every resource about the bastion (its groups, the rules that
    name it or the SSH NLB, its load balancer, listener and target group)."""
    return {(kind, name) for kind, name in resources
            if kind == "aws_route53_record"
            or (kind in LOAD_BALANCER | {"aws_security_group", "aws_security_group_rule"}
                and ("bastion" in name or "ssh-nlb" in name))}


def _theirs_bodies(case):
    parsed = hcl2.loads((kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text())
    return _bodies(parsed)


def _unquoted(value):
    """Map keys without quotes (kops quotes every tag key, we only those that need it: same HCL)."""
    if isinstance(value, dict):
        return {k.strip('"'): _unquoted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unquoted(v) for v in value]
    return value


def _bodies(parsed):
    found = {}
    for resource in parsed["resource"]:
        for kind, named in resource.items():
            for name, body in named.items():
                found[(kind.strip('"'), name.strip('"'))] = _unquoted(body)
    return found


@pytest.mark.parametrize("case", CASES)
def test_bastion_and_route53_resources_match_kops(case):
    _completed, tasks = _tasks(case)
    assert _bastion_or_dns(_rendered(tasks)) == _bastion_or_dns(_kops(case))


@pytest.mark.parametrize("case", [c for c in CASES if c != "complex"])  # complex: prefix-list SSH, not bastion
def test_ssh_rules_match_kops(case):
    """SSH access: on the masters and nodes without a bastion, on the bastion's NLB group with one."""
    _completed, tasks = _tasks(case)

    def ssh(resources):
        return {r for r in resources if r[0] == "aws_security_group_rule" and "22to22" in r[1]}
    assert ssh(_rendered(tasks)) == ssh(_kops(case))


def test_privatecalico_bastion_bodies_match_kops():
    _completed, tasks = _tasks("privatecalico")
    ours = _bodies(hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1"))))
    theirs = _theirs_bodies("privatecalico")
    keys = _bastion_or_dns(set(theirs))
    assert len(keys) == 22  # 2 groups, 15 rules, NLB, listener, target group, 2 records
    for key in sorted(keys):
        assert ours[key] == theirs[key], key


@pytest.mark.parametrize("case", ["complex", "privatecalico"])
def test_api_records_are_aliases_to_the_api_nlb(case):
    _completed, tasks = _tasks(case)
    ours = _bodies(hcl2.loads(terraform.render(tasks, aws_driver.DRIVER.terraform_providers("us-test-1"))))
    theirs = _theirs_bodies(case)
    records = [k for k in theirs if k[0] == "aws_route53_record"]
    assert len(records) == 2
    for key in records:
        assert ours[key] == theirs[key]


def _case_with(case, mutate):
    """The case's completed spec and instance groups, changed by mutate(completed, groups), built."""
    directory = kops_fixtures.UPDATE_CLUSTER / case
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all(
        (directory / "in-v1alpha2.yaml").read_text()) if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    mutate(completed, groups)
    return completed, aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()])


def test_zone_given_by_name_is_a_data_lookup():
    def by_name(completed, groups):
        completed["spec"]["dnsZone"] = "example.com"
    _completed, tasks = _case_with("privatecalico", by_name)
    text = terraform.render(list(tasks.values()), aws_driver.DRIVER.terraform_providers("us-test-1"))
    parsed = hcl2.loads(text)
    assert any('"aws_route53_zone"' in block for block in parsed["data"])
    record = _bodies(parsed)[("aws_route53_record", "api-privatecalico-example-com")]
    assert record["zone_id"] == "${data.aws_route53_zone.example-com.zone_id}"
    template = json.loads(cloudformation.render(list(tasks.values())))
    record_sets = [r for r in template["Resources"].values() if r["Type"] == "AWS::Route53::RecordSet"]
    assert {r["Properties"]["HostedZoneName"] for r in record_sets} == {"example.com."}


def test_no_records_without_publishing_dns():
    def gossip_like(completed, groups):
        completed["spec"].setdefault("topology", {})["dns"] = {"type": "None"}
    _completed, tasks = _case_with("privatecalico", gossip_like)
    assert not [t for t in tasks.values() if t.kind == "aws_route53_record"]
    assert not dns.publishes_dns_records({"metadata": {"name": "a.k8s.local"}, "spec": {}})


def test_internal_bastion_balancer_and_public_name():
    def internal(completed, groups):
        completed["spec"].setdefault("topology", {})["bastion"] = {
            "bastionPublicName": "bastion.privatecalico.example.com",
            "loadBalancer": {"type": "Internal", "additionalSecurityGroups": ["sg-1"]}}
    _completed, tasks = _case_with("privatecalico", internal)
    balancer = tasks["aws_lb/bastion.privatecalico.example.com"]
    assert balancer.fields["internal"] is True
    assert [m["subnet_id"].task.name for m in balancer.fields["subnet_mapping"]] == ["us-test-1a.privatecalico.example.com"]
    assert balancer.fields["security_groups"][1:] == ["sg-1"]
    # SSH may come from the private subnet's CIDR, not the utility one's.
    assert "aws_security_group_rule/from-172.20.32.0/19-ingress-tcp-22to22-bastion-elb.privatecalico.example.com" in tasks
    assert "aws_security_group_rule/from-172.20.4.0/22-ingress-tcp-22to22-bastion-elb.privatecalico.example.com" not in tasks
    records = {(t.name, t.fields["type"]) for t in tasks.values() if t.kind == "aws_route53_record"}
    assert ("bastion.privatecalico.example.com", "A") in records
    assert ("bastion.privatecalico.example.com-AAAA", "AAAA") in records


def test_cloudformation_record_sets_are_aliases():
    _completed, tasks = _tasks("privatecalico")
    template = json.loads(cloudformation.render(tasks))
    balancer = next(t for t in tasks if t.kind == "aws_lb" and t.name.startswith("api."))
    record_sets = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Route53::RecordSet"]
    assert sorted(r["Type"] for r in record_sets) == ["A", "AAAA"]
    for record in record_sets:
        assert record["HostedZoneId"] == "Z1AFAKE1ZON3YO"
        assert record["AliasTarget"]["DNSName"] == {"Fn::GetAtt": [cloudformation.logical_id(balancer), "DNSName"]}
        assert record["AliasTarget"]["HostedZoneId"] == {
            "Fn::GetAtt": [cloudformation.logical_id(balancer), "CanonicalHostedZoneID"]}
