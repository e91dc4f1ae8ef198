"""CloudFormation output of the AWS model: the same objects as Terraform, and cfn-lint is happy."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.engine import cloudformation
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model

from tests.conformance import kops_fixtures

CASES = ["minimal-aws", "ha", "complex", "privatecalico", "shared_vpc", "existing_iam", "minimal-dns-none"]
CFN_LINT = pathlib.Path(sys.executable).parent / "cfn-lint"


def _template(case):
    directory = kops_fixtures.UPDATE_CLUSTER / case
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                            if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    tasks = list(aws_model.build_tasks(completed, groups, [(directory / "id_rsa.pub").read_text()]).values())
    return tasks, cloudformation.render(tasks)


@pytest.mark.parametrize("case", CASES)
def test_template_passes_cfn_lint(case, tmp_path):
    _tasks, text = _template(case)
    path = tmp_path / ("%s.json" % case)
    # kops' complex fixture names its security groups sg-exampleid5 and sg-exampleid6, which cfn-lint's id
    # pattern (sg- and 8 or 17 hex digits) rejects: linted as well-formed ids of the same place.
    path.write_text(re.sub(r"sg-exampleid(\d)", r"sg-0000000\1", text))
    # W3010 (hard-coded availability zones) is by design: a kops spec pins its zones.
    lint = subprocess.run([str(CFN_LINT), "--ignore-checks", "W3010", "--", str(path)], capture_output=True,
                          text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_every_managed_object_is_in_the_template():
    tasks, text = _template("privatecalico")
    resources = json.loads(text)["Resources"]
    managed = [t for t in tasks if t.render_cloudformation() is not None]
    assert all(cloudformation.logical_id(t) in resources for t in managed)
    types = {r["Type"] for r in resources.values()}
    assert {"AWS::EC2::VPC", "AWS::EC2::NatGateway", "AWS::ElasticLoadBalancingV2::LoadBalancer",
            "AWS::IAM::InstanceProfile", "AWS::SQS::QueuePolicy", "AWS::EC2::VPCGatewayAttachment"} <= types


def test_shared_objects_become_parameters():
    _tasks, text = _template("shared_vpc")
    template = json.loads(text)
    assert not any(r["Type"] == "AWS::EC2::VPC" for r in template["Resources"].values())
    # The internet gateway of the shared VPC, and the AMI (a template cannot look an image name up).
    assert sorted(template["Parameters"]) == ["SharedImageId", "SharedInternetGatewayId"]
    assert template["Parameters"]["SharedImageId"]["Type"] == "AWS::EC2::Image::Id"
    subnet = next(r for r in template["Resources"].values() if r["Type"] == "AWS::EC2::Subnet")
    assert subnet["Properties"]["VpcId"] == "vpc-12345678"
