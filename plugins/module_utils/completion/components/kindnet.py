# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kindnet defaults (kops KindnetOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions


def build(spec, ctx):
    kindnet = context.networking(spec).get("kindnet")
    if kindnet is None:
        return
    if not kindnet.get("version"):
        kindnet["version"] = versions.KINDNET_VERSION
    if kindnet.get("masquerade") is None:
        if context.is_ipv6_only(spec):
            kindnet["masquerade"] = {"enabled": False}
            if ctx.cloud != context.CLOUD_AWS:
                kindnet["nat64"] = True  # AWS provides DNS64/NAT64 itself
        else:
            # Traffic to the VPC, pods and services keeps its source address.
            ranges = [spec.get(k) for k in ("networkCIDR", "podCIDR", "serviceClusterIPRange") if spec.get(k)]
            kindnet["masquerade"] = {"enabled": True}
            if ranges:
                kindnet["masquerade"]["nonMasqueradeCIDRs"] = ranges
    context.fill(kindnet, {"fastPathThreshold": 0, "logLevel": 2})
