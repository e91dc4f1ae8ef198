# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kubelet's files, as kops' nodeup KubeletBuilder writes them (nodeup/pkg/model/kubelet.go).

- /etc/sysconfig/kubelet: DAEMON_ARGS, the flags of the KubeletConfig fields that have a `flag` tag
  (flag_data.KUBELET, kops' flagbuilder), then --config and the image credential provider's flags;
- /var/lib/kubelet/kubelet.conf: the KubeletConfiguration (kubelet.config.k8s.io/v1beta1) of the other
  fields, written as kops' Go marshalling writes it (YAML, sorted keys, the zero values Go cannot omit);
- /var/lib/kubelet/credential-provider.conf: ECR's (AWS) or GCP's credential provider;
- the kubelet unit, kops' text.
"""

from __future__ import annotations

import copy
import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import goyaml, manifests
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import flag_data
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile, kubeconfig
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

KUBELET_CONFIG = "/var/lib/kubelet/kubelet.conf"
KUBELET_KUBECONFIG = "/var/lib/kubelet/kubeconfig"
KUBELET_BOOTSTRAP_KUBECONFIG = "/var/lib/kubelet/bootstrap-kubeconfig"
CREDENTIAL_PROVIDER_CONFIG = "/var/lib/kubelet/credential-provider.conf"
SYSCONFIG = "/etc/sysconfig/kubelet"
CA_FILE = "/srv/kubernetes/ca.crt"
# The kubelet's serving certificate (kops' kubelet-server): issued on the control plane by node_certificates,
# for workers by the bootstrap service (nodeup/credentials.py, nodeconfig/credentials.py).
SERVER_CERT = "/srv/kubernetes/kubelet-server.crt"
SERVER_KEY = "/srv/kubernetes/kubelet-server.key"
# Where roles/nodeup installs the kubelet and the credential providers (kops' binaryPath() on every
# distribution but Flatcar and COS; the role's asset plan puts them here on all).
BIN_DIR = "/usr/local/bin"
CONTAINERD_SOCKET = "/run/containerd/containerd.sock"
FLAGS = flag_data.KUBELET

# kops' buildKubeletConfigSpec: the volume plugin directory by distribution (/usr is read-only on Flatcar).
VOLUME_PLUGIN_DIRS = {"flatcar": "/var/lib/kubelet/volumeplugins/", "containeros": "/home/kubernetes/flexvolume/"}
# Distributions (kops' names, nodeup/distribution.py: a prefix of ubuntu2404 ...) whose /etc/resolv.conf names
# systemd-resolved's 127.0.0.53 (kops' HasLoopbackEtcResolvConf);
# elsewhere the node tells (node fact "resolved": /run/systemd/resolve/resolv.conf exists).
LOOPBACK_RESOLV_CONF = ("ubuntu", "flatcar")
RESOLVED_RESOLV_CONF = "/run/systemd/resolve/resolv.conf"

# KubeletConfig field (v1alpha2 name) -> (KubeletConfiguration path, kind), as kops' kubeletConfiguration() maps
# them.  kind, after the Go type of the target field: "string"/"int"/"bool" (omitted when zero: omitempty),
# "pointer" (written when set, zero included), "duration" (a metav1.Duration struct: always written, 0s when
# unset), "pointer-duration", "list" and "map" (omitted when empty).
CONFIG_FIELDS = (
    ("cgroupDriver", "cgroupDriver", "string"),
    ("cgroupRoot", "cgroupRoot", "string"),
    ("tlsCipherSuites", "tlsCipherSuites", "list"),
    ("tlsMinVersion", "tlsMinVersion", "string"),
    ("clusterDomain", "clusterDomain", "string"),
    ("enableDebuggingHandlers", "enableDebuggingHandlers", "pointer"),
    ("hairpinMode", "hairpinMode", "string"),
    ("podManifestPath", "staticPodPath", "string"),
    ("volumePluginDirectory", "volumePluginDir", "string"),
    ("kubeletCgroups", "kubeletCgroups", "string"),
    ("systemCgroups", "systemCgroups", "string"),
    ("podCIDR", "podCIDR", "string"),
    ("resolvConf", "resolvConf", "pointer"),
    ("serializeImagePulls", "serializeImagePulls", "pointer"),
    ("maxParallelImagePulls", "maxParallelImagePulls", "pointer"),
    ("allowedUnsafeSysctls", "allowedUnsafeSysctls", "list"),
    ("cpuCFSQuota", "cpuCFSQuota", "pointer"),
    ("cpuCFSQuotaPeriod", "cpuCFSQuotaPeriod", "pointer-duration"),
    ("cpuManagerPolicy", "cpuManagerPolicy", "string"),
    ("registryPullQPS", "registryPullQPS", "pointer"),
    ("topologyManagerPolicy", "topologyManagerPolicy", "string"),
    ("rotateCertificates", "rotateCertificates", "bool"),
    ("containerLogMaxSize", "containerLogMaxSize", "string"),
    ("containerLogMaxFiles", "containerLogMaxFiles", "pointer"),
    ("podPidsLimit", "podPidsLimit", "pointer"),
    ("imageGCHighThresholdPercent", "imageGCHighThresholdPercent", "pointer"),
    ("imageGCLowThresholdPercent", "imageGCLowThresholdPercent", "pointer"),
    ("imageMaximumGCAge", "imageMaximumGCAge", "duration"),
    ("nodeStatusUpdateFrequency", "nodeStatusUpdateFrequency", "duration"),
    ("nodeLeaseDurationSeconds", "nodeLeaseDurationSeconds", "int"),
    ("seccompDefault", "seccompDefault", "pointer"),
    ("kubeReserved", "kubeReserved", "map"),
    ("kubeReservedCgroup", "kubeReservedCgroup", "string"),
    ("systemReserved", "systemReserved", "map"),
    ("systemReservedCgroup", "systemReservedCgroup", "string"),
    ("failSwapOn", "failSwapOn", "pointer"),
    ("evictionPressureTransitionPeriod", "evictionPressureTransitionPeriod", "duration"),
    ("evictionMaxPodGracePeriod", "evictionMaxPodGracePeriod", "int"),
    ("eventRecordQPS", "eventRecordQPS", "pointer"),
    ("protectKernelDefaults", "protectKernelDefaults", "bool"),
    ("kernelMemcgNotification", "kernelMemcgNotification", "bool"),
    ("maxPods", "maxPods", "int"),
    ("readOnlyPort", "readOnlyPort", "int"),
    ("memorySwapBehavior", "memorySwap.swapBehavior", "string"),
    ("logFormat", "logging.format", "string"),
    ("crashLoopBackOffMaxContainerRestartPeriod", "crashLoopBackOff.maxContainerRestartPeriod", "pointer-duration"),
    ("shutdownGracePeriod", "shutdownGracePeriod", "duration"),
    ("shutdownGracePeriodCriticalPods", "shutdownGracePeriodCriticalPods", "duration"),
)
# metav1.Duration fields of KubeletConfiguration kops never sets: Go writes them anyway, as 0s
# (k8s.io/kubelet/config/v1beta1/types.go; struct fields are never omitted by encoding/json).
ZERO_DURATIONS = ("syncFrequency", "fileCheckFrequency", "httpCheckFrequency", "streamingConnectionIdleTimeout",
                  "nodeStatusReportFrequency", "imageMinimumGCAge", "volumeStatsAggPeriod",
                  "cpuManagerReconcilePeriod", "runtimeRequestTimeout")
# kops' parseKeyValueList fields: KubeletConfig string -> KubeletConfiguration map, with their separator.
KEY_VALUE_FIELDS = (("evictionHard", "<"), ("evictionSoft", "<"), ("evictionSoftGracePeriod", "="),
                    ("evictionMinimumReclaim", "="))
# strconv.ParseBool, which kops' parseFeatureGates uses.
GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}

# kops' addECRCredentialProvider / addGCPCredentialProvider.
ECR_REGISTRIES = ("*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr.*.amazonaws.com.cn", "*.dkr.ecr-fips.*.amazonaws.com",
                  "*.dkr.ecr.us-iso-east-1.c2s.ic.gov")
# The GCP provider's config is kops' literal text (not marshalled), and so is ours.
GCP_CREDENTIAL_PROVIDER_CONFIG = """apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - apiVersion: credentialprovider.kubelet.k8s.io/v1
    name: gcp-credential-provider
    matchImages:
      - "gcr.io"
      - "*.gcr.io"
      - "container.cloud.google.com"
      - "*.pkg.dev"
    defaultCacheDuration: "1m"
    args:
      - get-credentials
      - --v=3
"""


class KubeletConfigError(NodeError):
    """A KubeletConfig value kops would refuse: names the field and the fix."""


def go_yaml(document):
    """A document as kops' Go encoders write it (sigs.k8s.io/yaml: JSON, then go-yaml's sorted block style)."""
    return goyaml.dumps(document)


def _duration(value):
    return manifests.format_go_duration(manifests.parse_go_duration(value))


def _key_values(field, text, separator):
    result = {}
    for item in str(text).split(","):
        key, found, value = item.partition(separator)
        if not found:
            raise KubeletConfigError("KubeletConfig.%s: %r is not key%svalue (for example %s)"
                                     % (field, item, separator, "memory.available<100Mi" if separator == "<"
                                        else "memory.available=1m30s"))
        result[key.strip()] = value.strip()
    return result


def _feature_gates(gates):
    result = {}
    for name, raw in (gates or {}).items():
        text = str(raw) if not isinstance(raw, bool) else ("true" if raw else "false")
        if text not in GO_BOOLS:
            raise KubeletConfigError("KubeletConfig.featureGates.%s: %r is not a boolean (true or false)" % (name, raw))
        result[name] = GO_BOOLS[text]
    return result


def _taint(text):
    """kops' ParseTaint: key[=value]:effect -> v1.Taint (value omitted when empty, as Go does)."""
    key_value, found, effect = str(text).partition(":")
    key, _sep, value = key_value.partition("=")
    if not found or not key or not effect:
        raise KubeletConfigError("KubeletConfig.taints: %r is not key[=value]:effect (for example "
                                 "dedicated=gpu:NoSchedule)" % text)
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint


