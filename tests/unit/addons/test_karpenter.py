"""The Karpenter addon (karpenter.sh): its CRDs, controller, IRSA wiring, and an EC2NodeClass and NodePool per
Karpenter instance group, as kops' template functions build them.

In CI (our own spec): the objects, what each group field changes, the channel entry (prune kinds with
Karpenter's node objects), refusals, and the CRD generator on a made-up kops tree.  With KOPS_SOURCE: the addon
byte-equal to kops' rendered file in its karpenter fixture, given what kops' test harness gives its template
(its mock cloud's root device /dev/xvda, its nodeupscript files as the boot scripts), and the committed CRD table
equal to what kops' template generates."""

from __future__ import annotations

import copy
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel, karpenter
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import karpenter as karpenter_model
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import update_facts
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.node_labels import build_node_labels

from tests.conformance import kops_fixtures
from tests.unit.addons.test_addons_vs_kops import (ACCOUNT, addon_key, kops_files, kops_harness_nodes,
                                                   kops_partition_as_ours, load_case)

REPO = pathlib.Path(__file__).resolve().parents[3]
KOPS = os.environ.get("KOPS_SOURCE")
NEEDS_KOPS = pytest.mark.skipif(not KOPS, reason="KOPS_SOURCE is not set: point it at a kops checkout to compare "
                                "with kops' rendered files")
MANIFEST = "addons/karpenter.sh/k8s-1.19.yaml"
CRD_DATA = REPO / "plugins/module_utils/addons/generated/karpenter_crds.py"
IMAGE = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250610"


def _group(name, **spec):
    return {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup", "metadata": {"name": name},
            "spec": dict({"role": "Node", "manager": "Karpenter", "subnets": ["us-test-1a"], "image": IMAGE}, **spec)}


def _case(*karpenter_groups, **karpenter_config):
    completed, groups = load_case(kops_fixtures.UPDATE_CLUSTER / "minimal-aws")
    completed = copy.deepcopy(completed)
    completed["spec"]["karpenter"] = dict({"enabled": True, "image": "public.ecr.aws/karpenter/controller:1.13.0",
                                           "logLevel": "debug"}, **karpenter_config)
    completed["spec"]["iam"] = dict(completed["spec"].get("iam") or {}, useServiceAccountExternalPermissions=True)
    return completed, list(groups) + list(karpenter_groups)


def _render(completed, groups, root_device="/dev/xvda"):
    user_data = {g["metadata"]["name"]: "#!/bin/bash\necho %s\n" % g["metadata"]["name"]
                 for g in karpenter_model.karpenter_groups(groups)}
    nodes = karpenter_model.node_inputs(completed, groups, user_data, {g["spec"]["image"]: root_device for g in groups},
                                        build_node_labels)
    files = dict(channel.render(completed, groups, account_id=ACCOUNT, karpenter_nodes=nodes))
    entries = {e["name"]: e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]}
    return [d for d in yaml.safe_load_all(files[MANIFEST]) if d], entries


def _by_kind(documents, kind):
    return {d["metadata"]["name"]: d for d in documents if d["kind"] == kind}


def test_controller_crds_and_irsa():
    documents, entries = _render(*_case(cpuRequest="100m", memoryLimit="2Gi", featureGates="StaticCapacity=true"))
    assert [d["metadata"]["name"] for d in documents if d["kind"] == "CustomResourceDefinition"] == [
        "ec2nodeclasses.karpenter.k8s.aws", "nodeclaims.karpenter.sh", "nodeoverlays.karpenter.sh",
        "nodepools.karpenter.sh"]
    deployment = _by_kind(documents, "Deployment")["karpenter"]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FEATURE_GATES"] == "StaticCapacity=true"
    assert env["CLUSTER_NAME"] == "minimal-aws.example.com"
    assert env["CLUSTER_ENDPOINT"] == "https://api.internal.minimal-aws.example.com"
    assert env["AWS_REGION"] == "us-test-1"
    assert env["AWS_ROLE_ARN"] == "arn:aws:iam::%s:role/karpenter.kube-system.sa.minimal-aws.example.com" % ACCOUNT
    assert container["resources"] == {"limits": {"memory": "2Gi"}, "requests": {"cpu": "100m", "memory": "1Gi"}}
    assert pod["securityContext"]["fsGroup"] == 65532  # the chart's own, kept by the IRSA wiring
    assert pod["dnsPolicy"] == "Default"
    # The channel entry prunes Karpenter's node objects too (kops' pruning.go).
    kinds = [(k.get("group", ""), k["kind"]) for k in entries["karpenter.sh"]["prune"]["kinds"]]
    assert ("karpenter.k8s.aws", "EC2NodeClass") in kinds and ("karpenter.sh", "NodePool") in kinds
    assert kinds == sorted(kinds)
    assert "karpenter.sh" not in channel.not_rendered(channel.Facts(*_case()))


