# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""User spec -> completed spec (``cluster-completed.spec``), as kops' PopulateClusterSpec,
and the completed instance group kops' PopulateInstanceGroupSpec hands to nodeup.

The cluster pipeline follows kops' order: pod/service ranges, defaults, assignments,
config store, version, API access inference, DNS zone, then the options builders of
``components/`` (each fills only what the user left empty), run until nothing changes.
"""

from __future__ import annotations

import copy
import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, schema
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import (
    aws, calico, cilium, cloud_configuration, cloud_controller_manager, cluster_autoscaler, containerd, context,
    defaults, discovery, ebs_csi, etcd, gcp_pd_csi, karpenter, kindnet, kube_apiserver, kube_controller_manager,
    kube_dns, kube_proxy, kube_scheduler, kubelet, networking, node_problem_detector, node_termination_handler,
)
from ansible_collections.kubeops.kops.plugins.module_utils.completion.instance_groups import aws_machine_has_gpu
from ansible_collections.kubeops.kops.plugins.module_utils.completion.new_cluster import perform_assignments

# kops' options builders, in the order populate_cluster_spec.go runs them.
BUILDERS = (
    defaults.build, etcd.build, etcd.build_manager, kube_apiserver.build, containerd.build, networking.build,
    kube_dns.build, kubelet.build, kube_controller_manager.build, kube_scheduler.build, kube_proxy.build,
    cloud_configuration.build, calico.build, cilium.build, kindnet.build, discovery.build, cluster_autoscaler.build,
    node_termination_handler.build, node_problem_detector.build, aws.build, ebs_csi.build,
    cloud_controller_manager.build_aws, cloud_controller_manager.build_gce, gcp_pd_csi.build, karpenter.build,
)
# The builders of one cloud's own components, by the name a Provider lists them under (completion_builders): they
# run, in BUILDERS' order, for the clouds that list them only.
CLOUD_BUILDERS = {
    node_termination_handler.build: "node_termination_handler", aws.build: "aws_node_ip_families",
    ebs_csi.build: "ebs_csi", cloud_controller_manager.build_aws: "aws_cloud_controller_manager",
    cloud_controller_manager.build_gce: "gce_cloud_controller_manager", gcp_pd_csi.build: "gcp_pd_csi",
}
# kops reruns the builders until the spec stops changing; they settle in two passes.
MAX_BUILDER_PASSES = 10

# serviceClusterIPRange by IP family of the non-masquerade CIDR.
DEFAULT_SERVICE_RANGE = {4: "100.64.0.0/13", 6: "fd00:5e4f:ce::/108"}
DNS_PUBLIC, DNS_NONE = "Public", "None"
LB_PUBLIC, LB_CLASSIC = "Public", "Classic"
EXTERNAL_DNS_PROVIDER = "dns-controller"
# Fields kops reads and never writes into the completed spec: masterInternalName (unused: kops' internal name is
# always api.internal.<cluster>), containerRuntime (removed: containerd is the only runtime) and the retired
# serviceOIDCProvider (not in kops' types; kept in the user's spec as written, schema.RETIRED_FIELDS).
UNWRITTEN_FIELDS = ("masterInternalName", "containerRuntime") + tuple(schema.RETIRED_FIELDS["ClusterSpec"])


def populate_cluster_spec(cluster, instance_groups, cloud_facts):
    """A new completed Cluster dict for cluster and its instance groups; the inputs are untouched."""
    completed = copy.deepcopy(cluster)
    spec = context.section(completed, "spec")
    apply_read_defaults(spec)
    # kops writes the user's topology back after the builders (they may not change it).
    user_topology = copy.deepcopy(spec.get("topology"))
    assign_pod_and_service_ranges(spec)
    spec.setdefault("channel", "stable")
    perform_assignments(completed, cloud_facts)
    base = (spec.get("configBase") or "").rstrip("/")
    if not spec.get("keyStore"):
        spec["keyStore"] = base + "/pki"
    if not spec.get("secretStore"):
        spec["secretStore"] = base + "/secrets"
    if not spec.get("kubernetesVersion"):
        raise errors.ValidationError([errors.required("spec.kubernetesVersion")], "cluster")
    spec["kubernetesVersion"] = str(spec["kubernetesVersion"]).strip().lstrip("v")
    infer_api_access(spec, instance_groups)
    assign_dns(objects.name_of(completed), spec, cloud_facts)
    spec["masterKubelet"] = context.json_merge(copy.deepcopy(spec.get("kubelet") or {}),
                                               spec.get("masterKubelet") or {})
    run_builders(spec, context.OptionsContext(objects.name_of(completed), spec,
                                              bucket_region=getattr(cloud_facts, "bucket_region", None),
                                              docker_tag=getattr(cloud_facts, "docker_tag", None)))
    spec["topology"] = user_topology
    for field in UNWRITTEN_FIELDS:
        spec.pop(field, None)
    return schema.canonical_values(completed)


def apply_read_defaults(spec):
    """What kops' v1alpha2 decoder defaults on every read (SetDefaults_ClusterSpec)."""
    topology = context.section(spec, "topology")
    context.section(topology, "dns").setdefault("type", DNS_PUBLIC)
    if spec.get("cloudProvider") != context.CLOUD_OPENSTACK:
        context.section(spec, "api")
    authorization = context.section(spec, "authorization")
    if not any(authorization.get(k) is not None for k in ("rbac", "alwaysAllow")):
        authorization["rbac"] = {}
    if isinstance(spec.get("iam"), dict):
        # IAMSpec.Legacy is a plain bool without omitempty: kops writes it whenever spec.iam is there, even {}.
        spec["iam"].setdefault("legacy", False)
    flannel = context.networking(spec).get("flannel")
    if flannel is not None and not flannel.get("backend"):
        flannel["backend"] = "udp"