def _kubernetes_minor(config):
    parts = str(config.get("KubernetesVersion") or "0.0").lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return 0, 0


def _ipv6_only(config):
    cidr = (config.get("Networking") or {}).get("nonMasqueradeCIDR") or ""
    try:
        return ipaddress.ip_network(cidr, strict=False).version == 6
    except ValueError:
        return False


def _cloud(config):
    return ((config.get("kubeops") or {}).get("cloud") or {})


def uses_credential_provider(config):
    """kops' UseExternalKubeletCredentialProvider: on AWS and GCE."""
    return _cloud(config).get("provider") in ("aws", "gce")


def kubelet_spec(config, node):
    """The node's KubeletConfig completed as kops' buildKubeletConfigSpec completes it, plus our own flags."""
    spec = copy.deepcopy(config.get("KubeletConfig") or {})
    kubeops = config.get("kubeops") or {}
    distribution = (node.get("distribution") or "").lower()
    spec["clientCaFile"] = CA_FILE
    if spec.get("runtimeRequestTimeout") is None:
        # kops keeps its historical 15m as a flag: the config field cannot say "unset".
        spec["runtimeRequestTimeout"] = "15m0s"
    if config.get("ControlPlaneConfig") and _kubernetes_minor(config) >= (1, 35):
        # Wait less for control-plane pods to restart during the bootstrap sequence.
        spec["crashLoopBackOffMaxContainerRestartPeriod"] = "1m0s"
    # (kops also derives maxPods from the instance type for amazon-vpc-routed-eni and Cilium ENI IPAM; neither is
    # a networking option of ours, so the user's maxPods or the kubelet's 110 stands.)
    if not spec.get("volumePluginDirectory"):
        spec["volumePluginDirectory"] = VOLUME_PLUGIN_DIRS.get(distribution,
                                                               manifests.VOLUME_PLUGIN_DIR)
    if spec.get("resolvConf") is None and (distribution.startswith(LOOPBACK_RESOLV_CONF) or node.get("resolved")):
        spec["resolvConf"] = RESOLVED_RESOLV_CONF
    # As of Kubernetes 1.16 the kubelet refuses to set labels in the kubernetes.io/k8s.io namespaces outside its
    # allowed set (node-role.kubernetes.io/* among them): kops drops them all and kops-controller labels the node.
    spec.pop("nodeLabels", None)
    if not spec.get("authorizationMode"):
        spec["authorizationMode"] = "Webhook"
    if spec.get("authenticationTokenWebhook") is None:
        spec["authenticationTokenWebhook"] = True
    if kubeops.get("kubeletBootstrap"):
        # Ours: workers the bootstrap service cannot verify (not AWS) join with the cluster's bootstrap token,
        # which the kubelet trades for its client certificate (kops' nodeup asks kops-controller instead).
        spec["bootstrapKubeconfig"] = KUBELET_BOOTSTRAP_KUBECONFIG
    bootstrap_service = kubeops.get("bootstrapService") or {}
    if bootstrap_service and not bootstrap_service.get("serverCert") and node.get("name"):
        # Ours: the bootstrap service's certificate names the node (system:node:<instance id>, kops' verifier) and
        # the kubelet must register under that name, as the node authorizer requires; kops' nodeup makes the
        # instance's host name that name instead.
        spec["hostnameOverride"] = node["name"]
    return spec


