# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Calico encapsulation by IP family and cloud (kops CalicoOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context

# Azure's fabric drops IP-in-IP, so Calico tunnels over VXLAN there.
CLOUD_ENCAPSULATION = {context.CLOUD_AZURE: {"encapsulationMode": "vxlan", "vxlanMode": "Always"}}


def build(spec, ctx):
    calico = context.networking(spec).get("calico")
    if calico is None:
        return
    calico["encapsulationMode"] = "none" if context.is_ipv6_only(spec) else "ipip"
    calico.update(CLOUD_ENCAPSULATION.get(ctx.cloud, {}))
