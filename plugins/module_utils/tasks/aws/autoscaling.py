# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Per-instance-group tasks: the image lookup, launch templates, autoscaling groups
(with their warm pool) and lifecycle hooks.

Lookups are one call per kind and run (cached on the AwsCloud): the cluster's
launch templates by the cluster tag, then the $Latest version of every
template in one paginated call; the cluster's autoscaling groups by the
cluster tag; lifecycle hooks per group.  A launch template that differs gets
a new version (the autoscaling group follows $Latest, so it is not touched);
nothing is ever deleted.  Field names are Terraform's.
"""

from __future__ import annotations

import base64

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_dict, tag_list
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Block, Expression
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref, Task, to_terraform

# kops' ResolveImageOwnerAlias: well-known owner names for "<owner>/<image name>".
IMAGE_OWNERS = {"amazon": "137112412989", "amazon.com": "137112412989", "debian": "136693071363",
                "debian11": "136693071363", "flatcar": "075585003325", "redhat": "309956199498",
                "redhat.com": "309956199498", "ubuntu": "099720109477"}
DEFAULT_ROOT_DEVICE = "/dev/xvda"


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

    def find(self, cloud):
        image = self.fields["image"]
        found = cloud.lookup("image:" + image, lambda: cloud.ec2.describe_images(**image_query(image))["Images"])
        if not found:
            raise ValueError("image %r not found in %s" % (image, cloud.region))
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


class LaunchTemplate(Task):
    """aws_launch_template; the fields below are compared with the template's $Latest version."""

    kind = "aws_launch_template"
    cloudformation_type = "AWS::EC2::LaunchTemplate"
    compared = ("image_id", "instance_type", "key_name", "iam_instance_profile", "metadata_options", "monitoring",
                "network_interfaces", "block_device_mappings", "tag_specifications", "user_data",
                "credit_specification", "placement")

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
            return None
        template, version = found
        self.outputs.update(id=template["LaunchTemplateId"], latest_version=template.get("LatestVersionNumber"))
        actual = self.from_api((version or {}).get("LaunchTemplateData") or {})
        actual["tags"] = tag_dict(template.get("Tags"))
        return actual

    def compare(self, actual):
        desired = self.from_api(self.launch_template_data())
        changes = {f: (actual.get(f), desired.get(f)) for f in self.compared if actual.get(f) != desired.get(f)}
        wanted = self.fields.get("tags") or {}
        if any(actual["tags"].get(k) != v for k, v in wanted.items()):
            changes["tags"] = (actual["tags"], wanted)
        return changes

    def launch_template_data(self):
        """The desired LaunchTemplateData (EC2 API form)."""
        d = self.desired()
        data = {"ImageId": d["image_id"], "InstanceType": d["instance_type"],
                "MetadataOptions": {"HttpEndpoint": d["metadata_options"]["http_endpoint"],
                                    "HttpProtocolIpv6": d["metadata_options"]["http_protocol_ipv6"],
                                    "HttpPutResponseHopLimit": d["metadata_options"]["http_put_response_hop_limit"],
                                    "HttpTokens": d["metadata_options"]["http_tokens"]},
                "Monitoring": {"Enabled": d["monitoring"]["enabled"]},
                "TagSpecifications": [{"ResourceType": t["resource_type"], "Tags": tag_list(t["tags"])}
                                      for t in d["tag_specifications"]]}
        if d.get("key_name"):
            data["KeyName"] = d["key_name"]
        if d.get("iam_instance_profile"):
            data["IamInstanceProfile"] = {"Name": d["iam_instance_profile"]["name"]}
        interface = d["network_interfaces"]
        data["NetworkInterfaces"] = [{"DeviceIndex": 0, "AssociatePublicIpAddress": interface["associate_public_ip_address"],
                                      "DeleteOnTermination": interface["delete_on_termination"],
                                      "Ipv6AddressCount": interface["ipv6_address_count"],
                                      "Groups": list(interface["security_groups"])}]
        mappings = []
        for mapping in d.get("block_device_mappings") or []:
            if mapping.get("virtual_name"):
                mappings.append({"DeviceName": mapping["device_name"], "VirtualName": mapping["virtual_name"]})
            else:
                mappings.append({"DeviceName": mapping["device_name"], "Ebs": _ebs_api(mapping["ebs"])})
        data["BlockDeviceMappings"] = mappings
        if d.get("user_data"):
            data["UserData"] = d["user_data"]
        if d.get("credit_specification"):
            data["CreditSpecification"] = {"CpuCredits": d["credit_specification"]["cpu_credits"]}
        if d.get("placement"):
            data["Placement"] = {"Tenancy": d["placement"]["tenancy"]}
        return data

    @staticmethod
    def from_api(data):
        """Comparable fields (Terraform names) from LaunchTemplateData; absent parts are None."""
        metadata = data.get("MetadataOptions") or {}
        interfaces = data.get("NetworkInterfaces") or [{}]
        interface = interfaces[0]
        mappings = []
        for mapping in data.get("BlockDeviceMappings") or []:
            if mapping.get("VirtualName"):
                mappings.append({"device_name": mapping["DeviceName"], "virtual_name": mapping["VirtualName"]})
            else:
                mappings.append({"device_name": mapping["DeviceName"], "ebs": _ebs_fields(mapping.get("Ebs") or {})})
        return {
            "image_id": data.get("ImageId"),
            "instance_type": data.get("InstanceType"),
            "key_name": data.get("KeyName"),
            "iam_instance_profile": (data.get("IamInstanceProfile") or {}).get("Name"),
            "metadata_options": {"http_endpoint": metadata.get("HttpEndpoint"),
                                 "http_protocol_ipv6": metadata.get("HttpProtocolIpv6"),
                                 "http_put_response_hop_limit": metadata.get("HttpPutResponseHopLimit"),
                                 "http_tokens": metadata.get("HttpTokens")},
            "monitoring": bool((data.get("Monitoring") or {}).get("Enabled")),
            "network_interfaces": {"associate_public_ip_address": interface.get("AssociatePublicIpAddress"),
                                   "delete_on_termination": interface.get("DeleteOnTermination"),
                                   "ipv6_address_count": interface.get("Ipv6AddressCount") or 0,
                                   "security_groups": sorted(interface.get("Groups") or [])},
            "block_device_mappings": sorted(mappings, key=lambda m: m["device_name"]),
            # The launch-template tag specification some APIs echo back is the template's own tags.
            "tag_specifications": sorted((t["ResourceType"], sorted(tag_dict(t.get("Tags")).items()))
                                         for t in data.get("TagSpecifications") or []
                                         if t.get("ResourceType") != "launch-template"),
            "user_data": data.get("UserData") or None,
            "credit_specification": (data.get("CreditSpecification") or {}).get("CpuCredits"),
            "placement": (data.get("Placement") or {}).get("Tenancy"),
        }

    def create(self, cloud):
        created = cloud.ec2.create_launch_template(
            LaunchTemplateName=self.fields["name"], LaunchTemplateData=self.launch_template_data(),
            TagSpecifications=[{"ResourceType": "launch-template", "Tags": tag_list(self.fields["tags"])}])
        template = created["LaunchTemplate"]
        self.outputs.update(id=template["LaunchTemplateId"], latest_version=template.get("LatestVersionNumber", 1))

    def update(self, cloud, actual, changes):
        if set(changes) - {"tags"}:
            version = cloud.ec2.create_launch_template_version(
                LaunchTemplateId=self.outputs["id"], LaunchTemplateData=self.launch_template_data())
            self.outputs["latest_version"] = version["LaunchTemplateVersion"]["VersionNumber"]
        if "tags" in changes:
            cloud.ec2.create_tags(Resources=[self.outputs["id"]], Tags=tag_list(self.fields["tags"]))

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        body["block_device_mappings"] = [Block(dict(m, ebs=Block(m["ebs"])) if "ebs" in m else m)
                                         for m in body.get("block_device_mappings") or []]
        body["tag_specifications"] = [Block(t) for t in body["tag_specifications"]]
        for block in ("iam_instance_profile", "metadata_options", "monitoring", "network_interfaces",
                      "credit_specification", "placement"):
            if body.get(block) is not None:
                body[block] = Block(body[block])
        for empty in [k for k, v in body.items() if v is None]:
            del body[empty]
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
        data = self.launch_template_data_refs()
        return {"LaunchTemplateName": self.fields["name"], "LaunchTemplateData": data,
                "TagSpecifications": [{"ResourceType": "launch-template", "Tags": tag_list(self.fields["tags"])}]}

    def launch_template_data_refs(self):
        """launch_template_data() with references left as Refs (for CloudFormation)."""
        resolved = self.desired
        self.desired = lambda: dict(self.fields)
        try:
            return self.launch_template_data()
        finally:
            self.desired = resolved


