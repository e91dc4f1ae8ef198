# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The instances' side: service accounts and their project role (kops' ServiceAccountsBuilder),
etcd disks (kops' MasterVolumeBuilder, GCE part) and per instance group one instance template
and one instance group manager per zone (kops' gcemodel AutoscalingGroupModelBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names
from ansible_collections.kubeops.kops.plugins.module_utils.model.gce.context import GceModelError
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute, iam
from ansible_collections.kubeops.kops.plugins.module_utils.zones import split_across_zones

# Role -> (service account name, its description); the API servers run as the control plane.
ACCOUNTS = {objects.ROLE_CONTROL_PLANE: ("control-plane", "kubernetes control-plane instances"),
            objects.ROLE_APISERVER: ("control-plane", "kubernetes control-plane instances"),
            objects.ROLE_NODE: ("node", "kubernetes worker nodes"),
            objects.ROLE_BASTION: ("bastion", "bastion nodes")}
ROOT_VOLUME_SIZE = {objects.ROLE_CONTROL_PLANE: 64, objects.ROLE_APISERVER: 128, objects.ROLE_NODE: 128,
                    objects.ROLE_BASTION: 32}
ROOT_VOLUME_TYPE = "pd-standard"
ETCD_VOLUME = {"size": 20, "type": "pd-ssd"}
# Role -> (labels, network tags' roles) kops puts on the role's instances.
ROLE_LABELS = {objects.ROLE_CONTROL_PLANE: (("control-plane", "control-plane"), ("master", "master")),
               objects.ROLE_APISERVER: (("apiserver", "apiserver"),),
               objects.ROLE_NODE: (("node", "node"),),
               objects.ROLE_BASTION: (("bastion", "bastion"),)}
ROLE_TAGS = {objects.ROLE_CONTROL_PLANE: ("ControlPlane", "Master"), objects.ROLE_APISERVER: ("APIServer",),
             objects.ROLE_NODE: ("Node",), objects.ROLE_BASTION: ("Bastion",)}
BASE_SCOPES = ("compute-rw", "monitoring", "logging-write", "cloud-platform")
CLOUD_DNS_SCOPE = "https://www.googleapis.com/auth/ndev.clouddns.readwrite"
AUTOSCALER_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"
# Machine families with GPUs cannot live-migrate (kops' guessMachineTypeInfo).
NO_MIGRATION = ("a4x", "a4", "a3", "a2", "g2", "g4")


def build_service_accounts(ctx):
    """{role: the email field of its instances' templates} (a literal, or a Ref to the account)."""
    shared = (ctx.spec.get("cloudConfig") or {}).get("gceServiceAccount")
    emails = {}
    for group in ctx.groups:
        role = ctx.role(group)
        if shared:
            emails[role] = shared
            continue
        name, description = ACCOUNTS[role]
        key = "%s/%s" % (iam.ServiceAccount.kind, name)
        if key not in ctx.tasks:
            account = ctx.add(iam.ServiceAccount(name, account_id=names.service_account_id(name, ctx.name),
                                                 description=description, display_name=name, project=ctx.project))
            if name == "control-plane":
                ctx.add(iam.ProjectIamBinding("serviceaccount-control-plane", project=ctx.project,
                                              role="roles/container.serviceAgent", service_account=account))
        emails[role] = Ref(ctx.tasks[key], "email")
    return emails


def build_etcd_disks(ctx):
    zones = {objects.name_of(g): ctx.group_zones(g)[0] for g in ctx.groups_with(objects.ROLE_CONTROL_PLANE)}
    cluster_label = names.safe_cluster_name(ctx.name)
    for etcd in ctx.spec.get("etcdClusters") or []:
        for member in etcd.get("etcdMembers") or []:
            group = member.get("instanceGroup")
            if group not in zones:
                raise GceModelError("etcd cluster %s member %s: instance group %r is not a control-plane group"
                                    % (etcd["name"], member["name"], group))
            name = names.etcd_disk_name(member["name"], etcd["name"], ctx.name)
            fields = {"name": name, "zone": zones[group], "size": member.get("volumeSize") or ETCD_VOLUME["size"],
                      "type": member.get("volumeType") or ETCD_VOLUME["type"],
                      # etcd-manager and protokube read <member>/<member> (the member list is no longer kept).
                      "labels": {names.LABEL_CLUSTER: cluster_label, names.LABEL_ROLE_PREFIX + "master": "master",
                                 names.LABEL_ETCD_PREFIX + etcd["name"]: names.encode_label(
                                     "%s/%s" % (member["name"], member["name"]))}}
            if member.get("volumeIops"):
                fields["provisioned_iops"] = member["volumeIops"]
            if member.get("volumeThroughput"):
                fields["provisioned_throughput"] = member["volumeThroughput"]
            ctx.add(compute.Disk(name, **fields))


def image_url(project, image):
    """kops' BuildImageURL: <project>/<name> or <name> (the cluster's project) -> the image's URL."""
    if image.startswith("https://"):
        return image
    parts = image.split("/")
    if len(parts) > 2:
        raise GceModelError("image %r: expected <project>/<image> or <image>" % image)
    project, name = parts if len(parts) == 2 else (project, parts[0])
    return compute.url(project, "global/images/" + name)


def group_labels(ctx, group):
    spec = group.get("spec") or {}
    labels = dict(ctx.spec.get("cloudLabels") or {})
    labels.update(spec.get("cloudLabels") or {})
    labels[names.LABEL_CLUSTER] = names.safe_cluster_name(ctx.name)
    labels[names.LABEL_INSTANCE_GROUP] = objects.name_of(group)
    for role, value in ROLE_LABELS[ctx.role(group)]:
        labels[names.LABEL_ROLE_PREFIX + role] = value
    # The cluster autoscaler's hint for scaling up from zero, as kops writes it (key=value:effect).
    for taint in spec.get("taints") or []:
        key_value, _sep, effect = taint.rpartition(":")
        key, _sep, value = key_value.partition("=")
        if key and effect:
            labels[AUTOSCALER_TAINT + key] = "%s:%s" % (value, effect)
    return labels


def build_template(ctx, group, network, emails, ssh_keys, user_data):
    spec = group.get("spec") or {}
    role = ctx.role(group)
    group_name = objects.name_of(group)
    subnet = ctx.group_subnet(group)
    image = spec.get("image")
    if not image or not spec.get("machineType"):
        raise GceModelError("instance group %s: spec.image and spec.machineType are needed on GCE" % group_name)
    metadata = {"cluster-name": ctx.name, "kops-k8s-io-instance-group-name": group_name}
    if user_data is not None:
        use_startup_script = (ctx.spec.get("cloudConfig") or {}).get("gceUseStartupScript")
        metadata["startup-script" if use_startup_script else "user-data"] = user_data
    if role == objects.ROLE_NODE:
        env = "os_distribution=%s;arch=amd64;os=linux" % ("cos" if image.startswith("cos-cloud/") else "ubuntu")
        node_labels = spec.get("nodeLabels") or {}
        if node_labels:
            env += ";node_labels=" + ",".join("%s=%s" % (k, node_labels[k]) for k in sorted(node_labels))
        if spec.get("taints"):
            env += ";node_taints=" + ",".join(spec["taints"])
        metadata["kube-env"] = "AUTOSCALER_ENV_VARS: " + env
    if ssh_keys:
        user = "ubuntu" if image.rsplit("/", 1)[-1].lower().startswith("ubuntu") else "admin"
        metadata["ssh-keys"] = "\n".join("%s: %s" % (user, key.strip()) for key in ssh_keys)
    scopes = [compute.SCOPES[s] for s in BASE_SCOPES]
    # The control plane writes etcd backups to the store; the others only read it.
    scopes.append(compute.SCOPES["storage-rw" if role == objects.ROLE_CONTROL_PLANE else "storage-ro"])
    if role in (objects.ROLE_CONTROL_PLANE, objects.ROLE_APISERVER):
        scopes.append(CLOUD_DNS_SCOPE)
    spot = spec.get("gcpProvisioningModel") == "SPOT"
    migrates = not spot and spec.get("machineType").split("-")[0] not in NO_MIGRATION \
        and not spec.get("guestAccelerators")
    interface = {"network": Ref(network, "name"), "stack_type": "IPV4_ONLY",
                 "subnetwork": Ref(ctx.task(compute.Subnetwork.kind, ctx.subnet_name(subnet)), "name")}
    external = subnet.get("type") in ("Public", "Utility") or role == objects.ROLE_BASTION
    if spec.get("associatePublicIp") is not None:
        external = spec["associatePublicIp"]
    if external:
        interface["access_config"] = {}
    if ctx.ip_alias():
        mask = (ctx.spec.get("kubeControllerManager") or {}).get("nodeCIDRMaskSize") or 24
        interface["alias_ip_range"] = [{"ip_cidr_range": "/%d" % mask, "subnetwork_range_name": ctx.suffixed("pods")}]
    name = names.safe_object_name(group_name, ctx.name)
    return ctx.add(compute.InstanceTemplate(
        name,
        can_ip_forward=not ctx.ip_alias(),
        disk={"auto_delete": True, "boot": True, "device_name": "persistent-disks-0", "disk_name": "",
              "disk_size_gb": spec.get("rootVolumeSize") or ROOT_VOLUME_SIZE[role],
              "disk_type": spec.get("rootVolumeType") or ROOT_VOLUME_TYPE, "interface": "", "mode": "READ_WRITE",
              "provisioned_iops": spec.get("rootVolumeIops") or 0,
              "provisioned_throughput": spec.get("rootVolumeThroughput") or 0, "source": "",
              "source_image": image_url(ctx.project, image), "type": "PERSISTENT"},
        labels=group_labels(ctx, group),
        lifecycle={"create_before_destroy": True},
        machine_type=spec["machineType"],
        metadata=metadata,
        name_prefix=names.template_name_prefix(group_name, ctx.name) + "-",
        network_interface=interface,
        scheduling={"automatic_restart": not spot, "on_host_maintenance": "MIGRATE" if migrates else "TERMINATE",
                    "preemptible": spot, "provisioning_model": "SPOT" if spot else "STANDARD"},
        service_account={"email": emails[role], "scopes": scopes},
        tags=[ctx.tag(r) for r in ROLE_TAGS[role]],
    ))


def build_instance_groups(ctx, network, emails, ssh_keys, user_data, target_pool=None):
    """Templates and managers; returns {group name: [its managers]}."""
    serves_api = {objects.ROLE_APISERVER} if ctx.has_apiserver_groups() else {objects.ROLE_CONTROL_PLANE}
    managers = {}
    for group in ctx.groups:
        group_name = objects.name_of(group)
        spec = group.get("spec") or {}
        template = build_template(ctx, group, network, emails, ssh_keys, (user_data or {}).get(group_name))
        size = spec.get("minSize")
        if size is None:
            size = 2 if ctx.role(group) == objects.ROLE_NODE else 1
        for zone, target_size in split_across_zones(size, ctx.group_zones(group)).items():
            name = names.instance_group_manager_name(ctx.name, group_name, zone)
            fields = {"name": name, "zone": zone, "base_instance_name": group_name, "target_size": target_size,
                      "list_managed_instances_results": "PAGINATED",
                      "update_policy": {"minimal_action": "REPLACE", "type": "OPPORTUNISTIC"},
                      "version": {"instance_template": Ref(template, "self_link")},
                      "lifecycle": {"ignore_changes": [Expression("target_size")]}}
            if target_pool is not None and ctx.role(group) in serves_api:
                fields["target_pools"] = [Ref(target_pool, "self_link")]
            managers.setdefault(group_name, []).append(ctx.add(compute.InstanceGroupManager(name, **fields)))
    return managers
