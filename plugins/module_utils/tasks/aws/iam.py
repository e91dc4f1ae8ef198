# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""IAM roles, their inline policies and instance profiles, one per instance group role.

One table of Fields per kind (engine/task.Field) feeds the create call, the read-back, the
comparison and CloudFormation.  A role or instance profile found by name must carry this
cluster's ownership tags: another cluster's (or an untagged one) is an error, never adopted.
"""

from __future__ import annotations

import collections
import json
import urllib.parse

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import as_wanted, paginate, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.autoscaling import (
    ApiField, ComparedTask, not_owned, own_tags)
from ansible_collections.kubeops.kops.plugins.module_utils.engine.cloudformation import get_att
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion, Field, Ref, Task
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError
from ansible_collections.kubeops.kops.plugins.module_utils.zones import aws_partition_of
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import (
    MAX_IAM_ROLE_NAME, TAG_SERVICE_ACCOUNT_NAME, TAG_SERVICE_ACCOUNT_NAMESPACE)


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


def _owned(cloud, item, what):
    """An IAM object found by name must carry this cluster's ownership tags: another cluster's (or an
    untagged one) is an error, never adopted."""
    if not cloud.owns(own_tags(item.get("Tags"))):
        raise not_owned(cloud, item.get("Arn") or what)


def _update_tags(iam_call, untag_call, changes, wanted, **name):
    if "tags" not in changes:
        return
    have = changes["tags"][0] or {}
    iam_call(Tags=tag_list(wanted), **name)
    extra = sorted(set(have) - set(wanted))
    if extra:
        untag_call(TagKeys=extra, **name)


# The order deletions of service-account IAM run in: the roles' policies, then the roles, then the OIDC provider
# their trust policies name.
ORDER_ROLE_POLICIES, ORDER_ROLES, ORDER_OIDC_PROVIDER = 0, 1, 2


# The cluster's record of the service-account IAM objects its runs may have made (role names, OIDC provider URLs
# without https://), which the driver reads from the state store and hands to the cloud before the run
# (providers/aws/made_objects.py): the orphans of both kinds are looked for among these names only, each asked of
# IAM by name, so a run's requests never grow with the account (IAM cannot list roles by tag).
RECORDED = "service-account-iam-recorded"


class ServiceAccountIAM(collections.namedtuple("ServiceAccountIAM", "roles oidc_providers")):
    """Names of service-account IAM objects: frozensets of role names and of OIDC provider URLs without https://."""

    def __or__(self, other):
        return ServiceAccountIAM(self.roles | other.roles, self.oidc_providers | other.oidc_providers)


def wanted_service_account_iam(tasks):
    """The ServiceAccountIAM the tasks ask for: the roles carrying kops' service-account tag, the OIDC providers."""
    roles = {task.fields["name"] for task in tasks
             if isinstance(task, IAMRole) and TAG_SERVICE_ACCOUNT_NAME in (task.fields.get("tags") or {})}
    providers = {_without_scheme(task.fields["url"]) for task in tasks if isinstance(task, IAMOIDCProvider)}
    return ServiceAccountIAM(frozenset(roles), frozenset(providers))


def recorded_service_account_iam(cloud):
    """The ServiceAccountIAM the driver handed this run's cloud (cloud.remember(RECORDED, ...))."""
    def not_recalled():
        raise TaskError("the cluster's record of its service-account IAM objects was not read before the run, so their "
                        "orphans cannot be looked for; the update pipeline must call the driver's "
                        "recall_made_objects first (providers/aws/made_objects.py)")
    return cloud.lookup(RECORDED, not_recalled)


def _service_account_role_candidate(name):
    """Whether a role name may be one of kops' service-account roles (<sa>.<namespace>.sa.<cluster>, or that
    hashed down to 64 characters, where the .sa. may be cut off): only those are asked for their tags."""
    return ".sa." in name or len(name) == MAX_IAM_ROLE_NAME


