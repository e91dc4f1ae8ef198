"""cluster_update against a real AWS API: moto's server on 127.0.0.1 (started by tests/conftest.py)."""

from __future__ import annotations

import collections
import json

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud, tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts

from tests.conformance import kops_fixtures

READ_ONLY = ("Describe", "List", "Get")
MOTO_AMI = "ami-1e749f67"


class CountingCloud(AwsCloud):
    """AwsCloud that counts every API call by operation name (botocore's before-call event)."""

    calls = None

    def client(self, service):
        return self._counted(AwsCloud.client(self, service))

    def single_attempt_client(self, service):
        return self._counted(AwsCloud.single_attempt_client(self, service))

    def _counted(self, api):
        if not getattr(api, "_kubeops_counted", False):
            api.meta.events.register("before-call.*.*", self._count)
            api._kubeops_counted = True
        return api

    def _count(self, model, **kwargs):
        self.calls[model.name] += 1


def _service(store, **options):
    service = clusters.ClusterService(store)
    # image: one of the AMIs moto ships (it knows no Canonical noble image to resolve the channel's name to).
    base = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "networking": "cni",
            "kubernetes_version": "v1.34.2", "zones": ["us-east-1a"], "image": MOTO_AMI}
    base.update(options)
    service.execute(service.plan_create(base))
    return service


# kops' own test key (its MD5 fingerprint is c4:a6:ed:...).
ADMIN_KEY = (kops_fixtures.UPDATE_CLUSTER / "minimal-aws" / "id_rsa.pub").read_text()


def _update(service, dry_run=False, ssh_public_key=None):
    calls = collections.Counter()

    def factory(name, region):
        cloud = CountingCloud(name, region)
        cloud.calls = calls
        return cloud

    plan, _completed, _spec_changed = updates.apply_direct(service, "k8s.example.com", dry_run, factory,
                                                           ssh_public_key=ssh_public_key)
    return collections.Counter(e.action for e in plan), plan, calls


def _mutating(calls):
    return {op: n for op, n in calls.items() if not op.startswith(READ_ONLY)}


