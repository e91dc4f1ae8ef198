# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""External cloud controller managers for AWS and GCE (kops AWS/GCPCloudControllerManagerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions


def build_aws(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: AWS)."""
    ccm = context.section(spec, "cloudControllerManager")
    ccm["leaderElection"] = {"leaderElect": True}
    ccm["clusterName"] = ctx.cluster_name
    kops_ipam = context.uses_kops_controller_ipam(spec)
    ccm["allocateNodeCIDRs"] = not kops_ipam
    if not ccm.get("clusterCIDR") and not kops_ipam and spec.get("podCIDR"):
        ccm["clusterCIDR"] = spec["podCIDR"]
    # Only kubenet relies on VPC routes to reach pods.
    ccm["configureCloudRoutes"] = context.uses_kubenet(spec)
    if not ccm.get("image"):
        ccm["image"] = versions.by_version(versions.AWS_CCM_IMAGES, ctx.control_plane_version)


def build_gce(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: GCE)."""
    ccm = context.section(spec, "cloudControllerManager")
    ccm["leaderElection"] = {"leaderElect": True}
    ccm["clusterName"] = context.gce_safe_cluster_name(ctx.cluster_name)
    ccm["allocateNodeCIDRs"] = True
    ccm["cidrAllocatorType"] = "CloudAllocator"
    if not ccm.get("clusterCIDR") and spec.get("podCIDR"):
        ccm["clusterCIDR"] = spec["podCIDR"]
    if context.uses_gce_ip_aliases(spec):
        ccm["configureCloudRoutes"] = False
    if ccm.get("controllers") is None:
        ccm["controllers"] = ["*"]
        if context.uses_kops_controller_ipam(spec):
            ccm["controllers"] += ["-node-ipam-controller", "-node-route-controller"]
    if not ccm.get("image"):
        ccm["image"] = versions.by_version(versions.GCP_CCM_IMAGES, ctx.control_plane_version)
