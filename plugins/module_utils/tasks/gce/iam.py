# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IAM kinds (kops' gcetasks ServiceAccount, ProjectIAMBinding): the instances' service accounts
and the control plane's project role."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce.base import GceTask, field


class ServiceAccount(GceTask):
    """A service account, named <role>-<cluster> cut to 30 characters; its id is what kops owns it by."""

    kind = "google_service_account"
    api = "iam"
    FIELDS = (
        field("account_id"),
        field("project"),
        field("display_name", read="displayName", mutable=True),
        field("description", read="description", mutable=True),
    )

    def email(self):
        return "%s@%s.iam.gserviceaccount.com" % (self.fields["account_id"], self.fields["project"])

    def path(self):
        return "projects/%s/serviceAccounts/%s" % (self.fields["project"], self.email())

    def remember(self, item):
        self.outputs.update({"id": item.get("name"), "email": item.get("email") or self.email(),
                             "name": item.get("name")})

    def find(self, cloud):
        item = cloud.get(self.api, self.path())
        if item is None:
            return None
        self.remember(item)
        return self.read_actual(item)

    def create(self, cloud):
        desired = self.desired()
        item = cloud.call(self.api, "POST", "projects/%s/serviceAccounts" % desired["project"], {
            "accountId": desired["account_id"],
            "serviceAccount": {"displayName": desired["display_name"], "description": desired["description"]}})
        self.remember(item or {})

    def apply_changes(self, cloud, actual, changes):
        desired = self.desired()
        cloud.call(self.api, "PATCH", self.path(), {
            "serviceAccount": {"displayName": desired["display_name"], "description": desired["description"]},
            "updateMask": "displayName,description"})


class ProjectIamBinding(GceTask):
    """One role of the project for the cluster's service account.  Direct adds the member to the role's
    binding in the project's policy and leaves other members alone (Terraform's binding is
    authoritative for the role, as kops renders it)."""

    kind = "google_project_iam_binding"
    api = "crm"
    compared = ("member",)

    def __init__(self, task_name, /, project, role, service_account):
        GceTask.__init__(self, task_name, project=project, role=role, member=Ref(service_account, "email"))

    def _policy(self, cloud):
        return cloud.call(self.api, "POST", "projects/%s:getIamPolicy" % self.fields["project"], {}) or {}

    def _binding(self, policy):
        return next((b for b in policy.get("bindings") or [] if b.get("role") == self.fields["role"]), None)

    def find(self, cloud):
        member = "serviceAccount:" + self.desired()["member"]
        binding = self._binding(self._policy(cloud))
        if binding is None or member not in (binding.get("members") or []):
            return None
        self.outputs["id"] = "%s/%s" % (self.fields["project"], self.fields["role"])
        return {"member": self.desired()["member"]}

    def create(self, cloud):
        member = "serviceAccount:" + self.desired()["member"]
        policy = self._policy(cloud)
        binding = self._binding(policy)
        if binding is None:
            binding = {"role": self.fields["role"], "members": []}
            policy.setdefault("bindings", []).append(binding)
        binding["members"] = sorted(set(binding.get("members") or []) | {member})
        # The policy's etag makes a concurrent change fail instead of being overwritten.
        cloud.call(self.api, "POST", "projects/%s:setIamPolicy" % self.fields["project"], {"policy": policy})
        self.outputs["id"] = "%s/%s" % (self.fields["project"], self.fields["role"])

    def render_terraform(self):
        email = self.fields["member"].terraform()
        return {"members": [Expression('format("serviceAccount:%%s", %s)' % email)],
                "project": self.fields["project"], "role": self.fields["role"]}