ENABLED_METRICS = ("GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize",
                   "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances")
WARM_POOL_METRICS = ("WarmPoolMinSize", "WarmPoolDesiredCapacity", "WarmPoolPendingCapacity",
                     "WarmPoolTerminatingCapacity", "WarmPoolWarmedCapacity", "WarmPoolTotalCapacity",
                     "GroupAndWarmPoolDesiredCapacity", "GroupAndWarmPoolTotalCapacity")


def _autoscaling(cloud):
    return cloud.client("autoscaling")


class AutoScalingGroup(Task):
    """aws_autoscaling_group, following its launch template's $Latest version."""

    kind = "aws_autoscaling_group"
    cloudformation_type = "AWS::AutoScaling::AutoScalingGroup"
    compared = ("min_size", "max_size", "vpc_zone_identifier", "launch_template", "target_group_arns",
                "load_balancers", "suspended_processes", "enabled_metrics", "protect_from_scale_in",
                "capacity_rebalance", "max_instance_lifetime", "mixed_instances_policy", "warm_pool")

    @staticmethod
    def describe_cluster_groups(cloud):
        return cloud.lookup("aws_autoscaling_group", lambda: {g["AutoScalingGroupName"]: g for g in paginate(
            _autoscaling(cloud), "describe_auto_scaling_groups", "AutoScalingGroups",
            Filters=[{"Name": "tag:KubernetesCluster", "Values": [cloud.cluster_name]}])})

    def find(self, cloud):
        group = self.describe_cluster_groups(cloud).get(self.fields["name"])
        if group is None:
            return None
        self.outputs.update(id=group["AutoScalingGroupName"], arn=group.get("AutoScalingGroupARN"))
        template = group.get("LaunchTemplate") or ((group.get("MixedInstancesPolicy") or {}).get(
            "LaunchTemplate") or {}).get("LaunchTemplateSpecification") or {}
        actual = {
            "min_size": group["MinSize"], "max_size": group["MaxSize"],
            "vpc_zone_identifier": sorted(s for s in (group.get("VPCZoneIdentifier") or "").split(",") if s),
            "launch_template": template.get("LaunchTemplateId"),
            "target_group_arns": sorted(group.get("TargetGroupARNs") or []),
            "load_balancers": sorted(group.get("LoadBalancerNames") or []),
            "suspended_processes": sorted(p["ProcessName"] for p in group.get("SuspendedProcesses") or []),
            "enabled_metrics": sorted(m["Metric"] for m in group.get("EnabledMetrics") or []),
            "protect_from_scale_in": bool(group.get("NewInstancesProtectedFromScaleIn")),
            "capacity_rebalance": bool(group.get("CapacityRebalance")),
            "max_instance_lifetime": group.get("MaxInstanceLifetime"),
            "mixed_instances_policy": self._mixed_from_api(group.get("MixedInstancesPolicy")),
            "tags": {t["Key"]: t["Value"] for t in group.get("Tags") or []},
        }
        if "warm_pool" in self.fields:
            actual["warm_pool"] = self._warm_pool_from_api(group.get("WarmPoolConfiguration"))
        return actual

    @staticmethod
    def _warm_pool_from_api(config):
        if not config or config.get("Status") == "PendingDelete":
            return None
        out = {"min_size": config.get("MinSize", 0)}
        if config.get("MaxGroupPreparedCapacity") is not None:
            out["max_group_prepared_capacity"] = config["MaxGroupPreparedCapacity"]
        return out

    @staticmethod
    def _mixed_from_api(policy):
        if not policy:
            return None
        distribution = policy.get("InstancesDistribution") or {}
        overrides = ((policy.get("LaunchTemplate") or {}).get("Overrides")) or []
        return {"instance_types": [o.get("InstanceType") for o in overrides],
                "on_demand_base_capacity": distribution.get("OnDemandBaseCapacity"),
                "on_demand_percentage_above_base_capacity": distribution.get("OnDemandPercentageAboveBaseCapacity"),
                "spot_allocation_strategy": distribution.get("SpotAllocationStrategy"),
                "spot_instance_pools": distribution.get("SpotInstancePools")}

    def _desired_comparable(self):
        d = self.desired()
        mixed = d.get("mixed_instances_policy")
        return {
            "min_size": d["min_size"], "max_size": d["max_size"],
            "vpc_zone_identifier": sorted(d["vpc_zone_identifier"]),
            "launch_template": d["launch_template"]["id"],
            "target_group_arns": sorted(d.get("target_group_arns") or []),
            "load_balancers": sorted(d.get("load_balancers") or []),
            "suspended_processes": sorted(d.get("suspended_processes") or []),
            "enabled_metrics": sorted(d["enabled_metrics"]),
            "protect_from_scale_in": d["protect_from_scale_in"],
            "capacity_rebalance": bool(d.get("capacity_rebalance")),
            "max_instance_lifetime": d.get("max_instance_lifetime"),
            "mixed_instances_policy": None if not mixed else {
                "instance_types": list(mixed["instance_types"]),
                "on_demand_base_capacity": mixed.get("on_demand_base_capacity"),
                "on_demand_percentage_above_base_capacity": mixed.get("on_demand_percentage_above_base_capacity"),
                "spot_allocation_strategy": mixed.get("spot_allocation_strategy"),
                "spot_instance_pools": mixed.get("spot_instance_pools")},
            "warm_pool": d.get("warm_pool"),
        }

    def compare(self, actual):
        desired = self._desired_comparable()
        changes = {}
        for field in self.compared:
            if field == "max_instance_lifetime" and actual.get(field) is None:
                continue  # not echoed by every API (moto): compared only when reported
            if field == "warm_pool" and "warm_pool" not in self.fields:
                continue
            if field == "mixed_instances_policy" and desired[field] is not None and actual.get(field) is not None:
                # Only what we set; the API fills in defaults for the rest.
                want, have = desired[field], actual[field]
                if any(want[k] is not None and have.get(k) != want[k] for k in want):
                    changes[field] = (have, want)
                continue
            if actual.get(field) != desired[field]:
                changes[field] = (actual.get(field), desired[field])
        wanted = self.fields.get("tags") or {}
        if any(actual["tags"].get(k) != v for k, v in wanted.items()):
            changes["tags"] = (actual["tags"], wanted)
        return changes

    def _group_args(self):
        d = self.desired()
        args = dict(AutoScalingGroupName=d["name"], MinSize=d["min_size"], MaxSize=d["max_size"],
                    VPCZoneIdentifier=",".join(d["vpc_zone_identifier"]),
                    NewInstancesProtectedFromScaleIn=d["protect_from_scale_in"],
                    CapacityRebalance=bool(d.get("capacity_rebalance")),
                    MaxInstanceLifetime=d.get("max_instance_lifetime") or 0)
        template = {"LaunchTemplateId": d["launch_template"]["id"], "Version": "$Latest"}
        args.update(launch_template_properties(d.get("mixed_instances_policy"), template))
        return args

    def _tags_api(self):
        return [{"ResourceId": self.fields["name"], "ResourceType": "auto-scaling-group", "Key": k, "Value": v,
                 "PropagateAtLaunch": True} for k, v in sorted(self.fields["tags"].items())]

    def create(self, cloud):
        d = self.desired()
        api = _autoscaling(cloud)
        args = self._group_args()
        if d.get("target_group_arns"):
            args["TargetGroupARNs"] = list(d["target_group_arns"])
        if d.get("load_balancers"):
            args["LoadBalancerNames"] = list(d["load_balancers"])
        api.create_auto_scaling_group(Tags=self._tags_api(), **args)
        self.outputs["id"] = d["name"]
        api.enable_metrics_collection(AutoScalingGroupName=d["name"], Granularity=d["metrics_granularity"],
                                      Metrics=list(d["enabled_metrics"]))
        if d.get("suspended_processes"):
            api.suspend_processes(AutoScalingGroupName=d["name"], ScalingProcesses=list(d["suspended_processes"]))
        if d.get("warm_pool"):
            self._put_warm_pool(api, d["warm_pool"])

    def _put_warm_pool(self, api, pool):
        args = {"AutoScalingGroupName": self.fields["name"], "MinSize": pool.get("min_size", 0)}
        if pool.get("max_group_prepared_capacity") is not None:
            args["MaxGroupPreparedCapacity"] = pool["max_group_prepared_capacity"]
        api.put_warm_pool(**args)

    def update(self, cloud, actual, changes):
        d = self.desired()
        api = _autoscaling(cloud)
        name = d["name"]
        group_fields = {"min_size", "max_size", "vpc_zone_identifier", "launch_template", "protect_from_scale_in",
                        "capacity_rebalance", "max_instance_lifetime", "mixed_instances_policy"}
        if group_fields & set(changes):
            api.update_auto_scaling_group(**self._group_args())
        if "tags" in changes:
            api.create_or_update_tags(Tags=self._tags_api())
        if "enabled_metrics" in changes:
            api.enable_metrics_collection(AutoScalingGroupName=name, Granularity=d["metrics_granularity"],
                                          Metrics=list(d["enabled_metrics"]))
        if "suspended_processes" in changes:
            have, want = set(changes["suspended_processes"][0] or []), set(changes["suspended_processes"][1])
            if have - want:
                api.resume_processes(AutoScalingGroupName=name, ScalingProcesses=sorted(have - want))
            if want - have:
                api.suspend_processes(AutoScalingGroupName=name, ScalingProcesses=sorted(want - have))
        if "target_group_arns" in changes:
            have, want = set(changes["target_group_arns"][0] or []), set(changes["target_group_arns"][1])
            if want - have:
                api.attach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=sorted(want - have))
            if have - want:
                api.detach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=sorted(have - want))
        if "load_balancers" in changes:
            have, want = set(changes["load_balancers"][0] or []), set(changes["load_balancers"][1])
            if want - have:
                api.attach_load_balancers(AutoScalingGroupName=name, LoadBalancerNames=sorted(want - have))
            if have - want:
                api.detach_load_balancers(AutoScalingGroupName=name, LoadBalancerNames=sorted(have - want))
        if "warm_pool" in changes:
            if d.get("warm_pool"):
                self._put_warm_pool(api, d["warm_pool"])
            else:
                api.delete_warm_pool(AutoScalingGroupName=name, ForceDelete=True)

    def render_terraform(self):
        body = to_terraform(dict(self.fields))
        template = body.pop("launch_template")
        mixed = body.pop("mixed_instances_policy", None)
        if mixed:
            distribution = {k: mixed[k] for k in ("on_demand_allocation_strategy", "on_demand_base_capacity",
                                                  "on_demand_percentage_above_base_capacity",
                                                  "spot_allocation_strategy", "spot_instance_pools",
                                                  "spot_max_price") if mixed.get(k) is not None}
            body["mixed_instances_policy"] = Block({
                "instances_distribution": Block(distribution),
                "launch_template": Block({
                    "launch_template_specification": Block({"launch_template_id": template["id"],
                                                            "version": template["version"]}),
                    "override": [Block({"instance_type": t}) for t in mixed["instance_types"]]})})
        else:
            body["launch_template"] = Block(template)
        body["tag"] = [Block({"key": k, "value": v, "propagate_at_launch": True})
                       for k, v in sorted(body.pop("tags").items())]
        warm_pool = body.pop("warm_pool", None)
        if warm_pool:
            body["warm_pool"] = Block(warm_pool)
        for empty in [k for k, v in body.items() if v is None or v == []]:
            del body[empty]
        return body

    def render_cloudformation(self):
        f = self.fields
        properties = {
            "AutoScalingGroupName": f["name"], "MinSize": str(f["min_size"]), "MaxSize": str(f["max_size"]),
            "VPCZoneIdentifier": list(f["vpc_zone_identifier"]),
            "MetricsCollection": [{"Granularity": f["metrics_granularity"], "Metrics": list(f["enabled_metrics"])}],
            "NewInstancesProtectedFromScaleIn": f["protect_from_scale_in"],
            "Tags": [{"Key": k, "Value": v, "PropagateAtLaunch": True} for k, v in sorted(f["tags"].items())],
        }
        template = {"LaunchTemplateId": f["launch_template"]["id"], "Version": f["launch_template"]["version"]}
        properties.update(launch_template_properties(f.get("mixed_instances_policy"), template))
        if f.get("max_instance_lifetime"):
            properties["MaxInstanceLifetime"] = f["max_instance_lifetime"]
        if f.get("capacity_rebalance"):
            properties["CapacityRebalance"] = True
        if f.get("target_group_arns"):
            properties["TargetGroupARNs"] = list(f["target_group_arns"])
        if f.get("load_balancers"):
            properties["LoadBalancerNames"] = list(f["load_balancers"])
        return properties

    def extra_cloudformation(self):
        pool = self.fields.get("warm_pool")
        if not pool:
            return []
        from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref
        properties = {"AutoScalingGroupName": Ref(self), "MinSize": pool.get("min_size", 0)}
        if pool.get("max_group_prepared_capacity") is not None:
            properties["MaxGroupPreparedCapacity"] = pool["max_group_prepared_capacity"]
        return [("WarmPool", "AWS::AutoScaling::WarmPool", properties)]