def assign_pod_and_service_ranges(spec):
    """podCIDR: the upper half of an IPv4 non-masquerade CIDR; serviceClusterIPRange by IP family."""
    nmc = spec.get("nonMasqueradeCIDR")
    if not nmc:
        return
    try:
        network = ipaddress.ip_network(nmc, strict=False)
    except ValueError:
        raise errors.ValidationError([errors.invalid("spec.nonMasqueradeCIDR", nmc, "not a CIDR")], "cluster")
    if not spec.get("podCIDR") and network.version == 4:
        spec["podCIDR"] = str(list(network.subnets(prefixlen_diff=1))[1])
    if not spec.get("serviceClusterIPRange"):
        spec["serviceClusterIPRange"] = DEFAULT_SERVICE_RANGE[network.version]


def infer_api_access(spec, instance_groups):
    """Without api.dns or api.loadBalancer: a load balancer if the API servers sit in any private subnet,
    DNS if they sit in public ones.  API-server-only groups take precedence over the control plane."""
    api = spec.get("api")
    openstack = spec.get("cloudProvider") == context.CLOUD_OPENSTACK
    if api is not None and not openstack and api.get("dns") is None and api.get("loadBalancer") is None:
        kinds = _subnet_types_of_api_servers(spec, instance_groups)
        if "Private" in kinds:
            api["loadBalancer"] = {}
        elif "Public" in kinds:
            api["dns"] = {}
    load_balancer = (api or {}).get("loadBalancer")
    if load_balancer is None:
        return
    if not openstack and not load_balancer.get("type"):
        load_balancer["type"] = LB_PUBLIC
    # kops completes an empty AWS class to Classic, which validation then rejects (kOps 1.37 needs Network).
    if spec.get("cloudProvider") == context.CLOUD_AWS and not load_balancer.get("class"):
        load_balancer["class"] = LB_CLASSIC


