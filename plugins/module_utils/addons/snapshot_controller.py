# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The CSI snapshot controller (snapshot-controller.addons.k8s.io), when spec.snapshotController.enabled: the
VolumeSnapshot CRDs (snapshot_controller_crds, generated from kops), the controller, and its validation webhook
serving a certificate cert-manager issues (the channel's needsPKI gives the addon its Issuer); with
installDefaultClass, a default VolumeSnapshotClass for the EBS CSI driver.  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, pinned_image, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated.snapshot_controller_crds import CRDS

ADDON = "snapshot-controller.addons.k8s.io"
NAME = "snapshot-controller"
WEBHOOK = "snapshot-validation"
SERVICE = "snapshot-validation-service"
SECRET = "snapshot-validation-secret"
CERT_DIR = "/etc/snapshot-validation-webhook/certs"
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


def _spread(app):
    """Spread over zones where possible, never two on one node."""
    return [{"labelSelector": {"matchLabels": {"app": app}}, "maxSkew": 1, "topologyKey": topology,
             "whenUnsatisfiable": when}
            for topology, when in (("topology.kubernetes.io/zone", "ScheduleAnyway"),
                                   ("kubernetes.io/hostname", "DoNotSchedule"))]


def _rbac():
    runner = [
        rule([""], ["persistentvolumes"], ["get", "list", "watch"]),
        rule([""], ["persistentvolumeclaims"], ["get", "list", "watch", "update"]),
        rule([""], ["events"], ["list", "watch", "create", "update", "patch"]),
        rule([SNAPSHOT_GROUP], ["volumesnapshotclasses"], ["get", "list", "watch"]),
        rule([SNAPSHOT_GROUP], ["volumesnapshotcontents"], ["create", "get", "list", "watch", "delete", "patch"]),
        rule([SNAPSHOT_GROUP], ["volumesnapshotcontents/status"], ["patch"]),
        rule([SNAPSHOT_GROUP], ["volumesnapshots"], ["get", "list", "watch", "update", "patch"]),
        rule([SNAPSHOT_GROUP], ["volumesnapshots/status"], ["update", "patch"]),
    ]
    leader_election = "snapshot-controller-leaderelection"
    return [
        service_account(NAME),
        role("Role", leader_election, [rule(["coordination.k8s.io"], ["leases"],
                                            ["get", "watch", "list", "delete", "update", "create"])],
             namespace=KUBE_SYSTEM),
        role("ClusterRole", "snapshot-controller-runner", runner),
        # kops' RoleBinding names the service account without its namespace (the binding's own applies).
        binding("RoleBinding", leader_election, "Role", leader_election, [{"kind": "ServiceAccount", "name": NAME}],
                namespace=KUBE_SYSTEM),
        binding("ClusterRoleBinding", "snapshot-controller-role", "ClusterRole", "snapshot-controller-runner",
                [sa_subject(NAME)]),
    ]


def _controller():
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": KUBE_SYSTEM},
        "spec": {
            "minReadySeconds": 15,
            "replicas": 2,
            "selector": {"matchLabels": {"app": NAME}},
            "strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {
                    "containers": [{
                        "args": ["--v=5", "--leader-election=true"],
                        "image": pinned_image(ADDON, "registry.k8s.io/sig-storage/snapshot-controller"),
                        "imagePullPolicy": "IfNotPresent",
                        "name": NAME,
                    }],
                    "serviceAccountName": NAME,
                    "topologySpreadConstraints": _spread(NAME),
                },
            },
        },
    }


def _webhook(facts):
    labels = {"app": WEBHOOK}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": dict(labels), "name": "snapshot-validation-deployment", "namespace": KUBE_SYSTEM},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [{
                        "args": ["--tls-cert-file=%s/tls.crt" % CERT_DIR, "--tls-private-key-file=%s/tls.key" % CERT_DIR],
                        "image": pinned_image(ADDON, "registry.k8s.io/sig-storage/snapshot-validation-webhook"),
                        "imagePullPolicy": "IfNotPresent",
                        "name": WEBHOOK,
                        "ports": [{"containerPort": 443}],
                        "volumeMounts": [{"mountPath": CERT_DIR, "name": "snapshot-validation-webhook-certs",
                                          "readOnly": True}],
                    }],
                    "serviceAccountName": NAME,
                    "topologySpreadConstraints": _spread(WEBHOOK),
                    "volumes": [{"name": "snapshot-validation-webhook-certs", "secret": {"secretName": SECRET}}],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": KUBE_SYSTEM},
        "spec": {"ports": [{"port": 443, "protocol": "TCP", "targetPort": 443}], "selector": dict(labels)},
    }
    webhook = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"annotations": {"cert-manager.io/inject-ca-from": "%s/%s" % (KUBE_SYSTEM, SERVICE)},
                     "name": "validation-webhook.snapshot.storage.k8s.io"},
        "webhooks": [{
            "admissionReviewVersions": ["v1", "v1beta1"],
            "clientConfig": {"service": {"name": SERVICE, "namespace": KUBE_SYSTEM, "path": "/volumesnapshot"}},
            "failurePolicy": "Ignore",  # a webhook not yet serving must not block snapshots
            "name": "validation-webhook.snapshot.storage.k8s.io",
            "rules": [{"apiGroups": [SNAPSHOT_GROUP], "apiVersions": ["v1", "v1beta1"], "operations": ["CREATE", "UPDATE"],
                       "resources": ["volumesnapshots", "volumesnapshotcontents"], "scope": "*"}],
            "sideEffects": "None",
            "timeoutSeconds": 2,
        }],
    }
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": SERVICE, "namespace": KUBE_SYSTEM},
        "spec": {
            "dnsNames": ["%s.%s.svc" % (SERVICE, KUBE_SYSTEM), "%s.%s.svc.%s" % (SERVICE, KUBE_SYSTEM, facts.name)],
            "issuerRef": {"kind": "Issuer", "name": ADDON},  # the Issuer channels creates for a needsPKI addon
            "secretName": SECRET,
        },
    }
    return [deployment, service, webhook, certificate]


def objects(facts):
    documents = [dict(crd) for crd in CRDS] + _rbac() + [_controller()] + _webhook(facts)
    if facts.section("snapshotController").get("installDefaultClass"):
        documents.append({
            "apiVersion": SNAPSHOT_GROUP + "/v1",
            "deletionPolicy": "Delete",
            "driver": "ebs.csi.aws.com",
            "kind": "VolumeSnapshotClass",
            "metadata": {"annotations": {"snapshot.storage.kubernetes.io/is-default-class": "true"},
                         "name": "csi-hostpath-snapclass"},
        })
    return documents
