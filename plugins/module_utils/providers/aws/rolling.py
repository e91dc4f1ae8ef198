# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS side of a rolling update (kops' awsup GetCloudGroups, DetachInstance, DeleteInstance,
DeregisterInstance): the cluster's autoscaling groups with which members need an update, and
the calls that replace a member.

Reads are batched: one paginated DescribeAutoScalingGroups (filtered by the cluster tag), one
DescribeLaunchTemplates for the templates named $Latest/$Default, and one paginated
DescribeInstances for the cluster's instances, whatever the number of groups and instances.
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import describe_error, error_code, paginate, tag_dict
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"
# AWS tags every instance launched from a launch template with the template and the version it used.
TEMPLATE_ID_TAG = "aws:ec2launchtemplate:id"
TEMPLATE_VERSION_TAG = "aws:ec2launchtemplate:version"
# Members on their way out are ignored (kops: "ignoring instance as it is terminating").
LEAVING = ("Terminating", "Terminating:Wait", "Terminating:Proceed", "Terminated", "Detaching", "Detached")
LIVE_STATES = ["pending", "running", "stopping", "stopped"]
TEMPLATE_BATCH = 200
INSTANCE_BATCH = 1000


def _client_error(exc):
    return hasattr(exc, "response") and error_code(exc) is not None


