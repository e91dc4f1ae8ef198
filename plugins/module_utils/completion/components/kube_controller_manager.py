# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kube-controller-manager flags (kops KubeControllerManagerOptionsBuilder)."""

from __future__ import annotations

import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context

# Durations kops writes, as Go prints them.
ATTACH_DETACH_RECONCILE_SYNC_PERIOD = "1m0s"
UNSET_DURATIONS = (None, "", "0s", "0")
# Node route programming: only kubenet needs the controller manager to create cloud routes.
CLOUD_ROUTES_BY_NETWORKING = {"kubenet": True}


def build(spec, ctx):
    kcm = context.section(spec, "kubeControllerManager")
    if kcm.get("attachDetachReconcileSyncPeriod") in UNSET_DURATIONS:
        kcm["attachDetachReconcileSyncPeriod"] = ATTACH_DETACH_RECONCILE_SYNC_PERIOD
    kcm["clusterName"] = ctx.cluster_name
    kcm["cloudProvider"] = "external"
    if not kcm.get("logLevel"):
        kcm["logLevel"] = 2
    kcm["image"] = ctx.kubernetes_image(spec, "kube-controller-manager")
    kcm["leaderElection"] = {"leaderElect": True}
    kops_ipam = context.uses_kops_controller_ipam(spec)
    kcm["allocateNodeCIDRs"] = not kops_ipam
    if not kcm.get("clusterCIDR") and not kops_ipam and spec.get("podCIDR"):
        kcm["clusterCIDR"] = spec["podCIDR"]
    if kcm.get("clusterCIDR") and ipaddress.ip_network(kcm["clusterCIDR"], strict=False).version == 6:
        kcm["nodeCIDRMaskSize"] = _ipv6_node_mask_size(kcm["clusterCIDR"])
    networking = context.networking(spec)
    if not networking:
        raise errors.ValidationError([errors.required("spec.networking", "no networking mode set")],
                                     "completed cluster")
    kcm["configureCloudRoutes"] = any(CLOUD_ROUTES_BY_NETWORKING.get(name, False) for name in networking)
    # Pod ranges come from GCE IP aliases: the cloud controller manager allocates them.
    if "gce" in networking or ("kindnet" in networking and ctx.cloud == context.CLOUD_GCE):
        kcm["allocateNodeCIDRs"] = False
    if kcm.get("useServiceAccountCredentials") is None:
        kcm["useServiceAccountCredentials"] = True
    if not kcm.get("controllers") and kops_ipam:
        kcm["controllers"] = ["*", "-nodeipam"]


def _ipv6_node_mask_size(cluster_cidr):
    """Half the free bits of the cluster range go to each node, at most 16."""
    prefix = ipaddress.ip_network(cluster_cidr, strict=False).prefixlen
    return prefix + min((128 - prefix) // 2, 16)