def kubelet_configuration(config, spec):
    """The KubeletConfiguration document kops' kubeletConfiguration() builds from the completed spec."""
    document = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                "tlsCertFile": SERVER_CERT, "tlsPrivateKeyFile": SERVER_KEY,
                "memorySwap": {}, "crashLoopBackOff": {},
                "logging": {"flushFrequency": 0, "verbosity": 0,
                            "options": {"json": {"infoBufferSize": "0"}, "text": {"infoBufferSize": "0"}}}}
    for name in ZERO_DURATIONS:
        document[name] = "0s"
    if (config.get("kubeops") or {}).get("kubeletBootstrap"):
        # Ours: a token worker has no one to issue its serving certificate (kops' kops-controller verifies its
        # cloud identity; our bootstrap service verifies AWS instances only), so the kubelet makes its own
        # self-signed one, as it does when tlsCertFile is unset (kube-apiserver does not verify kubelets: kops
        # sets no --kubelet-certificate-authority).
        del document["tlsCertFile"], document["tlsPrivateKeyFile"]
    if spec.get("clusterDNS") not in (None, ""):
        # kops writes its one string as the only item (a comma-separated value is not split).
        document["clusterDNS"] = [str(spec["clusterDNS"])]
    for field, path, kind in CONFIG_FIELDS:
        value = spec.get(field)
        if kind == "duration":
            value = _duration(value) if value not in (None, "") else "0s"
        elif kind == "pointer-duration":
            value = _duration(value) if value not in (None, "") else None
        elif kind in ("string", "int", "bool", "list", "map"):
            value = value if value else None
        if value is None:
            continue
        *parents, leaf = path.split(".")
        target = document
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    anonymous = {} if spec.get("anonymousAuth") is None else {"enabled": bool(spec["anonymousAuth"])}
    webhook = {"cacheTTL": "0s"}
    if spec.get("authenticationTokenWebhook") is not None:
        webhook["enabled"] = bool(spec["authenticationTokenWebhook"])
    x509 = {"clientCAFile": spec["clientCaFile"]} if spec.get("clientCaFile") else {}
    document["authentication"] = {"anonymous": anonymous, "webhook": webhook, "x509": x509}
    document["authorization"] = {"webhook": {"cacheAuthorizedTTL": "0s", "cacheUnauthorizedTTL": "0s"}}
    if spec.get("authorizationMode"):
        document["authorization"]["mode"] = spec["authorizationMode"]
    if spec.get("eventQPS") is not None:  # kops' legacy field wins over eventRecordQPS
        document["eventRecordQPS"] = spec["eventQPS"]
    address = (config.get("containerdConfig") or {}).get("address")
    document["containerRuntimeEndpoint"] = "unix://" + (address or CONTAINERD_SOCKET)
    for field, separator in KEY_VALUE_FIELDS:
        if spec.get(field):
            document[field] = _key_values(field, spec[field], separator)
    gates = _feature_gates(spec.get("featureGates"))
    if gates:
        document["featureGates"] = gates
    if spec.get("enforceNodeAllocatable"):
        document["enforceNodeAllocatable"] = str(spec["enforceNodeAllocatable"]).split(",")
    taints = [_taint(t) for t in spec.get("taints") or []]
    if taints:
        document["registerWithTaints"] = taints
    return document


