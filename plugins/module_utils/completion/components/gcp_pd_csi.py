# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""GCE persistent-disk CSI driver (kops GCPPDCSIDriverOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

DEFAULTS = {"enabled": True, "defaultStorageClassName": "balanced-csi", "version": versions.GCP_PD_CSI_DRIVER_VERSION}


def build(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: GCE)."""
    del ctx
    context.fill(context.section(context.section(spec, "cloudConfig"), "gcpPDCSIDriver"), DEFAULTS)
