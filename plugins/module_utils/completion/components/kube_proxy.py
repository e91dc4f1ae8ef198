# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kube-proxy flags (kops KubeProxyOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context


def build(spec, ctx):
    proxy = context.section(spec, "kubeProxy")
    if not proxy.get("logLevel"):
        proxy["logLevel"] = 2
    if proxy.get("cpuRequest") is None:
        proxy["cpuRequest"] = "100m"
    proxy["image"] = ctx.kubernetes_image(spec, "kube-proxy")
    if proxy.get("clusterCIDR") is None and _needs_cluster_cidr(spec):
        proxy["clusterCIDR"] = spec["kubeControllerManager"]["clusterCIDR"]


def _needs_cluster_cidr(spec):
    """kube-proxy masquerades traffic from outside the pod range, unless pods use VPC addresses or kops IPAM."""
    if context.uses_kops_controller_ipam(spec) or "amazonvpc" in context.networking(spec):
        return False
    return bool((spec.get("kubeControllerManager") or {}).get("clusterCIDR"))
