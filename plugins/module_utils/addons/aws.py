# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS addons: the external cloud controller manager, the node termination handler, the EBS CSI driver."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons import ebs_csi
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import (
    KUBE_SYSTEM, binding, role, rule, sa_subject, service_account)
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import manifests

# kops CloudControllerManagerConfig's flag tags (v1alpha2 field, flag, kind, options), for manifests.build_flags.
CCM_FLAGS = (
    ("master", "master", "string", {}),
    ("logLevel", "v", "int", {"empty": "0"}),
    ("cloudProvider", "cloud-provider", "string", {}),
    ("clusterName", "cluster-name", "string", {}),
    ("allowUntaggedCloud", "allow-untagged-cloud", "bool", {}),
    ("clusterCIDR", "cluster-cidr", "string", {}),
    ("allocateNodeCIDRs", "allocate-node-cidrs", "bool", {}),
    ("configureCloudRoutes", "configure-cloud-routes", "bool", {}),
    ("controllers", "controllers", "list", {}),
    ("cidrAllocatorType", "cidr-allocator-type", "string", {"include_empty": True}),
    ("leaderElection", None, "LEADER_ELECTION", {}),
    ("useServiceAccountCredentials", "use-service-account-credentials", "bool", {}),
    ("enableLeaderMigration", "enable-leader-migration", "bool", {}),
    ("nodeStatusUpdateFrequency", "node-status-update-frequency", "duration", {}),
    ("concurrentNodeSyncs", "concurrent-node-syncs", "int", {}),
)
CLOUD_CONFIG = "/etc/kubernetes/cloud.config"
SELINUX_SPC = {"level": "s0", "type": "spc_t"}
NTH = "aws-node-termination-handler"
NTH_IMAGE = "public.ecr.aws/aws-ec2/aws-node-termination-handler"
CONTROL_PLANE_AFFINITY_TERMS = [
    {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}]},
]


def uses_queue(facts):
    """kops IsQueueMode: the termination handler reads the SQS queue (a Deployment) rather than IMDS (a DaemonSet)."""
    nth = facts.nth
    return bool(nth.get("enabled")) and nth.get("enableSQSTerminationDraining", True) is not False


def cloud_controller_argv(facts):
    """kops CloudControllerConfigArgv: the config's flags (sorted), then its defaults."""
    config = facts.ccm
    argv = manifests.build_flags(CCM_FLAGS, config)
    if not config.get("logLevel"):
        argv.append("--v=2")
    if not config.get("cloudProvider"):
        argv.append("--cloud-provider=%s" % facts.provider)
    if config.get("useServiceAccountCredentials") is None:
        argv.append("--use-service-account-credentials=true")
    return argv + ["--cloud-config=" + CLOUD_CONFIG]


def cloud_config_volume():
    return ([{"mountPath": CLOUD_CONFIG, "name": "cloudconfig", "readOnly": True}],
            [{"hostPath": {"path": CLOUD_CONFIG, "type": ""}, "name": "cloudconfig"}])