def _subnet_types_of_api_servers(spec, instance_groups):
    types = {s.get("name"): s.get("type") for s in spec.get("subnets") or []}
    roles = [(ig.get("spec") or {}).get("role") for ig in instance_groups]
    serving_role = objects.ROLE_APISERVER if objects.ROLE_APISERVER in roles else objects.ROLE_CONTROL_PLANE
    return {types.get(subnet) for ig in instance_groups if (ig.get("spec") or {}).get("role") == serving_role
            for subnet in (ig.get("spec") or {}).get("subnets") or []}


def uses_none_dns(spec):
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") == DNS_NONE


def assign_dns(cluster_name, spec, cloud_facts):
    """The hosted zone (longest suffix of the cluster name), api.<cluster> and dns-controller, unless DNS is None."""
    if uses_none_dns(spec):
        return
    if not spec.get("dnsZone") and cloud_facts is not None:
        zone = cloud_facts.find_hosted_zone(cluster_name)
        if zone:
            spec["dnsZone"] = zone
    if spec.get("dnsZone") and not spec.get("masterPublicName"):
        spec["masterPublicName"] = "api." + cluster_name
    external_dns = context.section(spec, "externalDns")
    if not external_dns.get("provider"):
        external_dns["provider"] = EXTERNAL_DNS_PROVIDER


def run_builders(spec, ctx):
    own = provider_names.declared_value(ctx.cloud, "completion_builders", ())
    builders = [build for build in BUILDERS if build not in CLOUD_BUILDERS or CLOUD_BUILDERS[build] in own]
    for _pass in range(MAX_BUILDER_PASSES):
        before = copy.deepcopy(spec)
        for build in builders:
            build(spec, ctx)
        if spec == before:
            return
    raise errors.ValidationError([errors.invalid("spec", "", "the options builders did not settle after %d passes"
                                                 % MAX_BUILDER_PASSES)], "completed cluster")


# -- instance groups -------------------------------------------------------------

# (minSize, maxSize) when the user gives none; Karpenter sizes its own nodes.
DEFAULT_SIZES = {
    objects.ROLE_CONTROL_PLANE: (1, 1),
    objects.ROLE_BASTION: (1, 1),
    objects.ROLE_NODE: (2, 2),
    objects.ROLE_APISERVER: (2, 2),
}
MANAGER_CLOUD_GROUP = "CloudGroup"
MANAGER_KARPENTER = "Karpenter"
# Default machine types, by role, of kops' clouds this collection has no package for (a package declares its own:
# Provider.default_machine_types).
STATIC_MACHINE_TYPES = {
    "digitalocean": {objects.ROLE_CONTROL_PLANE: "s-2vcpu-4gb-amd", objects.ROLE_NODE: "s-2vcpu-4gb-amd",
                     objects.ROLE_APISERVER: "s-2vcpu-4gb-amd"},
    "hetzner": {objects.ROLE_CONTROL_PLANE: "cx23", objects.ROLE_NODE: "cx23", objects.ROLE_APISERVER: "cx23",
                objects.ROLE_BASTION: "cx23"},
    "azure": {objects.ROLE_CONTROL_PLANE: "Standard_B2s", objects.ROLE_NODE: "Standard_B2s",
              objects.ROLE_APISERVER: "Standard_B2s", objects.ROLE_BASTION: "Standard_B2s"},
    "scaleway": {objects.ROLE_CONTROL_PLANE: "DEV1-M", objects.ROLE_NODE: "DEV1-M", objects.ROLE_APISERVER: "DEV1-M"},
    "linode": {objects.ROLE_CONTROL_PLANE: "g6-standard-2", objects.ROLE_NODE: "g6-standard-2",
               objects.ROLE_APISERVER: "g6-standard-2", objects.ROLE_BASTION: "g6-standard-1"},
}
# Clouds whose image kops does not take from the channel.
STATIC_IMAGES = {"digitalocean": "ubuntu-24-04-x64", "hetzner": "ubuntu-24.04", "scaleway": "ubuntu_noble",
                 "linode": "linode/ubuntu24.04"}
