# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""User spec -> completed spec (`cluster-completed.spec`), as kops' PopulateClusterSpec.

The pipeline follows kops' order: subnet/pod/service CIDRs, defaults, API
access inference, DNS zone, then one options builder per component, each
filling only what the user left empty (user overrides win).  Versions and
images are tables, picked by Kubernetes version and cloud.
"""

from __future__ import annotations

import copy
import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import semver
from ansible_collections.kubeops.kops.plugins.module_utils.completion.new_cluster import perform_assignments

# -- version and default tables (kops 1.37.0-alpha.1) ---------------------------

# etcd version by control-plane Kubernetes version: first row whose bound is above it.
ETCD_VERSIONS = (("1.34.0", "3.5.31"), ("1.37.0", "3.6.12"), (None, "3.7.0"))
CONTAINERD = {"version": "2.3.4", "runc": "1.4.3", "sandboxImage": "registry.k8s.io/pause:3.10.1", "logLevel": "info"}
AWS_CCM_IMAGE = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.1"
GCP_CCM_IMAGE = "registry.k8s.io/cloud-provider-gcp/cloud-controller-manager:v35.0.0"
AWS_EBS_CSI_VERSION = "v1.58.0"
GCP_PD_CSI = {"enabled": True, "defaultStorageClassName": "balanced-csi", "version": "v1.22.1"}
NODE_LOCAL_DNS_IMAGE = "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0"
ADMISSION_PLUGINS = ("DefaultStorageClass", "DefaultTolerationSeconds", "LimitRanger", "MutatingAdmissionWebhook",
                     "NamespaceLifecycle", "NodeRestriction", "ResourceQuota", "RuntimeClass", "ServiceAccount",
                     "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook")
EVICTION_HARD = ("memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,"
                 "imagefs.available<10%,imagefs.inodesFree<5%")
ETCD_CLIENT_PORTS = {"main": 4001, "events": 4002, "leases": 4003}
KUBE_DNS_DEFAULTS = {"cacheMaxSize": 1000, "cacheMaxConcurrent": 150, "memoryRequest": "70Mi",
                     "cpuRequest": "100m", "memoryLimit": "170Mi", "provider": "CoreDNS"}
NODE_LOCAL_DNS_DEFAULTS = {"enabled": False, "memoryRequest": "5Mi", "cpuRequest": "25m",
                           "image": NODE_LOCAL_DNS_IMAGE}
NTH_DEFAULTS = {
    "enabled": True, "deleteSQSMsgIfNodeNotFound": False, "enableSpotInterruptionDraining": True,
    "enableScheduledEventDraining": True, "enableRebalanceMonitoring": False, "enableRebalanceDraining": False,
    "enableOutOfServiceTaint": False, "prometheusEnable": False, "excludeFromLoadBalancers": True,
    "managedASGTag": "aws-node-termination-handler/managed", "podTerminationGracePeriod": -1, "taintNode": False,
    "cpuRequest": "50m", "memoryRequest": "64Mi", "version": "v1.25.5",
}
CILIUM_DEFAULTS = {
    "version": "v1.18.12", "enableEndpointHealthChecking": True, "enableHostFirewall": False,
    "identityAllocationMode": "crd", "identityChangeGracePeriod": "5s", "bpfCTGlobalAnyMax": 262144,
    "bpfCTGlobalTCPMax": 524288, "bpfLBAlgorithm": "random", "bpfLBMaglevTableSize": "16381",
    "bpfNATGlobalMax": 524288, "bpfNeighGlobalMax": 524288, "bpfPolicyMapMax": 16384, "bpfLBMapMax": 65536,
    "clusterName": "default", "monitorAggregation": "medium", "sidecarIstioProxyImage": "cilium/istio_proxy",
    "toFqdnsDnsRejectResponseCode": "refused", "agentPrometheusPort": 9090, "ipam": "kubernetes",
    "enableRemoteNodeIdentity": True, "enableUnreachableRoutes": False, "enableL7Proxy": True,
    "enableLocalRedirectPolicy": False, "disableCNPStatusUpdates": True, "cpuRequest": "25m",
    "memoryRequest": "128Mi", "cniExclusive": True,
}
DEFAULT_SERVICE_RANGE = {4: "100.64.0.0/13", 6: "fd00:5e4f:ce::/108"}


def _fill(target, defaults):
    """Set every key of defaults that target lacks (user values win)."""
    for key, value in defaults.items():
        if target.get(key) is None:
            target[key] = copy.deepcopy(value)
    return target


def _version(spec):
    return semver.parse(spec["kubernetesVersion"])


def _is_ipv6(spec):
    return spec.get("nonMasqueradeCIDR") == "::/0"


def _networking(spec):
    return spec.get("networking") or {}


def _image(spec, component):
    image = "registry.k8s.io/%s:v%s" % (component, _version(spec))
    registry = (spec.get("assets") or {}).get("containerRegistry")
    return image.replace("registry.k8s.io", registry.rstrip("/"), 1) if registry else image


def _service_ip(spec, offset):
    network = ipaddress.ip_network(spec["serviceClusterIPRange"], strict=False)
    return str(network.network_address + offset)


# -- the pipeline -------------------------------------------------------------

def populate_cluster_spec(cluster, instance_groups, cloud_facts):
    """A new completed Cluster dict for cluster (+ its instance groups); inputs are untouched."""
    completed = copy.deepcopy(cluster)
    spec = completed.setdefault("spec", {})
    apply_read_defaults(spec)
    user_topology = copy.deepcopy(spec.get("topology"))
    _assign_pod_and_service_ranges(spec)
    spec.setdefault("channel", "stable")
    perform_assignments(completed, cloud_facts)
    base = spec.get("configBase", "").rstrip("/")
    spec.setdefault("keyStore", base + "/pki")
    spec.setdefault("secretStore", base + "/secrets")
    spec["kubernetesVersion"] = str(spec["kubernetesVersion"]).strip().lstrip("v")
    _infer_api_access(spec, instance_groups)
    _assign_dns(completed, spec, cloud_facts)
    _merge_control_plane_kubelet(spec)
    for build in BUILDERS:
        build(completed, spec, instance_groups)
    # kops puts back the user's own topology after the builders.
    spec["topology"] = user_topology
    return completed


def apply_read_defaults(spec):
    """What kops' v1alpha2 decoder defaults on every read (SetDefaults_ClusterSpec)."""
    spec.setdefault("topology", {}).setdefault("dns", {}).setdefault("type", "Public")
    if spec.get("cloudProvider") != "openstack":
        spec.setdefault("api", {})
    authorization = spec.setdefault("authorization", {})
    if not any(authorization.get(k) is not None for k in ("rbac", "alwaysAllow")):
        authorization["rbac"] = {}
    flannel = _networking(spec).get("flannel")
    if flannel is not None:
        flannel.setdefault("backend", "udp")


