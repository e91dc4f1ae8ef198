# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS EBS CSI driver version (kops AWSEBSCSIDriverOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions


def build(spec, ctx):
    """Run for the clouds whose Provider lists it (populate.CLOUD_BUILDERS: AWS)."""
    del ctx
    driver = context.section(context.section(spec, "cloudConfig"), "awsEBSCSIDriver")
    # kops' internal EBSCSIDriverSpec.Enabled is json:"-": read (validation allows only true), never written back.
    driver.pop("enabled", None)
    if driver.get("version") is None:
        driver["version"] = versions.AWS_EBS_CSI_DRIVER_VERSION