def cloud_controller(facts):
    name = "aws-cloud-controller-manager"
    mounts, volumes = cloud_config_volume()
    pod = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": CONTROL_PLANE_AFFINITY_TERMS[:1]}}},
        "containers": [{
            "args": cloud_controller_argv(facts),
            "env": [{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"}],
            "image": facts.ccm["image"],
            "imagePullPolicy": "IfNotPresent",
            "name": name,
            "resources": {"requests": {"cpu": str(facts.ccm.get("cpuRequest") or "200m")}},
            "volumeMounts": mounts,
        }],
        "hostNetwork": True,
        "nodeSelector": None,
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": name,
        "tolerations": [{"operator": "Exists"}],
        "volumes": volumes,
    }
    if facts.selinux:
        pod["securityContext"] = {"seLinuxOptions": SELINUX_SPC}
    subject = sa_subject(name, api_group="")
    return [
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"labels": {"k8s-app": name}, "name": name, "namespace": KUBE_SYSTEM},
         "spec": {"selector": {"matchLabels": {"k8s-app": name}},
                  "template": {"metadata": {"labels": {"k8s-app": name}}, "spec": pod},
                  "updateStrategy": {"type": "RollingUpdate"}}},
        service_account(name),
        binding("RoleBinding", "cloud-controller-manager:apiserver-authentication-reader", "Role",
                "extension-apiserver-authentication-reader", [subject], namespace=KUBE_SYSTEM),
        role("ClusterRole", "system:cloud-controller-manager", [
            rule([""], ["events"], ["create", "patch", "update"]),
            rule([""], ["nodes"], ["*"]),
            rule([""], ["nodes/status"], ["patch"]),
            rule([""], ["services"], ["list", "patch", "update", "watch"]),
            rule([""], ["services/status"], ["list", "patch", "update", "watch"]),
            rule([""], ["serviceaccounts"], ["create", "get"]),
            rule([""], ["persistentvolumes"], ["get", "list", "update", "watch"]),
            rule([""], ["endpoints"], ["create", "get", "list", "watch", "update"]),
            rule(["coordination.k8s.io"], ["leases"], ["create", "get", "list", "watch", "update"]),
            rule([""], ["secrets"], ["list", "watch"]),
            rule([""], ["serviceaccounts/token"], ["create"],
                 names=["node-controller", "service-controller", "route-controller"]),
        ]),
        binding("ClusterRoleBinding", "system:cloud-controller-manager", "ClusterRole",
                "system:cloud-controller-manager", [subject]),
    ]


# ---------------------------------------------------------------- node termination handler


def _flag(nth, field, default):
    value = nth.get(field)
    return "true" if (default if value is None else value) else "false"


def _env(pairs):
    return [{"name": name, "value": value} for name, value in pairs]


FIELD_ENV = [{"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}
             for name, path in (("NODE_NAME", "spec.nodeName"), ("POD_NAME", "metadata.name"),
                                ("NAMESPACE", "metadata.namespace"))]


def _webhook_env(nth):
    found = []
    if nth.get("webhookTemplate"):
        found.append({"name": "WEBHOOK_TEMPLATE", "value": nth["webhookTemplate"]})
    if nth.get("webhookURL"):
        found.append({"name": "WEBHOOK_URL", "value": nth["webhookURL"]})
    return found


def _nth_resources(nth):
    resources = {"requests": {"cpu": str(nth.get("cpuRequest")), "memory": str(nth.get("memoryRequest"))}}
    if nth.get("memoryLimit"):
        resources["limits"] = {"memory": str(nth["memoryLimit"])}
    return resources


def _nth_labels(version, component=None, app=False):
    labels = {"app.kubernetes.io/instance": NTH, "app.kubernetes.io/name": NTH, "app.kubernetes.io/part-of": NTH,
              "app.kubernetes.io/version": version}
    if component:
        labels["app.kubernetes.io/component"] = component
    if app:
        labels["k8s-app"] = NTH
    return labels


def node_termination_handler(facts):
    nth = facts.nth
    version = nth["version"]
    common = [
        ("ENABLE_PROBES_SERVER", "true" if uses_queue(facts) else "false"), ("PROBES_SERVER_PORT", "8080"),
        ("PROBES_SERVER_ENDPOINT", "/healthz"), ("LOG_LEVEL", "info"), ("JSON_LOGGING", "true"),
        ("LOG_FORMAT_VERSION", "2"), ("ENABLE_PROMETHEUS_SERVER", _flag(nth, "prometheusEnable", False)),
        ("PROMETHEUS_SERVER_PORT", "9092"),
    ]
    security = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsGroup": 1000,
                "runAsNonRoot": True, "runAsUser": 1000}
    documents = [
        service_account(NTH, labels=_nth_labels(version, app=True)),
        role("ClusterRole", NTH, [
            rule([""], ["nodes"], ["get", "list", "patch", "update"]),
            rule([""], ["pods"], ["list", "get"]),
            rule([""], ["pods/eviction"], ["create"]),
            rule(["extensions"], ["daemonsets"], ["get"]),
            rule(["apps"], ["daemonsets"], ["get"]),
            rule([""], ["events"], ["create", "patch"]),
        ], labels=_nth_labels(version)),
        binding("ClusterRoleBinding", NTH, "ClusterRole", NTH, [sa_subject(NTH)], labels=_nth_labels(version)),
    ]
    if uses_queue(facts):
        return documents + _nth_queue_mode(facts, nth, version, common, security)
    return documents + _nth_imds_mode(facts, nth, version, common, security)


