"""Karpenter instance groups (manager: Karpenter) on our own spec: what kops builds for them beside the addon: the
controller's service-account role, its subnets' discovery tag, its boot script in the store, and no launch template
or autoscaling group of ours."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import managed_files

from tests.unit.model.test_iam_policies import _minimal

ACCOUNT = "123456789012"
KARPENTER_GROUP = {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup",
                   "metadata": {"name": "karpenter-nodes", "labels": {"kops.k8s.io/cluster": "minimal-aws.example.com"}},
                   "spec": {"role": "Node", "manager": "Karpenter", "subnets": ["us-test-1a"],
                            "image": "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250610",
                            "rootVolumeEncryption": True, "rootVolumeEncryptionKey": "arn:aws:kms:us-test-1:1:key/k"}}


def _build():
    completed, groups = _minimal({"karpenter": {"enabled": True}, "iam": {"useServiceAccountExternalPermissions": True},
                                  "serviceAccountIssuerDiscovery": {"discoveryStore": "s3://discovery-bucket/c",
                                                                    "enableAWSOIDCProvider": True}})
    groups = groups + [KARPENTER_GROUP]
    return completed, groups, aws_model.build_tasks(completed, groups, [], account_id=ACCOUNT)


def test_karpenter_group_objects():
    completed, groups, tasks = _build()
    name = completed["metadata"]["name"]
    subnet = tasks["aws_subnet/us-test-1a.%s" % name]
    assert subnet.fields["tags"]["kops.k8s.io/instance-group/karpenter-nodes"] == "true"
    assert not any("karpenter-nodes" in key for key in tasks if key.startswith(("aws_launch_template",
                                                                                "aws_autoscaling_group")))
    policy = json.loads(tasks["aws_iam_role_policy/karpenter.kube-system.sa.%s" % name].fields["policy"])
    statements = policy["Statement"]
    pass_role = next(s for s in statements if s["Action"] == "iam:PassRole")
    assert pass_role["Resource"] == "arn:aws:iam::*:role/nodes.%s" % name
    # The group's root volume key: Karpenter launches with it, so it may use it through EC2.
    assert any(s.get("Condition", {}).get("StringLike", {}).get("kms:ViaService") for s in statements)
    # Karpenter makes the workers: the termination handler is off by default (kops).
    assert not any(t.kind == "aws_sqs_queue" for t in tasks.values())


def test_karpenter_boot_script_in_the_store_under_kops_name():
    _completed, groups, _tasks = _build()
    scripts = updates.karpenter_scripts(groups, {"karpenter-nodes": "#!/bin/bash\necho boot\n", "nodes": "x"})
    assert scripts == [("igconfig/node/karpenter-nodes/nodeupscript.sh", b"#!/bin/bash\necho boot\n")]
    assert managed_files.object_name("c", scripts[0][0]) == "nodeupscript-karpenter-nodes"