def kubelet_flags(config, node, spec):
    """/etc/sysconfig/kubelet: DAEMON_ARGS (kops' buildSystemdEnvironmentFile) and HOME."""
    flags = [_maybe_quote(flag) for flag in manifests.build_flags(FLAGS, spec)]
    address = node.get("address") or ""
    if _is_node_ip(address):
        # Ours: a host configured over SSH is reached at its inventory address, which need not be the address
        # of its default route (kops' cloud nodes leave their addresses to the cloud controller manager).
        flags.append("--node-ip=%s" % address)
    elif _ipv6_only(config):
        flags.append("--node-ip=::")
    flags.append("--config=%s" % KUBELET_CONFIG)
    if uses_credential_provider(config):
        flags += ["--image-credential-provider-config=%s" % CREDENTIAL_PROVIDER_CONFIG,
                  "--image-credential-provider-bin-dir=%s" % BIN_DIR]
    # HOME makes the kubelet read /root/.docker/config.json (kops).
    return 'DAEMON_ARGS="%s"\nHOME="/root"\n' % " ".join(flags)


def _maybe_quote(flag):
    """kops' BuildFlags: a value holding a double quote is written as Go's %q of it."""
    name, _sep, value = flag.partition("=")
    if '"' not in value:
        return flag
    return '%s="%s"' % (name, value.replace("\\", "\\\\").replace('"', '\\"'))


