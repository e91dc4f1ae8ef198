# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Per-instance-group tasks: the image lookup, launch templates, autoscaling groups
(with their warm pool) and lifecycle hooks.

Each kind has one table of Fields (engine/task.Field) from which its create call,
its read-back, its comparison and its CloudFormation properties derive; the
Terraform bodies keep kops' layout.  Comparison is in the API's normal form: the
desired value goes to the API form and back (order, defaults, absent parts read
the same way on both sides), and a field the model leaves unset is compared with
what the API reports for an unset one.

Lookups are one call per kind and run (cached on the AwsCloud): the cluster's
launch templates by the cluster tag, then the $Latest version of every
template in one paginated call; the cluster's autoscaling groups by the
cluster tag; lifecycle hooks per group.  A launch template that differs gets
a new version (the autoscaling group follows $Latest, so it is not touched).

Deletions (orphans), only of objects carrying this cluster's ownership tags and
kops' instance-group tag: the autoscaling group of an instance group removed
from the spec (force delete, as ``kops delete ig``: its instances and warm pool
go with it), then its launch template; kops' own lifecycle hooks (node
termination handler, warm pool) the spec no longer asks for; target groups
attached to a group that the spec no longer lists (detached, as kops' deferred
deletion).  An object found by name without this cluster's ownership tags is an
error, never adopted.
"""

from __future__ import annotations

import base64
import operator
import uuid

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import (
    create_named, error_code, paginate, tag_dict, tag_list)
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import NTH_HOOK_SUFFIX, WARM_POOL_HOOK
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Deletion, Field, Ref, Task, to_terraform
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

# kops' ResolveImageOwnerAlias: well-known owner names for "<owner>/<image name>".
IMAGE_OWNERS = {"amazon": "137112412989", "amazon.com": "137112412989", "debian": "136693071363",
                "debian11": "136693071363", "flatcar": "075585003325", "redhat": "309956199498",
                "redhat.com": "309956199498", "ubuntu": "099720109477"}
DEFAULT_ROOT_DEVICE = "/dev/xvda"
# An instance group's role tag, k8s.io/role/<role>=1 (kops' CloudTagInstanceGroupRolePrefix).
ROLE_TAG_PREFIX = "k8s.io/role/"


def image_query(image):
    """DescribeImages arguments for a kops image spec: ami-..., <owner>/<name>, or <name> (owner self)."""
    if image.startswith("ami-"):
        return {"ImageIds": [image]}
    owner, sep, name = image.partition("/")
    if not sep:
        return {"Owners": ["self"], "Filters": [{"Name": "name", "Values": [image]}]}
    return {"Owners": [IMAGE_OWNERS.get(owner, owner)], "Filters": [{"Name": "name", "Values": [name]}]}


class Image(Task):
    """The AMI of an image spec: looked up (newest match, as kops), never created or rendered as a resource.

    Terraform refers to it through a ``data "aws_ami"`` lookup; CloudFormation gets
    the id when the spec names one (ami-...), else a template parameter.
    """

    kind = "aws_ami"
    cloudformation_type = "AWS::EC2::Image"
    parameter_type = "AWS::EC2::Image::Id"
    shared = True
    FIELDS = (
        Field("image"),  # <owner>/<name>, a name, or an ami- id
        Field("id"),     # the ami- id when the spec names one
    )

    def find(self, cloud):
        image = self.fields["image"]
        found = cloud.lookup("image:" + image, lambda: cloud.ec2.describe_images(**image_query(image))["Images"])
        if not found:
            raise TaskError("image %r not found in %s" % (image, cloud.region))
        newest = max(found, key=lambda i: i.get("CreationDate") or "")
        self.outputs.update(id=newest["ImageId"], root_device_name=newest.get("RootDeviceName") or DEFAULT_ROOT_DEVICE)
        return {}

    def terraform_value(self, attribute):
        return Expression("data.aws_ami.%s.%s" % (self.terraform_name, attribute))

    def terraform_data(self):
        query = image_query(self.fields["image"])
        body = {"most_recent": True}
        if "ImageIds" in query:
            body["filter"] = Block({"name": "image-id", "values": query["ImageIds"]})
        else:
            body["owners"] = query["Owners"]
            body["filter"] = Block({"name": "name", "values": query["Filters"][0]["Values"]})
        return [(self.kind, self.terraform_name, body)]

    def cloudformation_value(self, attribute):
        """The root device by image owner (a template cannot look the AMI up); the id is the engine's
        shared-object rule: fields["id"] for ami-..., else a template parameter."""
        if attribute == "root_device_name":
            owner = image_query(self.fields["image"]).get("Owners", [""])[0]
            return "/dev/sda1" if owner == IMAGE_OWNERS["ubuntu"] else DEFAULT_ROOT_DEVICE
        return None

    def render_terraform(self):
        return None

    def render_cloudformation(self):
        return None


class FieldRef(Ref):
    """A reference that Terraform writes as <kind>.<name>.id but that resolves, once the task exists,
    to one of its fields (a key pair's name: EC2 wants the name, and the task's id is the key pair id)."""

    __slots__ = ("field",)

    def __init__(self, task, field):
        Ref.__init__(self, task, "id")
        self.field = field

    def resolve(self):
        Ref.resolve(self)
        return self.task.fields[self.field]


# -- comparison in the API's normal form, ownership, and what kops manages -------------------------

class ApiField(Field):
    """A Field with its own equality, same(actual, desired), for values the API completes
    (a mixed instances policy's defaults) or that may hold more than the model asks for."""

    __slots__ = ("same",)

    def __init__(self, name, same=operator.eq, **kwargs):
        Field.__init__(self, name, **kwargs)
        self.same = same


def normal_form(field, value):
    """value as the API would report it: through to_api and back; an unset value as the API reports one."""
    return field.from_api(None if value is None else field.to_api(value))


class ComparedTask(Task):
    """A kind whose comparison covers every field its table reads back, set or not."""

    def compare(self, actual):
        desired = self.desired()
        changes = {}
        for field in self.FIELDS:
            if field.compare:
                want = normal_form(field, desired.get(field.name))
                if not field.same(actual.get(field.name), want):
                    changes[field.name] = (actual.get(field.name), want)
        return changes

    # The cloud.lookup keys find() reads, forgotten before looking again for an object made by a lost call.
    lookup_keys = ()

    def create_named(self, cloud, service, operation, **kwargs):
        """Send this object's create at most once (cloud/aws.create_named): the create's response, or None
        when a try whose answer was lost had made it.  Then the object is found as find() finds it (this
        cluster's own, or an error naming it), and what create() sets by later calls is brought in line
        through compare() and update(), as on a run that finds it."""
        def find_made():
            for key in self.lookup_keys:
                cloud.forget(key)
            return self.find(cloud)

        found, response = create_named(cloud, service, operation, find_made, **kwargs)
        if response is None:
            changes = self.compare(found)
            if changes:
                self.update(cloud, found, changes)
        return response


INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"  # kops' tag on instances a rolling update detached


def own_tags(items):
    """Tags as a dict, without the ones AWS itself sets (aws:*; CloudFormation's, for one)."""
    return {k: v for k, v in tag_dict(items).items() if not k.startswith("aws:")}


def kops_managed(cloud, tags):
    """Whether an object is one of this cluster's instance-group objects: ownership tags, kops'
    instance-group tag, and not Karpenter's (Karpenter's templates may carry the cluster tags too)."""
    return cloud.owns(tags) and INSTANCE_GROUP_TAG in tags and not any(k.startswith("karpenter.") for k in tags)


def not_owned(cloud, object_id=None):
    """The error for an object with a task's name that this cluster does not own: never adopted.
    (The runner prefixes the task's kind/name.)"""
    wanted = ", ".join("%s=%s" % item for item in sorted(cloud.ownership_tags().items()))
    return TaskError(
        "one of this name exists%s but does not carry this cluster's ownership tags (%s): it belongs to "
        "another cluster or to none and is never adopted" % (" (%s)" % object_id if object_id else "", wanted),
        fix="delete or rename it, or give it those tags if it is this cluster's")


def resolved_or_none(value):
    """A Ref's value, or None while what it refers to does not exist (a dry run)."""
    try:
        return value.resolve() if isinstance(value, Ref) else value
    except ValueError:
        return None


def _ignore_missing(codes, call, **kwargs):
    """call(**kwargs); an error whose code is in codes (already gone) counts as done."""
    try:
        call(**kwargs)
    except Exception as exc:
        if error_code(exc) not in codes and not any(code in str(exc) for code in codes):
            raise


# -- launch templates --------------------------------------------------------------------------------

def _ebs_api(ebs):
    out = {"VolumeSize": ebs["volume_size"], "VolumeType": ebs["volume_type"],
           "DeleteOnTermination": ebs["delete_on_termination"], "Encrypted": ebs["encrypted"]}
    for field, api in (("iops", "Iops"), ("throughput", "Throughput"), ("kms_key_id", "KmsKeyId")):
        if ebs.get(field) is not None:
            out[api] = ebs[field]
    return out


def _ebs_fields(api):
    out = {"volume_size": api.get("VolumeSize"), "volume_type": api.get("VolumeType"),
           "delete_on_termination": api.get("DeleteOnTermination"), "encrypted": api.get("Encrypted")}
    for field, key in (("iops", "Iops"), ("throughput", "Throughput"), ("kms_key_id", "KmsKeyId")):
        if api.get(key) is not None:
            out[field] = api[key]
    return out


def _mappings_api(mappings):
    return [{"DeviceName": m["device_name"], "VirtualName": m["virtual_name"]} if m.get("virtual_name")
            else {"DeviceName": m["device_name"], "Ebs": _ebs_api(m["ebs"])} for m in mappings]


def _mappings_fields(mappings):
    out = [{"device_name": m["DeviceName"], "virtual_name": m["VirtualName"]} if m.get("VirtualName")
           else {"device_name": m["DeviceName"], "ebs": _ebs_fields(m.get("Ebs") or {})} for m in mappings or []]
    return sorted(out, key=lambda m: m["device_name"])


def _block(*pairs):
    """(to_api, from_api) for a flat Terraform block: [(terraform key, API key)]; absent keys read as None."""
    def to_api(value):
        return {api: value[name] for name, api in pairs if value.get(name) is not None}

    def from_api(value):
        return {name: value.get(api) for name, api in pairs} if value else None
    return to_api, from_api


METADATA = _block(("http_endpoint", "HttpEndpoint"), ("http_protocol_ipv6", "HttpProtocolIpv6"),
                  ("http_put_response_hop_limit", "HttpPutResponseHopLimit"), ("http_tokens", "HttpTokens"))
CREDITS = _block(("cpu_credits", "CpuCredits"))
PLACEMENT = _block(("tenancy", "Tenancy"))


def _interface_api(interface):
    return [{"DeviceIndex": 0, "AssociatePublicIpAddress": interface["associate_public_ip_address"],
             "DeleteOnTermination": interface["delete_on_termination"],
             "Ipv6AddressCount": interface["ipv6_address_count"], "Groups": list(interface["security_groups"])}]


def _interface_fields(interfaces):
    if not interfaces:
        return None
    interface = interfaces[0]
    return {"associate_public_ip_address": interface.get("AssociatePublicIpAddress"),
            "delete_on_termination": interface.get("DeleteOnTermination"),
            "ipv6_address_count": interface.get("Ipv6AddressCount") or 0,
            "security_groups": sorted(interface.get("Groups") or [])}


def _tag_specifications_api(specifications):
    return [{"ResourceType": t["resource_type"], "Tags": tag_list(t["tags"])} for t in specifications]


def _tag_specifications_fields(specifications):
    # The launch-template tag specification some APIs echo back is the template's own tags.
    return sorted(({"resource_type": t["ResourceType"], "tags": tag_dict(t.get("Tags"))}
                   for t in specifications or [] if t.get("ResourceType") != "launch-template"),
                  key=lambda t: t["resource_type"])


class LaunchTemplate(ComparedTask):
    """aws_launch_template.  Its data fields (api: the LaunchTemplateData key, read: where the
    $Latest version's data holds it) are compared as a whole document, set or not; the
    template's own tags are compared exactly (AWS's aws:* tags aside)."""

    kind = "aws_launch_template"
    restarts_instances = True  # instances pick a new template up when replaced (rolling update)
    cloudformation_type = "AWS::EC2::LaunchTemplate"
    FIELDS = (
        ApiField("name", read="LaunchTemplateName", compare=False),
        ApiField("image_id", api="ImageId", read="ImageId", mutable=True),
        ApiField("instance_type", api="InstanceType", read="InstanceType", mutable=True),
        ApiField("key_name", api="KeyName", read="KeyName", mutable=True),
        ApiField("iam_instance_profile", api="IamInstanceProfile", read="IamInstanceProfile", mutable=True, block=True,
                 to_api=lambda v: {"Name": v["name"]}, from_api=lambda v: {"name": v.get("Name")} if v else None),
        ApiField("metadata_options", api="MetadataOptions", read="MetadataOptions", mutable=True, block=True,
                 to_api=METADATA[0], from_api=METADATA[1]),
        ApiField("monitoring", api="Monitoring", read="Monitoring", mutable=True, block=True,
                 to_api=lambda v: {"Enabled": v["enabled"]}, from_api=lambda v: {"enabled": bool((v or {}).get("Enabled"))}),
        ApiField("network_interfaces", api="NetworkInterfaces", read="NetworkInterfaces", mutable=True, block=True,
                 to_api=_interface_api, from_api=_interface_fields),
        ApiField("block_device_mappings", api="BlockDeviceMappings", read="BlockDeviceMappings", mutable=True,
                 block=True, nested=("ebs",), to_api=_mappings_api, from_api=_mappings_fields),
        ApiField("tag_specifications", api="TagSpecifications", read="TagSpecifications", mutable=True, block=True,
                 to_api=_tag_specifications_api, from_api=_tag_specifications_fields),
        ApiField("user_data", api="UserData", read="UserData", mutable=True, from_api=lambda v: v or None),
        ApiField("credit_specification", api="CreditSpecification", read="CreditSpecification", mutable=True,
                 block=True,
                 to_api=CREDITS[0], from_api=CREDITS[1]),
        ApiField("placement", api="Placement", read="Placement", mutable=True, block=True,
                 to_api=PLACEMENT[0], from_api=PLACEMENT[1]),
        # The template's own tags (on the template, set at create through TagSpecifications).
        ApiField("tags", read="Tags", mutable=True, to_api=tag_list, from_api=own_tags),
    )

    @staticmethod
    def describe_cluster_templates(cloud):
        def fetch():
            # Pages of the API maximum (200): moto returns 15 per page by default and never a NextToken.
            templates = paginate(cloud.ec2, "describe_launch_templates", "LaunchTemplates",
                                 Filters=cloud.cluster_filter(), PaginationConfig={"PageSize": 200})
            if not templates:
                return {}
            ours = {t["LaunchTemplateId"]: t for t in templates}
            latest = {}
            # One paginated call for the $Latest version of every template, instead of one per template.
            for version in paginate(cloud.ec2, "describe_launch_template_versions", "LaunchTemplateVersions",
                                    Versions=["$Latest"], PaginationConfig={"PageSize": 200}):
                if version["LaunchTemplateId"] in ours:
                    latest[version["LaunchTemplateId"]] = version
            return {t["LaunchTemplateName"]: (t, latest.get(t["LaunchTemplateId"])) for t in templates}
        return cloud.lookup("aws_launch_template", fetch)

    def find(self, cloud):
        found = self.describe_cluster_templates(cloud).get(self.fields["name"])
        if found is None:
            self._refuse_foreign(cloud)
            return None
        template, version = found
        if not cloud.owns(tag_dict(template.get("Tags"))):
            raise not_owned(cloud, template["LaunchTemplateId"])
        self.outputs.update(id=template["LaunchTemplateId"], latest_version=template.get("LatestVersionNumber"))
        item = dict((version or {}).get("LaunchTemplateData") or {}, LaunchTemplateName=template["LaunchTemplateName"],
                    Tags=template.get("Tags"))
        return self.read_actual(item)

    def _refuse_foreign(self, cloud):
        """A template of this name without the cluster tag (another cluster's, or untagged) is an error."""
        try:
            found = cloud.ec2.describe_launch_templates(LaunchTemplateNames=[self.fields["name"]])["LaunchTemplates"]
        except Exception as exc:
            if error_code(exc) in ("InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound"):
                return
            raise
        for template in found:
            if not cloud.owns(tag_dict(template.get("Tags"))):
                raise not_owned(cloud, template["LaunchTemplateId"])

    def launch_template_data(self):
        """The desired LaunchTemplateData (EC2 API form): the table's API fields."""
        return self.create_args()

    def _token(self, what):
        """One idempotency token per object, call and run: a retry of the same call (botocore's or the
        runner's) is the same request to EC2, never a second template or version."""
        tokens = self.__dict__.setdefault("_client_tokens", {})
        return tokens.setdefault(what, str(uuid.uuid4()))

    def create(self, cloud):
        try:
            created = cloud.ec2.create_launch_template(
                LaunchTemplateName=self.fields["name"], LaunchTemplateData=self.launch_template_data(),
                TagSpecifications=[{"ResourceType": "launch-template", "Tags": tag_list(self.fields["tags"])}],
                ClientToken=self._token("create"))
        except Exception as exc:
            if error_code(exc) != "InvalidLaunchTemplateName.AlreadyExistsException":
                raise
            # Made meanwhile (another run, or a lost response): ours is used, anyone else's refused.
            cloud.forget("aws_launch_template")
            if self.find(cloud) is None:
                raise
            return
        template = created["LaunchTemplate"]
        self.outputs.update(id=template["LaunchTemplateId"], latest_version=template.get("LatestVersionNumber", 1))

    def update(self, cloud, actual, changes):
        if set(changes) - {"tags"}:
            version = cloud.ec2.create_launch_template_version(
                LaunchTemplateId=self.outputs["id"], LaunchTemplateData=self.launch_template_data(),
                ClientToken=self._token("version"))
            self.outputs["latest_version"] = version["LaunchTemplateVersion"]["VersionNumber"]
        if "tags" in changes:
            have, want = changes["tags"][0] or {}, self.fields["tags"]
            cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(want))
            extra = sorted(set(have) - set(want))
            if extra:
                cloud.ec2.delete_tags(Resources=[self.outputs["id"]], Tags=[{"Key": k} for k in extra])

    @classmethod
    def orphans(cls, cloud, wanted):
        """The launch templates of instance groups removed from the spec, after their groups (order 2)."""
        names = {task.fields["name"] for task in wanted}
        found = []
        for name, (template, _version) in sorted(cls.describe_cluster_templates(cloud).items()):
            if name in names or not kops_managed(cloud, tag_dict(template.get("Tags"))):
                continue
            found.append(Deletion(cls.kind, name, template["LaunchTemplateId"], _delete_template(template["LaunchTemplateId"]),
                                  order=2, detail="launch template of a removed instance group"))
        return found

    def render_terraform(self):
        body = Task.render_terraform(self)
        if self.fields.get("user_data"):
            # As kops writes it: the script in data/, read back with filebase64().
            body["user_data"] = Expression('filebase64("${path.module}/%s")' % self.user_data_file())
        body["lifecycle"] = Block({"create_before_destroy": True})
        return body

    def user_data_file(self):
        return "data/aws_launch_template_%s_user_data" % self.name

    def terraform_files(self):
        if not self.fields.get("user_data"):
            return []
        return [(self.user_data_file(), base64.b64decode(self.fields["user_data"]))]

    def render_cloudformation(self):
        """The same LaunchTemplateData as the API call (the table's API fields), references left as Refs."""
        data = {f.api: f.to_cfn(self.fields[f.name]) for f in self.FIELDS
                if f.api and self.fields.get(f.name) is not None}
        return {"LaunchTemplateName": self.fields["name"], "LaunchTemplateData": data,
                "TagSpecifications": [{"ResourceType": "launch-template", "Tags": tag_list(self.fields["tags"])}]}


