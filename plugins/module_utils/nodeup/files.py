# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A node's files, rendered from its nodeup config (what kops' nodeup builders write).

Pure functions: nodeup config (dict) + node facts -> [NodeFile].  Every value
comes from the config; nothing here decides a version, a CIDR or a flag the
controller did not hand over.  Each file names the systemd units that must
restart when it changes, so only those restart.
"""

from __future__ import annotations

import base64
import json

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import hooks, manifests

# kops' nodeup/pkg/model/sysctls.go: the general settings every node gets.
SYSCTLS = (
    "# Kubernetes settings (kubeops.kops, as kops' nodeup writes them)",
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
    "net.bridge.bridge-nf-call-iptables=1",
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    "vm.overcommit_memory=1",
    "kernel.panic=10",
    "kernel.panic_on_oops=1",
    "fs.inotify.max_user_instances=8192",
    "fs.inotify.max_user_watches=524288",
    "net.core.somaxconn=32768",
    "net.ipv4.neigh.default.gc_thresh1=0",
    "net.ipv4.neigh.default.gc_thresh2=4096",
    "net.ipv4.neigh.default.gc_thresh3=8192",
)
KERNEL_MODULES = ("overlay", "br_netfilter")
KUBELET_CONFIG = "/var/lib/kubelet/kubelet-config.yaml"
KUBELET_KUBECONFIG = "/var/lib/kubelet/kubeconfig"
KUBELET_BOOTSTRAP_KUBECONFIG = "/var/lib/kubelet/bootstrap-kubeconfig"
KUBE_ROUTER_KUBECONFIG = "/var/lib/kube-router/kubeconfig"  # networking.kuberouter's DaemonSet mounts it
# KubeletConfig (kops field) -> KubeletConfiguration (kubelet.config.k8s.io/v1beta1) field.
KUBELET_FIELDS = {
    "cgroupDriver": "cgroupDriver", "cgroupRoot": "cgroupRoot", "clusterDomain": "clusterDomain",
    "enableDebuggingHandlers": "enableDebuggingHandlers", "podManifestPath": "staticPodPath",
    "protectKernelDefaults": "protectKernelDefaults", "shutdownGracePeriod": "shutdownGracePeriod",
    "shutdownGracePeriodCriticalPods": "shutdownGracePeriodCriticalPods", "maxPods": "maxPods",
    "podPidsLimit": "podPidsLimit", "serializeImagePulls": "serializeImagePulls",
    "imageGCHighThresholdPercent": "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent": "imageGCLowThresholdPercent", "readOnlyPort": "readOnlyPort",
    "anonymousAuth": None, "authorizationMode": None,
}


class NodeFile(object):
    """One file: content, mode, the units to restart when it changes; if_missing files are only created."""

    __slots__ = ("path", "content", "mode", "restarts", "if_missing")

    def __init__(self, path, content, mode=0o644, restarts=(), if_missing=False):
        self.path = path
        self.content = content if isinstance(content, bytes) else content.encode("utf-8")
        self.mode = mode
        self.restarts = tuple(restarts)
        self.if_missing = if_missing


def _eviction(text):
    """kops' evictionHard string (a<b,c<d) -> the KubeletConfiguration map."""
    result = {}
    for item in (text or "").split(","):
        if "<" in item:
            key, value = item.split("<", 1)
            result[key.strip()] = value.strip()
    return result


def kubelet_configuration(kubelet):
    """The KubeletConfiguration document for the config's KubeletConfig."""
    document = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                "authentication": {"anonymous": {"enabled": bool(kubelet.get("anonymousAuth", False))},
                                   "webhook": {"enabled": True},
                                   "x509": {"clientCAFile": "/srv/kubernetes/ca.crt"}},
                "authorization": {"mode": "Webhook"},
                "rotateCertificates": True, "serverTLSBootstrap": False}
    for source, target in KUBELET_FIELDS.items():
        if target and kubelet.get(source) is not None:
            document[target] = kubelet[source]
    if kubelet.get("clusterDNS"):
        document["clusterDNS"] = [s.strip() for s in str(kubelet["clusterDNS"]).split(",")]
    if kubelet.get("evictionHard"):
        document["evictionHard"] = _eviction(kubelet["evictionHard"])
    if kubelet.get("featureGates"):
        document["featureGates"] = {k: str(v).lower() == "true" for k, v in kubelet["featureGates"].items()}
    if kubelet.get("taints"):
        document["registerWithTaints"] = [_taint(t) for t in kubelet["taints"]]
    return document


def _taint(text):
    key_value, _sep, effect = text.partition(":")
    key, _sep, value = key_value.partition("=")
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint


