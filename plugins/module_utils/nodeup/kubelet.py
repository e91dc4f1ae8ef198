# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kubelet's files, as kops' nodeup KubeletBuilder writes them (nodeup/pkg/model/kubelet.go)."""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile, kubeconfig

KUBELET_CONFIG = "/var/lib/kubelet/kubelet-config.yaml"
KUBELET_KUBECONFIG = "/var/lib/kubelet/kubeconfig"
KUBELET_BOOTSTRAP_KUBECONFIG = "/var/lib/kubelet/bootstrap-kubeconfig"

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


def kubelet_files(config, node, server, ca_pem, bootstrap_token=None):
    """The kubelet's configuration, flags, unit and kubeconfig for a node."""
    kubeops = config.get("kubeops") or {}
    files = [
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
    return files