def _delete_template(template_id):
    def delete(cloud):
        _ignore_missing(("InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateName.NotFoundException"),
                        cloud.ec2.delete_launch_template, LaunchTemplateId=template_id)
    return delete


# -- autoscaling groups ------------------------------------------------------------------------------

ENABLED_METRICS = ("GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize",
                   "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances")
WARM_POOL_METRICS = ("WarmPoolMinSize", "WarmPoolDesiredCapacity", "WarmPoolPendingCapacity",
                     "WarmPoolTerminatingCapacity", "WarmPoolWarmedCapacity", "WarmPoolTotalCapacity",
                     "GroupAndWarmPoolDesiredCapacity", "GroupAndWarmPoolTotalCapacity")
GROUP_MISSING = ("AutoScalingGroup name not found",)


def _autoscaling(cloud):
    return cloud.client("autoscaling")


def _sorted_list(value):
    return sorted(value or [])


def _contains(actual, desired):
    """The wanted items are there; others (attached outside the model) are deletions, not changes."""
    return set(desired or []) <= set(actual or [])


def _template_latest(template):
    """The group's launch template for the API: always its $Latest version (a new version needs no group change)."""
    return {"LaunchTemplateId": template["id"], "Version": "$Latest"}


def _template_pinned(template):
    """CloudFormation pins the version it made (Fn::GetAtt LatestVersionNumber), as kops' Terraform does."""
    return {"LaunchTemplateId": template["id"], "Version": template["version"]}