class AwsRolling(object):
    """One cluster's autoscaling groups, for a roll; cloud is a cloud.aws.AwsCloud."""

    provider = "aws"

    def __init__(self, cloud, poll=5.0, sleep=time.sleep, clock=time.monotonic):
        self.cloud = cloud
        self.poll = poll
        self.sleep = sleep
        self.clock = clock

    @property
    def autoscaling(self):
        return self.cloud.client("autoscaling")

    def _call(self, what, function, **kwargs):
        try:
            return function(**kwargs)
        except Exception as exc:  # botocore's ClientError and endpoint errors: name the call
            if _client_error(exc) or type(exc).__module__.startswith("botocore"):
                raise describe_error(exc, what)
            raise

    # -- reading ---------------------------------------------------------------------------------
    def _groups(self):
        groups = self._call("listing the cluster's autoscaling groups", paginate, api_client=self.autoscaling,
                            operation="describe_auto_scaling_groups", result_key="AutoScalingGroups",
                            Filters=[{"Name": "tag:KubernetesCluster", "Values": [self.cloud.cluster_name]}])
        # A group being deleted has a Status (kops skips it); ownership is the full tag set, not the filter.
        return [g for g in groups if self.cloud.owns(tag_dict(g.get("Tags"))) and not g.get("Status")]

    @staticmethod
    def _template_of(group):
        return group.get("LaunchTemplate") or ((group.get("MixedInstancesPolicy") or {}).get("LaunchTemplate") or {}
                                               ).get("LaunchTemplateSpecification")

    def _resolved_versions(self, groups):
        """{template id: {"$Latest": n, "$Default": n}} for the templates groups name symbolically."""
        ids = sorted({self._template_of(g)["LaunchTemplateId"] for g in groups if self._template_of(g)
                      and str(self._template_of(g).get("Version") or "$Default").startswith("$")})
        found = {}
        for start in range(0, len(ids), TEMPLATE_BATCH):
            for template in self._call("describing launch templates", paginate, api_client=self.cloud.ec2,
                                       operation="describe_launch_templates", result_key="LaunchTemplates",
                                       LaunchTemplateIds=ids[start:start + TEMPLATE_BATCH]):
                found[template["LaunchTemplateId"]] = {"$Latest": str(template["LatestVersionNumber"]),
                                                       "$Default": str(template["DefaultVersionNumber"])}
        return found

    def _instances(self):
        filters = self.cloud.cluster_filter() + [{"Name": "instance-state-name", "Values": LIVE_STATES}]
        reservations = self._call("describing the cluster's instances", paginate, api_client=self.cloud.ec2,
                                  operation="describe_instances", result_key="Reservations", Filters=filters)
        return {i["InstanceId"]: i for r in reservations for i in r.get("Instances") or []}

    def current_template(self, group, versions):
        """kops' findAutoscalingGroupLaunchConfiguration: "id:version" with $Latest/$Default resolved."""
        if group.get("LaunchConfigurationName"):
            return group["LaunchConfigurationName"]
        template = self._template_of(group)
        if not template or not template.get("LaunchTemplateId"):
            raise describe_error(CloudError("it has neither a launch template nor a launch configuration"),
                                 "autoscaling group %s" % group["AutoScalingGroupName"])
        version = str(template.get("Version") or "$Default")
        if version.startswith("$"):
            version = versions[template["LaunchTemplateId"]][version]
        return "%s:%s" % (template["LaunchTemplateId"], version)

    @staticmethod
    def instance_template(member, instance):
        """kops' findInstanceLaunchConfiguration.  The version comes from the instance's own
        aws:ec2launchtemplate tags when it has them (set by EC2 at launch: the version it really runs),
        else from the group's report of the member."""
        if member.get("LaunchConfigurationName"):
            return member["LaunchConfigurationName"]
        tags = tag_dict((instance or {}).get("Tags"))
        if tags.get(TEMPLATE_ID_TAG) and tags.get(TEMPLATE_VERSION_TAG):
            return "%s:%s" % (tags[TEMPLATE_ID_TAG], tags[TEMPLATE_VERSION_TAG])
        template = member.get("LaunchTemplate") or {}
        return "%s:%s" % (template.get("LaunchTemplateId"), template.get("Version")) if template else ""

    def cloud_groups(self):
        """{instance group name: {"group_name", "min", "desired", "max", "current", "target_groups",
        "load_balancers", "instances": [...]}}; each instance: {"id", "needs_update", "detached", "warm",
        "lifecycle_state", "launch_template", "private_dns_name", "private_ip", "zone", "machine_type"}."""
        groups = self._groups()
        versions = self._resolved_versions(groups)
        ec2_instances = self._instances()
        result = {}
        for group in groups:
            name = tag_dict(group.get("Tags")).get(INSTANCE_GROUP_TAG)
            if not name:
                continue
            current = self.current_template(group, versions)
            members, seen = [], set()
            for member in group.get("Instances") or []:
                seen.add(member["InstanceId"])
                # Terminating members are ignored; so are those EC2 no longer lists as live (kops: instances[id] == nil).
                if member.get("LifecycleState") in LEAVING or member["InstanceId"] not in ec2_instances:
                    continue
                instance = ec2_instances[member["InstanceId"]]
                running = self.instance_template(member, instance)
                members.append(self._member(instance, running, needs_update=running != current, detached=False,
                                            state=member.get("LifecycleState", "")))
            for instance_id, instance in sorted(ec2_instances.items()):
                if instance_id not in seen and tag_dict(instance.get("Tags")).get(DETACHED_TAG) == group["AutoScalingGroupName"]:
                    members.append(self._member(instance, self.instance_template({}, instance), needs_update=True,
                                                detached=True, state="Detached"))
            result[name] = {"group_name": group["AutoScalingGroupName"], "min": group.get("MinSize", 0),
                            "desired": group.get("DesiredCapacity", 0), "max": group.get("MaxSize", 0),
                            "current": current, "target_groups": list(group.get("TargetGroupARNs") or []),
                            "load_balancers": list(group.get("LoadBalancerNames") or []), "instances": members}
        return result

    @staticmethod
    def _member(instance, running, needs_update, detached, state):
        return {"id": instance["InstanceId"], "needs_update": needs_update, "detached": detached,
                "warm": state.startswith("Warmed:"), "lifecycle_state": state, "launch_template": running,
                "private_dns_name": instance.get("PrivateDnsName", ""), "private_ip": instance.get("PrivateIpAddress", ""),
                "zone": (instance.get("Placement") or {}).get("AvailabilityZone", ""),
                "machine_type": instance.get("InstanceType", "")}

    # -- changing ----------------------------------------------------------------------------------
    def detach(self, group, instance):
        """Surge: tag the instance with its group (so later runs still find it) and detach it without
        decrementing the desired capacity; the group launches its replacement at once."""
        self._call("tagging %s as detached" % instance["id"], self.cloud.ec2.create_tags, Resources=[instance["id"]],
                   Tags=[{"Key": DETACHED_TAG, "Value": group["group_name"]}])
        self._call("detaching %s from %s" % (instance["id"], group["group_name"]), self.autoscaling.detach_instances,
                   AutoScalingGroupName=group["group_name"], InstanceIds=[instance["id"]],
                   ShouldDecrementDesiredCapacity=False)
        instance["detached"], instance["status"] = True, "Detached"

    def terminate(self, group, instance):
        """A member through its group, keeping the desired capacity (the group replaces it at once; kops
        calls EC2 TerminateInstances and waits for the group's health check to notice); a detached
        instance, no longer a member, through EC2."""
        try:
            if instance.get("detached"):
                self.cloud.ec2.terminate_instances(InstanceIds=[instance["id"]])
            else:
                self.autoscaling.terminate_instance_in_auto_scaling_group(
                    InstanceId=instance["id"], ShouldDecrementDesiredCapacity=False)
        except Exception as exc:  # botocore's errors; an instance already gone counts as terminated (as in kops)
            if not _client_error(exc) and not type(exc).__module__.startswith("botocore"):
                raise
            message = str(((exc.response or {}).get("Error") or {}).get("Message", "")) if _client_error(exc) else ""
            if error_code(exc) == "InvalidInstanceID.NotFound" or (
                    error_code(exc) == "ValidationError" and "not found" in message.lower()):
                return
            raise describe_error(exc, "terminating %s" % instance["id"])

    def deregister(self, group, instance):
        """Take the instance out of its group's load balancers and target groups before it is drained
        (kops' DeregisterInstance)."""
        if group["target_groups"]:
            elbv2 = self.cloud.client("elbv2")
            for arn in group["target_groups"]:
                self._call("deregistering %s from %s" % (instance["id"], arn), elbv2.deregister_targets,
                           TargetGroupArn=arn, Targets=[{"Id": instance["id"]}])
        if group["load_balancers"]:
            elb = self.cloud.client("elb")
            for name in group["load_balancers"]:
                self._call("deregistering %s from %s" % (instance["id"], name),
                           elb.deregister_instances_from_load_balancer, LoadBalancerName=name,
                           Instances=[{"InstanceId": instance["id"]}])

    def wait_in_service(self, group, timeout):
        """Until the group has its desired number of InService members (the replacements are up), or
        a ValueError naming what is missing at the deadline.  Returns the ids of its InService members."""
        deadline = self.clock() + timeout
        while True:
            found = self._call("describing %s" % group["group_name"], self.autoscaling.describe_auto_scaling_groups,
                               AutoScalingGroupNames=[group["group_name"]])["AutoScalingGroups"]
            if not found:
                raise CloudError("autoscaling group %s is gone" % group["group_name"])
            members = [m["InstanceId"] for m in found[0].get("Instances") or [] if m.get("LifecycleState") == "InService"]
            if len(members) >= found[0].get("DesiredCapacity", 0):
                return members
            if self.clock() >= deadline:
                raise CloudError("autoscaling group %s has %d of %d instances InService after %d s"
                                 % (group["group_name"], len(members), found[0].get("DesiredCapacity", 0), timeout),
                                 fix="see its activities (aws autoscaling describe-scaling-activities)")
            self.sleep(self.poll)
