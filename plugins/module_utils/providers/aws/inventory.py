# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kubeops.kops.kops inventory's AWS hosts: the cluster's instances by its KubernetesCluster tag, their
autoscaling membership and launch template versions (kops' rolling-update view of needs-update)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError
from ansible_collections.kubeops.kops.plugins.module_utils.providers.inventory_hosts import NEEDS_UPDATE_GROUP, ROLE_GROUPS, safe_group, through_bastion

INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"
# AWS tags every instance launched from a launch template with the template and the version it used.
TEMPLATE_ID_TAG = "aws:ec2launchtemplate:id"
TEMPLATE_VERSION_TAG = "aws:ec2launchtemplate:version"
HOSTNAME_FIELDS = {"private-ip-address": "PrivateIpAddress", "public-ip-address": "PublicIpAddress",
                   "private-dns-name": "PrivateDnsName", "instance-id": "InstanceId"}
# Autoscaling members on their way out are not hosts to run on (kops ignores them too).
GONE_STATES = ("Terminating", "Terminating:Wait", "Terminating:Proceed", "Terminated", "Detaching", "Detached")
# API maxima: DescribeInstances pages of 1000, DescribeAutoScalingGroups of 100, DescribeLaunchTemplates of 200.
INSTANCE_PAGE = 1000
GROUP_PAGE = 100
TEMPLATE_PAGE = 200


class InventoryError(CloudError):
    pass


def _tags(items):
    return {t["Key"]: t["Value"] for t in items or []}


def group_template(asg):
    """The launch template spec an autoscaling group launches from (plain or mixed-instances), or {}."""
    mixed = ((asg.get("MixedInstancesPolicy") or {}).get("LaunchTemplate") or {}).get("LaunchTemplateSpecification")
    return asg.get("LaunchTemplate") or mixed or {}


def resolve_version(spec, templates):
    """The version number (a string) an autoscaling group's template spec means: $Latest and $Default
    resolved through templates ({template id: DescribeLaunchTemplates item}); None if unknown."""
    version = spec.get("Version") or "$Default"
    template = templates.get(spec.get("LaunchTemplateId")) or {}
    if version == "$Latest":
        version = template.get("LatestVersionNumber")
    elif version == "$Default":
        version = template.get("DefaultVersionNumber")
    return None if version is None else str(version)


def memberships(asgs, templates):
    """{instance id: membership} for the live members of the cluster's autoscaling groups: the group's name,
    its template id and resolved version, and what the group reports for the instance."""
    members = {}
    for asg in asgs:
        spec = group_template(asg)
        wanted = (spec.get("LaunchTemplateId"), resolve_version(spec, templates))
        for member in asg.get("Instances") or []:
            if member.get("LifecycleState") not in GONE_STATES:
                members[member["InstanceId"]] = {"group": asg["AutoScalingGroupName"], "wanted": wanted,
                                                 "template": member.get("LaunchTemplate") or {},
                                                 "lifecycle_state": member.get("LifecycleState")}
    return members


def update_status(instance_tags, member):
    """(status, needs_update, (template id, version)) as kops' rolling update decides them.

    A member of its group needs an update when the template id:version it runs differs from the group's;
    the instance's own aws:ec2launchtemplate tags say what it was launched from (the autoscaling record as
    fallback).  An instance detached from its group (a surge) is replaced by a roll, as in kops; an instance
    that belongs to no autoscaling group of the cluster is not rolled: its need is unknown (None)."""
    if member is None:
        running = (instance_tags.get(TEMPLATE_ID_TAG), instance_tags.get(TEMPLATE_VERSION_TAG))
        if DETACHED_TAG in instance_tags:
            return "Detached", True, running
        return "NotInAutoscalingGroup", None, running
    running = (instance_tags.get(TEMPLATE_ID_TAG) or member["template"].get("LaunchTemplateId"),
               instance_tags.get(TEMPLATE_VERSION_TAG) or member["template"].get("Version"))
    needs = running != member["wanted"]
    return ("NeedsUpdate" if needs else "UpToDate"), needs, running


def instance_hosts(cluster_name, groups, instances, hostname, state_store, user, members=None, jump_host=None):
    """[(host name, {var: value}, [group names])] for the cluster's instances (pure, unit-testable).

    members: memberships(); jump_host: where SSH to hosts without a public address goes through
    (the bastion's load balancer or public name); without it, the bastion instance's public address."""
    members = members or {}
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    hosts = []
    for instance in sorted(instances, key=lambda i: i["InstanceId"]):
        tags = _tags(instance.get("Tags"))
        group = tags.get(INSTANCE_GROUP_TAG)
        if group not in roles:
            continue  # not one of the cluster's instance groups (e.g. a Karpenter node)
        name = instance.get(HOSTNAME_FIELDS[hostname])
        if not name:
            continue
        zone = (instance.get("Placement") or {}).get("AvailabilityZone")
        member = members.get(instance["InstanceId"])
        status, needs_update, (template_id, template_version) = update_status(tags, member)
        variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group, "kops_role": roles[group],
                     "kops_state_store": state_store, "kops_instance_id": instance["InstanceId"],
                     "kops_zone": zone, "kops_private_ip": instance.get("PrivateIpAddress"),
                     "kops_public_ip": instance.get("PublicIpAddress"),
                     "kops_autoscaling_group": member["group"] if member else None,
                     "kops_launch_template_id": template_id, "kops_launch_template_version": template_version,
                     "kops_group_launch_template_version": member["wanted"][1] if member else None,
                     "kops_status": status, "kops_needs_update": needs_update,
                     "ansible_host": instance.get("PublicIpAddress") or instance.get("PrivateIpAddress")}
        names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(roles[group], "role_node"),
                 "ig_" + safe_group(group)] + (["zone_" + safe_group(zone)] if zone else [])
        if needs_update:
            names.append(NEEDS_UPDATE_GROUP)
        hosts.append((name, variables, names))
    return through_bastion(hosts, user, jump_host)