def _assign_pod_and_service_ranges(spec):
    nmc = spec.get("nonMasqueradeCIDR")
    if not nmc:
        return
    network = ipaddress.ip_network(nmc, strict=False)
    if not spec.get("podCIDR") and network.version == 4:
        spec["podCIDR"] = str(list(network.subnets(prefixlen_diff=1))[1])  # the upper half
    spec.setdefault("serviceClusterIPRange", DEFAULT_SERVICE_RANGE[network.version])


def _infer_api_access(spec, instance_groups):
    """API through DNS if the control plane sits in public subnets, through an LB if in private ones."""
    api = spec.setdefault("api", {})
    if spec.get("cloudProvider") == "openstack":
        return
    if "dns" not in api and "loadBalancer" not in api:
        types = {s.get("name"): s.get("type") for s in spec.get("subnets") or []}
        apiservers = [ig for ig in instance_groups if (ig.get("spec") or {}).get("role") == objects.ROLE_APISERVER]
        fronting = apiservers or [ig for ig in instance_groups
                                  if (ig.get("spec") or {}).get("role") == objects.ROLE_CONTROL_PLANE]
        kinds = {types.get(s) for ig in fronting for s in (ig.get("spec") or {}).get("subnets") or []}
        if "Private" in kinds:
            api["loadBalancer"] = {}
        elif "Public" in kinds:
            api["dns"] = {}
    if "loadBalancer" in api:
        api["loadBalancer"].setdefault("type", "Public")
        if spec.get("cloudProvider") == "aws":
            # kops completes an empty class to Classic, which validation then rejects (kOps 1.37).
            api["loadBalancer"].setdefault("class", "Classic")