@pytest.mark.parametrize("options, vpcs_subnets_nats", [
    ({}, (1, 1, 0)),
    ({"zones": ["us-east-1a", "us-east-1b", "us-east-1c"], "control_plane_zones": ["us-east-1a", "us-east-1b",
                                                                                   "us-east-1c"]}, (1, 3, 0)),
    ({"topology": "private", "zones": ["us-east-1a", "us-east-1b"]}, (1, 4, 2)),
])
def test_create_then_nothing_changes(aws, tmp_path, options, vpcs_subnets_nats):
    service = _service("file://%s" % tmp_path, **options)
    dry, dry_plan, dry_calls = _update(service, dry_run=True)
    # Everything is to be created but the image, which is only looked up.
    assert {e.action for e in dry_plan if e.kind != "aws_ami"} == {"create"} and _mutating(dry_calls) == {}

    created, _plan, _calls = _update(service, ssh_public_key=ADMIN_KEY)
    assert created["create"] > 20
    pairs = boto3.client("ec2", region_name="us-east-1").describe_key_pairs()["KeyPairs"]
    assert [p["KeyName"] for p in pairs] == [
        "kubernetes.k8s.example.com-c4:a6:ed:9a:a8:89:b9:e2:c3:9c:d6:63:eb:9c:71:57"]
    assert service.store.list("k8s.example.com/pki/ssh/") == [
        "k8s.example.com/pki/ssh/public/admin/c4a6ed9aa889b9e2c39cd663eb9c7157"]

    ec2 = boto3.client("ec2", region_name="us-east-1")
    owned = [{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}]
    vpcs = ec2.describe_vpcs(Filters=owned)["Vpcs"]
    subnets = ec2.describe_subnets(Filters=owned)["Subnets"]
    nats = ec2.describe_nat_gateways(Filters=owned)["NatGateways"]
    assert (len(vpcs), len(subnets), len(nats)) == vpcs_subnets_nats
    assert tag_dict(vpcs[0]["Tags"]) == {"KubernetesCluster": "k8s.example.com", "Name": "k8s.example.com",
                                         "kubernetes.io/cluster/k8s.example.com": "owned"}
    subnet_tags = tag_dict(subnets[0]["Tags"])
    assert subnet_tags["SubnetType"] in ("Public", "Private", "Utility")
    assert "kubernetes.io/role/internal-elb" in subnet_tags or "kubernetes.io/role/elb" in subnet_tags
    groups = {tag_dict(g["Tags"])["Name"] for g in ec2.describe_security_groups(Filters=owned)["SecurityGroups"]}
    # kops create cluster's default is dns None, so the API is reached through an NLB with its own group.
    assert groups == {"masters.k8s.example.com", "nodes.k8s.example.com", "api-elb.k8s.example.com"}
    elbv2 = boto3.client("elbv2", region_name="us-east-1")
    balancers = elbv2.describe_load_balancers()["LoadBalancers"]
    assert [b["LoadBalancerName"] for b in balancers] == ["api-k8s-example-com-1ddrig"]
    ports = sorted(listener["Port"] for listener in
                   elbv2.describe_listeners(LoadBalancerArn=balancers[0]["LoadBalancerArn"])["Listeners"])
    assert ports == [443, 3988]

    volumes = ec2.describe_volumes(Filters=owned)["Volumes"]
    etcd_tags = sorted(k for v in volumes for k in tag_dict(v["Tags"]) if k.startswith("k8s.io/etcd/"))
    members = len(service.read("k8s.example.com")[0]["spec"]["etcdClusters"][0]["etcdMembers"])
    assert etcd_tags == ["k8s.io/etcd/events"] * members + ["k8s.io/etcd/main"] * members
    iam = boto3.client("iam", region_name="us-east-1")
    profile = iam.get_instance_profile(InstanceProfileName="masters.k8s.example.com")["InstanceProfile"]
    assert [r["RoleName"] for r in profile["Roles"]] == ["masters.k8s.example.com"]
    assert iam.get_role_policy(RoleName="masters.k8s.example.com", PolicyName="masters.k8s.example.com")
    # Nodes may pull from ECR (allowContainerRegistry) but never read the state store.
    node_policy = iam.get_role_policy(RoleName="nodes.k8s.example.com", PolicyName="nodes.k8s.example.com")
    node_actions = [a for s in node_policy["PolicyDocument"]["Statement"] for a in s["Action"]]
    assert node_actions and all(a.startswith("ecr:") for a in node_actions)

    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.get_queue_url(QueueName="k8s-example-com-nth")["QueueUrl"]
    assert sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["MessageRetentionPeriod"])[
        "Attributes"]["MessageRetentionPeriod"] == "300"
    events = boto3.client("events", region_name="us-east-1")
    assert len(events.list_targets_by_rule(Rule="k8s.example.com-SpotInterruption")["Targets"]) == 1

    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"}
    assert _mutating(calls) == {}
    # One describe per kind, not per object (rules: one for all the cluster's security groups).
    assert calls["DescribeSubnets"] == 1 and calls["DescribeSecurityGroupRules"] == 1
    store = service.cluster_store("k8s.example.com")
    completed = store.read_completed_spec()
    assert completed["spec"]["kubeAPIServer"]["serviceClusterIPRange"] == "100.64.0.0/13"
    members = len(completed["spec"]["etcdClusters"][0]["etcdMembers"])
    assert json.loads(store.read("backups/etcd/main/control/etcd-cluster-spec")) == {
        "memberCount": members, "etcdVersion": "3.6.12"}
    assert store.read("kops-version.txt").decode().strip() == "1.37.0-alpha.1"


