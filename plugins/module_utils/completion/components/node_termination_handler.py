# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""aws-node-termination-handler, on by default on AWS unless Karpenter runs (kops NodeTerminationHandlerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

DEFAULTS = {
    "deleteSQSMsgIfNodeNotFound": False, "enableSpotInterruptionDraining": True,
    "enableScheduledEventDraining": True, "enableRebalanceMonitoring": False, "enableRebalanceDraining": False,
    "enableOutOfServiceTaint": False, "prometheusEnable": False, "excludeFromLoadBalancers": True,
    "managedASGTag": "aws-node-termination-handler/managed", "podTerminationGracePeriod": -1, "taintNode": False,
    "cpuRequest": "50m", "memoryRequest": "64Mi", "version": versions.NODE_TERMINATION_HANDLER_VERSION,
}


def build(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: AWS)."""
    del ctx
    if (spec.get("karpenter") or {}).get("enabled"):
        return
    nth = context.section(spec, "nodeTerminationHandler")
    if nth.get("enabled") is None:
        nth["enabled"] = True
    if nth["enabled"]:
        context.fill(nth, DEFAULTS)
