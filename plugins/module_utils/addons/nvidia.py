# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The NVIDIA device plugin (nvidia.addons.k8s.io), when spec.containerd.nvidiaGPU.enabled on the cluster or on
any instance group: the device plugin DaemonSet and the `nvidia` RuntimeClass, both on GPU nodes only (the
kops.k8s.io/gpu=1 label and the nvidia.com/gpu taint); with the cluster's nvidiaGPU.dcgmExporter.enabled, NVIDIA's
DCGM exporter serving GPU metrics on port 9400.  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, pinned_image, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.nvidia_data import DCGM_METRICS

ADDON = "nvidia.addons.k8s.io"
RUNTIME_CLASS = "nvidia"
GPU_NODES = {"kops.k8s.io/gpu": "1"}
GPU_TOLERATIONS = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"
POD_RESOURCES = "/var/lib/kubelet/pod-resources"
DCGM = "dcgm-exporter"
DCGM_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter"
DCGM_PORT = 9400
DCGM_CONFIG_MAP = "exporter-metrics-config-map"
SELINUX = {"level": "s0", "type": "spc_t"}


def _config(spec):
    return (spec.get("containerd") or {}).get("nvidiaGPU") or {}


def applies(facts):
    """kops adds the addon when the cluster or any instance group enables the NVIDIA runtime."""
    return bool(_config(facts.spec).get("enabled")) or any(
        _config(group.get("spec") or {}).get("enabled") for group in facts.groups)


def _device_plugin(facts):
    image = _config(facts.spec).get("image")
    if not image:  # kops reads the cluster's image (completion fills it when the cluster enables the runtime)
        raise AddonError("addon %s: spec.containerd.nvidiaGPU.image is missing from the completed spec (enable "
                         "spec.containerd.nvidiaGPU on the cluster, or set its image)" % ADDON)
    security = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    if facts.selinux:
        security["seLinuxOptions"] = dict(SELINUX)
    labels = {"name": "nvidia-device-plugin-ds"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": KUBE_SYSTEM},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [{
                        "args": ["--fail-on-init-error=false"],  # a node without a GPU keeps the pod running, idle
                        "image": image,
                        "name": "nvidia-device-plugin-ctr",
                        "securityContext": security,
                        "volumeMounts": [{"mountPath": DEVICE_PLUGINS, "name": "device-plugin"}],
                    }],
                    "nodeSelector": dict(GPU_NODES),
                    "priorityClassName": "system-node-critical",
                    "runtimeClassName": RUNTIME_CLASS,
                    "tolerations": [dict(t) for t in GPU_TOLERATIONS],
                    "volumes": [{"hostPath": {"path": DEVICE_PLUGINS}, "name": "device-plugin"}],
                },
            },
            "updateStrategy": {"type": "RollingUpdate"},
        },
    }


def _dcgm_exporter(facts):
    image = pinned_image(ADDON, DCGM_IMAGE)
    # The tag is <DCGM version>-<exporter version>-<base image>: the labels carry the exporter's version.
    labels = {"app.kubernetes.io/component": DCGM, "app.kubernetes.io/name": DCGM,
              "app.kubernetes.io/version": image.rpartition(":")[2].split("-")[1]}
    selector = {"app.kubernetes.io/component": DCGM, "app.kubernetes.io/name": DCGM}
    security = {"capabilities": {"add": ["SYS_ADMIN"]}, "runAsNonRoot": False, "runAsUser": 0}
    if facts.selinux:
        security["seLinuxOptions"] = dict(SELINUX)
    probe = {"httpGet": {"path": "/health", "port": DCGM_PORT}, "initialDelaySeconds": 45}
    return [
        service_account(DCGM, labels=dict(labels)),
        {"apiVersion": "v1", "data": {"metrics": DCGM_METRICS}, "kind": "ConfigMap",
         "metadata": {"name": DCGM_CONFIG_MAP, "namespace": KUBE_SYSTEM}},
        role("Role", "dcgm-exporter-read-cm", [rule([""], ["configmaps"], ["get"], names=[DCGM_CONFIG_MAP])],
             namespace=KUBE_SYSTEM, labels=dict(labels)),
        binding("RoleBinding", DCGM, "Role", "dcgm-exporter-read-cm", [sa_subject(DCGM)], namespace=KUBE_SYSTEM,
                labels=dict(labels)),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": dict(labels), "name": DCGM, "namespace": KUBE_SYSTEM},
            "spec": {"ports": [{"name": "metrics", "port": DCGM_PORT, "protocol": "TCP", "targetPort": DCGM_PORT}],
                     "selector": {"app.kubernetes.io/name": DCGM}, "type": "ClusterIP"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"labels": dict(labels), "name": DCGM, "namespace": KUBE_SYSTEM},
            "spec": {
                "selector": {"matchLabels": dict(selector)},
                "template": {
                    "metadata": {"labels": dict(selector)},
                    "spec": {
                        "containers": [{
                            "args": ["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"],
                            "env": [{"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
                                    {"name": "DCGM_EXPORTER_LISTEN", "value": ":%d" % DCGM_PORT}],
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "livenessProbe": dict(probe, periodSeconds=5),
                            "name": "exporter",
                            "ports": [{"containerPort": DCGM_PORT, "name": "metrics"}],
                            "readinessProbe": probe,
                            "securityContext": security,
                            "volumeMounts": [{"mountPath": POD_RESOURCES, "name": "pod-gpu-resources", "readOnly": True}],
                        }],
                        "nodeSelector": dict(GPU_NODES),
                        "runtimeClassName": RUNTIME_CLASS,
                        "serviceAccountName": DCGM,
                        "tolerations": [dict(t) for t in GPU_TOLERATIONS],
                        "volumes": [{"hostPath": {"path": POD_RESOURCES}, "name": "pod-gpu-resources"}],
                    },
                },
                "updateStrategy": {"type": "RollingUpdate"},
            },
        },
    ]


def objects(facts):
    documents = [
        _device_plugin(facts),
        {"apiVersion": "node.k8s.io/v1", "handler": RUNTIME_CLASS, "kind": "RuntimeClass", "metadata": {"name": RUNTIME_CLASS},
         "scheduling": {"nodeSelector": dict(GPU_NODES), "tolerations": [dict(t) for t in GPU_TOLERATIONS]}},
    ]
    # Only the cluster's dcgmExporter setting counts (kops ignores the instance groups').
    if (_config(facts.spec).get("dcgmExporter") or {}).get("enabled"):
        documents += _dcgm_exporter(facts)
    return documents