def _nth_queue_mode(facts, nth, version, common, security):
    env = FIELD_ENV + _env(common + [
        ("CHECK_TAG_BEFORE_DRAINING", "true"), ("MANAGED_TAG", str(nth.get("managedASGTag"))),
        ("USE_PROVIDER_ID", "true"), ("DRY_RUN", "false"), ("CORDON_ONLY", "false"),
        ("TAINT_NODE", _flag(nth, "taintNode", False)),
        ("ENABLE_OUT_OF_SERVICE_TAINT", _flag(nth, "enableOutOfServiceTaint", False)),
        ("EXCLUDE_FROM_LOAD_BALANCERS", _flag(nth, "excludeFromLoadBalancers", False)),
        ("DELETE_LOCAL_DATA", "true"), ("IGNORE_DAEMON_SETS", "true"),
        ("POD_TERMINATION_GRACE_PERIOD", str(nth.get("podTerminationGracePeriod"))),
        ("NODE_TERMINATION_GRACE_PERIOD", "120"), ("EMIT_KUBERNETES_EVENTS", "true"),
        ("COMPLETE_LIFECYCLE_ACTION_DELAY_SECONDS", "-1"), ("ENABLE_SQS_TERMINATION_DRAINING", "true"),
        ("QUEUE_URL", facts.nth_queue_url),
        ("DELETE_SQS_MSG_IF_NODE_NOT_FOUND", _flag(nth, "deleteSQSMsgIfNodeNotFound", False)),
        ("WORKERS", "10"), ("HEARTBEAT_INTERVAL", "-1"), ("HEARTBEAT_UNTIL", "-1"),
        ("SQS_MSG_VISIBILITY_TIMEOUT_SEC", "20"),
    ]) + _webhook_env(nth)
    selector = {"app.kubernetes.io/instance": NTH, "app.kubernetes.io/name": NTH, "kops.k8s.io/nth-mode": "sqs"}
    pod = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": CONTROL_PLANE_AFFINITY_TERMS}}},
        "containers": [{
            "env": env,
            "image": "%s:%s" % (NTH_IMAGE, version),
            "imagePullPolicy": "IfNotPresent",
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 5},
            "name": NTH,
            "ports": [{"containerPort": 8080, "name": "liveness-probe", "protocol": "TCP"},
                      {"containerPort": 9092, "name": "metrics", "protocol": "TCP"}],
            "resources": _nth_resources(nth),
            "securityContext": security,
        }],
        "hostNetwork": True,
        "nodeSelector": None,
        "priorityClassName": "system-cluster-critical",
        "securityContext": {"fsGroup": 1000},
        "serviceAccountName": NTH,
        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                        {"key": "node-role.kubernetes.io/master", "operator": "Exists"}],
        "topologySpreadConstraints": [
            {"labelSelector": {"matchLabels": selector}, "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "ScheduleAnyway"},
            {"labelSelector": {"matchLabels": selector}, "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
             "whenUnsatisfiable": "DoNotSchedule"},
        ],
    }
    if facts.use_service_account_external_permissions:
        # kops: with its own IAM role it runs on any node, without host networking.
        for field in ("affinity", "hostNetwork", "tolerations"):
            del pod[field]
    pod_labels = {"app.kubernetes.io/component": "deployment", "app.kubernetes.io/instance": NTH,
                  "app.kubernetes.io/name": NTH, "k8s-app": NTH, "kops.k8s.io/nth-mode": "sqs",
                  "kubernetes.io/os": "linux"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"labels": _nth_labels(version, "deployment", app=True), "name": NTH, "namespace": KUBE_SYSTEM},
         "spec": {"replicas": facts.control_plane_controller_replicas(True),
                  "selector": {"matchLabels": {"app.kubernetes.io/instance": NTH, "app.kubernetes.io/name": NTH,
                                               "kubernetes.io/os": "linux"}},
                  "template": {"metadata": {"labels": pod_labels}, "spec": pod}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"labels": {"app.kubernetes.io/instance": NTH, "app.kubernetes.io/name": NTH}, "name": NTH,
                      "namespace": KUBE_SYSTEM},
         "spec": {"maxUnavailable": 1, "selector": {"matchLabels": selector}}},
    ]


