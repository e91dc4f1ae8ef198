# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS node IP families for IPv6-only clusters (kops AWSOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context


def build(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: AWS)."""
    del ctx
    if not context.is_ipv6_only(spec):
        return
    cloud_config = context.section(spec, "cloudConfig")
    if not cloud_config.get("nodeIPFamilies"):
        cloud_config["nodeIPFamilies"] = ["ipv6", "ipv4"]
