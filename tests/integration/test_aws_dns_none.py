"""A cluster without DNS (kops' dns: None) against moto: workers reach the bootstrap service and the API through
the API load balancer, as kops' do.

kops bakes the balancer's private addresses into each worker's boot config (APIServerIPs) and its nodeup pins
kops-controller.internal.<c> and api.internal.<c> to them; ours: the boot script's /etc/hosts block
(nodeconfig/bootstrap.py), the addresses from model/aws/kops_controller.py.  moto makes no network interfaces for a
balancer, so the test makes them as AWS does (description "ELB net/<name>/<id>", in the balancer's subnet).
"""

from __future__ import annotations

import base64

import boto3
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import kops_controller
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import update_facts
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import resource_name_32

CLUSTER = "k8s.example.com"
MOTO_AMI = "ami-1e749f67"
SERVICE = "kops-controller.internal.%s" % CLUSTER
API = "api.internal.%s" % CLUSTER


def _service(store):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({
        "cluster_name": CLUSTER, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
        "zones": ["us-east-1a"], "image": MOTO_AMI, "dns_type": "none"}))
    return service


def _balancer_interfaces(ec2, elbv2, addresses):
    """What AWS makes for a network load balancer: one interface per subnet, described "ELB net/<name>/<id>"."""
    balancer = next(b for b in elbv2.describe_load_balancers()["LoadBalancers"]
                    if b["LoadBalancerName"] == resource_name_32(CLUSTER, "api"))
    subnet = balancer["AvailabilityZones"][0]["SubnetId"]
    description = "ELB net/%s/%s" % (balancer["LoadBalancerName"], balancer["LoadBalancerArn"].rsplit("/", 1)[-1])
    for address in addresses:
        ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=address, Description=description)
    # Another balancer's interface in the same VPC is not this cluster's.
    ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="172.20.32.200",
                                 Description="ELB net/someone-else/0123456789abcdef")
    return balancer


def _worker_user_data(ec2):
    templates = {t["LaunchTemplateName"]: t for t in ec2.describe_launch_templates()["LaunchTemplates"]}
    version = ec2.describe_launch_template_versions(LaunchTemplateId=templates["nodes-us-east-1a.%s" % CLUSTER][
        "LaunchTemplateId"], Versions=["$Latest"])["LaunchTemplateVersions"][0]
    return base64.b64decode(version["LaunchTemplateData"]["UserData"]).decode()


def test_workers_pin_the_control_plane_names_to_the_balancer_once_it_exists(aws, tmp_path, monkeypatch):
    service = _service("file://%s" % tmp_path)
    ec2, elbv2 = boto3.client("ec2", region_name="us-east-1"), boto3.client("elbv2", region_name="us-east-1")
    completed, _groups = updates.load_completed(service, CLUSTER)
    assert kops_controller.uses_load_balancer(completed["spec"])
    network = completed["spec"]["networkCIDR"]
    assert network == "172.20.0.0/16"
    wanted = ["172.20.32.10"]

    # First run: the balancer is made in this run; AWS gives it its interfaces (here: after the first pass).
    real_run, passes = updates.runner.run, []

    def run(tasks, cloud, **kwargs):
        plan = real_run(tasks, cloud, **kwargs)
        if not passes:
            _balancer_interfaces(ec2, elbv2, wanted)
        passes.append(plan)
        return plan
    monkeypatch.setattr(updates.runner, "run", run)
    plan, _completed, _changed = updates.apply_direct(service, CLUSTER, False)
    assert len(passes) == 2, "a second pass writes the workers' launch templates with the balancer's addresses"
    second = {(e.kind, e.name): e.action for e in passes[1] if e.action != "unchanged"}
    assert second == {("aws_launch_template", "nodes-us-east-1a.%s" % CLUSTER): "update"}, second
    merged = {(e.kind, e.name): e.action for e in plan}
    assert merged[("aws_launch_template", "nodes-us-east-1a.%s" % CLUSTER)] == "create"
    assert merged[("aws_lb", "api.%s" % CLUSTER)] == "create"

    user_data = _worker_user_data(ec2)
    block = "# Begin host entries managed by kubeops.kops\n172.20.32.10\t%s %s\n" % (API, SERVICE)
    assert block in user_data and "172.20.32.200" not in user_data
    assert user_data.index(block) < user_data.index("RETRY_ATTEMPTS=60 retry fetch_config")
    assert "CONFIG_SERVER='{\"caCert\"" in user_data and "igconfig" not in user_data
    templates = {t["LaunchTemplateName"]: t for t in ec2.describe_launch_templates()["LaunchTemplates"]}
    control_plane = ec2.describe_launch_template_versions(
        LaunchTemplateId=templates["control-plane-us-east-1a.masters.%s" % CLUSTER]["LaunchTemplateId"],
        Versions=["$Latest"])["LaunchTemplateVersions"][0]
    assert "Begin host entries" not in base64.b64decode(control_plane["LaunchTemplateData"]["UserData"]).decode()

    # Second run: the addresses are found before the run, nothing changes, one pass.
    passes.clear()
    plan, _completed, _changed = updates.apply_direct(service, CLUSTER, False)
    assert len(passes) == 1 and {e.action for e in plan} == {"unchanged"}, [
        (e.kind, e.name, e.changes) for e in plan if e.action != "unchanged"]


