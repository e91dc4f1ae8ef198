# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS EBS CSI driver (ebs.csi.aws.com), as kops deploys it: the controller Deployment on the control
plane (instance-role credentials, host network), the node DaemonSet, their RBAC, metrics Services and the
CSIDriver.  The driver version is the completed spec's cloudConfig.awsEBSCSIDriver.version; the sidecar
images are kops' pins (image_data).  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.addons import csi, service_accounts
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError

ADDON = "aws-ebs-csi-driver.addons.k8s.io"
DRIVER_IMAGE = "registry.k8s.io/provider-aws/aws-ebs-csi-driver"
IPV6_ENV = {"name": "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "value": "IPv6"}
# The controller's metrics ports: one per container, in kops' numbering (3306 is the snapshotter's).
SNAPSHOTTER_PORT = 3306
SIDECAR_RESOURCES = {"limits": {"memory": "256Mi"}, "requests": {"cpu": "10m", "memory": "40Mi"}}
PLUGIN_PROXY_SOCKET = "/var/lib/csi/sockets/pluginproxy/csi.sock"
PLUGIN_PROXY_MOUNTS = [{"mountPath": "/var/lib/csi/sockets/pluginproxy/", "name": "socket-dir"}]


def pinned(repository):
    return pinned_image(ADDON, repository)


def objects(facts):
    config = facts.section("cloudConfig").get("awsEBSCSIDriver") or {}
    version = config.get("version")
    if not version:
        raise AddonError("spec.cloudConfig.awsEBSCSIDriver.version is missing from the completed spec "
                         "(complete the cluster spec first)")
    qps, burst = str(config.get("kubeAPIQPS") or "20"), str(config.get("kubeAPIBurst") or "100")
    node_host_network = bool(config.get("hostNetwork"))
    found = _objects(facts, version, qps, burst, node_host_network)
    node, controller = _workload(found, "DaemonSet"), _workload(found, "Deployment")
    for workload in (node, controller):
        pod = workload["spec"]["template"]
        if config.get("podAnnotations"):
            pod["metadata"]["annotations"] = {k: str(v) for k, v in config["podAnnotations"].items()}
        plugin = pod["spec"]["containers"][0]
        if facts.ipv6_only:
            plugin["env"].insert(0, dict(IPV6_ENV))
    if node_host_network:  # the zone label is not required of host-network nodes
        terms = node["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
        terms[:] = [t for t in terms if t["key"] != "topology.kubernetes.io/zone"]
    if config.get("volumeAttachLimit"):
        args = node["spec"]["template"]["spec"]["containers"][0]["args"]
        args.insert(3, "--volume-attach-limit=%s" % config["volumeAttachLimit"])
    if facts.section("snapshotController").get("enabled"):
        containers = controller["spec"]["template"]["spec"]["containers"]
        containers.insert(3, _snapshotter(qps, burst))
    if service_accounts.irsa(facts.spec):
        # kops: the controller runs on workers as its own IAM role (no host network, no control-plane terms).
        pod = controller["spec"]["template"]["spec"]
        del pod["hostNetwork"]
        pod["tolerations"] = service_accounts.controller_tolerations(facts)
        required = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        for term in required["nodeSelectorTerms"]:
            term["matchExpressions"] = [e for e in term["matchExpressions"] if not e["key"].startswith("node-role.")]
    kubernetes = semver.kubernetes_version(facts.spec["kubernetesVersion"].lstrip("v"))
    if (kubernetes.major, kubernetes.minor, kubernetes.patch) >= (1, 35, 0):  # kops IsKubernetesGTE ignores pre-releases
        next(d for d in found if d["kind"] == "CSIDriver")["spec"]["nodeAllocatableUpdatePeriodSeconds"] = 10
    return found


def _workload(found, kind):
    return next(d for d in found if d["kind"] == kind)


def _sidecar(image, args, mounts, name=None, env=None, ports=None, liveness=None, seccomp=False):
    """A sidecar as the EBS driver's chart runs each: pulled if not present, its own resources, no privilege
    escalation, a read-only root (and the runtime's seccomp profile for the controller's), logs as the
    termination message."""
    security = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True}
    if seccomp:
        security["seccompProfile"] = {"type": "RuntimeDefault"}
    return csi.sidecar(name or image, pinned(csi.SIG_STORAGE + image), args, mounts, env=env,
                       ports=ports, liveness=liveness, resources=dict(SIDECAR_RESOURCES), security=security,
                       pull_policy="IfNotPresent", termination_message_policy="FallbackToLogsOnError")


def _controller_sidecar(image, args, metrics_port, metrics_name, vac_fallback=False):
    """A controller sidecar: the driver's socket through ADDRESS, its metrics port, the seccomp profile."""
    env = [{"name": "ADDRESS", "value": PLUGIN_PROXY_SOCKET}]
    if vac_fallback:
        env.append({"name": "ENABLE_VAC_FALLBACK", "value": "true"})
    return _sidecar(image, args, PLUGIN_PROXY_MOUNTS, env=env, ports=[csi.port(metrics_port, metrics_name)], seccomp=True)


def _snapshotter(qps, burst):
    return _controller_sidecar(
        "csi-snapshotter",
        ["--csi-address=$(ADDRESS)", "--leader-election=true", "--v=5", "--extra-create-metadata",
         "--kube-api-qps=" + qps, "--kube-api-burst=" + burst, "--worker-threads=100",
         "--retry-interval-max=30m", "--http-endpoint=0.0.0.0:%d" % SNAPSHOTTER_PORT],
        SNAPSHOTTER_PORT, "metrics-snap")


def _objects(facts, version, qps, burst, node_host_network):
    """The objects for the default configuration (no snapshotter, IPv4, instance-role credentials)."""
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-controller",
                "namespace": "kube-system",
            },
            "spec": {
                "maxUnavailable": 1,
                "selector": {
                    "matchLabels": {
                        "app": "ebs-csi-controller",
                        "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                        "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "automountServiceAccountToken": True,
            "kind": "ServiceAccount",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-controller-sa",
                "namespace": "kube-system",
            },
        },
        {
            "apiVersion": "v1",
            "automountServiceAccountToken": True,
            "kind": "ServiceAccount",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-node-sa",
                "namespace": "kube-system",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-external-attacher-role",
            },
            "rules": [
                {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "patch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": ["storage.k8s.io"],
                    "resources": ["volumeattachments"],
                    "verbs": ["get", "list", "watch", "patch"],
                },
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments/status"], "verbs": ["patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-node-role",
            },
            "rules": [
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch", "list", "watch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-external-provisioner-role",
            },
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["persistentvolumes"],
                    "verbs": ["get", "list", "watch", "create", "patch", "delete"],
                },
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch", "update"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshots"],
                    "verbs": ["get", "list", "watch", "update"],
                },
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshotcontents"],
                    "verbs": ["get", "list"],
                },
                {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattributesclasses"], "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-external-resizer-role",
            },
            "rules": [
                {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "patch"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims/status"], "verbs": ["patch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {
                    "apiGroups": ["storage.k8s.io"],
                    "resources": ["volumeattributesclasses"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-external-snapshotter-role",
            },
            "rules": [
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshotclasses"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshotcontents"],
                    "verbs": ["get", "list", "watch", "update", "patch"],
                },
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshotcontents/status"],
                    "verbs": ["update", "patch"],
                },
                {
                    "apiGroups": ["groupsnapshot.storage.k8s.io"],
                    "resources": ["volumegroupsnapshotclasses"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["groupsnapshot.storage.k8s.io"],
                    "resources": ["volumegroupsnapshotcontents"],
                    "verbs": ["get", "list", "watch", "update", "patch"],
                },
                {
                    "apiGroups": ["groupsnapshot.storage.k8s.io"],
                    "resources": ["volumegroupsnapshotcontents/status"],
                    "verbs": ["update", "patch"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-attacher-binding",
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "ebs-external-attacher-role",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-controller-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-node-getter-binding",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ebs-csi-node-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-node-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-provisioner-binding",
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "ebs-external-provisioner-role",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-controller-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-resizer-binding",
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "ebs-external-resizer-role",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-controller-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-snapshotter-binding",
            },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "ebs-external-snapshotter-role",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-controller-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-leases-role",
                "namespace": "kube-system",
            },
            "rules": [
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["get", "watch", "list", "delete", "update", "create"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-leases-rolebinding",
                "namespace": "kube-system",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ebs-csi-leases-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "ebs-csi-controller-sa", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3301", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller"},
                "name": "ebs-csi-controller",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3301, "targetPort": 3301}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3302", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-provisioner"},
                "name": "ebs-csi-controller-provisioner",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3302, "targetPort": 3302}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3303", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-attacher"},
                "name": "ebs-csi-controller-attacher",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3303, "targetPort": 3303}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3304", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-resizer"},
                "name": "ebs-csi-controller-resizer",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3304, "targetPort": 3304}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3305", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-liveness-probe"},
                "name": "ebs-csi-controller-liveness-probe",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3305, "targetPort": 3305}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3306", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-snapshotter"},
                "name": "ebs-csi-controller-snapshotter",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3306, "targetPort": 3306}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "annotations": {"prometheus.io/port": "3307", "prometheus.io/scrape": "true"},
                "labels": {"app": "ebs-csi-controller-volumemodifier"},
                "name": "ebs-csi-controller-volumemodifier",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "metrics", "port": 3307, "targetPort": 3307}],
                "selector": {"app": "ebs-csi-controller"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-node",
                "namespace": "kube-system",
            },
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": {
                    "matchLabels": {
                        "app": "ebs-csi-node",
                        "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                        "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    },
                },
                "template": {
                    "metadata": {
                        "labels": {
                            "app": "ebs-csi-node",
                            "app.kubernetes.io/component": "csi-driver",
                            "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                            "app.kubernetes.io/name": "aws-ebs-csi-driver",
                            "app.kubernetes.io/version": version,
                        },
                    },
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "topology.kubernetes.io/zone", "operator": "Exists"},
                                                {
                                                    "key": "eks.amazonaws.com/compute-type",
                                                    "operator": "NotIn",
                                                    "values": ["fargate", "auto", "hybrid"],
                                                },
                                                {
                                                    "key": "node.kubernetes.io/instance-type",
                                                    "operator": "NotIn",
                                                    "values": [
                                                        "a1.medium",
                                                        "a1.large",
                                                        "a1.xlarge",
                                                        "a1.2xlarge",
                                                        "a1.4xlarge",
                                                    ],
                                                },
                                            ],
                                        },
                                    ],
                                },
                            },
                        },
                        "containers": [
                            {
                                "args": [
                                    "node",
                                    "--endpoint=$(CSI_ENDPOINT)",
                                    "--csi-mount-point-prefix=/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/",
                                    "--logging-format=text",
                                    "--v=5",
                                ],
                                "env": [
                                    {"name": "AWS_REGION", "value": facts.region},
                                    {"name": "CSI_ENDPOINT", "value": "unix:/csi/csi.sock"},
                                    {"name": "CSI_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                                ],
                                "image": DRIVER_IMAGE + ":" + version,
                                "imagePullPolicy": "IfNotPresent",
                                "lifecycle": {
                                    "preStop": {"exec": {"command": ["/bin/aws-ebs-csi-driver", "pre-stop-hook"]}},
                                },
                                "livenessProbe": {
                                    "failureThreshold": 5,
                                    "httpGet": {"path": "/healthz", "port": "healthz"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 10,
                                    "timeoutSeconds": 3,
                                },
                                "name": "ebs-plugin",
                                "ports": [{"containerPort": 9808, "name": "healthz", "protocol": "TCP"}],
                                "readinessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {"path": "/healthz", "port": "healthz"},
                                    "periodSeconds": 5,
                                    "timeoutSeconds": 3,
                                },
                                "resources": {
                                    "limits": {"memory": "256Mi"},
                                    "requests": {"cpu": "10m", "memory": "40Mi"},
                                },
                                "securityContext": {"privileged": True, "readOnlyRootFilesystem": True},
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {
                                        "mountPath": "/var/lib/kubelet",
                                        "mountPropagation": "Bidirectional",
                                        "name": "kubelet-dir",
                                    },
                                    {"mountPath": "/csi", "name": "plugin-dir"},
                                    {"mountPath": "/dev", "name": "device-dir"},
                                ],
                            },
                            _sidecar(
                                "csi-node-driver-registrar",
                                ["--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                                 "--http-endpoint=0.0.0.0:9809", "--v=5"],
                                [{"mountPath": "/csi", "name": "plugin-dir"},
                                 {"mountPath": "/registration", "name": "registration-dir"},
                                 {"mountPath": "/var/lib/kubelet/plugins/ebs.csi.aws.com/", "name": "probe-dir"}],
                                name="node-driver-registrar",
                                env=[{"name": "ADDRESS", "value": "/csi/csi.sock"},
                                     {"name": "DRIVER_REG_SOCK_PATH", "value": "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock"}],
                                ports=[csi.port(9809, "healthz-ndr", protocol=None)],
                                liveness={"httpGet": {"path": "/healthz", "port": "healthz-ndr"}, "initialDelaySeconds": 30,
                                          "periodSeconds": 90, "timeoutSeconds": 15}),
                            _sidecar("livenessprobe", ["--csi-address=/csi/csi.sock"], [{"mountPath": "/csi", "name": "plugin-dir"}],
                                     name="liveness-probe"),
                        ],
                        "hostNetwork": node_host_network,
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-node-critical",
                        "securityContext": {"fsGroup": 0, "runAsGroup": 0, "runAsNonRoot": False, "runAsUser": 0},
                        "serviceAccountName": "ebs-csi-node-sa",
                        "terminationGracePeriodSeconds": 30,
                        "tolerations": [{"operator": "Exists"}],
                        "volumes": [
                            {"hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}, "name": "kubelet-dir"},
                            {
                                "hostPath": {
                                    "path": "/var/lib/kubelet/plugins/ebs.csi.aws.com/",
                                    "type": "DirectoryOrCreate",
                                },
                                "name": "plugin-dir",
                            },
                            {
                                "hostPath": {"path": "/var/lib/kubelet/plugins_registry/", "type": "Directory"},
                                "name": "registration-dir",
                            },
                            {"hostPath": {"path": "/dev", "type": "Directory"}, "name": "device-dir"},
                            {"emptyDir": {}, "name": "probe-dir"},
                        ],
                    },
                },
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": "10%"}, "type": "RollingUpdate"},
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs-csi-controller",
                "namespace": "kube-system",
            },
            "spec": {
                "replicas": facts.control_plane_controller_replicas(True),
                "revisionHistoryLimit": 10,
                "selector": {
                    "matchLabels": {
                        "app": "ebs-csi-controller",
                        "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                        "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    },
                },
                "strategy": {"rollingUpdate": {"maxUnavailable": 1}, "type": "RollingUpdate"},
                "template": {
                    "metadata": {
                        "labels": {
                            "app": "ebs-csi-controller",
                            "app.kubernetes.io/component": "csi-driver",
                            "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                            "app.kubernetes.io/name": "aws-ebs-csi-driver",
                            "app.kubernetes.io/version": version,
                        },
                    },
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "preferredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "preference": {
                                            "matchExpressions": [
                                                {
                                                    "key": "eks.amazonaws.com/compute-type",
                                                    "operator": "NotIn",
                                                    "values": ["fargate", "auto", "hybrid"],
                                                },
                                            ],
                                        },
                                        "weight": 1,
                                    },
                                ],
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                            ],
                                        },
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                            ],
                                        },
                                    ],
                                },
                            },
                            "podAntiAffinity": {
                                "preferredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "podAffinityTerm": {
                                            "labelSelector": {
                                                "matchExpressions": [
                                                    {"key": "app", "operator": "In", "values": ["ebs-csi-controller"]},
                                                ],
                                            },
                                            "topologyKey": "kubernetes.io/hostname",
                                        },
                                        "weight": 100,
                                    },
                                ],
                            },
                        },
                        "containers": [
                            {
                                "args": [
                                    "controller",
                                    "--endpoint=$(CSI_ENDPOINT)",
                                    "--k8s-tag-cluster-id=" + facts.name,
                                    "--extra-tags=" + facts.cloud_labels,
                                    "--http-endpoint=0.0.0.0:3301",
                                    "--batching=true",
                                    "--logging-format=text",
                                    "--v=5",
                                ],
                                "env": [
                                    {"name": "AWS_REGION", "value": facts.region},
                                    {"name": "CSI_ENDPOINT", "value": "unix:///var/lib/csi/sockets/pluginproxy/csi.sock"},
                                    {"name": "CSI_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                                    {
                                        "name": "AWS_ACCESS_KEY_ID",
                                        "valueFrom": {
                                            "secretKeyRef": {"key": "key_id", "name": "aws-secret", "optional": True},
                                        },
                                    },
                                    {
                                        "name": "AWS_SECRET_ACCESS_KEY",
                                        "valueFrom": {
                                            "secretKeyRef": {"key": "access_key", "name": "aws-secret", "optional": True},
                                        },
                                    },
                                    {
                                        "name": "AWS_EC2_ENDPOINT",
                                        "valueFrom": {
                                            "configMapKeyRef": {"key": "endpoint", "name": "aws-meta", "optional": True},
                                        },
                                    },
                                    {
                                        "name": "AWS_SAGEMAKER_ENDPOINT",
                                        "valueFrom": {
                                            "configMapKeyRef": {
                                                "key": "sagemaker_endpoint",
                                                "name": "aws-meta",
                                                "optional": True,
                                            },
                                        },
                                    },
                                ],
                                "image": DRIVER_IMAGE + ":" + version,
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "failureThreshold": 10,
                                    "httpGet": {"path": "/healthz", "port": "healthz"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 10,
                                    "timeoutSeconds": 60,
                                },
                                "name": "ebs-plugin",
                                "ports": [
                                    {"containerPort": 9808, "name": "healthz", "protocol": "TCP"},
                                    {"containerPort": 3301, "name": "metrics", "protocol": "TCP"},
                                ],
                                "readinessProbe": {
                                    "failureThreshold": 5,
                                    "httpGet": {"path": "/healthz", "port": "healthz"},
                                    "initialDelaySeconds": 10,
                                    "periodSeconds": 10,
                                    "timeoutSeconds": 60,
                                },
                                "resources": {
                                    "limits": {"memory": "256Mi"},
                                    "requests": {"cpu": "10m", "memory": "40Mi"},
                                },
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "readOnlyRootFilesystem": True,
                                    "seccompProfile": {"type": "RuntimeDefault"},
                                },
                                "terminationMessagePolicy": "FallbackToLogsOnError",
                                "volumeMounts": [
                                    {"mountPath": "/var/lib/csi/sockets/pluginproxy/", "name": "socket-dir"},
                                ],
                            },
                            _controller_sidecar("csi-provisioner", [
                                "--timeout=60s",
                                "--csi-address=$(ADDRESS)",
                                "--v=5",
                                "--feature-gates=Topology=true",
                                "--extra-create-metadata",
                                "--leader-election=true",
                                "--default-fstype=ext4",
                                "--kube-api-qps=" + qps,
                                "--kube-api-burst=" + burst,
                                "--worker-threads=100",
                                "--retry-interval-max=30m",
                                "--feature-gates=VolumeAttributesClass=false",
                                "--http-endpoint=0.0.0.0:3302",
                            ], 3302, "metrics-prov", vac_fallback=True),
                            _controller_sidecar("csi-attacher", [
                                "--timeout=6m",
                                "--csi-address=$(ADDRESS)",
                                "--v=5",
                                "--leader-election=true",
                                "--kube-api-qps=" + qps,
                                "--kube-api-burst=" + burst,
                                "--worker-threads=100",
                                "--retry-interval-max=5m",
                                "--feature-gates=MutableCSINodeAllocatableCount=true",
                                "--http-endpoint=0.0.0.0:3303",
                            ], 3303, "metrics-attach"),
                            _controller_sidecar("csi-resizer", [
                                "--timeout=60s",
                                "--extra-modify-metadata",
                                "--csi-address=$(ADDRESS)",
                                "--v=5",
                                "--handle-volume-inuse-error=false",
                                "--leader-election=true",
                                "--kube-api-qps=" + qps,
                                "--kube-api-burst=" + burst,
                                "--workers=100",
                                "--retry-interval-max=30m",
                                "--feature-gates=VolumeAttributesClass=false",
                                "--http-endpoint=0.0.0.0:3304",
                            ], 3304, "metrics-resizer", vac_fallback=True),
                            _sidecar("livenessprobe", ["--csi-address=/csi/csi.sock", "--probe-timeout=60s",
                                                       "--metrics-address=0.0.0.0:3305"],
                                     [{"mountPath": "/csi", "name": "socket-dir"}], name="liveness-probe",
                                     ports=[csi.port(3305, "metrics-lp")]),
                        ],
                        "hostNetwork": True,
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "system-cluster-critical",
                        "securityContext": {"fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "runAsUser": 1000},
                        "serviceAccountName": "ebs-csi-controller-sa",
                        "tolerations": [{"operator": "Exists"}],
                        "topologySpreadConstraints": [
                            {
                                "labelSelector": {
                                    "matchLabels": {
                                        "app": "ebs-csi-controller",
                                        "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                                        "app.kubernetes.io/name": "aws-ebs-csi-driver",
                                    },
                                },
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            },
                            {
                                "labelSelector": {
                                    "matchLabels": {
                                        "app": "ebs-csi-controller",
                                        "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                                        "app.kubernetes.io/name": "aws-ebs-csi-driver",
                                    },
                                },
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "DoNotSchedule",
                            },
                        ],
                        "volumes": [{"emptyDir": {}, "name": "socket-dir"}],
                    },
                },
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/component": "csi-driver",
                    "app.kubernetes.io/instance": "aws-ebs-csi-driver",
                    "app.kubernetes.io/name": "aws-ebs-csi-driver",
                    "app.kubernetes.io/version": version,
                },
                "name": "ebs.csi.aws.com",
            },
            "spec": {"attachRequired": True, "podInfoOnMount": False},
        },
    ]
