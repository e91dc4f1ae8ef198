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
    # The create call: {"accountId": ..., "serviceAccount": {the other API fields}}.
    FIELDS = (
        field("account_id", api="accountId"),
        field("project"),
        field("display_name", api="displayName", read="displayName", mutable=True),
        field("description", api="description", read="description", mutable=True),
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

    def _account(self, cloud):
        """The table's API fields but the id: the serviceAccount body."""
        body = self.api_body(cloud, self.desired())
        return {k: v for k, v in body.items() if k not in ("name", "accountId")}

    def create(self, cloud):
        desired = self.desired()
        item = cloud.call(self.api, "POST", "projects/%s/serviceAccounts" % desired["project"], {
            "accountId": desired["account_id"], "serviceAccount": self._account(cloud)})
        self.remember(item or {})

    def apply_changes(self, cloud, actual, changes):
        account = self._account(cloud)
        cloud.call(self.api, "PATCH", self.path(), {"serviceAccount": account, "updateMask": ",".join(account)})


MEMBER_PREFIX = "serviceAccount:"


class ProjectIamBinding(GceTask):
    """One role of the project for the cluster's service account.  Direct adds the member to the role's
    binding in the project's policy and leaves other members alone (Terraform's binding is
    authoritative for the role, as kops renders it): found when the role's binding holds every member."""

    kind = "google_project_iam_binding"
    api = "crm"
    FIELDS = (
        field("project"),
        field("role", api="role", read="role", compare=False),
        field("members", api="members", read="members", compare=False,
              to_api=lambda emails, cloud: [MEMBER_PREFIX + e for e in emails],
              from_api=lambda members: sorted(m[len(MEMBER_PREFIX):] for m in members or [] if m.startswith(MEMBER_PREFIX)),
              to_terraform=lambda emails: [Expression('format("%s%%s", %s)' % (MEMBER_PREFIX, e)) for e in emails]),
    )

    def __init__(self, task_name, /, project, role, service_account):
        GceTask.__init__(self, task_name, project=project, role=role, members=[Ref(service_account, "email")])

    def _policy(self, cloud):
        return cloud.call(self.api, "POST", "projects/%s:getIamPolicy" % self.fields["project"], {}) or {}

    def _binding(self, policy):
        return next((b for b in policy.get("bindings") or [] if b.get("role") == self.fields["role"]), None)

    def find(self, cloud):
        binding = self._binding(self._policy(cloud))
        if binding is None:
            return None
        actual = self.read_actual(binding)
        if not set(self.desired()["members"]) <= set(actual["members"]):
            return None
        self.outputs["id"] = "%s/%s" % (self.fields["project"], self.fields["role"])
        return actual

    def create(self, cloud):
        wanted = self.api_body(cloud, self.desired())
        policy = self._policy(cloud)
        binding = self._binding(policy)
        if binding is None:
            binding = {"role": wanted["role"], "members": []}
            policy.setdefault("bindings", []).append(binding)
        binding["members"] = sorted(set(binding.get("members") or []) | set(wanted["members"]))
        # The policy's etag makes a concurrent change fail instead of being overwritten.
        cloud.call(self.api, "POST", "projects/%s:setIamPolicy" % self.fields["project"], {"policy": policy})
        self.outputs["id"] = "%s/%s" % (self.fields["project"], self.fields["role"])