def _template_fields(spec):
    return {"id": spec.get("LaunchTemplateId"), "version": spec.get("Version")} if spec else None


MIXED_DISTRIBUTION = (("on_demand_base_capacity", "OnDemandBaseCapacity"),
                      ("on_demand_percentage_above_base_capacity", "OnDemandPercentageAboveBaseCapacity"),
                      ("on_demand_allocation_strategy", "OnDemandAllocationStrategy"),
                      ("spot_allocation_strategy", "SpotAllocationStrategy"),
                      ("spot_instance_pools", "SpotInstancePools"),
                      ("spot_max_price", "SpotMaxPrice"))


def _mixed_fields(policy):
    if not policy:
        return None
    distribution = policy.get("InstancesDistribution") or {}
    overrides = ((policy.get("LaunchTemplate") or {}).get("Overrides")) or []
    out = {name: distribution.get(api) for name, api in MIXED_DISTRIBUTION}
    out["instance_types"] = [o.get("InstanceType") for o in overrides]
    return out


def _same_where_set(actual, desired):
    """A mixed instances policy: what the model sets; the API fills in defaults for the rest."""
    if desired is None or actual is None:
        return desired is actual
    return all(value is None or actual.get(key) == value for key, value in desired.items())


def _warm_pool_api(pool):
    args = {"MinSize": pool.get("min_size", 0)}
    if pool.get("max_group_prepared_capacity") is not None:
        args["MaxGroupPreparedCapacity"] = pool["max_group_prepared_capacity"]
    return args


