# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kopeio networking (networking.kope.io), when spec.networking.kopeio is set: the kopeio networking agent on
every node (host network, PID and IPC), routing each node's pod range; kops' manifest is static (no cluster
value in it).  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import KUBE_SYSTEM, binding, role, rule, service_account

ADDON = "networking.kope.io"
NAME = "kopeio-networking-agent"
ROLE = "kopeio:networking-agent"
# kops ships this image in a plain manifest (addons/networking.kope.io/k8s-1.12.yaml, not a template), which
# hack/gen_addon_images.py does not read; test_optional_addons compares the whole manifest with kops' (KOPS_SOURCE).
IMAGE = "kopeio/networking-agent:1.0.20181028"
ADDON_LABEL = {"k8s-addon": ADDON}


def objects(facts):
    del facts  # the same on every cluster
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"labels": dict(ADDON_LABEL), "name": NAME, "namespace": KUBE_SYSTEM},
            "spec": {
                "selector": {"matchLabels": {"name": NAME}},
                "template": {
                    "metadata": {"labels": {"name": NAME}},
                    "spec": {
                        "containers": [{
                            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                            "image": IMAGE,
                            "name": "networking-agent",
                            "resources": {"limits": {"memory": "100Mi"}, "requests": {"cpu": "50m", "memory": "100Mi"}},
                            "securityContext": {"privileged": True},
                            "volumeMounts": [{"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True}],
                        }],
                        "hostIPC": True,
                        "hostNetwork": True,
                        "hostPID": True,
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": NAME,
                        "tolerations": [{"effect": "NoSchedule", "operator": "Exists"},
                                        {"effect": "NoExecute", "operator": "Exists"}],
                        "volumes": [{"hostPath": {"path": "/lib/modules"}, "name": "lib-modules"}],
                    },
                },
            },
        },
        service_account(NAME, labels=dict(ADDON_LABEL)),
        role("ClusterRole", ROLE, [rule([""], ["nodes"], ["get", "list", "watch", "patch"]),
                                   rule([""], ["nodes/status"], ["patch"])], labels=dict(ADDON_LABEL)),
        # kops binds the service account as a User by its full name (equivalent to a ServiceAccount subject).
        binding("ClusterRoleBinding", ROLE, "ClusterRole", ROLE,
                [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                  "name": "system:serviceaccount:%s:%s" % (KUBE_SYSTEM, NAME)}], labels=dict(ADDON_LABEL)),
    ]
