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

import platform

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import (containerd, goyaml, hooks, kops_kubeconfig,
                                                                          kubelet, manifests, networking)
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile, kubeconfig

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
KUBE_ROUTER_KUBECONFIG = "/var/lib/kube-router/kubeconfig"  # networking.kuberouter's DaemonSet mounts it


def _client_files(directory):
    return {"client-certificate": "%s/client.crt" % directory, "client-key": "%s/client.key" % directory}


def node_arch():
    """This machine's architecture as Kubernetes names it (amd64, arm64)."""
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def static_pod_files(config, ca_pem, worker_server, arch="amd64"):
    """The static pods and the files they read (kops' control-plane builders).

    The control plane's kubeconfigs carry a certificate the node issues itself: node_certificates writes them.
    """
    control_plane = bool(config.get("ControlPlaneConfig"))
    cas = config.get("CAs") or {}
    files = []
    for name, pod in sorted(manifests.static_pods(config, arch).items()):
        files.append(NodeFile("/etc/kubernetes/manifests/%s.manifest" % name, goyaml.dumps(pod)))
        # kops creates the log files the pods mount; never truncated afterwards.
        files.append(NodeFile("/var/log/%s.log" % name, "", mode=0o400, if_missing=True))
    api_server_config = config.get("APIServerConfig")
    if api_server_config:
        files += [NodeFile(manifests.KAPI + "/service-account.pub", api_server_config.get("ServiceAccountPublicKeys") or "",
                           mode=0o600),
                  NodeFile(manifests.KAPI + "/etcd-ca.crt", cas.get("etcd-clients-ca") or ""),
                  NodeFile(manifests.KAPI + "/apiserver-aggregator-ca.crt", cas.get("apiserver-aggregator-ca") or "")]
        health = manifests.health_authentication_config(config)
        if health:
            files.append(NodeFile(manifests.HEALTH_AUTHN_CONFIG, health, mode=0o600))
        authn = kops_kubeconfig.authn_config(api_server_config, ca_pem)
        if authn:
            files.append(NodeFile(manifests.AUTHN_CONFIG, authn[0], mode=authn[1]))
    if control_plane and not any(asset.get("path") == manifests.SCHEDULER_CONFIG
                                 for asset in config.get("FileAssets") or []):
        # kops' nodeup writes the scheduler's config itself when the cluster's static file is not in the config.
        files.append(NodeFile(manifests.SCHEDULER_CONFIG, manifests.kube_scheduler_config(config), mode=0o400))
    kubeops = config.get("kubeops") or {}
    # kube-proxy's own certificate: issued by the bootstrap service, or handed over by the controller that signed it
    # for the host (a metal worker, providers/metal/worker_certificates.py).
    issued = bool(kubeops.get("bootstrapService") or kubeops.get("certificatesHandedOver"))
    if config.get("KubeProxy") and not control_plane:
        server = worker_server
        if issued:
            # The bootstrap service issued kube-proxy its own certificate, as kops-controller does.
            user = _client_files("/var/lib/kube-proxy")
        else:
            user = {"client-certificate": manifests.KUBELET_CLIENT_CERT, "client-key": manifests.KUBELET_CLIENT_CERT}
        files.append(NodeFile(manifests.PROXY_KUBECONFIG, kubeconfig(server, ca_pem, user, user_name="kube-proxy",
                                                                     embed_ca=True), mode=0o400))
    if "kuberouter" in (config.get("Networking") or {}) and (control_plane or kubeops.get("bootstrapService")):
        # kube-router's pods (hostPath) read it, as kops' nodeup writes it; on a worker its certificate comes from the
        # bootstrap service (clouds without one: not written, cluster_update warns).
        files.append(NodeFile(KUBE_ROUTER_KUBECONFIG, kubeconfig(
            "https://127.0.0.1" if control_plane else worker_server, ca_pem, _client_files("/var/lib/kube-router"),
            user_name="kube-router", embed_ca=True), mode=0o400))
    return files


# kops' UpdateServiceBuilder (Debian family): unattended upgrades unless updatePolicy is external.
AUTO_UPGRADES = {"external": 'APT::Periodic::Enable "0";\n',
                 "automatic": 'APT::Periodic::Update-Package-Lists "1";\nAPT::Periodic::Unattended-Upgrade "1";\n\n'
                              'APT::Periodic::AutocleanInterval "7";\n'}


def node_files(config, node, bootstrap_token=None):
    """[NodeFile] for a node: config is its nodeup config, node = {"name", "address"} and what the node knows of
    itself: "arch" (default: this machine's), "distribution" (kops' name: debian12, flatcar, ...),
    "containerd_version" (of a containerd the image or a distribution package brings), "gpu_vendor" ("nvidia" where
    an NVIDIA GPU is present), "primary_interface" (the default route's)."""
    kubeops = config.get("kubeops") or {}
    api = kubeops.get("apiServer") or {}
    server = "https://%s:%s" % (api.get("host", "127.0.0.1"), api.get("port", 443))
    ca_pem = (config.get("CAs") or {}).get("kubernetes-ca", "")
    sysctls = list(SYSCTLS) + [s for s in config.get("SysctlParameters") or [] if s]
    files = [
        NodeFile("/etc/sysctl.d/99-k8s-general.conf", "\n".join(sysctls) + "\n", restarts=("systemd-sysctl",)),
        NodeFile("/etc/modules-load.d/kubeops-kops.conf", "\n".join(KERNEL_MODULES) + "\n"),
        NodeFile("/etc/apt/apt.conf.d/20auto-upgrades",
                 AUTO_UPGRADES["external" if config.get("UpdatePolicy") == "external" else "automatic"]),
        NodeFile("/srv/kubernetes/ca.crt", ca_pem, mode=0o600, restarts=("kubelet",)),  # kops' SecretBuilder: 0600
    ]
    files[2:2] = containerd.containerd_files(config, node)
    files += kubelet.kubelet_files(config, node, server, ca_pem, bootstrap_token)
    files.extend(static_pod_files(config, ca_pem, server, node.get("arch") or node_arch()))
    files.extend(networking.networking_files(config, node))
    # Hook units restart (run again, they are oneshot) when they change; the role enables them.
    files.extend(NodeFile("/etc/systemd/system/%s" % unit, text, restarts=(unit,))
                 for unit, text in hooks.hook_units(config))
    for asset in config.get("FileAssets") or []:
        # kops' FileAssetsBuilder: 0440 unless the asset names a mode.
        files.append(NodeFile(asset["path"], asset.get("content", ""),
                              mode=int(str(asset.get("mode") or "0440"), 8)))
    return files