# Subnet types a group without subnets skips, tried in order (first choice, fallback).
DEFAULT_SUBNET_EXCLUSIONS = (("DualStack", "Utility"), ("Utility",))
IPV6_API_SERVER_SUBNET_EXCLUSIONS = (("Private", "Utility"),)

# Node labels by role (kops nodelabels.BuildNodeLabels).
ROLE_NODE_LABELS = {
    objects.ROLE_CONTROL_PLANE: {"node-role.kubernetes.io/control-plane": "",
                                 "kops.k8s.io/kops-controller-pki": "",
                                 "node.kubernetes.io/exclude-from-external-load-balancers": ""},
    objects.ROLE_APISERVER: {"node-role.kubernetes.io/api-server": ""},
    objects.ROLE_NODE: {"node-role.kubernetes.io/node": ""},
    objects.ROLE_BASTION: {},
}
# Taints every node of a role registers with (the empty value still needs the key=value:effect form).
ROLE_TAINTS = {
    objects.ROLE_CONTROL_PLANE: ["node-role.kubernetes.io/control-plane=:NoSchedule"],
    objects.ROLE_APISERVER: ["node-role.kubernetes.io/api-server=:NoSchedule"],
}
# Karpenter v1 removes this taint once its NodeClaim is synced.
KARPENTER_TAINT = "karpenter.sh/unregistered=:NoExecute"
GPU_LABEL = "kops.k8s.io/gpu"
GPU_TAINT = "nvidia.com/gpu:NoSchedule"
GVISOR_LABEL = "kops.k8s.io/gvisor"


def populate_instance_group_spec(completed_cluster, ig, channel_images=None):
    """The completed InstanceGroup (a new dict): sizes, machine type and image where kops knows them without a
    cloud call, subnets, manager, and the group's kubelet: the cluster's (masterKubelet for the control plane)
    overlaid with the group's own, with role labels and taints.

    channel_images: a channel (``find_image(cloud, kubernetes_version, architecture)``) for groups without image.
    """
    cluster_spec = completed_cluster["spec"]
    completed = copy.deepcopy(ig)
    spec = context.section(completed, "spec")
    name = objects.name_of(ig)
    role = spec.get("role") or objects.ROLE_NODE
    spec["role"] = role
    cloud = cluster_spec.get("cloudProvider")
    if spec.get("manager") != MANAGER_KARPENTER or role != objects.ROLE_NODE:
        low, high = DEFAULT_SIZES.get(role, (1, 1))
        if spec.get("minSize") is None:
            spec["minSize"] = low
        if spec.get("maxSize") is None:
            spec["maxSize"] = high
    if not spec.get("machineType") and spec.get("manager") != MANAGER_KARPENTER:
        machine_type = (provider_names.declared_value(cloud, "default_machine_types", None) or
                        STATIC_MACHINE_TYPES.get(cloud) or {}).get(role)
        if machine_type:
            spec["machineType"] = machine_type
    if not spec.get("image"):
        image = STATIC_IMAGES.get(cloud)
        if image is None and channel_images is not None:
            image = channel_images.find_image(cloud, cluster_spec["kubernetesVersion"], "amd64")
        if image:
            spec["image"] = image
    if not spec.get("subnets"):
        if role == objects.ROLE_CONTROL_PLANE:
            raise errors.ValidationError([errors.required("spec.subnets", "a control-plane group names its subnets")],
                                         "instance group %s" % name)
        spec["subnets"] = default_subnets(cluster_spec, role)
        if not spec["subnets"]:
            raise errors.ValidationError([errors.required("spec.subnets", "no subnet to place the group in")],
                                         "instance group %s" % name)
    _label_accelerated_nodes(cluster_spec, spec, role, cloud)
    if not spec.get("manager"):
        spec["manager"] = MANAGER_CLOUD_GROUP
    spec["kubelet"] = build_group_kubelet(cluster_spec, spec, role)
    return completed


