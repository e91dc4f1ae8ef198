# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster kubelet and the control-plane kubelet (kops KubeletOptionsBuilder).

In v1alpha2 the control-plane kubelet is ``masterKubelet``; populate starts it from the
cluster kubelet overlaid with the user's masterKubelet before the builders run.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, semver
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, kube_dns

EVICTION_HARD = ",".join((
    "memory.available<100Mi",
    "nodefs.available<10%",
    "nodefs.inodesFree<5%",
    "imagefs.available<10%",
    "imagefs.inodesFree<5%",
))
# Always set, whatever the user wrote (kops owns these).
FORCED = {
    "enableDebuggingHandlers": True,
    "podManifestPath": "/etc/kubernetes/manifests",
    "logLevel": 2,
    "kubeconfigPath": "/var/lib/kubelet/kubeconfig",
    "cgroupRoot": "/",
    "cgroupDriver": "systemd",
}
# Kubelet --cloud-provider of a cloud without a package (a package declares its own: Provider.kubelet_cloud_provider,
# "" for bare metal): an external cloud controller manager.
DEFAULT_CLOUD_PROVIDER_FLAG = "external"
# Graceful node shutdown; amazon-vpc-cni nodes shut down at once (its IPs go with the ENI).
SHUTDOWN_GRACE = {"shutdownGracePeriod": "30s", "shutdownGracePeriodCriticalPods": "10s"}
NO_SHUTDOWN_GRACE = {"shutdownGracePeriod": "0s", "shutdownGracePeriodCriticalPods": "0s"}
# --register-schedulable was removed from the kubelet in 1.34.
REGISTER_SCHEDULABLE_BELOW = "1.34.0"


def build(spec, ctx):
    context.section(spec, "kubelet")
    context.section(spec, "masterKubelet")
    _configure(spec, spec["kubelet"], ctx, ctx.node_version)
    _configure(spec, spec["masterKubelet"], ctx, ctx.control_plane_version)
    control_plane = spec["masterKubelet"]
    control_plane["enableDebuggingHandlers"] = True
    if spec.get("isolateMasters"):
        control_plane["enableDebuggingHandlers"] = False
        control_plane["hairpinMode"] = "none"


def _configure(spec, kubelet, ctx, version):
    kubelet.update(FORCED)
    kubelet["clusterDomain"] = spec["clusterDNSDomain"]
    kubelet.pop("allowPrivileged", None)  # the flag left the kubelet in 1.14
    if not kubelet.get("clusterDNS"):
        local = (spec.get("kubeDNS") or {}).get("nodeLocalDNS") or {}
        if local.get("enabled"):
            kubelet["clusterDNS"] = local.get("localIP")
        else:
            kubelet["clusterDNS"] = context.well_known_service_ip(spec, kube_dns.KUBE_DNS_SERVICE_OFFSET)
    if kubelet.get("evictionHard") is None:
        kubelet["evictionHard"] = EVICTION_HARD
    flag = provider_names.declared_value(ctx.cloud, "kubelet_cloud_provider", DEFAULT_CLOUD_PROVIDER_FLAG)
    if flag:
        kubelet["cloudProvider"] = flag
    else:
        kubelet.pop("cloudProvider", None)
    if ctx.cloud == context.CLOUD_GCE:
        kubelet["hairpinMode"] = "promiscuous-bridge"
        cloud_config = context.section(spec, "cloudConfig")
        cloud_config["multizone"] = True
        cloud_config["nodeTags"] = context.gce_cluster_prefixed_name("k8s-io-role-node", ctx.cluster_name)
    if kubelet.get("protectKernelDefaults") is None:
        kubelet["protectKernelDefaults"] = True
    if "amazonvpc" in context.networking(spec):
        kubelet.update(NO_SHUTDOWN_GRACE)
    elif kubelet.get("shutdownGracePeriod") is None:
        kubelet.update(SHUTDOWN_GRACE)
    if version < semver.parse(REGISTER_SCHEDULABLE_BELOW):
        kubelet["registerSchedulable"] = True
