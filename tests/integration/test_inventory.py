"""The kops inventory plugin against moto: one filtered describe, groups per role/group/zone, bastion jump."""

from __future__ import annotations

import json
import subprocess

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import inventory as aws_inventory
from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService

from tests.integration.conftest import BIN, REPO, ansible_env

OPTIONS = {"cluster_name": "inv.example.com", "cloud_provider": "aws", "zones": ["us-east-1a", "us-east-1b"],
           "networking": "cni", "kubernetes_version": "v1.34.2", "topology": "private", "bastion": True,
           "ssh_access": ["0.0.0.0/0"]}


def _create_cluster(store_url):
    service = ClusterService(store_url)
    service.execute(service.plan_create(OPTIONS))
    _cluster, groups = service.read("inv.example.com")
    return groups


def _run_instances(groups):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="172.20.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="172.20.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    for group in groups + [{"metadata": {"name": "karpenter-nodes"}}]:
        tags = [{"Key": "KubernetesCluster", "Value": "inv.example.com"},
                {"Key": "kops.k8s.io/instancegroup", "Value": group["metadata"]["name"]}]
        ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, SubnetId=subnet["SubnetId"],
                          TagSpecifications=[{"ResourceType": "instance", "Tags": tags}])
    other = [{"Key": "KubernetesCluster", "Value": "other.example.com"},
             {"Key": "kops.k8s.io/instancegroup", "Value": "nodes"}]
    ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, SubnetId=subnet["SubnetId"],
                      TagSpecifications=[{"ResourceType": "instance", "Tags": other}])


def test_inventory_lists_the_cluster_instances_by_group(aws, tmp_path):
    store_url = "file://%s" % (tmp_path / "state")
    groups = _create_cluster(store_url)
    _run_instances(groups)
    config = tmp_path / "cluster.kops.yml"
    config.write_text("plugin: kubeops.kops.kops\nstate_store: %s\ncluster_name: inv.example.com\n" % store_url)
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(config), "--list"],
                          env=ansible_env(REPO / "build" / "collections"), capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    inventory = json.loads(proc.stdout)
    names = sorted(g["metadata"]["name"] for g in groups)
    assert sorted(k[3:] for k in inventory if k.startswith("ig_")) == sorted(n.replace("-", "_") for n in names)
    assert len(inventory["role_control_plane"]["hosts"]) == 1 and len(inventory["role_bastion"]["hosts"]) == 1
    # ansible-inventory marks values read from the cloud as unsafe (never templated): unwrap them to compare.
    hostvars = json.loads(json.dumps(inventory["_meta"]["hostvars"]),
                          object_hook=lambda d: d.get("__ansible_unsafe", d) if len(d) == 1 else d)
    assert len(hostvars) == len(groups)  # neither the other cluster's instance nor the untracked group
    node = next(v for v in hostvars.values() if v["kops_role"] == "Node")
    assert node["kops_cluster_name"] == "inv.example.com" and node["kops_state_store"] == store_url
    assert node["ansible_host"] == node["kops_private_ip"] and node["ansible_user"] == "ubuntu"


def test_private_hosts_jump_through_the_bastion():
    groups = [{"metadata": {"name": "bastions"}, "spec": {"role": "Bastion"}},
              {"metadata": {"name": "nodes"}, "spec": {"role": "Node"}}]

    def instance(iid, group, private, public=None):
        found = {"InstanceId": iid, "PrivateIpAddress": private, "Placement": {"AvailabilityZone": "us-east-1a"},
                 "Tags": [{"Key": "kops.k8s.io/instancegroup", "Value": group}]}
        if public:
            found["PublicIpAddress"] = public
        return found

    hosts = aws_inventory.instance_hosts("c.example.com", groups, [
        instance("i-2", "nodes", "10.0.1.5"), instance("i-1", "bastions", "10.0.0.4", "198.51.100.7")],
        "private-ip-address", "s3://b", "admin")
    by_name = {name: variables for name, variables, _groups in hosts}
    assert by_name["10.0.1.5"]["ansible_ssh_common_args"] == "-o ProxyJump=admin@198.51.100.7"
    assert "ansible_ssh_common_args" not in by_name["10.0.0.4"]
    assert [g for _n, _v, g in hosts][0] == ["kops_c_example_com", "role_bastion", "ig_bastions", "zone_us_east_1a"]