def kubelet_flags(config, node):
    """What stays on the command line (kops' /etc/sysconfig/kubelet): kubeconfigs, labels, provider."""
    kubelet = config.get("KubeletConfig") or {}
    flags = ["--config=%s" % KUBELET_CONFIG, "--kubeconfig=%s" % KUBELET_KUBECONFIG,
             "--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
             "--v=%s" % kubelet.get("logLevel", 2)]
    if (config.get("kubeops") or {}).get("kubeletBootstrap"):
        flags.append("--bootstrap-kubeconfig=%s" % KUBELET_BOOTSTRAP_KUBECONFIG)
    bootstrap_service = (config.get("kubeops") or {}).get("bootstrapService") or {}
    if bootstrap_service and not bootstrap_service.get("serverCert") and node.get("name"):
        # The bootstrap service's certificate names the node (system:node:<instance id>, kops' verifier):
        # the kubelet registers under that name, as the node authorizer requires.
        flags.append("--hostname-override=%s" % node["name"])
    if kubelet.get("cloudProvider"):
        flags.append("--cloud-provider=%s" % kubelet["cloudProvider"])
    labels = kubelet.get("nodeLabels") or {}
    if labels:
        flags.append("--node-labels=%s" % ",".join("%s=%s" % (k, labels[k]) for k in sorted(labels)))
    if node.get("address"):
        flags.append("--node-ip=%s" % node["address"])
    return 'KUBELET_ARGS="%s"\n' % " ".join(flags)


def containerd_toml(config):
    """/etc/containerd/config.toml (schema version 2, read by containerd 1.6 to 2.x)."""
    containerd = config.get("containerdConfig") or {}
    systemd_cgroup = (config.get("KubeletConfig") or {}).get("cgroupDriver") == "systemd"
    lines = [
        "version = 2",
        "",
        "[plugins]",
        '  [plugins."io.containerd.grpc.v1.cri"]',
        '    sandbox_image = "%s"' % containerd.get("sandboxImage", "registry.k8s.io/pause:3.10.1"),
        '    [plugins."io.containerd.grpc.v1.cri".containerd]',
        '      default_runtime_name = "runc"',
        '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '        runtime_type = "io.containerd.runc.v2"',
        '        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        "          SystemdCgroup = %s" % ("true" if systemd_cgroup else "false"),
        '    [plugins."io.containerd.grpc.v1.cri".cni]',
        '      bin_dir = "/opt/cni/bin"',
        '      conf_dir = "/etc/cni/net.d"',
    ]
    return "\n".join(lines) + "\n"


def containerd_dropin(config):
    level = (config.get("containerdConfig") or {}).get("logLevel", "info")
    return "[Service]\nEnvironment=\"CONTAINERD_LOG_LEVEL=%s\"\nExecStart=\nExecStart=/usr/bin/containerd --log-level %s\n" \
        % (level, level)


def kubeconfig(server, ca_pem, user, user_name="kubelet", embed_ca=False):
    """A kubeconfig (JSON is YAML): a client certificate or a bootstrap token.

    Static pods see only their own host paths, so theirs carry the CA inline (embed_ca).
    """
    cluster = {"server": server}
    if embed_ca:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem.encode("ascii")).decode("ascii")
    else:
        cluster["certificate-authority"] = "/srv/kubernetes/ca.crt"
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "default",
        "clusters": [{"name": "local", "cluster": cluster}],
        "contexts": [{"name": "default", "context": {"cluster": "local", "user": user_name}}],
        "users": [{"name": user_name, "user": user}],
    }, indent=2, sort_keys=True) + "\n"


def _client_files(directory):
    return {"client-certificate": "%s/client.crt" % directory, "client-key": "%s/client.key" % directory}


def static_pod_files(config, ca_pem, worker_server):
    """The static pods, their kubeconfigs and the files they read (kops' control-plane builders)."""
    control_plane = bool(config.get("ControlPlaneConfig"))
    files = []
    for name, pod in sorted(manifests.static_pods(config).items()):
        files.append(NodeFile("/etc/kubernetes/manifests/%s.manifest" % name,
                              json.dumps(pod, indent=2, sort_keys=True) + "\n"))
        # kops creates the log files the pods mount; never truncated afterwards.
        files.append(NodeFile("/var/log/%s.log" % name, "", mode=0o400, if_missing=True))
    if config.get("APIServerConfig"):
        files.append(NodeFile(manifests.KAPI + "/service-account.pub",
                              config["APIServerConfig"].get("ServiceAccountPublicKeys") or "", mode=0o600))
    if config.get("ControlPlaneConfig"):
        for component in ("kube-controller-manager", "kube-scheduler"):
            directory = "/var/lib/%s" % component
            files.append(NodeFile(directory + "/kubeconfig", kubeconfig(
                "https://127.0.0.1", ca_pem, _client_files(directory), user_name=component, embed_ca=True),
                mode=0o400))
    if config.get("KubeProxy"):
        if control_plane:
            server, user = "https://127.0.0.1", _client_files("/var/lib/kube-proxy")
        elif (config.get("kubeops") or {}).get("bootstrapService"):
            # The bootstrap service issued kube-proxy its own certificate, as kops-controller does.
            server, user = worker_server, _client_files("/var/lib/kube-proxy")
        else:
            server = worker_server
            user = {"client-certificate": manifests.KUBELET_CLIENT_CERT, "client-key": manifests.KUBELET_CLIENT_CERT}
        files.append(NodeFile(manifests.PROXY_KUBECONFIG, kubeconfig(server, ca_pem, user, user_name="kube-proxy",
                                                                     embed_ca=True), mode=0o400))
    if "kuberouter" in (config.get("Networking") or {}) and (control_plane or (config.get("kubeops") or {}).get(
            "bootstrapService")):
        # kube-router's pods (hostPath) read it, as kops' nodeup writes it; on a worker its certificate comes from the
        # bootstrap service (clouds without one: not written, cluster_update warns).
        files.append(NodeFile(KUBE_ROUTER_KUBECONFIG, kubeconfig(
            "https://127.0.0.1" if control_plane else worker_server, ca_pem, _client_files("/var/lib/kube-router"),
            user_name="kube-router", embed_ca=True), mode=0o400))
    return files