def _dns_type(spec):
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") or "Public"


def _assign_dns(cluster, spec, cloud_facts):
    name = objects.name_of(cluster)
    if _dns_type(spec) == "None":
        return
    if not spec.get("dnsZone"):
        zone = cloud_facts.find_hosted_zone(name) if cloud_facts is not None else None
        if zone:
            spec["dnsZone"] = zone
    if spec.get("dnsZone") and not spec.get("masterPublicName"):
        spec["masterPublicName"] = "api." + name
    spec.setdefault("externalDns", {}).setdefault("provider", "dns-controller")


def _merge_control_plane_kubelet(spec):
    """The control-plane kubelet starts from the cluster kubelet, overlaid with masterKubelet."""
    merged = copy.deepcopy(spec.get("kubelet") or {})
    for key, value in (spec.get("masterKubelet") or {}).items():
        merged[key] = copy.deepcopy(value)
    spec["masterKubelet"] = merged


# -- options builders (kops pkg/model/components), in kops' order ----------------

def build_defaults(cluster, spec, igs):
    spec.setdefault("clusterDNSDomain", "cluster.local")


def build_etcd(cluster, spec, igs):
    version = _version(spec)
    for etcd in spec.get("etcdClusters") or []:
        if not etcd.get("version"):
            etcd["version"] = next(v for bound, v in ETCD_VERSIONS if bound is None or version < semver.parse(bound))


def build_etcd_manager(cluster, spec, igs):
    version = _version(spec)
    if semver.parse("1.32.0") <= version < semver.parse("1.36.0"):
        spec["masterKubelet"].setdefault("featureGates", {}).setdefault("ImageVolume", "true")
    for etcd in spec.get("etcdClusters") or []:
        backups = etcd.setdefault("backups", {})
        backups.setdefault("backupStore", "%s/backups/etcd/%s" % (spec["configBase"].rstrip("/"), etcd["name"]))


def build_kube_apiserver(cluster, spec, igs):
    apiserver = spec.setdefault("kubeAPIServer", {})
    if apiserver.get("apiServerCount") is None:
        main = next((e for e in spec.get("etcdClusters") or [] if e.get("name") == "main"), {})
        apiserver["apiServerCount"] = len(main.get("etcdMembers") or [])
    if apiserver.get("storageBackend") is None:
        apiserver["storageBackend"] = "etcd%d" % semver.parse(spec["etcdClusters"][0]["version"]).major
    apiserver.setdefault("kubeletPreferredAddressTypes", ["InternalIP", "Hostname", "ExternalIP"])
    authorization = spec.get("authorization") or {}
    if "alwaysAllow" in authorization:
        apiserver["authorizationMode"] = "AlwaysAllow"
    elif "rbac" in authorization:
        apiserver["authorizationMode"] = "Node,RBAC"
    apiserver["requestheaderAllowedNames"] = ["aggregator"]
    apiserver["requestheaderExtraHeaderPrefixes"] = ["X-Remote-Extra-"]
    apiserver["requestheaderGroupHeaders"] = ["X-Remote-Group"]
    apiserver["requestheaderUsernameHeaders"] = ["X-Remote-User"]
    apiserver["image"] = _image(spec, "kube-apiserver")
    if _version(spec) < semver.parse("1.33.0"):
        apiserver["cloudProvider"] = "external"
    apiserver["logLevel"] = 2
    apiserver["securePort"] = 443
    apiserver["bindAddress"] = "::" if _is_ipv6(spec) else "0.0.0.0"
    apiserver["allowPrivileged"] = True
    apiserver["serviceClusterIPRange"] = spec["serviceClusterIPRange"]
    servers, overrides = [], []
    for etcd in spec.get("etcdClusters") or []:
        port = ETCD_CLIENT_PORTS.get(etcd.get("name"))
        if etcd.get("name") == "main":
            servers.append("https://127.0.0.1:%d" % port)
        elif etcd.get("name") == "events":
            overrides.append("/events#https://127.0.0.1:%d" % port)
        elif etcd.get("name") == "leases":
            overrides.append("coordination.k8s.io/leases#https://127.0.0.1:%d" % port)
    apiserver["etcdServers"] = servers
    if overrides:
        apiserver["etcdServersOverrides"] = overrides
    apiserver["enableAdmissionPlugins"] = list(ADMISSION_PLUGINS) + list(apiserver.get("appendAdmissionPlugins") or [])
    apiserver["anonymousAuth"] = False
    apiserver.pop("insecureBindAddress", None)
    apiserver.pop("insecurePort", None)
    if (spec.get("metricsServer") or {}).get("enabled"):
        apiserver.setdefault("enableAggregatorRouting", True)


