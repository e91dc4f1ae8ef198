# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""node-problem-detector settings when the block is present (kops NodeProblemDetectorOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

DEFAULTS = {"enabled": False, "cpuRequest": "20m", "memoryRequest": "100Mi", "memoryLimit": "100Mi",
            "image": versions.NODE_PROBLEM_DETECTOR_IMAGE}


def build(spec, ctx):
    if spec.get("nodeProblemDetector") is not None:
        context.fill(spec["nodeProblemDetector"], DEFAULTS)