# The base unit, so a containerd from its release tarball (unpacked over /usr) runs like Debian's package.
CONTAINERD_UNIT = """[Unit]
Description=containerd container runtime (kubeops.kops)
Documentation=https://containerd.io
After=network.target local-fs.target

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
LimitNOFILE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
"""

KUBELET_UNIT = """[Unit]
Description=Kubernetes Kubelet (kubeops.kops)
Documentation=https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/
After=containerd.service
Wants=containerd.service

[Service]
EnvironmentFile=/etc/sysconfig/kubelet
ExecStart=/usr/local/bin/kubelet $KUBELET_ARGS
Restart=always
RestartSec=2s
StartLimitInterval=0
KillMode=process

[Install]
WantedBy=multi-user.target
"""


# kops' UpdateServiceBuilder (Debian family): unattended upgrades unless updatePolicy is external.
AUTO_UPGRADES = {"external": 'APT::Periodic::Enable "0";\n',
                 "automatic": 'APT::Periodic::Update-Package-Lists "1";\nAPT::Periodic::Unattended-Upgrade "1";\n\n'
                              'APT::Periodic::AutocleanInterval "7";\n'}


def node_files(config, node, bootstrap_token=None):
    """[NodeFile] for a node: config is its nodeup config, node = {"name", "address"}."""
    kubeops = config.get("kubeops") or {}
    api = kubeops.get("apiServer") or {}
    server = "https://%s:%s" % (api.get("host", "127.0.0.1"), api.get("port", 443))
    ca_pem = (config.get("CAs") or {}).get("kubernetes-ca", "")
    sysctls = list(SYSCTLS) + [s for s in config.get("SysctlParameters") or [] if s]
    files = [
        NodeFile("/etc/sysctl.d/99-k8s-general.conf", "\n".join(sysctls) + "\n", restarts=("systemd-sysctl",)),
        NodeFile("/etc/modules-load.d/kubeops-kops.conf", "\n".join(KERNEL_MODULES) + "\n"),
        NodeFile("/etc/containerd/config.toml", containerd_toml(config), restarts=("containerd",)),
        NodeFile("/etc/systemd/system/containerd.service", CONTAINERD_UNIT, restarts=("containerd",)),
        NodeFile("/etc/systemd/system/containerd.service.d/10-kubeops.conf", containerd_dropin(config),
                 restarts=("containerd",)),
        NodeFile("/etc/crictl.yaml", "runtime-endpoint: unix:///run/containerd/containerd.sock\n"),
        NodeFile("/etc/apt/apt.conf.d/20auto-upgrades",
                 AUTO_UPGRADES["external" if config.get("UpdatePolicy") == "external" else "automatic"]),
        NodeFile("/srv/kubernetes/ca.crt", ca_pem, restarts=("kubelet",)),
        NodeFile(KUBELET_CONFIG, json.dumps(kubelet_configuration(config.get("KubeletConfig") or {}), indent=2,
                                            sort_keys=True) + "\n", restarts=("kubelet",)),
        NodeFile("/etc/sysconfig/kubelet", kubelet_flags(config, node), restarts=("kubelet",)),
        NodeFile("/etc/systemd/system/kubelet.service", KUBELET_UNIT, restarts=("kubelet",)),
    ]
    if kubeops.get("kubeletBootstrap"):
        if not bootstrap_token:
            raise ValueError("this worker group bootstraps its kubelet with a token: pass the secret %s"
                             % kubeops["kubeletBootstrap"].get("tokenSecret"))
        files.append(NodeFile(KUBELET_BOOTSTRAP_KUBECONFIG, kubeconfig(server, ca_pem, {"token": bootstrap_token}),
                              mode=0o600, restarts=("kubelet",)))
    else:
        files.append(NodeFile(KUBELET_KUBECONFIG, kubeconfig(server, ca_pem, {
            "client-certificate": "/var/lib/kubelet/pki/kubelet-client.crt",
            "client-key": "/var/lib/kubelet/pki/kubelet-client.key"}), mode=0o600, restarts=("kubelet",)))
    files.extend(static_pod_files(config, ca_pem, server))
    # Hook units restart (run again, they are oneshot) when they change; the role enables them.
    files.extend(NodeFile("/etc/systemd/system/%s" % unit, text, restarts=(unit,))
                 for unit, text in hooks.hook_units(config))
    for asset in config.get("FileAssets") or []:
        files.append(NodeFile(asset["path"], asset.get("content", ""),
                              mode=int(str(asset.get("mode") or "0644"), 8)))
    return files