def build_containerd(cluster, spec, igs):
    containerd = spec.setdefault("containerd", {})
    if not containerd.get("version"):
        containerd["version"] = CONTAINERD["version"]
        containerd["runc"] = {"version": CONTAINERD["runc"]}
    containerd["logLevel"] = CONTAINERD["logLevel"]
    registry = (spec.get("assets") or {}).get("containerRegistry")
    sandbox = CONTAINERD["sandboxImage"]
    containerd.setdefault("sandboxImage", sandbox.replace("registry.k8s.io", registry, 1) if registry else sandbox)


def build_networking(cluster, spec, igs):
    spec.setdefault("kubelet", {})


def build_kube_dns(cluster, spec, igs):
    dns = _fill(spec.setdefault("kubeDNS", {}), KUBE_DNS_DEFAULTS)
    dns.setdefault("serverIP", _service_ip(spec, 10))
    dns.setdefault("domain", spec["clusterDNSDomain"])
    if _is_ipv6(spec) and spec.get("cloudProvider") == "aws":
        dns.setdefault("upstreamNameservers", ["fd00:ec2::253"])
    local = _fill(dns.setdefault("nodeLocalDNS", {}), NODE_LOCAL_DNS_DEFAULTS)
    if local.get("enabled"):
        local.setdefault("localIP", "fd00:90de:d95::1" if _is_ipv6(spec) else "169.254.20.10")
        local.setdefault("forwardToKubeDNS", False)


def build_kubelet(cluster, spec, igs):
    spec.setdefault("kubelet", {})
    for kubelet in (spec["kubelet"], spec["masterKubelet"]):
        _configure_kubelet(objects.name_of(cluster), spec, kubelet)
    spec["masterKubelet"]["enableDebuggingHandlers"] = True
    if spec.get("isolateMasters"):
        spec["masterKubelet"]["enableDebuggingHandlers"] = False
        spec["masterKubelet"]["hairpinMode"] = "none"


def _configure_kubelet(cluster_name, spec, kubelet):
    kubelet["enableDebuggingHandlers"] = True
    kubelet["podManifestPath"] = "/etc/kubernetes/manifests"
    kubelet["logLevel"] = 2
    kubelet["clusterDomain"] = spec["clusterDNSDomain"]
    kubelet.pop("allowPrivileged", None)
    if not kubelet.get("clusterDNS"):
        local = (spec.get("kubeDNS") or {}).get("nodeLocalDNS") or {}
        kubelet["clusterDNS"] = local.get("localIP") if local.get("enabled") else _service_ip(spec, 10)
    kubelet.setdefault("evictionHard", EVICTION_HARD)
    kubelet["kubeconfigPath"] = "/var/lib/kubelet/kubeconfig"
    kubelet["cgroupRoot"] = "/"
    kubelet["cloudProvider"] = "external"
    if spec.get("cloudProvider") == "gce":
        kubelet["hairpinMode"] = "promiscuous-bridge"
        cloud_config = spec.setdefault("cloudConfig", {})
        cloud_config["multizone"] = True
        cloud_config["nodeTags"] = "%s-k8s-io-role-node" % cluster_name.replace(".", "-")
    kubelet["cgroupDriver"] = "systemd"
    kubelet.setdefault("protectKernelDefaults", True)
    if "amazonvpc" in _networking(spec):
        kubelet["shutdownGracePeriod"] = "0s"
        kubelet["shutdownGracePeriodCriticalPods"] = "0s"
    elif kubelet.get("shutdownGracePeriod") is None:
        kubelet["shutdownGracePeriod"] = "30s"
        kubelet["shutdownGracePeriodCriticalPods"] = "10s"
    if _version(spec) < semver.parse("1.34.0"):
        kubelet["registerSchedulable"] = True