def hosts(plugin, service, cluster, groups, region):
    """[(host, variables, groups)] of the cluster's running instances, with their autoscaling membership."""
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws

    cluster_name = cluster["metadata"]["name"]
    where = "%s in %s" % (cluster_name, region)
    try:
        ec2 = aws.client("ec2", region=region, profile=plugin.get_option("profile"))
        autoscaling = aws.client("autoscaling", region=region, profile=plugin.get_option("profile"))
        by_cluster = [{"Name": "tag:KubernetesCluster", "Values": [cluster_name]}]
        asgs = aws.paginate(autoscaling, "describe_auto_scaling_groups", "AutoScalingGroups", Filters=by_cluster,
                            PaginationConfig={"PageSize": GROUP_PAGE})
        templates = _templates(aws, ec2, by_cluster, asgs)
        instances = [i for r in aws.paginate(ec2, "describe_instances", "Reservations", PaginationConfig={
            "PageSize": INSTANCE_PAGE}, Filters=by_cluster + [{"Name": "instance-state-name", "Values": ["running"]}])
            for i in r.get("Instances") or []]
        jump_host = _jump_host(plugin, aws, region, cluster, groups, service)
    except aws.AwsError as exc:
        raise InventoryError("kops inventory: %s: %s" % (where, exc))
    except Exception as exc:  # botocore errors: report the cause, not a traceback
        raise InventoryError("kops inventory: %s" % aws.describe_error(exc, "listing the instances of " + where))
    return instance_hosts(cluster_name, groups, instances, plugin.get_option("hostname"),
                          service.store.url(""), plugin.get_option("ansible_user"),
                          memberships(asgs, templates), jump_host)


def _templates(aws, ec2, by_cluster, asgs):
    """{template id: DescribeLaunchTemplates item} for the groups' templates: one paginated call by the cluster
    tag (latest and default version numbers included), then one call for any template not tagged."""
    templates = {t["LaunchTemplateId"]: t for t in aws.paginate(
        ec2, "describe_launch_templates", "LaunchTemplates", Filters=by_cluster,
        PaginationConfig={"PageSize": TEMPLATE_PAGE})}
    untagged = sorted({group_template(g).get("LaunchTemplateId") for g in asgs} - set(templates) - {None})
    if untagged:
        templates.update((t["LaunchTemplateId"], t) for t in ec2.describe_launch_templates(
            LaunchTemplateIds=untagged)["LaunchTemplates"])
    return templates


def _jump_host(plugin, aws, region, cluster, groups, service):
    """Where SSH to private hosts jumps: topology.bastion.bastionPublicName, else the DNS name of the bastion's
    load balancer (kops names it; a look-alike cluster's unique name as its store records it), else None
    (instance_hosts then uses the bastion's public address)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import lookalike
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import resource_name_32

    if not any((g.get("spec") or {}).get("role") == "Bastion" for g in groups):
        return None
    bastion = (cluster["spec"].get("topology") or {}).get("bastion") or {}
    if bastion.get("bastionPublicName") or bastion.get("publicName"):
        return bastion.get("bastionPublicName") or bastion.get("publicName")
    elbv2 = aws.client("elbv2", region=region, profile=plugin.get_option("profile"))
    try:
        unique = lookalike.read_record(service.cluster_store(cluster["metadata"]["name"])) is not None
        balancers = elbv2.describe_load_balancers(Names=[resource_name_32(cluster["metadata"]["name"], "bastion",
                                                                          unique)])
    except Exception as exc:
        if aws.error_code(exc) == "LoadBalancerNotFound":
            return None
        raise
    return (balancers.get("LoadBalancers") or [{}])[0].get("DNSName")