class LifecycleHook(Task):
    """aws_autoscaling_lifecycle_hook (kops' NTH termination hook, the warm pool launch hook)."""

    kind = "aws_autoscaling_lifecycle_hook"
    cloudformation_type = "AWS::AutoScaling::LifecycleHook"
    compared = ("default_result", "heartbeat_timeout", "lifecycle_transition")

    def find(self, cloud):
        group = self.desired()["autoscaling_group_name"]
        hooks = cloud.lookup("hooks:" + group, lambda: _autoscaling(cloud).describe_lifecycle_hooks(
            AutoScalingGroupName=group)["LifecycleHooks"])
        for hook in hooks:
            if hook["LifecycleHookName"] == self.fields["name"]:
                self.outputs["id"] = hook["LifecycleHookName"]
                return {"default_result": hook.get("DefaultResult"), "heartbeat_timeout": hook.get("HeartbeatTimeout"),
                        "lifecycle_transition": hook.get("LifecycleTransition")}
        return None

    def create(self, cloud):
        d = self.desired()
        _autoscaling(cloud).put_lifecycle_hook(
            LifecycleHookName=d["name"], AutoScalingGroupName=d["autoscaling_group_name"],
            LifecycleTransition=d["lifecycle_transition"], HeartbeatTimeout=d["heartbeat_timeout"],
            DefaultResult=d["default_result"])
        self.outputs["id"] = d["name"]

    def update(self, cloud, actual, changes):
        self.create(cloud)

    def render_cloudformation(self):
        f = self.fields
        return {"LifecycleHookName": f["name"], "AutoScalingGroupName": f["autoscaling_group_name"],
                "LifecycleTransition": f["lifecycle_transition"], "HeartbeatTimeout": f["heartbeat_timeout"],
                "DefaultResult": f["default_result"]}


def launch_template_properties(mixed, template):
    """{"LaunchTemplate": ...} or {"MixedInstancesPolicy": ...}: the same shape for the API and CloudFormation."""
    if not mixed:
        return {"LaunchTemplate": template}
    distribution = {k: v for k, v in {
        "OnDemandBaseCapacity": mixed.get("on_demand_base_capacity"),
        "OnDemandPercentageAboveBaseCapacity": mixed.get("on_demand_percentage_above_base_capacity"),
        "OnDemandAllocationStrategy": mixed.get("on_demand_allocation_strategy"),
        "SpotAllocationStrategy": mixed.get("spot_allocation_strategy"),
        "SpotInstancePools": mixed.get("spot_instance_pools"),
        "SpotMaxPrice": mixed.get("spot_max_price")}.items() if v is not None}
    return {"MixedInstancesPolicy": {
        "LaunchTemplate": {"LaunchTemplateSpecification": template,
                           "Overrides": [{"InstanceType": t} for t in mixed["instance_types"]]},
        "InstancesDistribution": distribution}}


def user_data_base64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")
