# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Per-instance-group objects (kops pkg/model/awsmodel/autoscalinggroup.go): names and tags.

The launch template / autoscaling group names, the tags kops puts on an instance
group's instances, volumes and autoscaling group, and build_autoscaling(): per
group a launch template, an autoscaling group (with its warm pool), and the
node-termination-handler / warm pool lifecycle hooks.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import (
    NTH_HOOK_SUFFIX, WARM_POOL_HOOK, balancer_name, cluster_tags, group_object_name)
from ansible_collections.kubeops.kops.plugins.module_utils.completion.instance_groups import (
    resolve_warm_pool, warm_pool_enabled)
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import autoscaling as autoscaling_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.taints import parse_taint
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

NODE_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/%s"
NODE_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/%s"
NTH_MANAGED = "aws-node-termination-handler/managed"

# Labels kops gives every node of a role (nodelabels.BuildNodeLabels), shown to cluster-autoscaler.
ROLE_LABELS = {
    "ControlPlane": {"kops.k8s.io/kops-controller-pki": "",
                     "node-role.kubernetes.io/control-plane": "",
                     "node.kubernetes.io/exclude-from-external-load-balancers": ""},
    "Master": {"kops.k8s.io/kops-controller-pki": "",
               "node-role.kubernetes.io/control-plane": "",
               "node.kubernetes.io/exclude-from-external-load-balancers": ""},
    "Node": {"node-role.kubernetes.io/node": ""},
    "Bastion": {},
    "APIServer": {"node-role.kubernetes.io/api-server": ""},
}
ROLE_TAGS = {
    "ControlPlane": {"k8s.io/role/control-plane": "1", "k8s.io/role/master": "1"},
    "Master": {"k8s.io/role/control-plane": "1", "k8s.io/role/master": "1"},
    "Node": {"k8s.io/role/node": "1"},
    "Bastion": {"k8s.io/role/bastion": "1"},
    "APIServer": {"k8s.io/role/apiserver": "1"},  # kops: the role lower-cased
}


def nth_queue_mode(cluster):
    """Queue mode as model/aws/nth.py builds it: enabled, SQS draining not switched off."""
    handler = cluster["spec"].get("nodeTerminationHandler") or {}
    return bool(handler.get("enabled")) and handler.get("enableSQSTerminationDraining") is not False


def group_tags(cluster, group):
    """The tags of an instance group's instances, volumes and autoscaling group (CloudTagsForInstanceGroup)."""
    cluster_name = cluster["metadata"]["name"]
    spec = group["spec"]
    role = spec.get("role")
    labels = dict(ROLE_LABELS.get(role, {}))
    labels.update(spec.get("nodeLabels") or {})
    extra = {NODE_TEMPLATE_LABEL % k: v for k, v in labels.items()}
    for text in spec.get("taints") or []:
        taint = parse_taint(text)
        if taint and taint["effect"]:  # kops skips a taint without an effect, or one it cannot parse
            extra[NODE_TEMPLATE_TAINT % taint["key"]] = taint["value"] + ":" + taint["effect"]
    extra.update(cluster["spec"].get("cloudLabels") or {})
    extra.update(spec.get("cloudLabels") or {})
    extra.update(ROLE_TAGS.get(role, {}))
    extra["kops.k8s.io/instancegroup"] = group["metadata"]["name"]
    if nth_queue_mode(cluster):
        # kops writes the managed tag first, so a managedASGTag equal to a cluster tag keeps the cluster value.
        managed_tag = (cluster["spec"].get("nodeTerminationHandler") or {}).get("managedASGTag") or NTH_MANAGED
        extra = dict({managed_tag: ""}, **extra)
    tags = dict(extra)
    tags.update(cluster_tags(cluster_name, group_object_name(cluster_name, group)))
    return tags


# -- launch templates, autoscaling groups, lifecycle hooks, warm pools --------------------------

