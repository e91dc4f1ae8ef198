# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A running AWS cluster, as the day-2 verbs see it (kops' awsup GetCloudGroups and API endpoint).

cloud_groups(): the cluster's autoscaling groups, found by its KubernetesCluster tag (never by
name alone), each with its desired size and member instances.  api_endpoint(): the DNS name of
the cluster's API load balancer, found by its tags.  Read-only: nothing here changes the cloud.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import paginate, tag_dict

INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"
# Instances on their way out are not members (kops ignores terminating instances).
GONE_STATES = ("Terminating", "Terminating:Wait", "Terminating:Proceed", "Terminated", "Detaching", "Detached")
WARM_STATES_PREFIX = "Warmed:"
DESCRIBE_BATCH = 500  # DescribeInstances takes up to 1000 ids; stay well under


def cloud_groups(cloud):
    """{instance group name: {"name", "desired", "min", "max", "launch_template", "instances": [...]}}.

    Each instance: {"id", "private_dns_name", "private_ip", "zone", "lifecycle_state",
    "launch_template_version", "detached", "warm"}.  One paginated DescribeAutoScalingGroups
    and DescribeInstances in batches: never one call per instance.
    """
    owned = [g for g in paginate(cloud.client("autoscaling"), "describe_auto_scaling_groups", "AutoScalingGroups",
                                 Filters=[{"Name": "tag:KubernetesCluster", "Values": [cloud.cluster_name]}])
             if cloud.owns(tag_dict(g.get("Tags")))]
    members = {}
    for group in owned:
        for instance in group.get("Instances") or []:
            if instance.get("LifecycleState") not in GONE_STATES:
                members[instance["InstanceId"]] = instance
    details = _describe_instances(cloud, sorted(members)) if members else {}
    # Detached surge instances keep the cluster's tags and name their group in a tag (rolling update).
    detached = _detached_instances(cloud)
    groups = {}
    for group in owned:
        tags = tag_dict(group.get("Tags"))
        name = tags.get(INSTANCE_GROUP_TAG)
        if not name:
            continue
        # A mixed-instances group names its template at MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification.
        template = group.get("LaunchTemplate") or (((group.get("MixedInstancesPolicy") or {}).get("LaunchTemplate") or {})
                                                   .get("LaunchTemplateSpecification")) or {}
        instances = [_member(members[i["InstanceId"]], details.get(i["InstanceId"], {}))
                     for i in group.get("Instances") or [] if i["InstanceId"] in members]
        instances += [_detached_member(d) for d in detached if tag_dict(d.get("Tags")).get(DETACHED_TAG) == name
                      and d["InstanceId"] not in members]
        groups[name] = {"name": name, "group_name": group["AutoScalingGroupName"],
                        "desired": group.get("DesiredCapacity", 0), "min": group.get("MinSize", 0),
                        "max": group.get("MaxSize", 0), "launch_template": template, "instances": instances}
    return groups


def _describe_instances(cloud, ids):
    found = {}
    for start in range(0, len(ids), DESCRIBE_BATCH):
        for reservation in paginate(cloud.ec2, "describe_instances", "Reservations",
                                    InstanceIds=ids[start:start + DESCRIBE_BATCH]):
            for instance in reservation.get("Instances") or []:
                found[instance["InstanceId"]] = instance
    return found


def _detached_instances(cloud):
    filters = cloud.cluster_filter() + [{"Name": "tag-key", "Values": [DETACHED_TAG]},
                                        {"Name": "instance-state-name", "Values": ["pending", "running"]}]
    return [i for r in paginate(cloud.ec2, "describe_instances", "Reservations", Filters=filters)
            for i in r.get("Instances") or []]


def _member(asg_instance, detail):
    state = asg_instance.get("LifecycleState", "")
    template = asg_instance.get("LaunchTemplate") or {}
    return {"id": asg_instance["InstanceId"], "private_dns_name": detail.get("PrivateDnsName", ""),
            "private_ip": detail.get("PrivateIpAddress", ""), "zone": asg_instance.get("AvailabilityZone", ""),
            "lifecycle_state": state, "launch_template_version": template.get("Version"),
            "detached": False, "warm": state.startswith(WARM_STATES_PREFIX)}


def _detached_member(instance):
    return {"id": instance["InstanceId"], "private_dns_name": instance.get("PrivateDnsName", ""),
            "private_ip": instance.get("PrivateIpAddress", ""),
            "zone": (instance.get("Placement") or {}).get("AvailabilityZone", ""), "lifecycle_state": "Detached",
            "launch_template_version": None, "detached": True, "warm": False}


def api_endpoint(cloud):
    """The DNS name of the cluster's API load balancer (tag Name=api.<cluster>, owned), or None."""
    elbv2 = cloud.client("elbv2")
    balancers = paginate(elbv2, "describe_load_balancers", "LoadBalancers")
    arns = [b["LoadBalancerArn"] for b in balancers]
    wanted = "api.%s" % cloud.cluster_name
    for start in range(0, len(arns), 20):  # DescribeTags takes 20 ARNs
        for description in elbv2.describe_tags(ResourceArns=arns[start:start + 20])["TagDescriptions"]:
            tags = tag_dict(description.get("Tags"))
            if tags.get("Name") == wanted and cloud.owns(tags):
                return next(b["DNSName"] for b in balancers if b["LoadBalancerArn"] == description["ResourceArn"])
    return None


def cloud(cluster_name, region, profile=None):
    """The cluster's AWS view (clients, ownership tags) these lookups run on."""
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
    return AwsCloud(cluster_name, region, profile=profile)