def build_kube_controller_manager(cluster, spec, igs):
    kcm = spec.setdefault("kubeControllerManager", {})
    if kcm.get("attachDetachReconcileSyncPeriod") in (None, "0s"):
        kcm["attachDetachReconcileSyncPeriod"] = "1m0s"
    kcm["clusterName"] = objects.name_of(cluster)
    kcm["cloudProvider"] = "external"
    kcm.setdefault("logLevel", 2)
    kcm["image"] = _image(spec, "kube-controller-manager")
    kcm["leaderElection"] = {"leaderElect": True}
    kopscontroller_ipam = _is_ipv6(spec)
    kcm["allocateNodeCIDRs"] = not kopscontroller_ipam
    if not kcm.get("clusterCIDR") and not kopscontroller_ipam:
        kcm["clusterCIDR"] = spec.get("podCIDR")
    networking = _networking(spec)
    if "kubenet" in networking:
        kcm["configureCloudRoutes"] = True
    else:
        kcm["configureCloudRoutes"] = False
        if "gcp" in networking or ("kindnet" in networking and spec.get("cloudProvider") == "gce"):
            kcm["allocateNodeCIDRs"] = False
    kcm.setdefault("useServiceAccountCredentials", True)
    if not kcm.get("controllers") and kopscontroller_ipam:
        kcm["controllers"] = ["*", "-nodeipam"]


def build_kube_scheduler(cluster, spec, igs):
    scheduler = spec.setdefault("kubeScheduler", {})
    scheduler.setdefault("logLevel", 2)
    scheduler.setdefault("image", _image(spec, "kube-scheduler"))
    scheduler.setdefault("leaderElection", {"leaderElect": True})


def build_kube_proxy(cluster, spec, igs):
    proxy = spec.setdefault("kubeProxy", {})
    proxy.setdefault("logLevel", 2)
    proxy.setdefault("cpuRequest", "100m")
    proxy["image"] = _image(spec, "kube-proxy")
    cluster_cidr = (spec.get("kubeControllerManager") or {}).get("clusterCIDR")
    if proxy.get("clusterCIDR") is None and cluster_cidr and not _is_ipv6(spec) and "amazonvpc" not in _networking(spec):
        proxy["clusterCIDR"] = cluster_cidr


def build_cloud_configuration(cluster, spec, igs):
    spec.setdefault("cloudConfig", {}).setdefault("manageStorageClasses", True)


def build_calico(cluster, spec, igs):
    calico = _networking(spec).get("calico")
    if calico is not None:
        calico["encapsulationMode"] = "none" if _is_ipv6(spec) else "ipip"


def build_cilium(cluster, spec, igs):
    cilium = _networking(spec).get("cilium")
    if cilium is None:
        return
    _fill(cilium, CILIUM_DEFAULTS)
    if not cilium.get("tunnel"):
        cilium["tunnel"] = "disabled" if cilium["ipam"] == "eni" or _is_ipv6(spec) else "vxlan"
    cilium.setdefault("enableBPFMasquerade", cilium["ipam"] == "eni")
    if cilium.get("enableEncryption"):
        cilium.setdefault("encryptionType", "ipsec")
    cilium.setdefault("hubble", {}).setdefault("enabled", bool(cilium.get("hubble")))


def build_discovery(cluster, spec, igs):
    apiserver = spec.setdefault("kubeAPIServer", {})
    if not apiserver.get("apiAudiences"):
        apiserver["apiAudiences"] = ["kubernetes.svc.default"]
    if apiserver.get("serviceAccountIssuer") is None:
        discovery = spec.get("serviceAccountIssuerDiscovery") or {}
        store = discovery.get("discoveryStore") or ""
        if store:
            apiserver["serviceAccountIssuer"] = _discovery_url(store)
        elif (discovery.get("discoveryService") or {}).get("url"):
            apiserver["serviceAccountIssuer"] = discovery["discoveryService"]["url"]
        elif apiserver.get("anonymousAuth") and spec.get("masterPublicName") and \
                any(c in ("0.0.0.0/0", "::/0") for c in spec.get("kubernetesApiAccess") or []):
            apiserver["serviceAccountIssuer"] = "https://" + spec["masterPublicName"]
        else:
            apiserver["serviceAccountIssuer"] = "https://api.internal." + objects.name_of(cluster)
    apiserver["serviceAccountJWKSURI"] = apiserver["serviceAccountIssuer"] + "/openid/v1/jwks"