def _nth_imds_mode(facts, nth, version, common, security):
    env = FIELD_ENV + _env(common + [
        ("METADATA_TRIES", "3"), ("DRY_RUN", "false"), ("CORDON_ONLY", "false"),
        ("TAINT_NODE", _flag(nth, "taintNode", False)),
        ("ENABLE_OUT_OF_SERVICE_TAINT", _flag(nth, "enableOutOfServiceTaint", False)),
        ("EXCLUDE_FROM_LOAD_BALANCERS", _flag(nth, "excludeFromLoadBalancers", True)),
        ("DELETE_LOCAL_DATA", "true"), ("IGNORE_DAEMON_SETS", "true"),
        ("POD_TERMINATION_GRACE_PERIOD", str(nth.get("podTerminationGracePeriod"))),
        ("NODE_TERMINATION_GRACE_PERIOD", "120"), ("EMIT_KUBERNETES_EVENTS", "true"),
        ("ENABLE_SPOT_INTERRUPTION_DRAINING", _flag(nth, "enableSpotInterruptionDraining", True)),
        ("ENABLE_ASG_LIFECYCLE_DRAINING", "true"),
        ("ENABLE_SCHEDULED_EVENT_DRAINING", _flag(nth, "enableScheduledEventDraining", True)),
        ("ENABLE_REBALANCE_MONITORING", _flag(nth, "enableRebalanceMonitoring", False)),
        ("ENABLE_REBALANCE_DRAINING", _flag(nth, "enableRebalanceDraining", False)),
        ("ENABLE_SQS_TERMINATION_DRAINING", "false"), ("UPTIME_FROM_FILE", "/proc/uptime"),
    ]) + _webhook_env(nth)
    security = {k: v for k, v in security.items() if k != "runAsUser"}
    if facts.selinux:
        security["seLinuxOptions"] = SELINUX_SPC
    pod = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate"]}]},
        ]}}},
        "containers": [{
            "env": env,
            "image": "%s:%s" % (NTH_IMAGE, version),
            "imagePullPolicy": "IfNotPresent",
            "name": NTH,
            "resources": _nth_resources(nth),
            "securityContext": security,
            "volumeMounts": [{"mountPath": "/proc/uptime", "name": "uptime", "readOnly": True}],
        }],
        "dnsPolicy": "ClusterFirstWithHostNet",
        "hostNetwork": True,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "system-node-critical",
        "securityContext": {"fsGroup": 1000},
        "serviceAccountName": NTH,
        "tolerations": [{"operator": "Exists"}],
        "volumes": [{"hostPath": {"path": "/proc/uptime"}, "name": "uptime"}],
    }
    pod_labels = {"app.kubernetes.io/component": "daemonset", "app.kubernetes.io/instance": NTH,
                  "app.kubernetes.io/name": NTH, "k8s-app": NTH, "kubernetes.io/os": "linux"}
    return [
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"labels": _nth_labels(version, "daemonset", app=True), "name": NTH, "namespace": KUBE_SYSTEM},
         "spec": {"selector": {"matchLabels": {"app.kubernetes.io/instance": NTH, "app.kubernetes.io/name": NTH,
                                               "kubernetes.io/os": "linux"}},
                  "template": {"metadata": {"labels": pod_labels}, "spec": pod},
                  "updateStrategy": {"rollingUpdate": {"maxUnavailable": "25%"}, "type": "RollingUpdate"}}},
    ]


# ---------------------------------------------------------------- EBS CSI driver


def ebs_csi_driver(facts):
    return ebs_csi.objects(facts)
