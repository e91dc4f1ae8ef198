# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The GCE Persistent Disk CSI driver (gcp-pd-csi-driver.addons.k8s.io), on GCE when
spec.cloudConfig.gcpPDCSIDriver.enabled (completion's default there): its storage classes (unless
cloudConfig.manageStorageClasses is false; defaultStorageClassName is the default one), the controller
Deployment with its sidecars and the node DaemonSet in the gce-pd-csi-driver namespace.  The driver's
version comes from the completed spec, the sidecars" from kops" template (image_data).  kops'
SELinuxMount feature flag is not modelled (docs/addons.md).  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons import csi
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image, storage_class
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError

ADDON = "gcp-pd-csi-driver.addons.k8s.io"
PROVISIONER = "pd.csi.storage.gke.io"
DRIVER_IMAGE = "registry.k8s.io/cloud-provider-gcp/gcp-compute-persistent-disk-csi-driver"
SIG_STORAGE = csi.SIG_STORAGE
SOCKET_MOUNTS = [{"mountPath": "/csi", "name": "socket-dir"}]
NAMESPACE_ENV = [{"name": "PDCSI_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
# (name, parameters, reclaimPolicy Delete written, whether the default annotation may be written)
STORAGE_CLASSES = (
    ("standard-csi", {"type": "pd-standard"}, False),
    ("balanced-csi", {"type": "pd-balanced"}, True),
    ("balanced-storage", {"provisioned-iops-on-create": "5000", "provisioned-throughput-on-create": "250Mi",
                          "type": "hyperdisk-balanced"}, True),
    ("ssd-csi", {"type": "pd-ssd"}, True),
)


def _sidecar(name, args, http_port=None):
    """A controller sidecar: the driver's socket, its namespace for leader election, and with an HTTP endpoint
    the leader-election liveness probe on it."""
    if http_port is None:
        return csi.sidecar(name, pinned_image(ADDON, SIG_STORAGE + name), args, SOCKET_MOUNTS, env=list(NAMESPACE_ENV))
    return csi.sidecar(name, pinned_image(ADDON, SIG_STORAGE + name), args, SOCKET_MOUNTS, env=list(NAMESPACE_ENV),
                       ports=[csi.port(http_port, "http-endpoint")], liveness=dict(csi.LEADER_ELECTION_PROBE))


def applies(facts):
    return facts.provider == "gce" and bool(_config(facts).get("enabled"))


def _config(facts):
    return facts.section("cloudConfig").get("gcpPDCSIDriver") or {}


def storage_classes(facts):
    """kops' four PD classes; standard-csi is always marked not default, balanced-csi or balanced-storage is the
    default when defaultStorageClassName names it, ssd-csi carries no annotation."""
    default = _config(facts).get("defaultStorageClassName")
    classes = []
    for name, parameters, reclaim in STORAGE_CLASSES:
        if name == "standard-csi":
            marked = False
        elif name in ("balanced-csi", "balanced-storage") and name == default:
            marked = True
        else:
            marked = None
        found = storage_class(name, PROVISIONER, dict(parameters), default=marked, expandable=True, wait_for_consumer=True,
                              labels={"kubernetes.io/cluster-service": "true"})
        if reclaim:
            found["reclaimPolicy"] = "Delete"
        classes.append(found)
    return classes


def objects(facts):
    version = _config(facts).get("version")
    if not version:
        raise AddonError("addon %s: spec.cloudConfig.gcpPDCSIDriver.version is missing from the completed spec "
                         "(complete the cluster spec first)" % ADDON)
    driver_image = "%s:%s" % (DRIVER_IMAGE, version)
    documents = storage_classes(facts) if facts.section("cloudConfig").get("manageStorageClasses", True) is not False else []
    return documents + [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gce-pd-csi-driver"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "csi-gce-pd-node-sa", "namespace": "gce-pd-csi-driver"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {
                "labels": {"k8s-app": "gcp-compute-persistent-disk-csi-driver"},
                "name": "csi-gce-pd-leaderelection-role",
                "namespace": "gce-pd-csi-driver",
            },
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "watch", "list", "delete", "update", "create"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "csi-gce-pd-attacher-role"},
            "rules": [
                {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "update", "patch"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get", "list", "watch", "update", "patch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments/status"], "verbs": ["patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "csi-gce-pd-provisioner-role"},
            "rules": [
                {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "create", "delete"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch", "update"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshots"], "verbs": ["get", "list"]},
                {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotcontents"], "verbs": ["get", "list"]},
                {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"], "verbs": ["get", "list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "csi-gce-pd-resizer-role"},
            "rules": [
                {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "update", "patch"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["persistentvolumeclaims/status"], "verbs": ["update", "patch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "csi-gce-pd-snapshotter-role"},
            "rules": [
                {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch", "create", "update", "patch"]},
                {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotclasses"], "verbs": ["get", "list", "watch"]},
                {
                    "apiGroups": ["snapshot.storage.k8s.io"],
                    "resources": ["volumesnapshotcontents"],
                    "verbs": ["create", "get", "list", "watch", "update", "delete", "patch"],
                },
                {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotcontents/status"], "verbs": ["update", "patch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "labels": {"k8s-app": "gcp-compute-persistent-disk-csi-driver"},
                "name": "csi-gce-pd-controller-leaderelection-binding",
                "namespace": "gce-pd-csi-driver",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "csi-gce-pd-leaderelection-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-controller"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-node-deploy"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-controller-attacher-binding"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-attacher-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-controller-deploy"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-controller-deploy"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-controller-provisioner-binding"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-provisioner-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-controller-snapshotter-binding"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-snapshotter-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-node"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-node-deploy"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-node-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "csi-gce-pd-resizer-binding"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csi-gce-pd-resizer-role"},
            "subjects": [{"kind": "ServiceAccount", "name": "csi-gce-pd-controller-sa", "namespace": "gce-pd-csi-driver"}],
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "description": "This priority class should be used for the GCE PD CSI driver controller deployment only.",
            "globalDefault": False,
            "kind": "PriorityClass",
            "metadata": {"name": "csi-gce-pd-controller"},
            "value": 900000000,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "description": "This priority class should be used for the GCE PD CSI driver node deployment only.",
            "globalDefault": False,
            "kind": "PriorityClass",
            "metadata": {"name": "csi-gce-pd-node"},
            "value": 900001000,
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "csi-gce-pd-controller", "namespace": "gce-pd-csi-driver"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "gcp-compute-persistent-disk-csi-driver"}},
                "template": {
                    "metadata": {"labels": {"app": "gcp-compute-persistent-disk-csi-driver"}},
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
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
                        },
                        "containers": [
                            _sidecar("csi-provisioner", [
                                "--v=5",
                                "--csi-address=/csi/csi.sock",
                                "--feature-gates=Topology=true",
                                "--http-endpoint=:22011",
                                "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                                "--timeout=250s",
                                "--extra-create-metadata",
                                "--leader-election",
                                "--default-fstype=ext4",
                                "--controller-publish-readonly=true",
                            ], 22011),
                            _sidecar("csi-attacher", [
                                "--v=5",
                                "--csi-address=/csi/csi.sock",
                                "--http-endpoint=:22012",
                                "--leader-election",
                                "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                                "--timeout=250s",
                            ], 22012),
                            _sidecar("csi-resizer", [
                                "--v=5",
                                "--csi-address=/csi/csi.sock",
                                "--http-endpoint=:22013",
                                "--leader-election",
                                "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                                "--handle-volume-inuse-error=false",
                            ], 22013),
                            _sidecar("csi-snapshotter", [
                                "--v=5",
                                "--csi-address=/csi/csi.sock",
                                "--metrics-address=:22014",
                                "--leader-election",
                                "--leader-election-namespace=$(PDCSI_NAMESPACE)",
                                "--timeout=300s",
                                "--retry-interval-max=60s",
                            ]),
                            {
                                "args": [
                                    "--v=5",
                                    "--endpoint=unix:/csi/csi.sock",
                                    "--extra-labels=k8s-io-cluster-name=" + facts.name.replace(".", "-"),
                                    "--supports-dynamic-iops-provisioning=hyperdisk-balanced,hyperdisk-extreme",
                                    "--supports-dynamic-throughput-provisioning=hyperdisk-balanced,hyperdisk-throughput,hyperdisk-ml",
                                    "--enable-data-cache",
                                    "--run-node-service=false",
                                ],
                                "env": [],
                                "image": driver_image,
                                "name": "gce-pd-driver",
                                "volumeMounts": [{"mountPath": "/csi", "name": "socket-dir"}],
                            },
                        ],
                        "hostNetwork": True,
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "csi-gce-pd-controller",
                        "serviceAccountName": "csi-gce-pd-controller-sa",
                        "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}, {"key": "CriticalAddonsOnly", "operator": "Exists"}],
                        "volumes": [{"emptyDir": {}, "name": "socket-dir"}],
                    },
                },
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "csi-gce-pd-node", "namespace": "gce-pd-csi-driver"},
            "spec": {
                "selector": {"matchLabels": {"app": "gcp-compute-persistent-disk-csi-driver"}},
                "template": {
                    "metadata": {"labels": {"app": "gcp-compute-persistent-disk-csi-driver"}},
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}],
                                },
                            },
                        },
                        "containers": [
                            csi.sidecar(
                                "csi-driver-registrar", pinned_image(ADDON, SIG_STORAGE + "csi-node-driver-registrar"),
                                ["--v=5", "--csi-address=/csi/csi.sock",
                                 "--kubelet-registration-path=/var/lib/kubelet/plugins/pd.csi.storage.gke.io/csi.sock"],
                                [{"mountPath": "/csi", "name": "plugin-dir"}, {"mountPath": "/registration", "name": "registration-dir"}],
                                env=[{"name": "KUBE_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]),
                            {
                                "args": ["--v=5", "--endpoint=unix:/csi/csi.sock", "--run-controller-service=false", "--enable-data-cache"],
                                "image": driver_image,
                                "name": "gce-pd-driver",
                                "securityContext": {"privileged": True},
                                "volumeMounts": [
                                    {"mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional", "name": "kubelet-dir"},
                                    {"mountPath": "/csi", "name": "plugin-dir"},
                                    {"mountPath": "/dev", "name": "device-dir"},
                                    {"mountPath": "/etc/udev", "name": "udev-rules-etc"},
                                    {"mountPath": "/lib/udev", "name": "udev-rules-lib"},
                                    {"mountPath": "/run/udev", "name": "udev-socket"},
                                    {"mountPath": "/sys", "name": "sys"},
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "priorityClassName": "csi-gce-pd-node",
                        "serviceAccountName": "csi-gce-pd-node-sa",
                        "tolerations": [{"operator": "Exists"}],
                        "volumes": [
                            {"hostPath": {"path": "/var/lib/kubelet/plugins_registry/", "type": "Directory"}, "name": "registration-dir"},
                            {"hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}, "name": "kubelet-dir"},
                            {"hostPath": {"path": "/var/lib/kubelet/plugins/pd.csi.storage.gke.io/", "type": "DirectoryOrCreate"}, "name": "plugin-dir"},
                            {"hostPath": {"path": "/dev", "type": "Directory"}, "name": "device-dir"},
                            {"hostPath": {"path": "/etc/udev", "type": "Directory"}, "name": "udev-rules-etc"},
                            {"hostPath": {"path": "/lib/udev", "type": "Directory"}, "name": "udev-rules-lib"},
                            {"hostPath": {"path": "/run/udev", "type": "Directory"}, "name": "udev-socket"},
                            {"hostPath": {"path": "/sys", "type": "Directory"}, "name": "sys"},
                        ],
                    },
                },
            },
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "pd.csi.storage.gke.io"},
            "spec": {"attachRequired": True, "podInfoOnMount": False},
        },
    ]