def _warm_pool_fields(config):
    if not config or config.get("Status") == "PendingDelete":
        return None
    out = {"min_size": config.get("MinSize", 0)}
    if config.get("MaxGroupPreparedCapacity") is not None:
        out["max_group_prepared_capacity"] = config["MaxGroupPreparedCapacity"]
    return out


class AutoScalingGroup(ComparedTask):
    """aws_autoscaling_group, following its launch template's $Latest version.

    The create call sends the table's API fields plus the launch template (or mixed
    instances policy, one builder for the API and CloudFormation) and the tags; metrics
    collection, suspended processes and the warm pool are second calls after create, and
    compared like the rest.  Target groups attached outside the spec are deletions.
    """

    kind = "aws_autoscaling_group"
    cloudformation_type = "AWS::AutoScaling::AutoScalingGroup"
    FIELDS = (
        ApiField("name", api="AutoScalingGroupName", read="AutoScalingGroupName", cfn="AutoScalingGroupName", compare=False),
        ApiField("min_size", api="MinSize", read="MinSize", cfn="MinSize", to_cfn=str, mutable=True),
        ApiField("max_size", api="MaxSize", read="MaxSize", cfn="MaxSize", to_cfn=str, mutable=True),
        ApiField("vpc_zone_identifier", api="VPCZoneIdentifier", read="VPCZoneIdentifier", cfn="VPCZoneIdentifier",
                 to_api=",".join, from_api=lambda v: sorted(s for s in (v or "").split(",") if s), to_cfn=list,
                 mutable=True),
        ApiField("launch_template", read="LaunchTemplate || MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification",
                 to_api=_template_latest, from_api=_template_fields, to_cfn=_template_pinned, mutable=True, block=True),
        ApiField("mixed_instances_policy", read="MixedInstancesPolicy", mutable=True, same=_same_where_set,
                 to_api=lambda m: launch_template_properties(m, {})["MixedInstancesPolicy"], from_api=_mixed_fields),
        ApiField("target_group_arns", api="TargetGroupARNs", read="TargetGroupARNs", cfn="TargetGroupARNs",
                 to_api=list, from_api=_sorted_list, same=_contains, mutable=True),
        ApiField("load_balancers", api="LoadBalancerNames", read="LoadBalancerNames", cfn="LoadBalancerNames",
                 to_api=list, from_api=_sorted_list, mutable=True),
        ApiField("protect_from_scale_in", api="NewInstancesProtectedFromScaleIn", read="NewInstancesProtectedFromScaleIn",
                 cfn="NewInstancesProtectedFromScaleIn", from_api=bool, mutable=True),
        ApiField("capacity_rebalance", api="CapacityRebalance", read="CapacityRebalance", cfn="CapacityRebalance",
                 from_api=bool, to_cfn=lambda v: True if v else None, mutable=True),
        ApiField("max_instance_lifetime", api="MaxInstanceLifetime", read="MaxInstanceLifetime", cfn="MaxInstanceLifetime",
                 from_api=lambda v: v or 0, to_cfn=lambda v: v or None, mutable=True),
        # Second calls after create.
        ApiField("enabled_metrics", read="EnabledMetrics[].Metric", to_api=list, from_api=_sorted_list, mutable=True),
        ApiField("metrics_granularity", read="EnabledMetrics[0].Granularity", mutable=True),
        ApiField("suspended_processes", read="SuspendedProcesses[].ProcessName", to_api=list, from_api=_sorted_list,
                 mutable=True),
        ApiField("warm_pool", read="WarmPoolConfiguration", to_api=_warm_pool_api, from_api=_warm_pool_fields,
                 mutable=True, block=True),
        ApiField("tags", read="Tags", to_api=tag_list, from_api=own_tags, mutable=True),
    )
    # What UpdateAutoScalingGroup takes (attachments have their own calls).
    UPDATED_BY_GROUP = frozenset(("min_size", "max_size", "vpc_zone_identifier", "launch_template",
                                  "mixed_instances_policy", "protect_from_scale_in", "capacity_rebalance",
                                  "max_instance_lifetime"))

    @staticmethod
    def describe_cluster_groups(cloud):
        return cloud.lookup("aws_autoscaling_group", lambda: {g["AutoScalingGroupName"]: g for g in paginate(
            _autoscaling(cloud), "describe_auto_scaling_groups", "AutoScalingGroups",
            Filters=[{"Name": "tag:KubernetesCluster", "Values": [cloud.cluster_name]}])})

    def find(self, cloud):
        group = self.describe_cluster_groups(cloud).get(self.fields["name"])
        if group is None:
            self._refuse_foreign(cloud)
            return None
        if not cloud.owns(tag_dict(group.get("Tags"))):
            raise not_owned(cloud)
        self.outputs.update(id=group["AutoScalingGroupName"], arn=group.get("AutoScalingGroupARN"))
        return self.read_actual(group)

    def _refuse_foreign(self, cloud):
        """A group of this name without the cluster tag (another cluster's, or untagged) is an error."""
        groups = _autoscaling(cloud).describe_auto_scaling_groups(
            AutoScalingGroupNames=[self.fields["name"]])["AutoScalingGroups"]
        for group in groups:
            if not cloud.owns(tag_dict(group.get("Tags"))):
                raise not_owned(cloud)
        return groups

    def create_args(self, desired=None):
        """The table's API fields, the launch template or mixed instances policy, and the tags."""
        d = self.desired() if desired is None else desired
        args = Task.create_args(self, d)
        template = self.field_map()["launch_template"].to_api(d["launch_template"])
        args.update(launch_template_properties(d.get("mixed_instances_policy"), template))
        args["Tags"] = self._tags_api()
        return args

    def _tags_api(self):
        return [{"ResourceId": self.fields["name"], "ResourceType": "auto-scaling-group", "Key": k, "Value": v,
                 "PropagateAtLaunch": True} for k, v in sorted(self.fields["tags"].items())]

    def create(self, cloud):
        d = self.desired()
        api = _autoscaling(cloud)

        def find_made():
            # A group of this name made by the lost call is ours; anyone else's is refused (_refuse_foreign).
            return self._refuse_foreign(cloud) or None

        # The calls below are idempotent, so they follow whether the group was made now or by a lost call.
        create_named(cloud, "autoscaling", "create_auto_scaling_group", find_made, **self.create_args(d))
        self.outputs["id"] = d["name"]
        api.enable_metrics_collection(AutoScalingGroupName=d["name"], Granularity=d["metrics_granularity"],
                                      Metrics=list(d["enabled_metrics"]))
        if d.get("suspended_processes"):
            api.suspend_processes(AutoScalingGroupName=d["name"], ScalingProcesses=list(d["suspended_processes"]))
        if d.get("warm_pool"):
            api.put_warm_pool(AutoScalingGroupName=d["name"], **_warm_pool_api(d["warm_pool"]))

    def update(self, cloud, actual, changes):
        d = self.desired()
        api = _autoscaling(cloud)
        name = d["name"]

        def have_want(field):
            return set(changes[field][0] or []), set(changes[field][1] or [])

        if self.UPDATED_BY_GROUP & set(changes):
            args = self.create_args(d)
            for attachment in ("TargetGroupARNs", "LoadBalancerNames", "Tags"):
                args.pop(attachment, None)
            # Unset in the spec means AWS's default, which must be sent to undo an earlier value.
            args.setdefault("CapacityRebalance", False)
            args.setdefault("MaxInstanceLifetime", 0)
            api.update_auto_scaling_group(**args)
        if "tags" in changes:
            have = changes["tags"][0] or {}
            api.create_or_update_tags(Tags=self._tags_api())
            extra = sorted(set(have) - set(self.fields["tags"]))
            if extra:
                api.delete_tags(Tags=[{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": k}
                                      for k in extra])
        if "enabled_metrics" in changes or "metrics_granularity" in changes:
            api.enable_metrics_collection(AutoScalingGroupName=name, Granularity=d["metrics_granularity"],
                                          Metrics=list(d["enabled_metrics"]))
            extra = sorted(set(actual.get("enabled_metrics") or []) - set(d["enabled_metrics"]))
            if extra:
                api.disable_metrics_collection(AutoScalingGroupName=name, Metrics=extra)
        if "suspended_processes" in changes:
            have, want = have_want("suspended_processes")
            if have - want:
                api.resume_processes(AutoScalingGroupName=name, ScalingProcesses=sorted(have - want))
            if want - have:
                api.suspend_processes(AutoScalingGroupName=name, ScalingProcesses=sorted(want - have))
        if "target_group_arns" in changes:
            # Only attaching: target groups the spec no longer lists are deletions (orphans), as in kops.
            have, want = have_want("target_group_arns")
            api.attach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=sorted(want - have))
        if "load_balancers" in changes:
            have, want = have_want("load_balancers")
            if want - have:
                api.attach_load_balancers(AutoScalingGroupName=name, LoadBalancerNames=sorted(want - have))
            if have - want:
                api.detach_load_balancers(AutoScalingGroupName=name, LoadBalancerNames=sorted(have - want))
        if "warm_pool" in changes:
            if d.get("warm_pool"):
                api.put_warm_pool(AutoScalingGroupName=name, **_warm_pool_api(d["warm_pool"]))
            else:
                api.delete_warm_pool(AutoScalingGroupName=name, ForceDelete=True)

    @classmethod
    def orphans(cls, cloud, wanted):
        """The groups of instance groups removed from the spec (order 1: after the lifecycle hooks and
        attachments, before their launch templates), and target groups attached to a wanted group that
        the spec no longer lists (order 0, kops' deferred detach)."""
        by_name = {task.fields["name"]: task for task in wanted}
        found = []
        for name, group in sorted(cls.describe_cluster_groups(cloud).items()):
            if not kops_managed(cloud, tag_dict(group.get("Tags"))):
                continue
            task = by_name.get(name)
            if task is None:
                instances = len(group.get("Instances") or [])
                pool = " and its warm pool" if group.get("WarmPoolConfiguration") else ""
                found.append(Deletion(cls.kind, name, name, _delete_group(name), order=1,
                                      detail="force delete: terminates its %d instance(s)%s" % (instances, pool)))
                continue
            listed = {resolved_or_none(arn) for arn in task.fields.get("target_group_arns") or []}
            for arn in sorted(set(group.get("TargetGroupARNs") or []) - listed):
                found.append(Deletion("aws_autoscaling_attachment", "%s:%s" % (name, arn.rsplit("/", 2)[-2]), arn,
                                      _detach_target_group(name, arn),
                                      detail="target group %s detached from %s" % (arn, name)))
        return found

    def render_terraform(self):
        body = Task.render_terraform(self)
        mixed = body.pop("mixed_instances_policy", None)
        if mixed:
            # The launch template goes inside the policy.
            template = body.pop("launch_template").body
            distribution = {k: mixed[k] for k in ("on_demand_allocation_strategy", "on_demand_base_capacity",
                                                  "on_demand_percentage_above_base_capacity",
                                                  "spot_allocation_strategy", "spot_instance_pools",
                                                  "spot_max_price") if mixed.get(k) is not None}
            # kops writes "" without a maxPrice: the on-demand price cap, and an earlier maxPrice unset.
            distribution.setdefault("spot_max_price", "")
            body["mixed_instances_policy"] = Block({
                "instances_distribution": Block(distribution),
                "launch_template": Block({
                    "launch_template_specification": Block({"launch_template_id": template["id"],
                                                            "version": template["version"]}),
                    "override": [Block({"instance_type": t}) for t in mixed["instance_types"]]})})
        body["tag"] = [Block({"key": k, "value": v, "propagate_at_launch": True})
                       for k, v in sorted(body.pop("tags").items())]
        for empty in [k for k, v in body.items() if v == []]:
            del body[empty]
        return body

    def output_role(self):
        """The role its k8s.io/role/<role> tag names, control-plane written master (kops' output prefix), or None.
        A control-plane group carries both k8s.io/role/control-plane and k8s.io/role/master: one role."""
        tagged = (key[len(ROLE_TAG_PREFIX):] for key in self.fields.get("tags") or {} if key.startswith(ROLE_TAG_PREFIX))
        roles = {"master" if role == "control-plane" else role for role in tagged}
        if len(roles) > 1:
            raise TaskError("%s: tagged with more than one role (%s); an instance group has one role"
                            % (self.key, ", ".join(sorted(roles))))
        return roles.pop() if roles else None

    def terraform_outputs(self):
        """As kops' AutoscalingGroup: per role, its id, its launch template's security groups and, for
        nodes, its subnets, each an item of the role's list (<role>_autoscaling_group_ids, ...)."""
        role = self.output_role()
        if role is None:
            return []
        template = self.fields["launch_template"]["id"].task
        groups = to_terraform(template.fields["network_interfaces"]["security_groups"])
        outputs = [(role + "_security_group_ids", group, True) for group in groups]
        outputs.append((role + "_autoscaling_group_ids", Ref(self).terraform(), True))
        if role == "node":
            outputs.extend((role + "_subnet_ids", subnet, True) for subnet in to_terraform(self.fields["vpc_zone_identifier"]))
        return outputs

    def render_cloudformation(self):
        """The table's CloudFormation fields, metrics collection, the launch template (the API's builder,
        the version pinned) and the tags with PropagateAtLaunch."""
        f = self.fields
        properties = {}
        for field in self.FIELDS:
            value = f.get(field.name)
            if field.cfn and value is not None and field.to_cfn(value) is not None:
                properties[field.cfn] = field.to_cfn(value)
        properties["MetricsCollection"] = [{"Granularity": f["metrics_granularity"], "Metrics": list(f["enabled_metrics"])}]
        properties["Tags"] = [{"Key": k, "Value": v, "PropagateAtLaunch": True} for k, v in sorted(f["tags"].items())]
        template = self.field_map()["launch_template"].to_cfn(f["launch_template"])
        properties.update(launch_template_properties(f.get("mixed_instances_policy"), template))
        return properties

    def extra_cloudformation(self):
        pool = self.fields.get("warm_pool")
        if not pool:
            return []
        properties = dict(_warm_pool_api(pool), AutoScalingGroupName=Ref(self))
        return [("WarmPool", "AWS::AutoScaling::WarmPool", properties)]