ROOT_VOLUME_SIZE = {"ControlPlane": 64, "Master": 64, "APIServer": 64, "Node": 128, "Bastion": 32}
GP3_IOPS, GP3_THROUGHPUT, IO_IOPS = 3000, 125, 100
# Instance-store disks of the machine types that still map them through the launch template
# (kops' machine type table, EphemeralDisks); newer NVMe instance stores attach themselves.
EPHEMERAL_DISKS = {
    "m3.medium": 1, "m3.large": 1, "m3.xlarge": 2, "m3.2xlarge": 2,
    "c3.large": 2, "c3.xlarge": 2, "c3.2xlarge": 2, "c3.4xlarge": 2, "c3.8xlarge": 2,
    "r3.large": 1, "r3.xlarge": 1, "r3.2xlarge": 1, "r3.4xlarge": 1, "r3.8xlarge": 2,
    "i2.xlarge": 1, "i2.2xlarge": 2, "i2.4xlarge": 4, "i2.8xlarge": 8,
    "d2.xlarge": 3, "d2.2xlarge": 6, "d2.4xlarge": 12, "d2.8xlarge": 24,
    "g2.2xlarge": 1, "g2.8xlarge": 2,
}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def duration_seconds(value):
    """A Go duration ("48h20m", "0", "90s") in whole seconds."""
    text = str(value).strip()
    if text in ("", "0"):
        return 0
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ModelError("%r is not a duration (e.g. 48h, 90m)" % (value,))
    return int(sum(float(n) * _UNIT_SECONDS[u] for n, u in parts))


def is_control_plane(group):
    return group["spec"].get("role") in ("ControlPlane", "Master")


def _add(tasks, task):
    tasks[task.key] = task
    return task


def _root_volume(spec, role, device):
    volume_type = spec.get("rootVolumeType") or "gp3"
    encrypted = spec.get("rootVolumeEncryption")
    encrypted = True if encrypted is None else bool(encrypted)
    # rootVolumeDeleteOnTermination is unused in kops: the root volume always goes with the instance.
    ebs = {"volume_size": spec.get("rootVolumeSize") or ROOT_VOLUME_SIZE.get(role, 128), "volume_type": volume_type,
           "encrypted": encrypted, "delete_on_termination": True}
    iops, throughput = spec.get("rootVolumeIops") or 0, spec.get("rootVolumeThroughput") or 0
    if volume_type == "gp3":
        ebs["iops"] = max(iops, GP3_IOPS)
        ebs["throughput"] = throughput if throughput >= GP3_THROUGHPUT else GP3_THROUGHPUT
    elif volume_type in ("io1", "io2"):
        ebs["iops"] = iops if iops >= IO_IOPS else IO_IOPS
    if encrypted and spec.get("rootVolumeEncryptionKey"):
        ebs["kms_key_id"] = spec["rootVolumeEncryptionKey"]
    return {"device_name": device, "ebs": ebs}


def _extra_volume(volume):
    volume_type = volume.get("type") or "gp3"
    encrypted = volume.get("encrypted")
    delete = volume.get("deleteOnTermination")
    ebs = {"volume_size": volume["size"], "volume_type": volume_type,
           "encrypted": True if encrypted is None else bool(encrypted),
           "delete_on_termination": True if delete is None else bool(delete)}
    if volume_type == "gp3":
        ebs["iops"] = volume.get("iops") or GP3_IOPS
        ebs["throughput"] = volume.get("throughput") or GP3_THROUGHPUT
    elif volume_type in ("io1", "io2"):
        ebs["iops"] = volume.get("iops") or IO_IOPS
    if volume.get("key"):
        ebs["kms_key_id"] = volume["key"]
    return {"device_name": volume["device"], "ebs": ebs}


def _target_groups(cluster, group, tasks):
    """The NLB target groups a group's instances join (kops: tcp for API servers, kops-controller for
    the control plane with dns None, the bastion's SSH target group for bastions)."""
    wanted = []
    role = group["spec"].get("role")
    if role in ("ControlPlane", "Master", "APIServer"):
        wanted += [balancer_name(cluster, "tcp"), balancer_name(cluster, "tls")]
        if role != "APIServer":
            wanted.append(balancer_name(cluster, "kops-controller"))
    if role == "Bastion":
        wanted.append(balancer_name(cluster, "bastion"))
    found = [tasks["aws_lb_target_group/" + n] for n in wanted if "aws_lb_target_group/" + n in tasks]
    return sorted(found, key=lambda t: t.name)


def _profile_name(group_spec, profile):
    """The instance profile a group's instances get: its own (spec.iam.profile, an ARN), else its role's task."""
    external = (group_spec.get("iam") or {}).get("profile")
    if external:
        return external.rsplit("/", 1)[-1]
    if profile is None:
        return None
    if isinstance(profile, str):
        return profile.rsplit("/", 1)[-1]
    if isinstance(profile, list):
        return None
    return Ref(profile)