def default_subnets(cluster_spec, role):
    exclusions = DEFAULT_SUBNET_EXCLUSIONS
    if role == objects.ROLE_APISERVER and context.is_ipv6_only(cluster_spec):
        exclusions = IPV6_API_SERVER_SUBNET_EXCLUSIONS
    for excluded in exclusions:
        names = [s["name"] for s in cluster_spec.get("subnets") or [] if s.get("type") not in excluded]
        if names:
            return names
    return []


def _label_accelerated_nodes(cluster_spec, spec, role, cloud):
    """GPU nodes get a label and a taint; gVisor nodes a label the RuntimeClass selects on.

    With the NVIDIA runtime enabled (on the cluster or the group), an AWS group whose machine type has a GPU (kops
    asks the cloud; instance_groups.AWS_GPU_FAMILIES here) counts as one, and so does an OpenStack group that
    enables the runtime itself.  The label and taint become the cluster-autoscaler's node-template tags.
    """
    group_nvidia = ((spec.get("containerd") or {}).get("nvidiaGPU") or {}).get("enabled")
    cluster_nvidia = ((cluster_spec.get("containerd") or {}).get("nvidiaGPU") or {}).get("enabled")
    if cloud == context.CLOUD_AWS:
        has_gpu = bool(group_nvidia or cluster_nvidia) and aws_machine_has_gpu(spec.get("machineType"))
    else:
        has_gpu = cloud == context.CLOUD_OPENSTACK and bool(group_nvidia)
    if has_gpu:
        spec.setdefault("nodeLabels", {})[GPU_LABEL] = "1"
        if not any(t.startswith("nvidia.com/gpu") for t in spec.get("taints") or []):
            spec["taints"] = list(spec.get("taints") or []) + [GPU_TAINT]
    if role == objects.ROLE_NODE and ((spec.get("containerd") or {}).get("gVisor") or {}).get("enabled"):
        spec.setdefault("nodeLabels", {})[GVISOR_LABEL] = "1"


def build_group_kubelet(cluster_spec, spec, role):
    """Cluster kubelet (masterKubelet for the control plane) <- group kubelet, plus labels and merged taints."""
    control_plane = role == objects.ROLE_CONTROL_PLANE
    cluster_kubelet = cluster_spec.get("kubelet") or {}
    kubelet = copy.deepcopy(cluster_spec.get("masterKubelet") if control_plane else cluster_kubelet) or {}
    if control_plane and cluster_kubelet.get("anonymousAuth") is False:
        kubelet["anonymousAuth"] = False  # the cluster kubelet's refusal wins over masterKubelet
    group_kubelet = spec.get("kubelet") or {}
    labels = copy.deepcopy(kubelet.get("nodeLabels") or {})
    labels.update(group_kubelet.get("nodeLabels") or {})
    labels.update(ROLE_NODE_LABELS.get(role, {}))
    labels.update(spec.get("nodeLabels") or {})
    # Taints are the one list kops merges rather than replaces.
    taints = set(kubelet.get("taints") or []) | set(spec.get("taints") or []) | set(group_kubelet.get("taints") or [])
    taints |= set(cluster_kubelet.get("taints") or [])
    # Decided before the group's own kubelet is merged: kops never lets the cluster's kubelet settings open
    # anonymous access on a group (only the group itself may).
    refuse_anonymous = bool(kubelet.get("anonymousAuth"))
    context.json_merge(kubelet, group_kubelet)
    taints |= set(ROLE_TAINTS.get(role, []))
    if spec.get("manager") == MANAGER_KARPENTER:
        taints.add(KARPENTER_TAINT)
    kubelet["nodeLabels"] = labels
    if taints:
        kubelet["taints"] = sorted(taints)
    else:
        kubelet.pop("taints", None)
    if refuse_anonymous:
        kubelet["anonymousAuth"] = False
    if not labels:
        kubelet.pop("nodeLabels")
    return kubelet