def test_default_feature_gates_and_ipv6_dns():
    completed, groups = _case()
    completed["spec"]["nonMasqueradeCIDR"] = "::/0"
    documents, _entries = _render(completed, groups)
    pod = _by_kind(documents, "Deployment")["karpenter"]["spec"]["template"]["spec"]
    assert pod["dnsPolicy"] == "ClusterFirst"
    assert pod["containers"][0]["env"][0]["value"] == karpenter.DEFAULT_FEATURE_GATES


def test_node_class_and_pool_per_group_in_name_order():
    groups = [_group("spot", machineType="m5.large,c5.large", maxPrice="0.1", maxSize=5, minSize=0,
                     taints=["dedicated=batch:NoSchedule", "gpu:NoExecute"], nodeLabels={"team": "a",
                                                                                         "karpenter.sh/x": "y"},
                     rootVolumeType="io1", rootVolumeIops=50, rootVolumeSize=40,
                     kubelet={"maxPods": 30}, securityGroupOverride="sg-1", additionalSecurityGroups=["sg-2"]),
              _group("default", image="ami-0123", associatePublicIp=False)]
    documents, _entries = _render(*_case(*groups))
    classes, pools = _by_kind(documents, "EC2NodeClass"), _by_kind(documents, "NodePool")
    assert [d["metadata"]["name"] for d in documents if d["kind"] in ("EC2NodeClass", "NodePool")] == [
        "default", "default", "spot", "spot"]
    spot = classes["spot"]["spec"]
    assert spot["amiSelectorTerms"] == [{"name": IMAGE.split("/", 1)[1], "owner": "099720109477"}]
    assert spot["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {
        "deleteOnTermination": True, "encrypted": True, "iops": 100, "volumeSize": "40Gi", "volumeType": "io1"}}]
    assert spot["securityGroupSelectorTerms"] == [{"id": "sg-1"}, {"id": "sg-2"}]
    assert spot["kubelet"] == {"maxPods": 30}
    assert spot["userData"] == "#!/bin/bash\necho spot\n"
    assert spot["instanceProfile"] == "nodes.minimal-aws.example.com"
    assert spot["tags"]["kops.k8s.io/instancegroup"] == "spot"
    assert not any(k.startswith("kubernetes.io/cluster") for k in spot["tags"])
    pool = pools["spot"]["spec"]
    assert pool["template"]["metadata"]["labels"] == {"node-role.kubernetes.io/node": "", "team": "a"}
    assert pool["template"]["spec"]["taints"] == [{"effect": "NoSchedule", "key": "dedicated", "value": "batch"},
                                                  {"effect": "NoExecute", "key": "gpu"}]
    assert pool["template"]["spec"]["requirements"][1:] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c5.large", "m5.large"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
    assert pool["limits"] == {"nodes": "5"} and "replicas" not in pool
    default = classes["default"]["spec"]
    assert default["amiSelectorTerms"] == [{"id": "ami-0123"}]
    assert default["associatePublicIPAddress"] is False
    assert default["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "128Gi"
    assert "kubelet" not in default


@pytest.mark.parametrize("image, terms", [
    ("ssm:/aws/service/x", [{"ssmParameter": "/aws/service/x"}]),
    ("my-image", [{"name": "my-image", "owner": "self"}]),
    ("123456789012/name", [{"name": "name", "owner": "123456789012"}]),
])
def test_ami_selector_terms(image, terms):
    assert karpenter.ami_selector_terms("g", image) == terms


@pytest.mark.parametrize("image", ["", "https://x/y", "/name", "ssm:"])
def test_bad_image_is_one_line_naming_the_group(image):
    with pytest.raises(AddonError, match="instance group g: spec.image"):
        karpenter.ami_selector_terms("g", image)


def test_without_the_model_inputs_the_addon_refuses():
    completed, groups = _case(_group("karpenter-nodes"))
    with pytest.raises(AddonError, match="instance group karpenter-nodes is managed by Karpenter"):
        channel.render(completed, groups, account_id=ACCOUNT)


def test_root_device_guessed_by_owner_without_a_cloud():
    warnings = []
    groups = [_group("a"), _group("b", image="ami-1"), _group("c", manager="CloudGroup", image="x/y")]
    assert update_facts.root_device_names(None, groups, warnings.append) == {IMAGE: "/dev/sda1", "ami-1": "/dev/xvda"}
    assert len(warnings) == 2 and "render again with AWS credentials" in warnings[0]


# ---------------------------------------------------------------- the CRD generator


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_crds.py"), "--addon", "karpenter",
                           "--kops", str(kops)]
                          + list(args), capture_output=True, text=True, check=False, timeout=120)


