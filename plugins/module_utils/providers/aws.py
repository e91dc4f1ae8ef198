# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS driver: AWS's tasks, cloud, Terraform provider and outputs, boot environment."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import autoscaling
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import kops_controller
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import store_objects
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import autoscaling as autoscaling_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, elbv2, iam, ipv6, nth, route53, s3
from ansible_collections.kubeops.kops.plugins.module_utils.providers import managed_task_classes
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.base import Ref, Task
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

TASK_MODULES = (ec2, ipv6, elbv2, iam, nth, route53, s3, autoscaling_tasks)
# Instance-group role -> (output prefix, security group prefix, IAM role prefix), as kops names its outputs.
OUTPUT_ROLES = ((objects.ROLE_CONTROL_PLANE, "master", "masters", "masters"), (objects.ROLE_NODE, "node", "nodes", "nodes"),
                (objects.ROLE_BASTION, "bastion", "bastion", "bastions"))
IPV6_CIDR_LENGTH = 'local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\\\d+)", local.vpc_ipv6_cidr_block)[0])'


class AwsDriver(object):
    provider = "aws"
    targets = ("direct", "terraform", "cloudformation")

    def cloud(self, cluster_name, region, profile=None, spec=None):
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
        return AwsCloud(cluster_name, region, profile=profile)

    def task_classes(self):
        """Every AWS task kind that manages objects (asked for orphans on every run)."""
        return managed_task_classes(TASK_MODULES, Task)

    def build_tasks(self, completed, groups, ssh_public_keys, user_data):
        return aws_model.build_tasks(completed, groups, ssh_public_keys, user_data)

    def boot_environment(self, completed):
        """What the boot script exports for nodeup (kops exports AWS_REGION)."""
        return {"AWS_REGION": region_of(completed["spec"])}

    def control_plane_addresses(self, cloud, completed, wait=0):
        """The API balancer's private addresses workers pin api.internal and kops-controller.internal to, when the
        cluster has no DNS (kops' BootConfig.APIServerIPs); [] otherwise or before the balancer exists.
        wait: seconds to wait for a balancer just made to be active first."""
        if wait and kops_controller.uses_load_balancer(completed["spec"]):
            kops_controller.wait_until_active(cloud, completed, wait)
        return kops_controller.find_addresses(cloud, completed)

    def terraform_providers(self, region, spec=None):
        """(provider blocks [(name, body)], required_providers {name: body}) of kubernetes.tf (spec: the completed
        cluster spec, for what a provider block needs beyond the region; AWS needs nothing)."""
        return ([("aws", {"region": region}), ("aws", {"alias": "files", "region": region})],
                {"aws": {"source": "hashicorp/aws", "version": ">= 5.0.0",
                         "configuration_aliases": [Expression("aws.files")]}})

    def store_objects(self, cluster_name, config_base, files, tasks):
        """Add the Terraform-managed store files as tasks (aws_s3_object on an s3:// store); the paths covered."""
        return store_objects.build_store_objects(cluster_name, config_base, files, tasks)

    def terraform_outputs(self, completed, groups, tasks):
        return terraform_outputs(completed, groups, tasks)


def terraform_outputs(completed, groups, tasks):
    """kops' outputs and locals: cluster, region, VPC, subnets, route tables, and per instance-group role
    its autoscaling groups, security groups (additional ones first), IAM role and, for nodes, subnets."""
    name = completed["metadata"]["name"]
    spec = completed["spec"]
    by_key = {task.key: task for task in tasks}

    def ref(kind, task_name, attribute="id"):
        return Ref(by_key["%s/%s" % (kind, task_name)], attribute).terraform()

    outputs = {"cluster_name": name, "region": region_of(spec), "vpc_id": ref("aws_vpc", name),
               "vpc_cidr_block": ref("aws_vpc", name, "cidr_block"),
               "vpc_ipv6_cidr_block": ref("aws_vpc", name, "ipv6_cidr_block"),
               "vpc_ipv6_cidr_length": Expression(IPV6_CIDR_LENGTH),
               "route_table_public_id": ref("aws_route_table", name)}
    for task in tasks:
        if task.kind == "aws_route_table" and task.name.startswith("private-"):
            outputs["route_table_%s_id" % task.name[:-len(name) - 1]] = ref("aws_route_table", task.name)
    for subnet in spec.get("subnets") or []:
        outputs["subnet_%s_id" % subnet["name"]] = ref("aws_subnet", "%s.%s" % (subnet["name"], name))
    for role, label, group_prefix, role_prefix in OUTPUT_ROLES:
        members = [g for g in groups if (g.get("spec") or {}).get("role") == role]
        asgs = sorted((by_key[k] for k in ("aws_autoscaling_group/" + autoscaling.group_object_name(name, g)
                                           for g in members) if k in by_key), key=lambda t: t.terraform_name)
        if asgs:
            outputs["%s_autoscaling_group_ids" % label] = [Ref(t).terraform() for t in asgs]
        if "aws_security_group/%s.%s" % (group_prefix, name) in by_key:
            extra = {sg for g in members for sg in g["spec"].get("additionalSecurityGroups") or []}
            if role == objects.ROLE_CONTROL_PLANE:  # kops lists the API load balancer's extra groups here too
                extra |= set(((spec.get("api") or {}).get("loadBalancer") or {}).get("additionalSecurityGroups") or [])
            outputs["%s_security_group_ids" % label] = sorted(extra) + [
                ref("aws_security_group", "%s.%s" % (group_prefix, name))]
        if "aws_iam_role/%s.%s" % (role_prefix, name) in by_key:
            outputs["%s_role_arn" % role_prefix] = ref("aws_iam_role", "%s.%s" % (role_prefix, name), "arn")
            outputs["%s_role_name" % role_prefix] = ref("aws_iam_role", "%s.%s" % (role_prefix, name), "name")
        if role == objects.ROLE_NODE:
            subnets = sorted({s for g in members for s in g["spec"].get("subnets") or []})
            outputs["node_subnet_ids"] = [ref("aws_subnet", "%s.%s" % (s, name)) for s in subnets]
    for task in tasks:
        for output, value, is_list in task.terraform_outputs():
            if is_list:
                outputs.setdefault(output, []).append(value)
            else:
                outputs[output] = value
    return outputs


DRIVER = AwsDriver()
