"""The kops inventory plugin against moto: one filtered describe, groups per role/group/zone, bastion jump."""

from __future__ import annotations

import json
import subprocess

import boto3

from ansible_collections.kubeops.kops.plugins.inventory import kops as kops_inventory
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

    hosts = kops_inventory.instance_hosts("c.example.com", groups, [
        instance("i-2", "nodes", "10.0.1.5"), instance("i-1", "bastions", "10.0.0.4", "198.51.100.7")],
        "private-ip-address", "s3://b", "admin")
    by_name = {name: variables for name, variables, _groups in hosts}
    assert by_name["10.0.1.5"]["ansible_ssh_common_args"] == "-o ProxyJump=admin@198.51.100.7"
    assert "ansible_ssh_common_args" not in by_name["10.0.0.4"]
    assert [g for _n, _v, g in hosts][0] == ["kops_c_example_com", "role_bastion", "ig_bastions", "zone_us_east_1a"]