def _discovery_url(store):
    """The public HTTPS URL of a discovery store (kops' VFS GetHTTPsUrl)."""
    scheme, _sep, rest = store.partition("://")
    bucket, _sep, key = rest.partition("/")
    if scheme == "s3":
        return "https://%s.s3.amazonaws.com/%s" % (bucket, key) if key else "https://%s.s3.amazonaws.com" % bucket
    if scheme == "gs":
        return "https://storage.googleapis.com/%s/%s" % (bucket, key) if key else "https://storage.googleapis.com/" + bucket
    return "https://" + rest


def build_node_termination_handler(cluster, spec, igs):
    if spec.get("cloudProvider") != "aws" or (spec.get("karpenter") or {}).get("enabled"):
        return
    nth = spec.setdefault("nodeTerminationHandler", {})
    nth.setdefault("enabled", True)
    if nth["enabled"]:
        _fill(nth, NTH_DEFAULTS)


def build_aws(cluster, spec, igs):
    if spec.get("cloudProvider") == "aws" and _is_ipv6(spec):
        spec.setdefault("nodeIPFamilies", ["ipv6", "ipv4"])


def build_aws_ebs_csi_driver(cluster, spec, igs):
    if spec.get("cloudProvider") == "aws":
        spec.setdefault("cloudConfig", {}).setdefault("awsEBSCSIDriver", {}).setdefault("version", AWS_EBS_CSI_VERSION)


def build_aws_cloud_controller_manager(cluster, spec, igs):
    if spec.get("cloudProvider") != "aws":
        return
    ccm = spec.setdefault("cloudControllerManager", {})
    ccm["leaderElection"] = {"leaderElect": True}
    ccm["clusterName"] = objects.name_of(cluster)
    ccm["allocateNodeCIDRs"] = not _is_ipv6(spec)
    if not ccm.get("clusterCIDR") and not _is_ipv6(spec):
        ccm["clusterCIDR"] = spec.get("podCIDR")
    ccm["configureCloudRoutes"] = "kubenet" in _networking(spec)
    ccm.setdefault("image", AWS_CCM_IMAGE)


def build_gcp_cloud_controller_manager(cluster, spec, igs):
    if spec.get("cloudProvider") != "gce":
        return
    ccm = spec.setdefault("cloudControllerManager", {})
    ccm["leaderElection"] = {"leaderElect": True}
    ccm["clusterName"] = objects.name_of(cluster).replace(".", "-")
    ccm["allocateNodeCIDRs"] = True
    ccm["cidrAllocatorType"] = "CloudAllocator"
    if not ccm.get("clusterCIDR"):
        ccm["clusterCIDR"] = spec.get("podCIDR")
    if "gcp" in _networking(spec) or "kindnet" in _networking(spec):
        ccm["configureCloudRoutes"] = False
    if ccm.get("controllers") is None:
        ccm["controllers"] = ["*"] + (["-node-ipam-controller", "-node-route-controller"] if _is_ipv6(spec) else [])
    ccm.setdefault("image", GCP_CCM_IMAGE)


def build_gcp_pd_csi_driver(cluster, spec, igs):
    if spec.get("cloudProvider") == "gce":
        _fill(spec.setdefault("cloudConfig", {}).setdefault("gcpPDCSIDriver", {}), GCP_PD_CSI)


BUILDERS = (
    build_defaults, build_etcd, build_etcd_manager, build_kube_apiserver, build_containerd, build_networking,
    build_kube_dns, build_kubelet, build_kube_controller_manager, build_kube_scheduler,
    build_kube_proxy, build_cloud_configuration, build_calico, build_cilium, build_discovery,
    build_node_termination_handler, build_aws, build_aws_ebs_csi_driver, build_aws_cloud_controller_manager,
    build_gcp_cloud_controller_manager, build_gcp_pd_csi_driver,
)
