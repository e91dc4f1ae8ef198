"""The labels of each instance group's nodes (kops' BuildNodeLabels) against kops' own fixtures: the nodeup
configs' KubeletConfig.nodeLabels and, for every AWS case, the autoscaling groups' cluster-autoscaler
node-template label tags (kops writes BuildNodeLabels there: pkg/model/context.go CloudTagsForInstanceGroup)."""

from __future__ import annotations

import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config, node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

from tests.conformance import kops_fixtures
from tests.unit.completion.test_populate import _case, _cloud

NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
CASES = sorted(p.parent.name for p in kops_fixtures.UPDATE_CLUSTER.glob("*/in-v1alpha2.yaml"))
NODEUP_CONFIG_CASES = sorted((p.parent.parent.name, p.name[len("aws_s3_object_nodeupconfig-"):-len("_content")])
                             for p in kops_fixtures.UPDATE_CLUSTER.glob("*/data/aws_s3_object_nodeupconfig-*_content"))
# GCE cases have none: kops leaves node labels off GCE instance templates (GCE's 63-character label limit).
TF_CASES = sorted(p.parent.name for p in kops_fixtures.UPDATE_CLUSTER.glob("*/kubernetes.tf")
                  if 'resource "aws_autoscaling_group"' in p.read_text())


def _completed(name):
    cluster, groups = _case(name)
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    return completed, {objects.name_of(g): populate.populate_instance_group_spec(completed, g) for g in groups}


def _asg_template_labels(text):
    """{instance group: {label: value}} from kops' aws_autoscaling_group resources' node-template label tags."""
    found = {}
    for block in re.split(r'\nresource "', text):
        if not block.startswith('aws_autoscaling_group"'):
            continue
        tags = dict(re.findall(r'tag \{\s*key\s*=\s*"([^"]*)"\s*propagate_at_launch\s*=\s*\w+\s*value\s*=\s*"([^"]*)"',
                               block))
        found[tags["kops.k8s.io/instancegroup"]] = {k[len(NODE_TEMPLATE_LABEL):]: v for k, v in tags.items()
                                                    if k.startswith(NODE_TEMPLATE_LABEL)}
    return found


def test_the_fixtures_are_there():
    assert len(NODEUP_CONFIG_CASES) >= 4 and len(TF_CASES) >= 5


@pytest.mark.parametrize("name, group", NODEUP_CONFIG_CASES)
def test_build_node_labels_is_kops_nodeup_config_node_labels(name, group):
    completed, groups = _completed(name)
    path = kops_fixtures.UPDATE_CLUSTER / name / "data" / ("aws_s3_object_nodeupconfig-%s_content" % group)
    expected = yaml.safe_load(path.read_text())["KubeletConfig"]["nodeLabels"]
    assert node_labels.build_node_labels(completed["spec"], groups[group]) == expected


@pytest.mark.parametrize("name", TF_CASES)
def test_build_node_labels_is_kops_autoscaling_group_node_template_labels(name):
    completed, groups = _completed(name)
    expected = _asg_template_labels((kops_fixtures.UPDATE_CLUSTER / name / "kubernetes.tf").read_text())
    assert expected, "no autoscaling group in %s" % name
    for group, labels in expected.items():
        assert node_labels.build_node_labels(completed["spec"], groups[group]) == labels, group


def test_node_labels_add_the_instance_group_and_cluster_kubelet_labels_merge_under_the_groups():
    completed, groups = _completed("minimal-aws")
    completed["spec"]["kubelet"] = {"nodeLabels": {"team": "cluster", "tier": "cluster"}}
    group = dict(groups["nodes"], spec=dict(groups["nodes"]["spec"], kubelet={"nodeLabels": {"tier": "group-kubelet"}},
                                            nodeLabels={"tier": "group", "kops.k8s.io/instancegroup": "other"}))
    assert node_labels.node_labels(completed, group) == {
        "kops.k8s.io/instancegroup": "nodes", "node-role.kubernetes.io/node": "", "team": "cluster", "tier": "group"}
    control_plane = node_labels.node_labels(completed, groups["master-us-test-1a"])
    assert control_plane == {"kops.k8s.io/instancegroup": "master-us-test-1a", "kops.k8s.io/kops-controller-pki": "",
                             "node-role.kubernetes.io/control-plane": "",
                             "node.kubernetes.io/exclude-from-external-load-balancers": ""}
    assert "team" not in control_plane  # the control plane takes masterKubelet's labels, not the cluster kubelet's


def test_bastions_get_no_labels_and_an_unknown_role_is_named():
    completed, groups = _completed("minimal-aws")
    bastion = dict(groups["nodes"], spec=dict(groups["nodes"]["spec"], role="Bastion"))
    assert node_labels.node_labels(completed, bastion) == {}
    with pytest.raises(ValueError, match="spec.role 'Worker'"):
        node_labels.node_labels(completed, dict(groups["nodes"], spec={"role": "Worker"}))


def test_the_nodeup_config_carries_the_set_in_its_kubeops_section():
    completed, groups = _completed("minimal-aws")
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    for name, group in groups.items():
        document = config.build_config(completed, group, keysets, completed["spec"]["configBase"])
        assert document["kubeops"]["nodeLabels"] == node_labels.node_labels(completed, group)
        assert document["kubeops"]["nodeLabels"]["kops.k8s.io/instancegroup"] == name
