# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A CloudFormation template from the same tasks (kops wrote one until 1.26).

Each task kind maps its fields to a resource type and properties; references
between tasks become Ref on the logical id of the task referred to, or what the
kind's cloudformation_value writes for the attribute (an Fn::GetAtt, get_att()).
"""

from __future__ import annotations

import json
import re

from ansible_collections.kubeops.kops.plugins.module_utils.truncate import hash_string
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import map_refs


def logical_id(task):
    """kops' old CloudFormation naming: the resource type and the name, letters and digits only,
    plus a short hash of the name so that names differing only in punctuation stay apart."""
    base = re.sub(r"[^A-Za-z0-9]", "", task.cloudformation_type.replace("AWS::", "") + task.name)
    return base + hash_string(task.name, 6).upper()


def get_att(task, attribute):
    """A Ref to task's CloudFormation attribute (a kind's cloudformation_value for what its Ref value is not)."""
    return {"Fn::GetAtt": [logical_id(task), attribute]}


def parameter_name(task):
    return re.sub(r"[^A-Za-z0-9]", "", "Shared" + task.cloudformation_type.split("::")[-1] + "Id")


def reference(ref):
    task = ref.task
    literal = task.cloudformation_value(ref.attribute)
    if literal is not None:
        return literal
    if task.shared:
        # A shared object the user brought: its id if the spec says it, else a template parameter.
        if task.fields.get("id"):
            return task.fields["id"]
        return {"Ref": parameter_name(task)}
    return {"Ref": logical_id(task)}


def resolve(value):
    return map_refs(value, reference)


def tags(mapping):
    return [{"Key": k, "Value": v} for k, v in sorted((mapping or {}).items())]


def render(tasks, description=""):
    resources = {}
    attachments = {}
    for task in sorted(tasks, key=lambda t: (t.kind, t.name)):
        properties = task.render_cloudformation()
        if properties is None:
            continue
        resources[logical_id(task)] = {"Type": task.cloudformation_type, "Properties": resolve(properties)}
        if task.after:
            resources[logical_id(task)]["DependsOn"] = [logical_id(t) for t in task.after]
        for prefix, cfn_type, extra in task.extra_cloudformation():
            extra_id = re.sub(r"[^A-Za-z0-9]", "", prefix + task.name) + hash_string(task.name, 6).upper()
            resources[extra_id] = {"Type": cfn_type, "Properties": resolve(extra)}
            if cfn_type == "AWS::EC2::VPCGatewayAttachment":
                attachments[logical_id(task)] = extra_id
    # A route through an internet gateway needs the gateway attached first.
    for resource in resources.values():
        gateway = (resource["Properties"].get("GatewayId") or {}) if resource["Type"] == "AWS::EC2::Route" else {}
        if isinstance(gateway, dict) and gateway.get("Ref") in attachments:
            resource["DependsOn"] = attachments[gateway["Ref"]]
    template = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}
    parameters = {parameter_name(t): {"Type": t.parameter_type, "Description": "id of the existing %s %s" % (
        t.cloudformation_type, t.name)} for t in tasks if t.shared and not t.fields.get("id")}
    if parameters:
        template["Parameters"] = parameters
    if description:
        template["Description"] = description
    return json.dumps(template, indent=2, sort_keys=True) + "\n"
