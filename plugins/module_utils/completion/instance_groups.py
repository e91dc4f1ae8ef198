# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Defaults a new InstanceGroup gets when it is created (kops create cluster / create ig).

These are written to the user's InstanceGroup object: image, machine type,
sizes, subnets and the ``kops.k8s.io/instancegroup`` node label.  The rest of
kops' PopulateInstanceGroupSpec (kubelet merge, taints) belongs to the
completed spec and is computed by completion/populate.py on every update.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import CloudFactsError, UnknownZoneError
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

GRAVITON_TYPE = re.compile(r"^[a-z]+\d+g[a-z]*\.")
# The EC2 instance families whose DescribeInstanceTypes answer has GpuInfo (kops' AWSMachineTypeInfo.GPU, which it
# asks the cloud for): NVIDIA (g3 to g7e, p2 to p6e), AMD (g4ad) and Habana (dl1) accelerators.  Inferentia and
# Trainium (inf*, trn*) report NeuronInfo, not GpuInfo.
AWS_GPU_FAMILIES = frozenset((
    "g2", "g3", "g3s", "g4ad", "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f", "g7e",
    "p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200", "dl1"))
# Default (minSize, maxSize) per role when the user gives none (kops PopulateInstanceGroupSpec).
DEFAULT_SIZES = {
    objects.ROLE_CONTROL_PLANE: (1, 1),
    objects.ROLE_BASTION: (1, 1),
    objects.ROLE_NODE: (2, 2),
    objects.ROLE_APISERVER: (2, 2),
}
# The fields fill_new_group_defaults may fill in.
DEFAULTED_FIELDS = ("role", "image", "machineType", "subnets", "minSize", "maxSize", "nodeLabels")
# Subnet types an instance group lands in when it names none: first choice, then fallback.
DEFAULT_SUBNET_EXCLUSIONS = (("DualStack", "Utility"), ("Utility",))


class InstanceGroupDefaultsError(SpecError):
    pass


def machine_architecture(machine_type):
    """amd64 unless the machine type is an AWS Graviton type (m7g.large, t4g.medium, ...)."""
    return channels.ARCH_ARM64 if machine_type and GRAVITON_TYPE.match(machine_type) else channels.ARCH_AMD64


def aws_machine_has_gpu(machine_type):
    """Whether an EC2 machine type (kops' whole machineType field) has a GPU."""
    return bool(machine_type) and machine_type.split(".", 1)[0] in AWS_GPU_FAMILIES


def default_subnets(cluster_spec):
    for excluded in DEFAULT_SUBNET_EXCLUSIONS:
        names = [s["name"] for s in cluster_spec.get("subnets") or [] if s.get("type") not in excluded]
        if names:
            return names
    return []


def _zones_of_subnets(cluster_spec, names):
    return sorted({s.get("zone") for s in cluster_spec.get("subnets") or [] if s["name"] in names and s.get("zone")})


def fill_new_group_defaults(cluster, ig, channel, facts, image=None, sizes=False):
    """Fill image, machineType, subnets, node label (and min/max when sizes=True) in place."""
    spec = cluster["spec"]
    ig_spec = ig["spec"]
    name = objects.name_of(ig)
    cloud = spec["cloudProvider"]
    role = ig_spec.setdefault("role", objects.ROLE_NODE)
    if not ig_spec.get("image"):
        ig_spec["image"] = image or channel.find_image(
            cloud, spec["kubernetesVersion"], machine_architecture(ig_spec.get("machineType"))) \
            or provider_names.declared_value(cloud, "default_image", None)
        if not ig_spec["image"]:
            raise InstanceGroupDefaultsError(
                "instance group %s: spec.image: the %s channel has no %s image for Kubernetes %s; set image"
                % (name, channel.name, cloud, spec["kubernetesVersion"]))
    if not ig_spec.get("subnets") and role != objects.ROLE_CONTROL_PLANE:
        ig_spec["subnets"] = default_subnets(spec)
    if not ig_spec.get("subnets"):
        raise InstanceGroupDefaultsError("instance group %s: spec.subnets: name at least one of the cluster's "
                                         "subnets (%s)" % (name, ", ".join(s["name"] for s in spec.get("subnets") or [])))
    if not ig_spec.get("machineType") and ig_spec.get("manager") != "Karpenter" and \
            provider_names.declared_value(cloud, "machine_types", True):
        zones = ig_spec.get("zones") or _zones_of_subnets(spec, ig_spec["subnets"])
        try:
            ig_spec["machineType"] = facts.default_machine_type(cloud, role, zones, machine_architecture(None))
        except UnknownZoneError as exc:
            raise InstanceGroupDefaultsError("instance group %s: %s" % (name, exc))
        except CloudFactsError as exc:
            raise InstanceGroupDefaultsError("instance group %s: spec.machineType: %s" % (name, exc))
    if sizes and ig_spec.get("manager") != "Karpenter":
        low, high = DEFAULT_SIZES.get(role, (1, 1))
        ig_spec.setdefault("minSize", low)
        ig_spec.setdefault("maxSize", high)
    ig_spec.setdefault("nodeLabels", {})[objects.IG_LABEL] = name
    return ig


def resolve_warm_pool(cluster_pool, group):
    """kops' WarmPoolSpec.ResolveDefaults: the group's pool over the cluster's; none for the control plane
    and bastions unless the group asks."""
    spec = group["spec"]
    own = spec.get("warmPool")
    special = spec.get("role") in ("ControlPlane", "Master", "Bastion")
    if own is None:
        return None if cluster_pool is None or special else dict(cluster_pool)
    if cluster_pool is None or special:
        return dict(own)
    pool = dict(own)
    if pool.get("maxSize") is None and cluster_pool.get("maxSize") is not None:
        pool["maxSize"] = cluster_pool["maxSize"]
    if not pool.get("minSize"):
        pool["minSize"] = cluster_pool.get("minSize") or 0
    if not pool.get("enableLifecycleHook"):
        pool["enableLifecycleHook"] = cluster_pool.get("enableLifecycleHook", False)
    return pool


def warm_pool_enabled(pool):
    return pool is not None and pool.get("maxSize") != 0