@pytest.mark.parametrize("spec, addresses, expected", [
    ({"networkCIDR": "172.20.0.0/16"}, ["api-x.elb.amazonaws.com", "172.20.32.10", "10.1.2.3", "2001:db8::5"],
     ["172.20.32.10", "2001:db8::5"]),
    ({"networkCIDR": "172.20.0.0/16", "additionalNetworkCIDRs": ["10.1.0.0/16"]}, ["10.1.2.3", "172.20.32.10"],
     ["10.1.2.3", "172.20.32.10"]),
    ({"networkCIDR": "172.20.0.0/16", "nonMasqueradeCIDR": "::/0"}, ["172.20.32.10", "2001:db8::5"], ["2001:db8::5"]),
])
def test_kops_select_control_plane_ips(spec, addresses, expected):
    """kops' selectControlPlaneIPs on AWS: in the network CIDRs or IPv6; IPv6 only in an IPv6-only cluster."""
    assert kops_controller.select_control_plane_ips(spec, addresses) == expected


def test_a_cluster_with_dns_asks_nothing():
    class NoCalls(object):
        def client(self, name):
            raise AssertionError("asked %s" % name)
    completed = {"metadata": {"name": CLUSTER}, "spec": {"api": {"loadBalancer": {"type": "Public"}},
                                                         "topology": {"dns": {"type": "Public"}}}}
    assert update_facts.control_plane_addresses(NoCalls(), completed) == []


def test_a_balancer_just_made_is_waited_for_and_a_stuck_one_fails_naming_the_fix():
    """kops waits for the balancer to be ready before it reads its addresses (SetWaitForLoadBalancerReady)."""
    states = iter(["provisioning", "provisioning", "active"])

    class Balancers(object):
        def __init__(self, state):
            self.state = state

        def client(self, name):
            assert name == "elbv2"
            return self

        def describe_load_balancers(self, Names):
            assert Names == [resource_name_32(CLUSTER, "api")]
            return {"LoadBalancers": [{"State": {"Code": self.state()}}]}

    completed = {"metadata": {"name": CLUSTER}}
    slept, now = [], [0.0]

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds
    update_facts.wait_until_active(Balancers(lambda: next(states)), completed, 60, sleep=sleep, clock=lambda: now[0])
    assert slept == [5, 5]
    with pytest.raises(ValueError, match="is provisioning after 30 s.*run update again once it is active"):
        update_facts.wait_until_active(Balancers(lambda: "provisioning"), completed, 30, sleep=sleep,
                                       clock=lambda: now[0])


def test_a_cluster_whose_balancer_names_hold_two_hyphens_is_made(aws, tmp_path):
    """walk-cluster.example.com: kops' GetResourceName32 truncates tcp-walk-cluster-example-com after a hyphen, so the
    API's target group is tcp-walk-cluster-example--<hash>, which AWS takes (tests/moto_server.py says why moto needs
    telling); the cluster is made and a second run changes nothing."""
    name = "walk-cluster.example.com"
    service = clusters.ClusterService("file://%s" % tmp_path)
    service.execute(service.plan_create({
        "cluster_name": name, "cloud_provider": "aws", "networking": "cni", "kubernetes_version": "v1.34.2",
        "zones": ["us-east-1a"], "image": MOTO_AMI, "dns_type": "none"}))
    assert "--" in resource_name_32(name, "tcp")
    updates.apply_direct(service, name, False)
    groups = boto3.client("elbv2", region_name="us-east-1").describe_target_groups()["TargetGroups"]
    assert resource_name_32(name, "tcp") in [g["TargetGroupName"] for g in groups]
    _plan, _completed, changed = updates.apply_direct(service, name, False)
    assert not changed
