# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What the AWS driver asks the cloud before the model is built: the facts the model and the addons take as data
and never ask for themselves (they are handed no cloud).

Each is found by the cluster's own names or tags, never by listing the account, so a no-op's requests do not grow
with the account (tests/integration/test_noop_requests.py):
- held_names: which of the cluster's kops-derived names a look-alike cluster holds (model/aws/lookalike.py decides);
- control_plane_addresses: the API balancer's private addresses workers pin without DNS (model/aws/kops_controller.py
  selects them), and waiting for a balancer this run made;
- root_device_names: the root device of each Karpenter group's image (model/aws/karpenter.py's node classes);
- account_of: the AWS account id (the termination handler's queue URL, the service-account roles' ARNs).
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import (
    MAX_LOOKALIKES, TAG_FILTER_VALUES, error_code, tag_dict)
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import (
    RESOURCE_NAME_PREFIXES, balancer_name, kops_derived_names, lookalike_cluster_names, queue_name, resource_name_32)
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import karpenter as karpenter_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import kops_controller
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import autoscaling as autoscaling_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

try:
    from botocore.exceptions import BotoCoreError, ClientError
    LOOKUP_ERRORS = (ValueError, BotoCoreError, ClientError)
except ImportError:  # no AWS SDK: nothing can be asked, and the cloud's own errors are ValueErrors
    LOOKUP_ERRORS = (ValueError,)

BALANCER_PREFIXES = ("api", "bastion")
NOT_FOUND = ("LoadBalancerNotFound", "TargetGroupNotFound", "AWS.SimpleQueueService.NonExistentQueue",
             "QueueDoesNotExist")


def account_of(cloud):
    """The AWS account id, asked of STS once per cloud (the SQS queue task asks the same)."""
    return cloud.lookup("account", lambda: cloud.client("sts").get_caller_identity()["Account"])


def held_names(cloud, cluster_name):
    """{kops-derived name of this cluster: KubernetesCluster tag of the object that holds it} for the balancers,
    target groups and queue that exist with those names."""
    wanted = kops_derived_names(cluster_name)
    tagged = cloud.tagged_resources() if len(lookalike_cluster_names(cluster_name)) <= MAX_LOOKALIKES else None
    if tagged is None:
        return _held_by_name(cloud, cluster_name)
    held = {}
    for arn, tags in tagged.items():
        owner = tag_dict(tags).get("KubernetesCluster")
        object_name = name_in_arn(arn)
        if owner and object_name in wanted:
            held[object_name] = owner
    return held


def name_in_arn(arn):
    """The name in a balancer's, target group's or queue's ARN (loadbalancer/net/<name>/<id>,
    targetgroup/<name>/<id>, <queue name>)."""
    resource = arn.split(":", 5)[-1]
    return resource.split("/")[-2] if "/" in resource else resource


def _held_by_name(cloud, cluster_name):
    """held_names without tag:GetResources: each name asked of its service (6 balancer and target group calls,
    one DescribeTags, and the queue's two)."""
    import botocore.exceptions

    elbv2 = cloud.client("elbv2")
    names = {}
    lookups = [("describe_load_balancers", "LoadBalancers", "LoadBalancerArn", p) for p in BALANCER_PREFIXES]
    lookups += [("describe_target_groups", "TargetGroups", "TargetGroupArn", p) for p in RESOURCE_NAME_PREFIXES
                if p != "api"]
    for operation, key, arn_key, prefix in lookups:
        name = resource_name_32(cluster_name, prefix)
        try:
            found = getattr(elbv2, operation)(Names=[name]).get(key) or []
        except botocore.exceptions.ClientError as exc:
            if error_code(exc) in NOT_FOUND:
                continue
            raise
        names.update((item[arn_key], name) for item in found)
    held = {}
    arns = sorted(names)
    for start in range(0, len(arns), TAG_FILTER_VALUES):
        for description in elbv2.describe_tags(ResourceArns=arns[start:start + TAG_FILTER_VALUES])["TagDescriptions"]:
            owner = tag_dict(description.get("Tags")).get("KubernetesCluster")
            if owner:
                held[names[description["ResourceArn"]]] = owner
    sqs = cloud.client("sqs")
    queue = queue_name(cluster_name)
    try:
        url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
        owner = (sqs.list_queue_tags(QueueUrl=url).get("Tags") or {}).get("KubernetesCluster")
    except botocore.exceptions.ClientError as exc:
        if error_code(exc) not in NOT_FOUND:
            raise
        owner = None
    if owner:
        held[queue] = owner
    return held


def control_plane_addresses(cloud, completed):
    """The API balancer's private addresses workers use for kops-controller and the API (kops' FindAddresses with
    UsesLoadBalancerForKopsController, then selectControlPlaneIPs); [] when the cluster uses DNS or the balancer
    does not exist yet (kops then leaves the name, as its dry run and Terraform output do).

    One request: kops lists the VPC's balancer interfaces and keeps those described "ELB net/<name>/..."; a
    balancer's name is unique in its region, so the description alone finds them (the update's no-op request
    count, tests/integration/test_noop_requests.py, pays one DescribeNetworkInterfaces for it)."""
    spec = completed["spec"]
    if not kops_controller.uses_load_balancer(spec):
        return []
    prefix = "ELB net/%s/" % balancer_name(completed, "api")
    found = []
    pages = cloud.client("ec2").get_paginator("describe_network_interfaces").paginate(
        Filters=[{"Name": "description", "Values": [prefix + "*"]}])
    for page in pages:
        for interface in page.get("NetworkInterfaces") or []:
            if not (interface.get("Description") or "").startswith(prefix):
                continue
            if interface.get("PrivateIpAddress"):
                found.append(interface["PrivateIpAddress"])
            found += [a["Ipv6Address"] for a in interface.get("Ipv6Addresses") or [] if a.get("Ipv6Address")]
    return kops_controller.select_control_plane_ips(spec, found)


def wait_until_active(cloud, completed, timeout, sleep=time.sleep, clock=time.monotonic):
    """Wait for the API balancer this run made to be active (kops' SetWaitForLoadBalancerReady for dns None: its
    network interfaces, whose addresses the workers need, exist by then). Raises CloudError after timeout seconds."""
    name = balancer_name(completed, "api")
    end = clock() + timeout
    while True:
        balancers = cloud.client("elbv2").describe_load_balancers(Names=[name]).get("LoadBalancers") or []
        state = ((balancers[0].get("State") or {}).get("Code") if balancers else None) or "missing"
        if state == "active":
            return
        if state == "failed" or clock() >= end:
            raise CloudError("the API load balancer %s is %s after %d s; its addresses go into the workers' boot "
                             "script (dns None)" % (name, state, timeout), fix="run update again once it is active")
        sleep(5)


def root_device_names(cloud, groups, warn):
    """{image: root device name} of the Karpenter groups' images, looked up as the launch templates' images are
    (the newest match); without a cloud to ask (no credentials), guessed by owner with a warning."""
    found = {}
    for image in sorted({(g.get("spec") or {}).get("image") for g in karpenter_model.karpenter_groups(groups)}
                        - {None, ""}):
        task = autoscaling_tasks.Image(image, image=image)
        try:
            if cloud is None:
                raise CloudError("cloud lookups are off")
            task.find(cloud)
            found[image] = task.outputs["root_device_name"]
        except LOOKUP_ERRORS as err:
            found[image] = karpenter_model.default_root_device(image)
            warn("Karpenter's EC2NodeClass: the root device of image %s could not be looked up (%s); %s is assumed "
                 "(render again with AWS credentials)" % (image, err, found[image]))
    return found