def _is_node_ip(address):
    try:
        return not ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def credential_provider_config(config):
    """The kubelet's image credential provider config (kops' addECRCredentialProvider / addGCPCredentialProvider);
    None on other clouds."""
    cloud = _cloud(config)
    if cloud.get("provider") == "gce":
        return GCP_CREDENTIAL_PROVIDER_CONFIG
    if cloud.get("provider") != "aws":
        return None
    registries = list(ECR_REGISTRIES)
    containerd = config.get("containerdConfig") or {}
    if containerd.get("useECRCredentialsForMirrors"):
        registries += list(containerd.get("registryMirrors") or {})
    return go_yaml({"apiVersion": "kubelet.config.k8s.io/v1", "kind": "CredentialProviderConfig", "providers": [{
        "apiVersion": "credentialprovider.kubelet.k8s.io/v1", "name": "ecr-credential-provider",
        "matchImages": registries, "defaultCacheDuration": "12h0m0s", "args": ["get-credentials"],
        "env": [{"name": "AWS_REGION", "value": cloud.get("region") or ""}]}]})


def kubelet_unit(config):
    """kops' kubelet unit (buildSystemdService); a kubeletCgroups slice when one is set."""
    cgroup = ((config.get("KubeletConfig") or {}).get("kubeletCgroups") or "").strip("/")
    service = [("EnvironmentFile", "/etc/sysconfig/kubelet"), ("ExecStart", '%s/kubelet "$DAEMON_ARGS"' % BIN_DIR),
               ("Restart", "always"), ("RestartSec", "2s"), ("StartLimitInterval", "0"), ("KillMode", "process"),
               ("User", "root"), ("CPUAccounting", "true"), ("MemoryAccounting", "true")]
    if cgroup:
        service.append(("Slice", cgroup + ".slice"))
    sections = (("Unit", [("Description", "Kubernetes Kubelet Server"),
                          ("Documentation", "https://github.com/kubernetes/kubernetes"),
                          ("After", "containerd.service")]),
                ("Service", service), ("Install", [("WantedBy", "multi-user.target")]))
    return "\n".join("[%s]\n%s" % (name, "".join("%s=%s\n" % kv for kv in keys)) for name, keys in sections)


def cgroup_slices(config):
    """kops' buildCgroupService: a slice unit for kubeletCgroups, runtimeCgroups and systemCgroups."""
    kubelet = config.get("KubeletConfig") or {}
    names = []
    for field in ("kubeletCgroups", "runtimeCgroups", "systemCgroups"):
        name = (kubelet.get(field) or "").strip("/")
        if name and name not in names:
            names.append(name)
    text = "[Unit]\nDocumentation=man:systemd.special(7)\nBefore=slices.target\nDefaultDependencies=no\n"
    return [("%s.slice" % name, text) for name in names]


def kubelet_files(config, node, server, ca_pem, bootstrap_token=None):
    """The kubelet's configuration, flags, unit, credential provider config and kubeconfig for a node."""
    kubeops = config.get("kubeops") or {}
    spec = kubelet_spec(config, node)
    files = [
        NodeFile(KUBELET_CONFIG, go_yaml(kubelet_configuration(config, spec)), restarts=("kubelet",)),
        NodeFile(SYSCONFIG, kubelet_flags(config, node, spec), restarts=("kubelet",)),
        NodeFile("/etc/systemd/system/kubelet.service", kubelet_unit(config), restarts=("kubelet",)),
    ]
    files += [NodeFile("/etc/systemd/system/%s" % name, text) for name, text in cgroup_slices(config)]
    provider = credential_provider_config(config)
    if provider is not None:
        files.append(NodeFile(CREDENTIAL_PROVIDER_CONFIG, provider, restarts=("kubelet",)))
    if kubeops.get("kubeletBootstrap"):
        if not bootstrap_token:
            raise NodeError("this worker group bootstraps its kubelet with a token",
                            fix="pass the secret %s" % kubeops["kubeletBootstrap"].get("tokenSecret"))
        files.append(NodeFile(KUBELET_BOOTSTRAP_KUBECONFIG, kubeconfig(server, ca_pem, {"token": bootstrap_token}),
                              mode=0o600, restarts=("kubelet",)))
    else:
        files.append(NodeFile(KUBELET_KUBECONFIG, kubeconfig(server, ca_pem, {
            "client-certificate": "/var/lib/kubelet/pki/kubelet-client.crt",
            "client-key": "/var/lib/kubelet/pki/kubelet-client.key"}), mode=0o600, restarts=("kubelet",)))
    return files
