# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kube-apiserver flags (kops KubeAPIServerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context

# Client ports of the etcd clusters kops knows, and how kube-apiserver reaches each.
ETCD_MAIN = "main"
ETCD_OVERRIDES = {
    "events": "/events#https://127.0.0.1:4002",
    "leases": "coordination.k8s.io/leases#https://127.0.0.1:4003",
}
ETCD_MAIN_SERVER = "https://127.0.0.1:4001"
ADMISSION_PLUGINS = (
    "DefaultStorageClass", "DefaultTolerationSeconds", "LimitRanger", "MutatingAdmissionWebhook",
    "NamespaceLifecycle", "NodeRestriction", "ResourceQuota", "RuntimeClass", "ServiceAccount",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
)
# Authorization block -> --authorization-mode; the first block present wins.
AUTHORIZATION_MODES = (("alwaysAllow", "AlwaysAllow"), ("rbac", "Node,RBAC"))
AGGREGATION_HEADERS = {
    "requestheaderAllowedNames": ["aggregator"],
    "requestheaderExtraHeaderPrefixes": ["X-Remote-Extra-"],
    "requestheaderGroupHeaders": ["X-Remote-Group"],
    "requestheaderUsernameHeaders": ["X-Remote-User"],
}
KUBELET_PREFERRED_ADDRESS_TYPES = ["InternalIP", "Hostname", "ExternalIP"]
# In-tree cloud providers left kube-apiserver in 1.33; older versions are told the provider is external.
EXTERNAL_CLOUD_PROVIDER_FLAG_BELOW = "1.33.0"


def build(spec, ctx):
    apiserver = context.section(spec, "kubeAPIServer")
    if apiserver.get("apiServerCount") is None:
        apiserver["apiServerCount"] = _api_server_count(spec)
    if apiserver.get("storageBackend") is None:
        apiserver["storageBackend"] = "etcd%d" % semver.parse(spec["etcdClusters"][0]["version"]).major
    if apiserver.get("kubeletPreferredAddressTypes") is None:
        apiserver["kubeletPreferredAddressTypes"] = list(KUBELET_PREFERRED_ADDRESS_TYPES)
    if "kopeio" in (spec.get("authentication") or {}):
        apiserver["authenticationTokenWebhookConfigFile"] = "/etc/kubernetes/authn.config"
    authorization = spec.get("authorization") or {}
    for block, mode in AUTHORIZATION_MODES:
        if authorization.get(block) is not None:
            apiserver["authorizationMode"] = mode
            break
    for key, value in AGGREGATION_HEADERS.items():
        apiserver[key] = list(value)
    apiserver["image"] = ctx.kubernetes_image(spec, "kube-apiserver")
    if ctx.control_plane_below(EXTERNAL_CLOUD_PROVIDER_FLAG_BELOW):
        apiserver["cloudProvider"] = "external"
    apiserver["logLevel"] = 2
    apiserver["securePort"] = 443
    apiserver["bindAddress"] = "::" if context.is_ipv6_only(spec) else "0.0.0.0"
    apiserver["allowPrivileged"] = True
    apiserver["serviceClusterIPRange"] = spec["serviceClusterIPRange"]
    _set_etcd_servers(spec, apiserver)
    apiserver["enableAdmissionPlugins"] = list(ADMISSION_PLUGINS) + list(apiserver.get("appendAdmissionPlugins") or [])
    apiserver["anonymousAuth"] = False
    apiserver.pop("insecureBindAddress", None)
    apiserver.pop("insecurePort", None)
    if (spec.get("metricsServer") or {}).get("enabled") and apiserver.get("enableAggregatorRouting") is None:
        apiserver["enableAggregatorRouting"] = True


def _api_server_count(spec):
    """One API server per member of the main etcd cluster (one per control-plane instance group)."""
    main = next((e for e in spec.get("etcdClusters") or [] if e.get("name") == ETCD_MAIN), {})
    count = len(main.get("etcdMembers") or [])
    if not count:
        problem = errors.required("spec.etcdClusters", "no main etcd cluster members: the control plane has no "
                                  "instance groups")
        raise errors.ValidationError([problem], "completed cluster")
    return count


def _set_etcd_servers(spec, apiserver):
    servers, overrides = [], []
    for etcd in spec.get("etcdClusters") or []:
        if etcd.get("name") == ETCD_MAIN:
            servers.append(ETCD_MAIN_SERVER)
        elif etcd.get("name") in ETCD_OVERRIDES:
            overrides.append(ETCD_OVERRIDES[etcd["name"]])
    apiserver.pop("etcdServers", None)
    apiserver.pop("etcdServersOverrides", None)
    if servers:
        apiserver["etcdServers"] = servers
    if overrides:
        apiserver["etcdServersOverrides"] = overrides
