"""cluster_update as a module: check mode, idempotence, a cloud failure reported as a clean failure."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import cluster_update

# moto knows no Canonical noble AMI; one of the AMIs it ships (a real AWS account resolves the channel image).
MOTO_AMI = "ami-1e749f67"
OPTIONS = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "image": MOTO_AMI}


def test_check_then_apply_then_nothing(run_module, store_url, aws):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    preview = run_module(cluster_update, check_mode=True, diff=True, state_store=store_url,
                         cluster_name="k8s.example.com")
    assert preview["changed"] is True and preview["summary"]["create"] > 20
    assert "create aws_vpc/k8s.example.com" in preview["diff"]["after"]
    applied = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com")
    assert applied["changed"] is True
    again = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com")
    assert again["changed"] is False and again["summary"]["create"] == 0 and again["summary"]["update"] == 0


def test_missing_shared_vpc_fails_cleanly(run_module, store_url, aws):
    options = dict(OPTIONS, network_id="vpc-0000000000000000f")
    run_module(cluster_module, state_store=store_url, options=options,
               cloud_facts={"vpcs": {"vpc-0000000000000000f": "10.0.0.0/16"}})
    result = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com")
    assert result["failed"] is True
    assert "vpc-0000000000000000f not found" in result["msg"]


def test_region_other_than_the_zones_fails_before_any_call(run_module, store_url, aws):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    result = run_module(cluster_update, state_store=store_url, cluster_name="k8s.example.com", region="us-west-2")
    assert result["failed"] is True
    assert 'region: Invalid value: "us-west-2": the cluster\'s zones are in us-east-1' in result["msg"]
    import boto3
    assert boto3.client("ec2", region_name="us-west-2").describe_vpcs(
        Filters=[{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}])["Vpcs"] == []


def test_bad_zone_and_version_fail_with_field_and_fix(run_module, store_url):
    zone = run_module(cluster_module, state_store=store_url, options=dict(OPTIONS, zones=["eu-west-1z"]))
    assert zone["failed"] is True and "eu-west-1z" in zone["msg"] and "eu-west-1a, eu-west-1b, eu-west-1c" in zone["msg"]
    version = run_module(cluster_module, state_store=store_url, options=dict(OPTIONS, kubernetes_version="1.99.0"))
    assert version["failed"] is True and "spec.kubernetesVersion" in version["msg"] and "up to 1.37.x" in version["msg"]