def _delete_group(name):
    """kops' deleteGroup: the instances a rolling update detached from the group, then the group with
    ForceDelete (its instances, warm pool and lifecycle actions go with it)."""
    def delete(cloud):
        detached = [i["InstanceId"] for r in paginate(
            cloud.ec2, "describe_instances", "Reservations", Filters=[
                {"Name": "tag:" + DETACHED_TAG, "Values": [name]},
                {"Name": "tag:KubernetesCluster", "Values": [cloud.cluster_name]},
                {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}])
            for i in r["Instances"]]
        if detached:
            cloud.ec2.terminate_instances(InstanceIds=detached)
        _ignore_missing(GROUP_MISSING, _autoscaling(cloud).delete_auto_scaling_group,
                        AutoScalingGroupName=name, ForceDelete=True)
    return delete


def _detach_target_group(name, arn):
    def delete(cloud):
        _autoscaling(cloud).detach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=[arn])
    return delete


# -- lifecycle hooks ---------------------------------------------------------------------------------

def _group_hooks(cloud, group):
    """One DescribeLifecycleHooks per group and run, shared by find and orphans."""
    return cloud.lookup("hooks:" + group, lambda: _autoscaling(cloud).describe_lifecycle_hooks(
        AutoScalingGroupName=group)["LifecycleHooks"])