def listed_service_account_iam(cloud, wanted):
    """The ServiceAccountIAM of this cluster found by listing the whole account: one paginated ListRoles (the tags of a
    role asked only for a name kops could have given it and no task asks for) and one ListOpenIDConnectProviders.
    Only while the cluster has no record yet (a cluster kops or an earlier kubeops.kops applied): it grows with the
    account, which a recorded cluster never pays."""
    iam = cloud.client("iam")
    roles = set(wanted.roles)
    for role in paginate(iam, "list_roles", "Roles"):
        name = role["RoleName"]
        if name in roles or not _service_account_role_candidate(name):
            continue
        tags = own_tags(_get(cloud, iam.list_role_tags, {}, RoleName=name).get("Tags"))
        if cloud.owns(tags) and TAG_SERVICE_ACCOUNT_NAME in tags:
            roles.add(name)
    providers = set(wanted.oidc_providers)
    for item in iam.list_open_id_connect_providers().get("OpenIDConnectProviderList") or []:
        url = item["Arn"].split(":oidc-provider/", 1)[-1]
        if url in providers:
            continue
        found = _get(cloud, iam.get_open_id_connect_provider, OpenIDConnectProviderArn=item["Arn"])
        if found and cloud.owns(own_tags(found.get("Tags"))):
            providers.add(url)
    return ServiceAccountIAM(frozenset(roles), frozenset(providers))


def service_account_role_orphans(cloud, wanted_names):
    """Deletions of the cluster's service-account roles that no task asks for: of the roles the cluster's record
    names (RECORDED), each asked for by name (GetRole, which carries its tags), those carrying this cluster's
    ownership tags and kops' service-account tag (never another cluster's, an untagged one or an instance-group
    role), each with its inline policies and managed-policy attachments first.  A recorded role that is gone
    already is nothing to delete."""
    iam = cloud.client("iam")
    deletions = []
    for name in sorted(recorded_service_account_iam(cloud).roles - set(wanted_names)):
        found = _get(cloud, iam.get_role, RoleName=name)
        if not found:
            continue
        role = found["Role"]
        tags = own_tags(role.get("Tags"))
        if not cloud.owns(tags) or TAG_SERVICE_ACCOUNT_NAME not in tags:
            continue
        policies = _get(cloud, paginate, [], api_client=iam, operation="list_role_policies", result_key="PolicyNames",
                        RoleName=name)
        attached = _get(cloud, paginate, [], api_client=iam, operation="list_attached_role_policies",
                        result_key="AttachedPolicies", RoleName=name)
        for policy in policies:
            deletions.append(Deletion(
                IAMRolePolicy.kind, "%s:%s" % (name, policy), "%s:%s" % (name, policy), order=ORDER_ROLE_POLICIES,
                delete=lambda c, r=name, p=policy: _gone_ok(c.client("iam").delete_role_policy, RoleName=r,
                                                            PolicyName=p)))
        for item in attached:
            arn = item["PolicyArn"]
            deletions.append(Deletion(
                IAMRolePolicyAttachment.kind, "%s:%s" % (name, arn), arn, order=ORDER_ROLE_POLICIES,
                detail="detach from role %s" % name,
                delete=lambda c, r=name, a=arn: _gone_ok(c.client("iam").detach_role_policy, RoleName=r, PolicyArn=a)))
        deletions.append(Deletion(
            IAMRole.kind, name, role.get("Arn") or name, order=ORDER_ROLES,
            detail="service account %s/%s: no longer in the spec" % (
                tags.get(TAG_SERVICE_ACCOUNT_NAMESPACE, "?"), tags[TAG_SERVICE_ACCOUNT_NAME]),
            delete=lambda c, r=name: _delete_role(c.client("iam"), r)))
    return deletions


def _gone_ok(call, **kwargs):
    """A deletion whose object is gone already (an earlier, interrupted run) is done."""
    return _get(None, call, True, **kwargs)


def _delete_role(iam, name):
    """Whatever policies the role still has (one added since the plan was made), then the role."""
    for policy in _get(None, paginate, [], api_client=iam, operation="list_role_policies", result_key="PolicyNames",
                       RoleName=name):
        _gone_ok(iam.delete_role_policy, RoleName=name, PolicyName=policy)
    for item in _get(None, paginate, [], api_client=iam, operation="list_attached_role_policies",
                     result_key="AttachedPolicies", RoleName=name):
        _gone_ok(iam.detach_role_policy, RoleName=name, PolicyArn=item["PolicyArn"])
    _gone_ok(iam.delete_role, RoleName=name)


TAGS = ApiField("tags", api="Tags", read="Tags", to_api=tag_list, from_api=own_tags, mutable=True)


