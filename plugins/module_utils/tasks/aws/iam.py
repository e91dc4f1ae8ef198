# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IAM roles, their inline policies and instance profiles, one per instance group role."""

from __future__ import annotations

import json
import urllib.parse

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Task


def _policy(document):
    """A policy document as a dict, whether AWS returned it URL-encoded, as a string or parsed."""
    if isinstance(document, dict):
        return document
    return json.loads(urllib.parse.unquote(document))


def _get(cloud, call, not_found_value=None, **kwargs):
    import botocore.exceptions
    try:
        return call(**kwargs)
    except botocore.exceptions.ClientError as exc:
        if (exc.response.get("Error") or {}).get("Code") == "NoSuchEntity":
            return not_found_value
        raise


class IAMRole(Task):
    kind = "aws_iam_role"
    compared = ("assume_role_policy",)

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_role, RoleName=self.fields["name"])
        if not found:
            return None
        role = found["Role"]
        self.outputs.update(id=role["RoleName"], name=role["RoleName"], arn=role["Arn"])
        return {"assume_role_policy": _policy(role["AssumeRolePolicyDocument"]), "tags": tag_dict(role.get("Tags"))}

    def compare(self, actual):
        changes = {}
        if actual["assume_role_policy"] != json.loads(self.fields["assume_role_policy"]):
            changes["assume_role_policy"] = (actual["assume_role_policy"], json.loads(self.fields["assume_role_policy"]))
        if any(actual["tags"].get(k) != v for k, v in self.fields["tags"].items()):
            changes["tags"] = (actual["tags"], self.fields["tags"])
        return changes

    def create(self, cloud):
        role = cloud.client("iam").create_role(RoleName=self.fields["name"],
                                               AssumeRolePolicyDocument=self.fields["assume_role_policy"],
                                               Tags=tag_list(self.fields["tags"]))["Role"]
        self.outputs.update(id=role["RoleName"], name=role["RoleName"], arn=role["Arn"])

    def update(self, cloud, actual, changes):
        iam = cloud.client("iam")
        if "assume_role_policy" in changes:
            iam.update_assume_role_policy(RoleName=self.fields["name"], PolicyDocument=self.fields["assume_role_policy"])
        if "tags" in changes:
            iam.tag_role(RoleName=self.fields["name"], Tags=tag_list(self.fields["tags"]))


class IAMRolePolicy(Task):
    kind = "aws_iam_role_policy"

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_role_policy, RoleName=self.desired()["role"],
                     PolicyName=self.fields["name"])
        if not found:
            return None
        self.outputs["id"] = "%s:%s" % (self.desired()["role"], self.fields["name"])
        return {"policy": _policy(found["PolicyDocument"])}

    def compare(self, actual):
        wanted = json.loads(self.fields["policy"])
        return {} if actual["policy"] == wanted else {"policy": (actual["policy"], wanted)}

    def create(self, cloud):
        cloud.client("iam").put_role_policy(RoleName=self.desired()["role"], PolicyName=self.fields["name"],
                                            PolicyDocument=self.fields["policy"])
        self.outputs["id"] = "%s:%s" % (self.desired()["role"], self.fields["name"])

    def update(self, cloud, actual, changes):
        self.create(cloud)


class IAMInstanceProfile(Task):
    kind = "aws_iam_instance_profile"

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_instance_profile, InstanceProfileName=self.fields["name"])
        if not found:
            return None
        profile = found["InstanceProfile"]
        self.outputs.update(id=profile["InstanceProfileName"], arn=profile["Arn"])
        return {"role": [r["RoleName"] for r in profile.get("Roles") or []]}

    def compare(self, actual):
        role = self.desired()["role"]
        return {} if actual["role"] == [role] else {"role": (actual["role"], [role])}

    def create(self, cloud):
        iam = cloud.client("iam")
        profile = iam.create_instance_profile(InstanceProfileName=self.fields["name"],
                                              Tags=tag_list(self.fields["tags"]))["InstanceProfile"]
        self.outputs.update(id=profile["InstanceProfileName"], arn=profile["Arn"])
        iam.add_role_to_instance_profile(InstanceProfileName=self.fields["name"], RoleName=self.desired()["role"])

    def update(self, cloud, actual, changes):
        iam = cloud.client("iam")
        for role in actual["role"]:
            iam.remove_role_from_instance_profile(InstanceProfileName=self.fields["name"], RoleName=role)
        iam.add_role_to_instance_profile(InstanceProfileName=self.fields["name"], RoleName=self.desired()["role"])


IAMRole.cloudformation_type = "AWS::IAM::Role"
IAMRole.render_cloudformation = lambda t: {
    "RoleName": t.fields["name"], "AssumeRolePolicyDocument": json.loads(t.fields["assume_role_policy"]),
    "Tags": [{"Key": k, "Value": v} for k, v in sorted(t.fields["tags"].items())]}
IAMRolePolicy.cloudformation_type = "AWS::IAM::RolePolicy"
IAMRolePolicy.render_cloudformation = lambda t: {
    "RoleName": t.fields["role"], "PolicyName": t.fields["name"], "PolicyDocument": json.loads(t.fields["policy"])}
IAMInstanceProfile.cloudformation_type = "AWS::IAM::InstanceProfile"
IAMInstanceProfile.render_cloudformation = lambda t: {"InstanceProfileName": t.fields["name"], "Roles": [t.fields["role"]]}
