# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Versions and images the completed spec pins (kops 1.37.0-alpha.1, commit 268927e).

Tables keyed by Kubernetes version are lists of ``(upper bound, value)``: the
first row whose bound is above the version wins; ``None`` is the open end.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

KUBERNETES_REGISTRY = "registry.k8s.io"

# etcd by control-plane Kubernetes version (components/etcd.go).
ETCD_VERSIONS = (("1.34.0", "3.5.31"), ("1.37.0", "3.6.12"), (None, "3.7.0"))
# The etcd versions etcd-manager bundles: every patch up to the latest of each minor.
ETCD_LATEST_PATCHES = ("3.5.31", "3.6.12", "3.7.0")

CONTAINERD_VERSION = "2.3.4"
RUNC_VERSION = "1.4.3"
SANDBOX_IMAGE = "registry.k8s.io/pause:3.10.1"
NVIDIA_DRIVER_PACKAGE = "nvidia-driver-535-server"
NVIDIA_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.3"
GVISOR_PLATFORM = "systrap"

NODE_LOCAL_DNS_IMAGE = "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0"
NODE_TERMINATION_HANDLER_VERSION = "v1.25.5"
NODE_PROBLEM_DETECTOR_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.18"
AWS_EBS_CSI_DRIVER_VERSION = "v1.58.0"
GCP_PD_CSI_DRIVER_VERSION = "v1.22.1"
CILIUM_VERSION = "v1.18.12"
KINDNET_VERSION = "v1.0.1"
KARPENTER_IMAGE = "public.ecr.aws/karpenter/controller:1.13.0"

# Cloud controller managers by control-plane Kubernetes version.
AWS_CCM_IMAGES = ((None, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.1"),)
GCP_CCM_IMAGES = ((None, "registry.k8s.io/cloud-provider-gcp/cloud-controller-manager:v35.0.0"),)

# cluster-autoscaler by Kubernetes minor (components/clusterautoscaler.go).
CLUSTER_AUTOSCALER_IMAGES = (
    ("1.33.0", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.7"),
    ("1.34.0", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.5"),
    ("1.35.0", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.4"),
    ("1.36.0", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1"),
    (None, "registry.k8s.io/autoscaling/cluster-autoscaler:v1.36.0"),
)


def by_version(table, version):
    """The value of the first row of table whose upper bound is above version."""
    version = version if isinstance(version, semver.Version) else semver.kubernetes_version(version)
    for bound, value in table:
        if bound is None or version < semver.parse(bound):
            return value
    raise SpecError("no entry for version %s" % version)


def etcd_version_is_bundled(version):
    """True if etcd-manager ships this etcd version (any patch up to the latest of a bundled minor)."""
    try:
        wanted = semver.parse(str(version).lstrip("v"))
    except ValueError:
        return False
    for latest in ETCD_LATEST_PATCHES:
        bundled = semver.parse(latest)
        if wanted[:2] == bundled[:2] and wanted.patch <= bundled.patch and wanted.prerelease is None:
            return True
    return False
