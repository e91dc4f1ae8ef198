# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""cluster-autoscaler (cluster-autoscaler.addons.k8s.io) on AWS and GCE, when spec.clusterAutoscaler.enabled: one
Deployment on the control plane scaling each autoscaled node group between its minSize and maxSize (on AWS its
ASG, <group>.<cluster>; on GCE each zone's instance group manager, the sizes split across the zones as the
managers' are), and with the priority expander kops' priorities ConfigMap.  Objects before kops' relabelling
(channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects as api_objects
from ansible_collections.kubeops.kops.plugins.module_utils.zones import split_across_zones
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as gce_names

GCE_INSTANCE_GROUP_URL = "https://www.googleapis.com/compute/v1/projects/%s/zones/%s/instanceGroups/%s"


def _node_groups(facts):
    """{name: completed instance group spec} of the Node-role groups (kops GetNodeInstanceGroups)."""
    found = {}
    for group in facts.groups:
        if (group.get("spec") or {}).get("role") == api_objects.ROLE_NODE:
            found[api_objects.name_of(group)] = group["spec"]
    return found


def node_group_flags(facts):
    """--nodes=min:max:<group> for every Node group not marked autoscale: false, sorted by kops' key (the group's
    name; on GCE <group>-<zone> for a group in several zones)."""
    found = {}
    for name, spec in _node_groups(facts).items():
        if spec.get("autoscale", True) is False:
            continue
        if facts.provider == "gce":
            found.update(_gce_node_groups(facts, name, spec))
        else:
            found[name] = (spec.get("minSize", 0), spec.get("maxSize", 0), "%s.%s" % (name, facts.name))
    return ["--nodes=%s:%s:%s" % found[key] for key in sorted(found)]


def _gce_node_groups(facts, name, spec):
    """kops' GCE node groups: one per zone's instance group manager (a zone that can hold no instance left out)."""
    zones = spec.get("zones") or []
    if not zones:
        raise AddonError("addon cluster-autoscaler.addons.k8s.io: instance group %s has no spec.zones; GCE instance "
                         "groups are zonal (complete the instance group first)" % name)
    if not facts.spec.get("project"):
        raise AddonError("addon cluster-autoscaler.addons.k8s.io: spec.project is missing; set spec.project")
    mins = split_across_zones(int(spec.get("minSize", 0)), zones)
    maxes = split_across_zones(int(spec.get("maxSize", 0)), zones)
    found = {}
    for zone in zones:
        if len(zones) > 1 and maxes[zone] == 0:
            continue
        url = GCE_INSTANCE_GROUP_URL % (facts.spec["project"], zone,
                                        gce_names.instance_group_manager_name(facts.name, name, zone))
        found[name if len(zones) == 1 else "%s-%s" % (name, zone)] = (mins[zone], maxes[zone], url)
    return found


def priorities(facts, config):
    """kops ClusterAutoscalerPriorities: the custom config, else each group with autoscale set by its priority."""
    found = {}
    if config.get("customPriorityExpanderConfig") is not None:
        found = {str(k): list(v) for k, v in config["customPriorityExpanderConfig"].items()}
    else:
        for name, spec in sorted(_node_groups(facts).items()):
            if spec.get("autoscale") is not None:
                found.setdefault(str(spec.get("autoscalePriority", 0)), []).append("%s.%s" % (name, facts.name))
    lines = []
    for priority in sorted(found):  # Go sorts the keys as strings
        lines.append("%s:" % priority)
        lines += ["- %s" % value for value in found[priority]]
    return "\n".join(lines)


def _flag(value):
    return "true" if value else "false"


def command(facts, config):
    return (["./cluster-autoscaler",
             "--balance-similar-node-groups=%s" % _flag(config.get("balanceSimilarNodeGroups")),
             "--emit-per-nodegroup-metrics=%s" % _flag(config.get("emitPerNodegroupMetrics")),
             "--cloud-provider=%s" % facts.provider]
            + (["--aws-use-static-instance-list=%s" % _flag(config.get("awsUseStaticInstanceList"))]
               if facts.provider == "aws" else [])
            + ["--expander=%s" % config.get("expander")]
            + node_group_flags(facts)
            + ["--ignore-daemonsets-utilization=%s" % _flag(config.get("ignoreDaemonSetsUtilization")),
               "--scale-down-utilization-threshold=%s" % config.get("scaleDownUtilizationThreshold"),
               "--skip-nodes-with-custom-controller-pods=%s" % _flag(config.get("skipNodesWithCustomControllerPods")),
               "--skip-nodes-with-local-storage=%s" % _flag(config.get("skipNodesWithLocalStorage")),
               "--skip-nodes-with-system-pods=%s" % _flag(config.get("skipNodesWithSystemPods")),
               "--scale-down-delay-after-add=%s" % config.get("scaleDownDelayAfterAdd"),
               "--scale-down-unneeded-time=%s" % config.get("scaleDownUnneededTime"),
               "--scale-down-unready-time=%s" % config.get("scaleDownUnreadyTime"),
               "--new-pod-scale-up-delay=%s" % config.get("newPodScaleUpDelay"),
               "--max-node-provision-time=%s" % config.get("maxNodeProvisionTime"),
               "--cordon-node-before-terminating=%s" % _flag(config.get("cordonNodeBeforeTerminating", True)),
               "--logtostderr=true", "--stderrthreshold=info", "--v=4"])


def objects(facts):
    config = facts.section("clusterAutoscaler")
    if not config.get("image"):
        facts.refuse("cluster-autoscaler.addons.k8s.io", "a spec without spec.clusterAutoscaler.image",
                     "complete the cluster spec first")
    found = _objects(facts, config)
    deployment = next(d for d in found if d["kind"] == "Deployment")
    if facts.provider != "aws":  # the region is AWS's alone (GCE's autoscaler reads the instance groups' URLs)
        del deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    if config.get("podAnnotations"):
        deployment["spec"]["template"]["metadata"]["annotations"].update(
            {key: str(value) for key, value in config["podAnnotations"].items()})
    if facts.use_service_account_external_permissions:
        # kops: on workers as its own IAM role, preferring nodes that are not spot workers.
        del deployment["spec"]["strategy"]
        pod = deployment["spec"]["template"]["spec"]
        for field in ("hostNetwork", "tolerations"):
            del pod[field]
        pod["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "preference": {"matchExpressions": [{"key": "node-role.kubernetes.io/spot-worker",
                                                 "operator": "DoesNotExist"}]},
            "weight": 1}]}}
    if config.get("expander") == "priority" and config.get("createPriorityExpanderConfig"):
        found.insert(found.index(deployment), {
            "apiVersion": "v1", "data": {"priorities": priorities(facts, config)}, "kind": "ConfigMap",
            "metadata": {"labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                         "name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"}})
    return found


def _objects(facts, config):
    """The objects with kops' defaults; objects() adds what the spec changes."""
    return [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"k8s-app": "cluster-autoscaler"}}},
        },
        {
            "apiVersion": "v1",
            "automountServiceAccountToken": True,
            "kind": "ServiceAccount",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
            },
            "rules": [
                {"apiGroups": [""], "resources": ["events", "endpoints"], "verbs": ["create", "patch"]},
                {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]},
                {
                    "apiGroups": [""],
                    "resourceNames": ["cluster-autoscaler"],
                    "resources": ["endpoints"],
                    "verbs": ["get", "update"],
                },
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["watch", "list", "get", "update"]},
                {
                    "apiGroups": ["resource.k8s.io"],
                    "resources": ["resourceslices", "deviceclasses", "resourceclaims"],
                    "verbs": ["watch", "list", "get"],
                },
                {
                    "apiGroups": [""],
                    "resources": [
                        "namespaces",
                        "pods",
                        "services",
                        "replicationcontrollers",
                        "persistentvolumeclaims",
                        "persistentvolumes",
                    ],
                    "verbs": ["watch", "list", "get"],
                },
                {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["watch", "list", "get"]},
                {"apiGroups": ["batch", "extensions"], "resources": ["jobs"], "verbs": ["get", "list", "patch", "watch"]},
                {
                    "apiGroups": ["extensions"],
                    "resources": ["replicasets", "daemonsets"],
                    "verbs": ["watch", "list", "get"],
                },
                {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["watch", "list"]},
                {
                    "apiGroups": ["apps"],
                    "resources": ["daemonsets", "replicasets", "statefulsets"],
                    "verbs": ["watch", "list", "get"],
                },
                {
                    "apiGroups": ["storage.k8s.io"],
                    "resources": [
                        "storageclasses",
                        "csinodes",
                        "csidrivers",
                        "csistoragecapacities",
                        "volumeattachments",
                    ],
                    "verbs": ["watch", "list", "get"],
                },
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch", "get"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resourceNames": ["cluster-autoscaler"],
                    "resources": ["leases"],
                    "verbs": ["get", "update"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-autoscaler"},
            "subjects": [{"kind": "ServiceAccount", "name": "cluster-autoscaler", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
            "rules": [
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
                {
                    "apiGroups": [""],
                    "resourceNames": ["cluster-autoscaler-status"],
                    "resources": ["configmaps"],
                    "verbs": ["delete", "get", "update"],
                },
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cluster-autoscaler"},
            "subjects": [{"kind": "ServiceAccount", "name": "cluster-autoscaler", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
            "spec": {
                "ports": [{"name": "http", "port": 8085, "protocol": "TCP", "targetPort": 8085}],
                "selector": {"app.kubernetes.io/name": "cluster-autoscaler"},
                "type": "ClusterIP",
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "labels": {"app.kubernetes.io/name": "cluster-autoscaler", "k8s-app": "cluster-autoscaler"},
                "name": "cluster-autoscaler",
                "namespace": "kube-system",
            },
            "spec": {
                "replicas": facts.control_plane_controller_replicas(True),
                "selector": {"matchLabels": {"app": "cluster-autoscaler"}},
                "strategy": {"rollingUpdate": {"maxSurge": 0}, "type": "RollingUpdate"},
                "template": {
                    "metadata": {
                        "annotations": {
                            "prometheus.io/port": "8085",
                            "prometheus.io/scrape": "true",
                        },
                        "labels": {
                            "app": "cluster-autoscaler",
                            "app.kubernetes.io/name": "cluster-autoscaler",
                            "k8s-addon": "cluster-autoscaler.addons.k8s.io",
                            "k8s-app": "cluster-autoscaler",
                        },
                    },
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                                            ],
                                        },
                                        {
                                            "matchExpressions": [
                                                {"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                                            ],
                                        },
                                    ],
                                },
                            },
                        },
                        "containers": [
                            {
                                "command": command(facts, config),
                                "env": [{"name": "AWS_REGION", "value": facts.region}],
                                "image": config["image"],
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "failureThreshold": 3,
                                    "httpGet": {"path": "/health-check", "port": "http", "scheme": "HTTP"},
                                    "periodSeconds": 10,
                                    "successThreshold": 1,
                                    "timeoutSeconds": 1,
                                },
                                "name": "cluster-autoscaler",
                                "ports": [{"containerPort": 8085, "name": "http", "protocol": "TCP"}],
                                "resources": {"requests": {"cpu": str(config.get("cpuRequest") or "100m"),
                                                           "memory": str(config.get("memoryRequest") or "300Mi")}},
                            },
                        ],
                        "dnsPolicy": "ClusterFirst",
                        "hostNetwork": True,
                        "nodeSelector": None,
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": "cluster-autoscaler",
                        "tolerations": [
                            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                            {"key": "node-role.kubernetes.io/master", "operator": "Exists"},
                        ],
                        "topologySpreadConstraints": [
                            {
                                "labelSelector": {"matchLabels": {"app": "cluster-autoscaler"}},
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            },
                            {
                                "labelSelector": {"matchLabels": {"app": "cluster-autoscaler"}},
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "DoNotSchedule",
                            },
                        ],
                    },
                },
            },
        },
    ]
