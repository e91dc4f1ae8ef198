# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Karpenter controller settings when the block is present (kops KarpenterOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import versions

DEFAULTS = {"image": versions.KARPENTER_IMAGE, "logEncoding": "console", "logLevel": "debug"}


def build(spec, ctx):
    karpenter = spec.get("karpenter")
    if karpenter is None:
        return
    for key, value in DEFAULTS.items():
        if not karpenter.get(key):
            karpenter[key] = value