class IAMRole(ComparedTask):
    """aws_iam_role: its trust policy (compared as a document) and its tags.

    export_with_id: the prefix of its Terraform outputs <id>_role_arn and <id>_role_name (kops' ExportWithID:
    masters, nodes, bastions, apiservers); None writes none.
    """

    kind = "aws_iam_role"
    cloudformation_type = "AWS::IAM::Role"
    FIELDS = (
        ApiField("name", api="RoleName", read="RoleName", cfn="RoleName", compare=False),
        ApiField("assume_role_policy", api="AssumeRolePolicyDocument", read="AssumeRolePolicyDocument",
                 cfn="AssumeRolePolicyDocument", from_api=_policy, to_cfn=json.loads, mutable=True),
        # spec.iam.permissionsBoundary (PutRolePermissionsBoundary / DeleteRolePermissionsBoundary to change it).
        ApiField("permissions_boundary", api="PermissionsBoundary", read="PermissionsBoundary.PermissionsBoundaryArn",
                 cfn="PermissionsBoundary", mutable=True),
        TAGS,
    )

    def cloudformation_value(self, attribute):
        """The ARN as Fn::GetAtt (a role's Ref is its name)."""
        return get_att(self, "Arn") if attribute == "arn" else None

    # The managed policies spec.externalPolicies attaches (IAMRolePolicyAttachment tasks); any other policy
    # attached to the role is detached.  Set by the model; not a field (Terraform has one resource per policy).
    external_policies = ()

    def __init__(self, task_name, /, export_with_id=None, **fields):
        ComparedTask.__init__(self, task_name, **fields)
        self.export_with_id = export_with_id

    def terraform_outputs(self):
        if not self.export_with_id:
            return []
        return [(self.export_with_id + "_role_arn", Ref(self, "arn").terraform(), False),
                (self.export_with_id + "_role_name", Ref(self, "name").terraform(), False)]

    @classmethod
    def orphans(cls, cloud, wanted):
        """Managed policies attached to the cluster's roles that spec.externalPolicies does not name, and the
        cluster's service-account roles (IRSA) the spec no longer asks for."""
        deletions = service_account_role_orphans(cloud, {role.fields["name"] for role in wanted})
        for role in wanted:
            if not role.outputs.get("name"):
                continue  # not created yet: nothing attached
            name = role.outputs["name"]
            deletions.extend(Deletion(
                IAMRolePolicyAttachment.kind, "%s:%s" % (name, arn), arn, order=0, detail="detach from role %s" % name,
                delete=lambda c, r=name, a=arn: as_wanted(
                    c.client("iam").detach_role_policy, ("NoSuchEntity",), lambda: True, RoleName=r, PolicyArn=a))
                for arn in IAMRolePolicyAttachment.attached(cloud, name) if arn not in role.external_policies)
        return deletions

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_role, RoleName=self.fields["name"])
        if not found:
            return None
        role = found["Role"]
        _owned(cloud, role, self.fields["name"])
        self.outputs.update(id=role["RoleName"], name=role["RoleName"], arn=role["Arn"])
        return self.read_actual(role)

    def create(self, cloud):
        response = self.create_named(cloud, "iam", "create_role", **self.create_args())
        if response is None:
            return  # made by a try whose answer was lost: found
        role = response["Role"]
        self.outputs.update(id=role["RoleName"], name=role["RoleName"], arn=role["Arn"])

    def update(self, cloud, actual, changes):
        iam = cloud.client("iam")
        if "assume_role_policy" in changes:
            iam.update_assume_role_policy(RoleName=self.fields["name"], PolicyDocument=self.fields["assume_role_policy"])
        if "permissions_boundary" in changes:
            boundary = self.fields.get("permissions_boundary")
            if boundary:
                iam.put_role_permissions_boundary(RoleName=self.fields["name"], PermissionsBoundary=boundary)
            else:
                iam.delete_role_permissions_boundary(RoleName=self.fields["name"])
        _update_tags(iam.tag_role, iam.untag_role, changes, self.fields["tags"], RoleName=self.fields["name"])


class IAMRolePolicy(ComparedTask):
    """aws_iam_role_policy: an inline policy of the cluster's role (owned through the role)."""

    kind = "aws_iam_role_policy"
    cloudformation_type = "AWS::IAM::RolePolicy"
    FIELDS = (
        ApiField("role", api="RoleName", read="RoleName", cfn="RoleName", compare=False),
        ApiField("name", api="PolicyName", read="PolicyName", cfn="PolicyName", compare=False),
        ApiField("policy", api="PolicyDocument", read="PolicyDocument", cfn="PolicyDocument",
                 from_api=_policy, to_cfn=json.loads, mutable=True),
    )

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_role_policy, RoleName=self.desired()["role"],
                     PolicyName=self.fields["name"])
        if not found:
            return None
        self.outputs["id"] = "%s:%s" % (self.desired()["role"], self.fields["name"])
        return self.read_actual(found)

    def create(self, cloud):
        args = self.create_args()
        cloud.client("iam").put_role_policy(**args)
        self.outputs["id"] = "%s:%s" % (args["RoleName"], args["PolicyName"])

    def update(self, cloud, actual, changes):
        self.create(cloud)  # PutRolePolicy creates or replaces


