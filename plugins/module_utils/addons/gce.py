# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The GCE addons: the external cloud controller manager (cloud-provider-gcp) and its RBAC."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.aws import (
    CONTROL_PLANE_AFFINITY_TERMS, SELINUX_SPC, cloud_config_volume, cloud_controller_argv)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, role, rule, sa_subject, service_account)

NAME = "cloud-controller-manager"
RECONCILE = {"addonmanager.kubernetes.io/mode": "Reconcile"}
DEPRECATED = ("cloud-provider %s is DEPRECATED in the concern of potential collisions and will be removed in 1.16. "
              "Do not use this role.")


def cloud_controller(facts):
    mounts, volumes = cloud_config_volume()
    pod = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": CONTROL_PLANE_AFFINITY_TERMS}}},
        "containers": [{
            "args": cloud_controller_argv(facts),
            "env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}],
            "image": facts.ccm["image"],
            "imagePullPolicy": "IfNotPresent",
            "livenessProbe": {"failureThreshold": 3,
                              "httpGet": {"host": "127.0.0.1", "path": "/healthz", "port": 10258, "scheme": "HTTPS"},
                              "initialDelaySeconds": 15, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 15},
            "name": NAME,
            "resources": {"requests": {"cpu": str(facts.ccm.get("cpuRequest") or "200m")}},
            "volumeMounts": mounts,
        }],
        "hostNetwork": True,
        "nodeSelector": None,
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": NAME,
        "tolerations": [{"operator": "Exists"}],
        "volumes": volumes,
    }
    if facts.selinux:
        pod["securityContext"] = {"seLinuxOptions": SELINUX_SPC}
    return [
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"labels": {"component": NAME}, "name": NAME, "namespace": KUBE_SYSTEM},
         "spec": {"selector": {"matchLabels": {"component": NAME}},
                  "template": {"metadata": {"labels": {"component": NAME, "tier": "control-plane"}}, "spec": pod},
                  "updateStrategy": {"type": "RollingUpdate"}}},
        service_account(NAME),
        binding("RoleBinding", "cloud-controller-manager:apiserver-authentication-reader", "Role", "extension-apiserver-authentication-reader",
                [sa_subject("cloud-controller-manager", api_group="")], namespace=KUBE_SYSTEM),
        role("ClusterRole", "system:cloud-controller-manager", [
            rule(["", "events.k8s.io"], ["events"], ["create", "patch", "update"]),
            rule([""], ["services/status"], ["patch", "update"]),
            rule(["coordination.k8s.io"], ["leases"], ["create", "get", "list", "watch", "update"]),
            rule(["coordination.k8s.io"], ["leases"], ["get", "update"], names=["cloud-controller-manager"]),
            rule([""], ["endpoints", "serviceaccounts"], ["create", "get", "update"]),
            rule([""], ["nodes"], ["get", "update", "patch"]),
            rule([""], ["namespaces"], ["get"]),
            rule([""], ["nodes/status"], ["patch", "update"]),
            rule([""], ["secrets"], ["create", "delete", "get", "update"]),
            rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
            rule(["*"], ["*"], ["list", "watch"]),
            rule([""], ["serviceaccounts/token"], ["create"]),
        ], labels=RECONCILE),
        role("Role", "system::leader-locking-cloud-controller-manager", [
            rule([""], ["configmaps"], ["watch"]),
            rule([""], ["configmaps"], ["create", "patch", "get", "update"], names=["cloud-controller-manager"]),
        ], namespace=KUBE_SYSTEM, labels=RECONCILE),
        role("ClusterRole", "system:controller:cloud-node-controller", [
            rule([""], ["events"], ["create", "patch", "update"]),
            rule([""], ["nodes"], ["get", "list", "update", "delete", "patch"]),
            rule([""], ["nodes/status"], ["get", "list", "update", "delete", "patch"]),
            rule([""], ["pods"], ["list", "delete"]),
            rule([""], ["pods/status"], ["list", "delete"]),
        ], labels=RECONCILE),
        binding("RoleBinding", "system::leader-locking-cloud-controller-manager", "Role", "system::leader-locking-cloud-controller-manager",
                [sa_subject("cloud-controller-manager")], namespace=KUBE_SYSTEM, labels=RECONCILE),
        binding("ClusterRoleBinding", "system:cloud-controller-manager", "ClusterRole", "system:cloud-controller-manager",
                [sa_subject("cloud-controller-manager")], labels=RECONCILE),
        binding("ClusterRoleBinding", "system:controller:cloud-node-controller", "ClusterRole", "system:controller:cloud-node-controller",
                [sa_subject("cloud-node-controller")], labels=RECONCILE),
        role("ClusterRole", "system:controller:pvl-controller", [
            rule([""], ["events"], ["create", "patch", "update"]),
            rule([""], ["persistentvolumeclaims", "persistentvolumes"], ["list", "watch"]),
        ], labels=RECONCILE),
        role("Role", "gce:cloud-provider", [
            rule([""], ["configmaps"], ["create", "get", "patch", "update", "list", "watch"]),
        ], namespace=KUBE_SYSTEM, labels=RECONCILE),
        role("ClusterRole", "gce:cloud-provider", [
            rule([""], ["events"], ["create", "patch", "update"]),
            rule([""], ["services/status"], ["patch", "update"]),
        ], labels=RECONCILE),
        role("Role", "cloud-provider", [
            rule([""], ["configmaps"], ["create", "get", "patch", "update", "list", "watch"]),
        ], namespace=KUBE_SYSTEM, labels=RECONCILE, annotations={"kubernetes.io/deprecation": DEPRECATED % "role"}),
        role("ClusterRole", "cloud-provider", [
            rule([""], ["events"], ["create", "patch", "update"]),
        ], labels=RECONCILE, annotations={"kubernetes.io/deprecation": DEPRECATED % "clusterrole"}),
        binding("RoleBinding", "gce:cloud-provider", "Role", "gce:cloud-provider",
                [sa_subject("cloud-provider")], namespace=KUBE_SYSTEM, labels=RECONCILE),
        binding("ClusterRoleBinding", "gce:cloud-provider", "ClusterRole", "gce:cloud-provider",
                [sa_subject("cloud-provider")], labels=RECONCILE),
    ]
