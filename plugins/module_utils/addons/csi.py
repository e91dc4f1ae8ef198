# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The Kubernetes CSI sidecars (external provisioner, attacher, resizer, snapshotter, node-driver-registrar,
livenessprobe) as the CSI drivers' manifests run them beside their driver: one builder for the container, used
by the EBS (ebs_csi.py) and GCE PD (gcp_pd_csi.py) drivers, which differ in the flags, sockets and settings each
gives its sidecars."""

from __future__ import annotations

SIG_STORAGE = "registry.k8s.io/sig-storage/"
# What a sidecar that elects a leader answers its liveness probe on (the GCE PD driver's sidecars).
LEADER_ELECTION_PROBE = {"failureThreshold": 1, "httpGet": {"path": "/healthz/leader-election", "port": "http-endpoint"},
                         "initialDelaySeconds": 10, "periodSeconds": 20, "timeoutSeconds": 10}


def port(number, name, protocol="TCP"):
    """A container port (protocol None: the API's default, left unwritten as the manifests leave it)."""
    found = {"containerPort": number, "name": name}
    if protocol:
        found["protocol"] = protocol
    return found


def sidecar(name, image, args, mounts, env=None, ports=None, liveness=None, resources=None, security=None,
            pull_policy=None, termination_message_policy=None):
    """One sidecar container: its name, image, flags and socket mounts, and each optional setting when given."""
    container = {"args": list(args), "image": image, "name": name, "volumeMounts": [dict(m) for m in mounts]}
    for key, value in (("env", env), ("ports", ports), ("livenessProbe", liveness), ("resources", resources),
                       ("securityContext", security), ("imagePullPolicy", pull_policy),
                       ("terminationMessagePolicy", termination_message_policy)):
        if value is not None:
            container[key] = value
    return container
