# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""containerd, runc and the sandbox image (kops ContainerdOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions


def build(spec, ctx):
    containerd = context.section(spec, "containerd")
    if not containerd.get("version"):
        # runc is pinned together with containerd; a user-chosen containerd keeps the runc it ships with.
        containerd["version"] = versions.CONTAINERD_VERSION
        containerd["runc"] = {"version": versions.RUNC_VERSION}
    containerd["logLevel"] = "info"
    if not containerd.get("sandboxImage"):
        containerd["sandboxImage"] = ctx.remap_image(versions.SANDBOX_IMAGE)
    nvidia = containerd.get("nvidiaGPU") or {}
    if nvidia.get("enabled"):
        context.fill(nvidia, {"package": versions.NVIDIA_DRIVER_PACKAGE,
                              "image": versions.NVIDIA_DEVICE_PLUGIN_IMAGE})  # NvidiaGPUConfig's JSON names
    gvisor = containerd.get("gVisor") or {}
    if gvisor.get("enabled"):
        context.fill(gvisor, {"platform": versions.GVISOR_PLATFORM})