# -- a fleet as kops runs it: 2,000 instances in 50 autoscaling groups ---------------------------------------

FLEET = "fleet.example.com"
FLEET_GROUPS, PER_GROUP = 50, 40
CALL_LOG_SITE = REPO / "tests" / "integration" / "call_log"  # its sitecustomize records botocore calls


def _fleet(store_url, groups=FLEET_GROUPS, per_group=PER_GROUP):
    """The cluster in the store (private topology, a bastion, `groups` instance groups) and on moto: per group a
    launch template and an autoscaling group following $Latest, tagged as kops tags them, per_group instances each
    (bench/inventory.py builds its fleet here too)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import resource_name_32
    service = ClusterService(store_url)
    service.execute(service.plan_create(dict(OPTIONS, cluster_name=FLEET, zones=["us-east-1a"])))
    existing = [g["metadata"]["name"] for g in service.read(FLEET)[1]]
    for index in range(groups - len(existing)):
        service.execute(service.plan_instance_group(FLEET, {"metadata": {"name": "extra-%02d" % index},
                                                            "spec": {"role": "Node", "machineType": "t3.medium"}}))
    names = sorted(g["metadata"]["name"] for g in service.read(FLEET)[1])
    assert len(names) == groups
    ec2 = boto3.client("ec2", region_name="us-east-1")
    autoscaling = boto3.client("autoscaling", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="172.20.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="172.20.0.0/17", AvailabilityZone="us-east-1a")["Subnet"]
    templates = {}
    for name in names:
        tags = [{"Key": "KubernetesCluster", "Value": FLEET}, {"Key": "kops.k8s.io/instancegroup", "Value": name},
                {"Key": "kubernetes.io/cluster/" + FLEET, "Value": "owned"}, {"Key": "Name", "Value": name}]
        templates[name] = ec2.create_launch_template(
            LaunchTemplateName="%s.%s" % (name, FLEET), TagSpecifications=[{"ResourceType": "launch-template",
                                                                            "Tags": tags}],
            LaunchTemplateData={"ImageId": "ami-1e749f67", "InstanceType": "t3.medium",
                                "TagSpecifications": [{"ResourceType": "instance", "Tags": tags}]},
        )["LaunchTemplate"]["LaunchTemplateId"]
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName="%s.%s" % (name, FLEET), MinSize=per_group, MaxSize=per_group,
            DesiredCapacity=per_group, VPCZoneIdentifier=subnet["SubnetId"],
            LaunchTemplate={"LaunchTemplateId": templates[name], "Version": "$Latest"},
            Tags=[dict(t, PropagateAtLaunch=True) for t in tags])
    balancer = boto3.client("elbv2", region_name="us-east-1").create_load_balancer(
        Name=resource_name_32(FLEET, "bastion"), Type="network", Subnets=[subnet["SubnetId"]])["LoadBalancers"][0]
    return names, templates, balancer["DNSName"]


def _inventory(config, call_log):
    env = ansible_env(REPO / "build" / "collections")
    # A source that fails to parse must fail the run (ansible-inventory otherwise warns and lists nothing), and moto
    # serializes DescribeInstances at ~30-70 ms per instance: a page of 1000 outlasts the 60 s default read timeout.
    env.update(PYTHONPATH=str(CALL_LOG_SITE), KOPS_TEST_CALL_LOG=str(call_log), KOPS_AWS_READ_TIMEOUT="600",
               ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true")
    call_log.write_text("")
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(config), "--list"], env=env,
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    inventory = json.loads(proc.stdout)
    hostvars = json.loads(json.dumps(inventory["_meta"]["hostvars"]),
                          object_hook=lambda d: d.get("__ansible_unsafe", d) if len(d) == 1 else d)
    return inventory, hostvars, call_log.read_text().split("\n")[:-1]


def test_a_fleet_of_2000_in_batched_calls_with_updates_jumps_constructs_and_cache(aws, tmp_path):
    store_url = "file://%s" % (tmp_path / "state")
    names, templates, bastion_dns = _fleet(store_url)
    changed = "extra-00"
    ec2 = boto3.client("ec2", region_name="us-east-1")
    ec2.create_launch_template_version(LaunchTemplateId=templates[changed], SourceVersion="1",
                                       LaunchTemplateData={"InstanceType": "t3.large"})
    config = tmp_path / "fleet.kops.yml"
    config.write_text("\n".join([
        "plugin: kubeops.kops.kops", "state_store: %s" % store_url, "cluster_name: %s" % FLEET,
        "cache: true", "cache_plugin: ansible.builtin.jsonfile", "cache_connection: %s" % (tmp_path / "cache"),
        "compose:", "  kops_ig_and_zone: kops_instance_group ~ '@' ~ kops_zone",
        "keyed_groups:", "  - key: kops_status", "    prefix: status",
        "groups:", "  stale_nodes: kops_needs_update and kops_role == 'Node'", ""]))
    inventory, hostvars, calls = _inventory(config, tmp_path / "calls.log")

    assert len(hostvars) == FLEET_GROUPS * PER_GROUP
    # Batched: one autoscaling page walk, one template walk, DescribeInstances by the 1000, one bastion lookup.
    by_operation = {op: calls.count(op) for op in set(calls)}
    assert by_operation.pop("autoscaling DescribeAutoScalingGroups") == 1, calls
    assert by_operation.pop("ec2 DescribeLaunchTemplates") == 1, calls
    assert 1 <= by_operation.pop("ec2 DescribeInstances") <= FLEET_GROUPS * PER_GROUP // 1000, calls
    assert by_operation.pop("elbv2 DescribeLoadBalancers") == 1, calls
    assert by_operation == {}, calls

    # needs_update: exactly the changed group's instances (template version 1, its group now at 2).
    stale = sorted(h for h, v in hostvars.items() if v["kops_needs_update"])
    assert stale == sorted(inventory["needs_update"]["hosts"]) == sorted(inventory["stale_nodes"]["hosts"])
    assert {hostvars[h]["kops_instance_group"] for h in stale} == {changed} and len(stale) == PER_GROUP
    sample = hostvars[stale[0]]
    assert (sample["kops_launch_template_id"], sample["kops_launch_template_version"],
            sample["kops_group_launch_template_version"], sample["kops_status"]) == (
        templates[changed], "1", "2", "NeedsUpdate")
    assert sorted(inventory["status_NeedsUpdate"]["hosts"]) == stale
    assert len(inventory["status_UpToDate"]["hosts"]) == (FLEET_GROUPS - 1) * PER_GROUP
    fresh = next(v for v in hostvars.values() if v["kops_instance_group"] == "nodes-us-east-1a")
    assert fresh["kops_needs_update"] is False and fresh["kops_autoscaling_group"] == "nodes-us-east-1a." + FLEET
    assert fresh["kops_ig_and_zone"] == "nodes-us-east-1a@us-east-1a" and fresh["kops_role"] == "Node"

    # Private topology: hosts without a public address jump through the bastion's load balancer.
    private = [v for v in hostvars.values() if not v["kops_public_ip"] and v["kops_role"] != "Bastion"]
    assert private and all(v["ansible_ssh_common_args"] == "-o ProxyJump=ubuntu@%s" % bastion_dns
                           and v["ansible_host"] == v["kops_private_ip"] for v in private)
    assert len(inventory["role_bastion"]["hosts"]) == PER_GROUP and len(inventory["role_control_plane"]["hosts"]) == PER_GROUP

    # Cached: the same inventory with no AWS call at all.
    cached, cached_hostvars, cached_calls = _inventory(config, tmp_path / "calls.log")
    assert cached_calls == [] and cached_hostvars == hostvars
    assert sorted(cached["needs_update"]["hosts"]) == stale