class IAMRolePolicyAttachment(Task):
    """aws_iam_role_policy_attachment: a managed policy of spec.externalPolicies attached to the cluster's role.

    The attachments of a role are listed once per run; one the spec no longer names is detached by the
    role's orphans (IAMRole.external_policies), as kops keeps a role's managed policies equal to the spec."""

    kind = "aws_iam_role_policy_attachment"
    FIELDS = (
        Field("role", api="RoleName"),
        Field("policy_arn", api="PolicyArn"),
    )

    @staticmethod
    def attached(cloud, role):
        return cloud.lookup("attached:" + role, lambda: [p["PolicyArn"] for p in paginate(
            cloud.client("iam"), "list_attached_role_policies", "AttachedPolicies", RoleName=role)])

    def find(self, cloud):
        desired = self.desired()
        if desired["policy_arn"] not in self.attached(cloud, desired["role"]):
            return None
        self.outputs["id"] = "%s:%s" % (desired["role"], desired["policy_arn"])
        return {}

    def create(self, cloud):
        cloud.client("iam").attach_role_policy(**self.create_args())
        self.outputs["id"] = "%s:%s" % (self.desired()["role"], self.desired()["policy_arn"])

    def render_cloudformation(self):
        raise TaskError("%s: spec.externalPolicies is not written by the cloudformation target" % self.name,
                        fix="use target terraform or direct")


class IAMInstanceProfile(ComparedTask):
    """aws_iam_instance_profile with its one role (added by a second call after create) and its tags."""

    kind = "aws_iam_instance_profile"
    cloudformation_type = "AWS::IAM::InstanceProfile"
    FIELDS = (
        ApiField("name", api="InstanceProfileName", read="InstanceProfileName", cfn="InstanceProfileName",
                 compare=False),
        # Second call after create (AddRoleToInstanceProfile).
        ApiField("role", read="Roles", cfn="Roles", to_api=lambda v: [{"RoleName": v}],
                 from_api=lambda v: [r["RoleName"] for r in v or []], to_cfn=lambda v: [v], mutable=True),
        TAGS,
    )

    def cloudformation_value(self, attribute):
        """The ARN as Fn::GetAtt (an instance profile's Ref is its name)."""
        return get_att(self, "Arn") if attribute == "arn" else None

    def find(self, cloud):
        found = _get(cloud, cloud.client("iam").get_instance_profile, InstanceProfileName=self.fields["name"])
        if not found:
            return None
        profile = found["InstanceProfile"]
        _owned(cloud, profile, self.fields["name"])
        self.outputs.update(id=profile["InstanceProfileName"], arn=profile["Arn"])
        return self.read_actual(profile)

    def create(self, cloud):
        iam = cloud.client("iam")
        response = self.create_named(cloud, "iam", "create_instance_profile", **self.create_args())
        if response is None:
            return  # made by a try whose answer was lost: found, its role added by update()
        profile = response["InstanceProfile"]
        self.outputs.update(id=profile["InstanceProfileName"], arn=profile["Arn"])
        self._add_role(iam)

    def _add_role(self, iam):
        """AddRoleToInstanceProfile; a retry of one whose answer was lost finds the role there (IAM answers
        LimitExceeded, a profile taking one role): done."""
        name, role = self.fields["name"], self.desired()["role"]

        def has_role():
            profile = iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
            return [r["RoleName"] for r in profile.get("Roles") or []] == [role]
        as_wanted(iam.add_role_to_instance_profile, ("LimitExceeded", "EntityAlreadyExists"), has_role,
                  InstanceProfileName=name, RoleName=role)

    def update(self, cloud, actual, changes):
        iam = cloud.client("iam")
        name = self.fields["name"]
        if "role" in changes:
            for role in actual.get("role") or []:
                as_wanted(iam.remove_role_from_instance_profile, ("NoSuchEntity",), lambda: True,
                          InstanceProfileName=name, RoleName=role)
            self._add_role(iam)
        _update_tags(iam.tag_instance_profile, iam.untag_instance_profile, changes, self.fields["tags"],
                     InstanceProfileName=name)

    def render_cloudformation(self):
        """Name and role: CloudFormation's instance profile takes no tags."""
        properties = Task.render_cloudformation(self)
        properties.pop("Tags", None)
        return properties


def _without_scheme(url):
    return url[len("https://"):] if url.startswith("https://") else url


