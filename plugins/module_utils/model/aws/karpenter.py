# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What the Karpenter addon's EC2NodeClass and NodePool of each Karpenter instance group take from the AWS model
(kops' template functions KarpenterEC2NodeClass and KarpenterNodePool read them from its model and tasks): the
completed group, its instances' tags (CloudTagsForInstanceGroup), node labels (BuildNodeLabels), instance profile
and security group names, the boot script Karpenter's instances run (our user data, as kops' nodeupscript) and
the root device of the group's image (which the AWS driver asks of the cloud before the model is built:
providers/aws/update_facts.py root_device_names).  addons/karpenter.py builds the objects from them."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.autoscaling import group_tags
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import autoscaling as autoscaling_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import iam_role_name

MANAGER_KARPENTER = "Karpenter"


def karpenter_groups(groups):
    return [g for g in groups if (g.get("spec") or {}).get("manager") == MANAGER_KARPENTER]


def default_root_device(image):
    """The root device of an image that cannot be looked up (no cloud): by its owner, as the CloudFormation
    rendering guesses it (Canonical's images boot from /dev/sda1, most others from /dev/xvda)."""
    owner = autoscaling_tasks.image_query(image).get("Owners", [""])[0]
    return "/dev/sda1" if owner == autoscaling_tasks.IMAGE_OWNERS["ubuntu"] else autoscaling_tasks.DEFAULT_ROOT_DEVICE


def node_inputs(completed, groups, user_data, root_devices, node_labels):
    """{group name: {"group", "tags", "node_labels", "instance_profile", "security_group", "user_data",
    "root_device_name"}} for each Karpenter group (addons/karpenter.py's input).

    node_labels: kops' BuildNodeLabels, (cluster spec, completed group) -> labels (nodeconfig/node_labels.py,
    which imports the model: given, not imported)."""
    name = completed["metadata"]["name"]
    inputs = {}
    for group in karpenter_groups(groups):
        spec = group["spec"]
        group_name = objects.name_of(group)
        profile = (spec.get("iam") or {}).get("profile")
        inputs[group_name] = {
            "group": group,
            "tags": group_tags(completed, group),
            "node_labels": node_labels(completed["spec"], group),
            "instance_profile": profile.rsplit("/", 1)[-1] if profile else iam_role_name("nodes", name),
            "security_group": "nodes.%s" % name,
            "user_data": user_data.get(group_name),
            "root_device_name": root_devices.get(spec.get("image")),
        }
    return inputs