def test_a_spec_change_touches_exactly_its_objects(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    _update(service)
    cluster, groups = service.read("k8s.example.com")
    cluster["spec"]["nodePortAccess"] = ["10.20.0.0/16"]
    service.execute(service.plan_replace([cluster] + groups))
    counts, plan, calls = _update(service)
    changed = sorted(e.name for e in plan if e.action != "unchanged")
    assert changed == ["nodeport-tcp-external-to-node-10.20.0.0/16", "nodeport-udp-external-to-node-10.20.0.0/16"]
    assert _mutating(calls) == {"AuthorizeSecurityGroupIngress": 2}


def test_dry_run_reports_field_changes(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    _update(service)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "tag:Name", "Values": ["k8s.example.com"]}])["Vpcs"][0]
    ec2.modify_vpc_attribute(VpcId=vpc["VpcId"], EnableDnsHostnames={"Value": False})
    counts, plan, calls = _update(service, dry_run=True)
    assert counts["update"] == 1 and _mutating(calls) == {}
    entry = next(e for e in plan if e.action == "update")
    assert (entry.kind, entry.changes) == ("aws_vpc", {"enable_dns_hostnames": (False, True)})
    fixed, _plan, calls = _update(service)
    assert fixed["update"] == 1 and _mutating(calls) == {"ModifyVpcAttribute": 1}


def test_terraform_target_writes_kubernetes_tf(tmp_path):
    service = _service("file://%s" % (tmp_path / "state"))
    out = tmp_path / "tf"
    path, changed, text = updates.render_terraform(service, "k8s.example.com", str(out), dry_run=True)
    assert changed and not out.exists()
    path, changed, text = updates.render_terraform(service, "k8s.example.com", str(out), dry_run=False)
    assert changed and (out / "kubernetes.tf").read_text() == text
    assert 'resource "aws_vpc" "k8s-example-com"' in text
    assert updates.render_terraform(service, "k8s.example.com", str(out), dry_run=False)[1] is False


def test_shared_vpc_is_used_not_changed(aws, tmp_path):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]
    gateway = ec2.create_internet_gateway()["InternetGateway"]
    ec2.attach_internet_gateway(InternetGatewayId=gateway["InternetGatewayId"], VpcId=vpc["VpcId"])
    service = clusters.ClusterService("file://%s" % tmp_path,
                                      facts=cloudfacts.StaticCloudFacts({"vpcs": {vpc["VpcId"]: "10.0.0.0/16"}}))
    service.execute(service.plan_create({
        "cluster_name": "k8s.example.com", "cloud_provider": "aws", "networking": "cni",
        "kubernetes_version": "v1.34.2", "zones": ["us-east-1a"], "network_id": vpc["VpcId"], "image": MOTO_AMI}))
    _update(service)
    assert len(ec2.describe_vpcs()["Vpcs"]) == 2  # moto's default VPC and the shared one: none created
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}])["Subnets"]
    assert [s["CidrBlock"] for s in subnets] == ["10.0.0.0/16"]
    assert ec2.describe_vpcs(VpcIds=[vpc["VpcId"]])["Vpcs"][0].get("Tags") in (None, [])
    tables = ec2.describe_route_tables(Filters=[{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}])
    routes = tables["RouteTables"][0]["Routes"]
    assert any(r.get("GatewayId") == gateway["InternetGatewayId"] for r in routes)
    again, _plan, calls = _update(service)
    assert set(again) == {"unchanged"} and _mutating(calls) == {}


def test_bad_ssh_key_is_refused_before_anything_changes(aws, tmp_path):
    service = _service("file://%s" % tmp_path)
    with pytest.raises(updates.UpdateError) as error:
        _update(service, ssh_public_key="ssh-rsa not-base64!")
    assert "ssh_public_key" in str(error.value)
    assert boto3.client("ec2", region_name="us-east-1").describe_vpcs(
        Filters=[{"Name": "tag:KubernetesCluster", "Values": ["k8s.example.com"]}])["Vpcs"] == []


def test_cloudformation_target_writes_a_template(tmp_path):
    service = _service("file://%s" % (tmp_path / "state"))
    out = tmp_path / "cfn"
    path, changed, text = updates.render_cloudformation(service, "k8s.example.com", str(out), dry_run=False)
    assert changed and path.endswith("kubernetes.json") and (out / "kubernetes.json").read_text() == text
    assert updates.render_cloudformation(service, "k8s.example.com", str(out), dry_run=False)[1] is False