def test_generator_keeps_the_crds_only(tmp_path):
    template = tmp_path / "upup/models/cloudup/resources/addons/karpenter.sh"
    template.mkdir(parents=True)
    (template / "k8s-1.19.yaml.template").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: pools.karpenter.sh\n"
        "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: '{{ ClusterName }}'\n")
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    result = _generator(tmp_path, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    table = {}
    exec(compile(result.stdout, "crds", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["CRDS"] == [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "pools.karpenter.sh"}}]


@NEEDS_KOPS
def test_committed_crds_are_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(KOPS, *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == CRD_DATA.read_text()


# ---------------------------------------------------------------- kops' karpenter fixture


@NEEDS_KOPS
def test_byte_equal_to_kops():
    directory = pathlib.Path(KOPS) / "tests/integration/update_cluster/karpenter"
    completed, groups = load_case(directory)
    theirs = kops_partition_as_ours(kops_files(directory, completed["metadata"]["name"]))
    ours = {addon_key(path): data for path, data in channel.render(
        completed, groups, account_id=ACCOUNT, karpenter_nodes=kops_harness_nodes(directory, completed, groups))}
    assert ours["karpenter.sh-k8s-1.19"] == theirs["karpenter.sh-k8s-1.19"]
    their_entries = {e["name"]: e for e in yaml.safe_load(theirs["bootstrap"])["spec"]["addons"]}
    our_entries = {e["name"]: e for e in yaml.safe_load(ours["bootstrap"])["spec"]["addons"]}
    assert our_entries["karpenter.sh"] == their_entries["karpenter.sh"]


class _Images(object):
    """A cloud whose EC2 answers DescribeImages with one image (the newest of two)."""

    def __init__(self):
        self.asked = []

        class _Ec2(object):
            def describe_images(inner, **query):  # pylint: disable=no-self-argument
                self.asked.append(query)
                return {"Images": [{"ImageId": "ami-old", "RootDeviceName": "/dev/xvda", "CreationDate": "2020"},
                                   {"ImageId": "ami-new", "RootDeviceName": "/dev/nvme0n1", "CreationDate": "2025"}]}
        self.ec2 = _Ec2()

    def lookup(self, key, fetch):
        del key
        return fetch()


def test_driver_asks_the_cloud_for_the_root_device_and_passes_the_boot_scripts():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.driver import AwsDriver
    completed, groups = _case(_group("karpenter-nodes"))
    cloud, warnings = _Images(), []
    nodes = AwsDriver().karpenter_nodes(lambda: cloud, completed, groups, {"karpenter-nodes": "#!/bin/bash\n", "nodes": "x"},
                                        warnings.append)
    assert set(nodes) == {"karpenter-nodes"} and warnings == []
    assert nodes["karpenter-nodes"]["root_device_name"] == "/dev/nvme0n1"  # the newest match, as the launch templates'
    assert nodes["karpenter-nodes"]["user_data"] == "#!/bin/bash\n"
    assert cloud.asked == [{"Owners": ["099720109477"], "Filters": [{"Name": "name", "Values": [IMAGE.split("/", 1)[1]]}]}]
    # Without Karpenter, nothing is asked.
    completed["spec"]["karpenter"]["enabled"] = False
    assert AwsDriver().karpenter_nodes(lambda: cloud, completed, groups, {}, warnings.append) is None
