# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""node-problem-detector (node-problem-detector.addons.k8s.io), when spec.nodeProblemDetector.enabled: a DaemonSet
on every Linux node reporting kernel, systemd and resource problems as node conditions and events.  Image and
resources come from the completed spec (completion fills kops' defaults).  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import KUBE_SYSTEM, binding, sa_subject, service_account
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError

ADDON = "node-problem-detector.addons.k8s.io"
NAME = "node-problem-detector"
# The monitors node-problem-detector's image ships under /config.
MONITORS = (
    ("system-log-monitor", ("kernel-monitor", "systemd-monitor")),
    ("custom-plugin-monitor", ("kernel-monitor-counter", "systemd-monitor-counter")),
    ("system-stats-monitor", ("system-stats-monitor",)),
)
# (volume, host path, hostPath type or None, mount path, read only, mount propagation)
HOST_PATHS = (
    ("log", "/var/log/", None, "/var/log", True, None),
    ("kmsg", "/dev/kmsg", None, "/dev/kmsg", True, None),
    ("localtime", "/etc/localtime", "FileOrCreate", "/etc/localtime", True, None),  # the host's time zone in logs
    ("machine-id", "/etc/machine-id", "File", "/etc/machine-id", True, None),
    ("systemd", "/run/systemd/system/", "", "/run/systemd/system", None, None),
    ("dbus", "/var/run/dbus/", "", "/var/run/dbus/", None, "Bidirectional"),
)


def _quantity(value):
    """A resource quantity as kops' template writes it unquoted: a whole number is a YAML integer."""
    text = str(value)
    return int(text) if text.isdigit() else text


def _mount(name, path, read_only, propagation):
    mount = {"mountPath": path, "name": name}
    if read_only is not None:
        mount["readOnly"] = read_only
    if propagation:
        mount["mountPropagation"] = propagation
    return mount


def _volume(name, path, path_type):
    host_path = {"path": path}
    if path_type is not None:
        host_path["type"] = path_type
    return {"hostPath": host_path, "name": name}


def objects(facts):
    config = facts.section("nodeProblemDetector")
    for field in ("image", "cpuRequest", "memoryRequest", "memoryLimit"):
        if not config.get(field):
            raise AddonError("addon %s: spec.nodeProblemDetector.%s is missing from the completed spec "
                             "(complete the cluster spec first)" % (ADDON, field))
    labels = {"app": NAME}
    limits = {"memory": _quantity(config["memoryLimit"])}
    if config.get("cpuLimit"):
        limits["cpu"] = _quantity(config["cpuLimit"])
    command = ["/node-problem-detector", "--logtostderr"] + [
        "--config.%s=%s" % (flag, ",".join("/config/%s.json" % monitor for monitor in monitors))
        for flag, monitors in MONITORS]
    return [
        service_account(NAME, labels=dict(labels)),
        binding("ClusterRoleBinding", NAME, "ClusterRole", "system:node-problem-detector", [sa_subject(NAME)],
                labels=dict(labels)),
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"labels": dict(labels), "name": NAME, "namespace": KUBE_SYSTEM},
            "spec": {
                "selector": {"matchLabels": dict(labels)},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {
                        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [
                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}},
                        "containers": [{
                            "command": command,
                            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                            "image": config["image"],
                            "name": NAME,
                            "resources": {"limits": limits,
                                          "requests": {"cpu": _quantity(config["cpuRequest"]),
                                                       "memory": _quantity(config["memoryRequest"])}},
                            "securityContext": {"privileged": True},
                            "volumeMounts": [_mount(name, mount, read_only, propagation)
                                             for name, _path, _type, mount, read_only, propagation in HOST_PATHS],
                        }],
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": NAME,
                        "tolerations": [
                            {"effect": "NoExecute", "operator": "Exists"},
                            {"effect": "NoSchedule", "operator": "Exists"},
                            {"key": "CriticalAddonsOnly", "operator": "Exists"},
                        ],
                        "volumes": [_volume(name, path, path_type) for name, path, path_type, _m, _r, _p in HOST_PATHS],
                    },
                },
            },
        },
    ]
