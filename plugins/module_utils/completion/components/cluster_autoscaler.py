# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""cluster-autoscaler addon settings when enabled (kops ClusterAutoscalerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import versions

DEFAULTS = {
    "expander": "random", "ignoreDaemonSetsUtilization": False, "scaleDownUtilizationThreshold": "0.5",
    "skipNodesWithCustomControllerPods": True, "skipNodesWithLocalStorage": True, "skipNodesWithSystemPods": True,
    "balanceSimilarNodeGroups": False, "emitPerNodegroupMetrics": False, "awsUseStaticInstanceList": False,
    "newPodScaleUpDelay": "0s", "scaleDownDelayAfterAdd": "10m0s", "scaleDownUnneededTime": "10m0s",
    "scaleDownUnreadyTime": "20m0s", "maxNodeProvisionTime": "15m0s",
}


def build(spec, ctx):
    autoscaler = spec.get("clusterAutoscaler")
    if not autoscaler or not autoscaler.get("enabled"):
        return
    if autoscaler.get("image") is None:
        autoscaler["image"] = versions.by_version(versions.CLUSTER_AUTOSCALER_IMAGES, spec["kubernetesVersion"])
    for key, value in DEFAULTS.items():
        if autoscaler.get(key) in (None, ""):
            autoscaler[key] = value
    if autoscaler["expander"] == "priority":
        autoscaler["createPriorityExpanderConfig"] = True