def provider_arn(cloud, url):
    """IAM's ARN of the OIDC provider of an issuer URL: arn:<partition>:iam::<account>:oidc-provider/<URL without
    https://>; the account asked of STS once per run (the addons and the SQS queue ask the same)."""
    account = cloud.lookup("account", lambda: cloud.client("sts").get_caller_identity()["Account"])
    return "arn:%s:iam::%s:oidc-provider/%s" % (aws_partition_of(cloud.region), account, _without_scheme(url))


class IAMOIDCProvider(ComparedTask):
    """aws_iam_openid_connect_provider: the cluster's service-account issuer as an IAM identity provider (kops'
    IAMOIDCProvider), so that the service-account roles trust the tokens it signs.  Found by its ARN, which the
    account and the URL make (IAM keeps one provider per URL); its audiences and thumbprints are changed in place,
    its URL never."""

    kind = "aws_iam_openid_connect_provider"
    cloudformation_type = "AWS::IAM::OIDCProvider"
    FIELDS = (
        ApiField("url", api="Url", read="Url", cfn="Url", compare=False),
        ApiField("client_id_list", api="ClientIDList", read="ClientIDList", cfn="ClientIdList",
                 from_api=lambda v: sorted(v or []), mutable=True),
        ApiField("thumbprint_list", api="ThumbprintList", read="ThumbprintList", cfn="ThumbprintList",
                 from_api=lambda v: sorted(v or []), mutable=True),
        TAGS,
    )

    def terraform_outputs(self):
        """kops' IAMOIDCProvider outputs: the provider's ARN and the issuer without its scheme."""
        return [("iam_openid_connect_provider_arn", Ref(self, "arn").terraform(), False),
                ("iam_openid_connect_provider_issuer", _without_scheme(self.fields["url"]), False)]

    @classmethod
    def orphans(cls, cloud, wanted):
        """The cluster's OIDC providers no task asks for (enableAWSOIDCProvider turned off, or the issuer changed):
        of those the cluster's record names (RECORDED), each asked for by its ARN, only one carrying this cluster's
        ownership tags."""
        iam = cloud.client("iam")
        wanted_urls = {_without_scheme(task.fields["url"]) for task in wanted}
        deletions = []
        for url in sorted(recorded_service_account_iam(cloud).oidc_providers - wanted_urls):
            arn = provider_arn(cloud, url)
            found = _get(cloud, iam.get_open_id_connect_provider, OpenIDConnectProviderArn=arn)
            if not found or not cloud.owns(own_tags(found.get("Tags"))):
                continue
            deletions.append(Deletion(
                cls.kind, url, arn, order=ORDER_OIDC_PROVIDER,
                detail="not the provider of the cluster's service-account issuer now (enableAWSOIDCProvider off, or "
                       "another issuer)",
                delete=lambda c, a=arn: _gone_ok(c.client("iam").delete_open_id_connect_provider,
                                                 OpenIDConnectProviderArn=a)))
        return deletions

    def find(self, cloud):
        """Asked for by its ARN, which IAM derives from the account and the URL (one provider per URL)."""
        arn = provider_arn(cloud, self.fields["url"])
        found = _get(cloud, cloud.client("iam").get_open_id_connect_provider, OpenIDConnectProviderArn=arn)
        if not found:
            return None
        _owned(cloud, dict(found, Arn=arn), arn)
        self.outputs.update(id=arn, arn=arn)
        return self.read_actual(dict(found, Url="https://" + _without_scheme(found.get("Url") or "")))

    def create(self, cloud):
        response = self.create_named(cloud, "iam", "create_open_id_connect_provider", **self.create_args())
        if response is None:
            return
        arn = response["OpenIDConnectProviderArn"]
        self.outputs.update(id=arn, arn=arn)

    def update(self, cloud, actual, changes):
        iam = cloud.client("iam")
        arn = self.outputs["arn"]
        if "client_id_list" in changes:
            have, want = set(actual.get("client_id_list") or []), set(self.fields["client_id_list"])
            for client in sorted(want - have):
                iam.add_client_id_to_open_id_connect_provider(OpenIDConnectProviderArn=arn, ClientID=client)
            for client in sorted(have - want):
                iam.remove_client_id_from_open_id_connect_provider(OpenIDConnectProviderArn=arn, ClientID=client)
        if "thumbprint_list" in changes:
            iam.update_open_id_connect_provider_thumbprint(OpenIDConnectProviderArn=arn,
                                                           ThumbprintList=list(self.fields["thumbprint_list"]))
        _update_tags(iam.tag_open_id_connect_provider, iam.untag_open_id_connect_provider, changes,
                     self.fields["tags"], OpenIDConnectProviderArn=arn)