class LifecycleHook(ComparedTask):
    """aws_autoscaling_lifecycle_hook (kops' NTH termination hook, the warm pool launch hook)."""

    kind = "aws_autoscaling_lifecycle_hook"
    cloudformation_type = "AWS::AutoScaling::LifecycleHook"
    FIELDS = (
        ApiField("name", api="LifecycleHookName", read="LifecycleHookName", cfn="LifecycleHookName", compare=False),
        ApiField("autoscaling_group_name", api="AutoScalingGroupName", read="AutoScalingGroupName",
                 cfn="AutoScalingGroupName", compare=False),
        ApiField("lifecycle_transition", api="LifecycleTransition", read="LifecycleTransition", cfn="LifecycleTransition",
                 mutable=True),
        ApiField("heartbeat_timeout", api="HeartbeatTimeout", read="HeartbeatTimeout", cfn="HeartbeatTimeout",
                 mutable=True),
        ApiField("default_result", api="DefaultResult", read="DefaultResult", cfn="DefaultResult", mutable=True),
    )

    def find(self, cloud):
        for hook in _group_hooks(cloud, self.desired()["autoscaling_group_name"]):
            if hook["LifecycleHookName"] == self.fields["name"]:
                self.outputs["id"] = hook["LifecycleHookName"]
                return self.read_actual(hook)
        return None

    def create(self, cloud):
        args = self.create_args()
        _autoscaling(cloud).put_lifecycle_hook(**args)
        self.outputs["id"] = args["LifecycleHookName"]

    def update(self, cloud, actual, changes):
        self.create(cloud)  # PutLifecycleHook creates or replaces

    @classmethod
    def orphans(cls, cloud, wanted):
        """kops' hooks (NTH, warm pool) on this cluster's groups that no wanted hook is (order 0: before
        a removed group goes).  Other hooks on the groups are not kops' and are left alone."""
        keep = {(resolved_or_none(t.fields["autoscaling_group_name"]), t.fields["name"]) for t in wanted}
        found = []
        for group_name, group in sorted(AutoScalingGroup.describe_cluster_groups(cloud).items()):
            if not kops_managed(cloud, tag_dict(group.get("Tags"))):
                continue
            for hook in _group_hooks(cloud, group_name):
                hook_name = hook["LifecycleHookName"]
                if (group_name, hook_name) in keep or not (
                        hook_name == WARM_POOL_HOOK or hook_name.endswith(NTH_HOOK_SUFFIX)):
                    continue
                found.append(Deletion(cls.kind, "%s:%s" % (group_name, hook_name), hook_name,
                                      _delete_hook(group_name, hook_name),
                                      detail="lifecycle hook %s of %s" % (hook_name, group_name)))
        return found


def _delete_hook(group, hook):
    def delete(cloud):
        _ignore_missing(GROUP_MISSING + ("No Lifecycle Hook found",), _autoscaling(cloud).delete_lifecycle_hook,
                        AutoScalingGroupName=group, LifecycleHookName=hook)
    return delete


def launch_template_properties(mixed, template):
    """{"LaunchTemplate": ...} or {"MixedInstancesPolicy": ...}: the same shape for the API and CloudFormation."""
    if not mixed:
        return {"LaunchTemplate": template}
    distribution = {api: mixed[name] for name, api in MIXED_DISTRIBUTION if mixed.get(name) is not None}
    return {"MixedInstancesPolicy": {
        "LaunchTemplate": {"LaunchTemplateSpecification": template,
                           "Overrides": [{"InstanceType": t} for t in mixed["instance_types"]]},
        "InstancesDistribution": distribution}}


def user_data_base64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")