def _image_task(tasks, image):
    fields = {"image": image}
    if image.startswith("ami-"):
        fields["id"] = image
    task = autoscaling_tasks.Image(image, **fields)
    return tasks.setdefault(task.key, task)


def build_autoscaling(completed_cluster, instance_groups, tasks, user_data=None, subnets=None,
                      security_groups=None, profiles=None, key_pair=None):
    """Per group: launch template, autoscaling group (warm pool inline), NTH / warm pool lifecycle hooks.

    user_data: {group name: boot script}; a group without one gets a template without user data.
    subnets, security_groups, profiles, key_pair: what the network, firewall, IAM and SSH key builders
    returned (looked up in tasks by kops' names when not given).
    """
    cluster = completed_cluster
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    user_data = user_data or {}
    if subnets is None:
        subnets = {s["name"]: tasks.get("aws_subnet/%s.%s" % (s["name"], name)) for s in spec.get("subnets") or []}
    if security_groups is None:
        security_groups = {"masters": tasks.get("aws_security_group/masters.%s" % name),
                           "nodes": tasks.get("aws_security_group/nodes.%s" % name)}
    if profiles is None:
        profiles = {}
    if key_pair is None:
        key_pair = next((t for t in tasks.values() if t.kind == "aws_key_pair"), None)
    subnet_specs = {s["name"]: s for s in spec.get("subnets") or []}
    nlb = (spec.get("api") or {}).get("loadBalancer") or {}
    built = {}
    for group in instance_groups:
        group_spec = group["spec"]
        if group_spec.get("manager") == "Karpenter":
            continue
        ig_name = group["metadata"]["name"]
        object_name = group_object_name(name, group)
        role = group_spec.get("role")
        tags = group_tags(cluster, group)
        image = _image_task(tasks, group_spec["image"])
        machine_type = group_spec["machineType"].split(",")[0]

        group_subnets = [subnet_specs[s] for s in group_spec["subnets"]]
        first_type = group_subnets[0].get("type")
        public_ip = first_type in ("Public", "Utility") and group_spec.get("associatePublicIp") is not False
        ipv6 = any(s.get("ipv6CIDR") for s in group_subnets)
        metadata = group_spec.get("instanceMetadata") or {}

        # kops' SecurityGroupName: API servers share the control plane's group, the bastion has its own.
        sg_key = "masters" if is_control_plane(group) or role == "APIServer" else "nodes"
        if role == "Bastion" and security_groups.get("bastion") is not None:
            sg_key = "bastion"
        if group_spec.get("securityGroupOverride"):
            groups = [group_spec["securityGroupOverride"]]
        else:
            groups = [Ref(security_groups[sg_key])]
        if role in ("ControlPlane", "Master", "APIServer") and nlb:
            groups += list(nlb.get("additionalSecurityGroups") or [])
        groups += list(group_spec.get("additionalSecurityGroups") or [])

        mappings = [_root_volume(group_spec, role, Ref(image, "root_device_name"))]
        for index in range(EPHEMERAL_DISKS.get(machine_type, 0)):
            mappings.append({"device_name": "/dev/sd%s" % chr(ord("c") + index), "virtual_name": "ephemeral%d" % index})
        mappings += [_extra_volume(v) for v in group_spec.get("volumes") or []]

        profile_name = _profile_name(group_spec, profiles.get("Master" if is_control_plane(group) else role))
        fields = dict(
            name=object_name, image_id=Ref(image), instance_type=machine_type,
            metadata_options={"http_endpoint": "enabled",
                              "http_protocol_ipv6": "enabled" if ipv6 else "disabled",
                              "http_put_response_hop_limit": metadata.get("httpPutResponseHopLimit") or 1,
                              "http_tokens": metadata.get("httpTokens") or "required"},
            monitoring={"enabled": bool(group_spec.get("detailedInstanceMonitoring"))},
            network_interfaces={"associate_public_ip_address": public_ip, "delete_on_termination": True,
                                "ipv6_address_count": 1 if ipv6 else 0, "security_groups": groups},
            block_device_mappings=mappings,
            tag_specifications=[{"resource_type": kind, "tags": dict(tags)}
                                for kind in ("instance", "volume", "network-interface")],
            tags=dict(tags))
        if key_pair is not None:
            fields["key_name"] = autoscaling_tasks.FieldRef(key_pair, "key_name")
        elif spec.get("sshKeyName"):
            fields["key_name"] = spec["sshKeyName"]
        if profile_name is not None:
            fields["iam_instance_profile"] = {"name": profile_name}
        if user_data.get(ig_name):
            fields["user_data"] = autoscaling_tasks.user_data_base64(user_data[ig_name])
        if group_spec.get("cpuCredits"):
            fields["credit_specification"] = {"cpu_credits": group_spec["cpuCredits"]}
        if group_spec.get("tenancy"):
            fields["placement"] = {"tenancy": group_spec["tenancy"]}
        template = _add(tasks, autoscaling_tasks.LaunchTemplate(object_name, **fields))

        pool = resolve_warm_pool(spec.get("warmPool"), group)
        metrics = list(autoscaling_tasks.ENABLED_METRICS)
        if warm_pool_enabled(pool):
            metrics += list(autoscaling_tasks.WARM_POOL_METRICS)
        group_fields = dict(
            name=object_name, min_size=group_spec["minSize"], max_size=group_spec["maxSize"],
            vpc_zone_identifier=[Ref(subnets[s["name"]]) for s in group_subnets],
            launch_template={"id": Ref(template), "version": Ref(template, "latest_version")},
            enabled_metrics=metrics, metrics_granularity="1Minute",
            protect_from_scale_in=bool(group_spec.get("instanceProtection")),
            max_instance_lifetime=duration_seconds(group_spec.get("maxInstanceLifetime") or 0),
            tags=dict(tags))
        targets = [Ref(t) for t in _target_groups(cluster, group, tasks)]
        external = group_spec.get("externalLoadBalancers") or []
        targets += [lb["targetGroupArn"] for lb in external if lb.get("targetGroupArn")]
        if targets:
            group_fields["target_group_arns"] = targets
        balancers = sorted(lb["loadBalancerName"] for lb in external if lb.get("loadBalancerName"))
        if balancers:
            group_fields["load_balancers"] = balancers
        if group_spec.get("suspendProcesses"):
            group_fields["suspended_processes"] = list(group_spec["suspendProcesses"])
        if group_spec.get("capacityRebalance") is not None:
            group_fields["capacity_rebalance"] = bool(group_spec["capacityRebalance"])
        mixed = group_spec.get("mixedInstancesPolicy")
        if mixed:
            group_fields["mixed_instances_policy"] = {k: v for k, v in {
                "instance_types": list(mixed.get("instances") or [machine_type]),
                "on_demand_base_capacity": mixed.get("onDemandBase"),
                "on_demand_percentage_above_base_capacity": mixed.get("onDemandAboveBase"),
                "on_demand_allocation_strategy": mixed.get("onDemandAllocationStrategy"),
                "spot_allocation_strategy": mixed.get("spotAllocationStrategy"),
                "spot_instance_pools": mixed.get("spotInstancePools"),
                "spot_max_price": group_spec.get("maxPrice")}.items() if v is not None}
        if warm_pool_enabled(pool):
            warm = {"min_size": pool.get("minSize") or 0}
            if pool.get("maxSize") is not None:
                warm["max_group_prepared_capacity"] = pool["maxSize"]
            group_fields["warm_pool"] = warm
        asg = _add(tasks, autoscaling_tasks.AutoScalingGroup(object_name, **group_fields))

        if nth_queue_mode(cluster):
            hook_name = ig_name + NTH_HOOK_SUFFIX
            _add(tasks, autoscaling_tasks.LifecycleHook(
                hook_name, name=hook_name, autoscaling_group_name=Ref(asg), default_result="CONTINUE",
                heartbeat_timeout=300, lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING"))
        if warm_pool_enabled(pool) and pool.get("enableLifecycleHook"):
            timeout = pool.get("lifecycleHookTimeout") or (spec.get("warmPool") or {}).get("lifecycleHookTimeout") \
                or 600
            _add(tasks, autoscaling_tasks.LifecycleHook(
                "%s-%s" % (WARM_POOL_HOOK, ig_name), name=WARM_POOL_HOOK, autoscaling_group_name=Ref(asg),
                default_result="ABANDON", heartbeat_timeout=timeout,
                lifecycle_transition="autoscaling:EC2_INSTANCE_LAUNCHING"))
        built[ig_name] = (template, asg)
    return built
