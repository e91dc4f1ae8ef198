# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The Amazon VPC CNI (networking.amazon-vpc-routed-eni), when spec.networking.amazonvpc: the aws-node DaemonSet
(pods get VPC addresses from the node's ENIs), its network policy agent, RBAC and the ENIConfig CRD.  Objects
before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import pinned_image

ADDON = "networking.amazon-vpc-routed-eni"
ECR = "602401143452.dkr.ecr.us-west-2.amazonaws.com"
# aws-node's settings: the defaults of the AWS VPC CNI Helm chart, as kops sets them; spec.networking.amazonvpc.env
# overrides any of them.
DEFAULT_ENV = {
    "ADDITIONAL_ENI_TAGS": "{}",
    "AWS_VPC_CNI_NODE_PORT_SUPPORT": "true",
    "AWS_VPC_ENI_MTU": "9001",
    "AWS_VPC_K8S_CNI_CONFIGURE_RPFILTER": "false",
    "AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG": "false",
    "AWS_VPC_K8S_CNI_EXTERNALSNAT": "false",
    "AWS_VPC_K8S_CNI_LOG_FILE": "/host/var/log/aws-routed-eni/ipamd.log",
    "AWS_VPC_K8S_CNI_LOGLEVEL": "DEBUG",
    "AWS_VPC_K8S_CNI_RANDOMIZESNAT": "prng",
    "AWS_VPC_K8S_CNI_VETHPREFIX": "eni",
    "AWS_VPC_K8S_PLUGIN_LOG_FILE": "/var/log/aws-routed-eni/plugin.log",
    "AWS_VPC_K8S_PLUGIN_LOG_LEVEL": "DEBUG",
    "DISABLE_INTROSPECTION": "false",
    "DISABLE_METRICS": "false",
    "ENABLE_POD_ENI": "false",
    "ENABLE_PREFIX_DELEGATION": "false",
    "ENABLE_SUBNET_DISCOVERY": "true",
    "NETWORK_POLICY_ENFORCING_MODE": "standard",
    "WARM_ENI_TARGET": "1",
    "WARM_PREFIX_TARGET": "1",
    "DISABLE_NETWORK_RESOURCE_PROVISIONING": "false",
}


def _bool(value):
    return "true" if value else "false"


def pinned(repository):
    return pinned_image(ADDON, repository)


def env_values(facts):
    """kops AmazonVpcEnvVars: the defaults, the spec's env, then what the cluster decides."""
    values = dict(DEFAULT_ENV)
    values.update({e["name"]: str(e.get("value", "")) for e in (facts.networking.get("amazonvpc") or {}).get("env") or []})
    values["ENABLE_IPv4"] = _bool(not facts.ipv6_only)
    values["ENABLE_IPv6"] = _bool(facts.ipv6_only)
    if facts.ipv6_only:
        values.update(ENABLE_PREFIX_DELEGATION="true", WARM_PREFIX_TARGET="1")
    values["ADDITIONAL_ENI_TAGS"] = '{"KubernetesCluster":"%s","kubernetes.io/cluster/%s":"owned"}' % (facts.name, facts.name)
    return values


def env_vars(facts):
    """The env entries, by name (Go ranges over the map in key order)."""
    values = env_values(facts)
    return [{"name": name, "value": values[name]} for name in sorted(values)]


def objects(facts):
    vpc = facts.networking.get("amazonvpc") or {}
    # kops tests the value as a template string: any non-empty ANNOTATE_POD_IP lets aws-node patch pods.
    pod_patch = ["patch"] if env_values(facts).get("ANNOTATE_POD_IP") else []
    found = _objects(facts, vpc, pod_patch)
    if facts.selinux:
        next(d for d in found if d["kind"] == "DaemonSet")["spec"]["template"]["spec"]["securityContext"] = {
            "seLinuxOptions": {"level": "s0", "type": "spc_t"}}
    return found


def _objects(facts, vpc, pod_patch):
    """The objects with kops' defaults; objects() adds what the spec changes."""
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "eniconfigs.crd.k8s.amazonaws.com"},
            "spec": {
                "group": "crd.k8s.amazonaws.com",
                "names": {"kind": "ENIConfig", "plural": "eniconfigs", "singular": "eniconfig"},
                "preserveUnknownFields": False,
                "scope": "Cluster",
                "versions": [
                    {
                        "name": "v1alpha1",
                        "schema": {
                            "openAPIV3Schema": {
                                "description": "ENIConfig is the Schema for the eniconfigs API",
                                "properties": {
                                    "apiVersion": {
                                        "description": ("APIVersion defines the versioned schema of this representation of an object.\nServers should convert "
                                                        "recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: "
                                                        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"),
                                        "type": "string",
                                    },
                                    "kind": {
                                        "description": ("Kind is a string value representing the REST resource this object represents.\nServers may infer "
                                                        "this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: "
                                                        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"),
                                        "type": "string",
                                    },
                                    "metadata": {"type": "object"},
                                    "spec": {
                                        "description": "ENIConfigSpec defines the desired state of ENIConfig",
                                        "properties": {
                                            "securityGroups": {"items": {"type": "string"}, "type": "array"},
                                            "subnet": {"type": "string"},
                                        },
                                        "required": ["subnet"],
                                        "type": "object",
                                    },
                                    "status": {
                                        "description": "ENIConfigStatus defines the observed state of ENIConfig",
                                        "type": "object",
                                    },
                                },
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                        "served": True,
                        "storage": True,
                    },
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/version": "v1.23.0",
                    "k8s-app": "aws-node",
                },
                "name": "aws-node",
                "namespace": "kube-system",
            },
        },
        {
            "apiVersion": "v1",
            "data": {
                "branch-eni-cooldown": "60",
                "enable-network-policy-controller": "false",
                "enable-windows-ipam": "false",
                "enable-windows-prefix-delegation": "false",
                "minimum-ip-target": "3",
                "warm-ip-target": "1",
                "warm-prefix-target": "0",
            },
            "kind": "ConfigMap",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/version": "v1.23.0",
                    "k8s-app": "aws-node",
                },
                "name": "amazon-vpc-cni",
                "namespace": "kube-system",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/version": "v1.23.0",
                    "k8s-app": "aws-node",
                },
                "name": "aws-node",
            },
            "rules": [
                {"apiGroups": ["crd.k8s.amazonaws.com"], "resources": ["eniconfigs"], "verbs": ["list", "watch", "get"]},
                {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch", "get"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch", "get"] + pod_patch},
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch", "get"]},
                {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "list"]},
                {
                    "apiGroups": ["networking.k8s.aws"],
                    "resources": ["policyendpoints", "clusterpolicyendpoints"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["networking.k8s.aws"],
                    "resources": ["policyendpoints/status", "clusterpolicyendpoints/status"],
                    "verbs": ["get"],
                },
                {
                    "apiGroups": ["vpcresources.k8s.aws"],
                    "resources": ["cninodes"],
                    "verbs": ["get", "list", "watch", "patch"],
                },
                {"nonResourceURLs": ["/apis/networking.k8s.aws", "/apis/networking.k8s.aws/*"], "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/version": "v1.23.0",
                    "k8s-app": "aws-node",
                },
                "name": "aws-node",
            },
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "aws-node"},
            "subjects": [{"kind": "ServiceAccount", "name": "aws-node", "namespace": "kube-system"}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "labels": {
                    "app.kubernetes.io/instance": "aws-vpc-cni",
                    "app.kubernetes.io/name": "aws-node",
                    "app.kubernetes.io/version": "v1.23.0",
                    "k8s-app": "aws-node",
                },
                "name": "aws-node",
                "namespace": "kube-system",
            },
            "spec": {
                "selector": {"matchLabels": {"k8s-app": "aws-node"}},
                "template": {
                    "metadata": {
                        "labels": {
                            "app.kubernetes.io/instance": "aws-vpc-cni",
                            "app.kubernetes.io/name": "aws-node",
                            "k8s-app": "aws-node",
                        },
                    },
                    "spec": {
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                                {
                                                    "key": "kubernetes.io/arch",
                                                    "operator": "In",
                                                    "values": ["amd64", "arm64"],
                                                },
                                                {
                                                    "key": "eks.amazonaws.com/compute-type",
                                                    "operator": "NotIn",
                                                    "values": ["fargate", "hybrid", "auto"],
                                                },
                                            ],
                                        },
                                    ],
                                },
                            },
                        },
                        "containers": [
                            {
                                "env": [
                                    *env_vars(facts),
                                    {"name": "VPC_CNI_VERSION", "value": "v1.23.0"},
                                    {
                                        "name": "MY_NODE_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                                    },
                                    {
                                        "name": "MY_POD_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
                                    },
                                    {"name": "CLUSTER_NAME", "value": facts.name},
                                ],
                                "image": vpc.get("imageName") or pinned(ECR + "/amazon-k8s-cni"),
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "exec": {
                                        "command": [
                                            "/app/grpc-health-probe",
                                            "-addr=unix:///var/run/aws-node/ipamd.sock",
                                            "-connect-timeout=5s",
                                            "-rpc-timeout=5s",
                                        ],
                                    },
                                    "initialDelaySeconds": 60,
                                    "timeoutSeconds": 10,
                                },
                                "name": "aws-node",
                                "ports": [{"containerPort": 61678, "name": "metrics"}],
                                "readinessProbe": {
                                    "exec": {
                                        "command": [
                                            "/app/grpc-health-probe",
                                            "-addr=unix:///var/run/aws-node/ipamd.sock",
                                            "-connect-timeout=5s",
                                            "-rpc-timeout=5s",
                                        ],
                                    },
                                    "initialDelaySeconds": 1,
                                    "timeoutSeconds": 10,
                                },
                                "resources": {"requests": {"cpu": "25m"}},
                                "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}},
                                "volumeMounts": [
                                    {"mountPath": "/host/opt/cni/bin", "name": "cni-bin-dir"},
                                    {"mountPath": "/host/etc/cni/net.d", "name": "cni-net-dir"},
                                    {"mountPath": "/host/var/log/aws-routed-eni", "name": "log-dir"},
                                    {"mountPath": "/var/run/aws-node", "name": "run-dir"},
                                    {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                                ],
                            },
                            {
                                "args": [
                                    "--enable-ipv6=false",
                                    "--enable-network-policy=false",
                                    "--enable-cloudwatch-logs=false",
                                    "--enable-policy-event-logs=false",
                                    "--log-file=/var/log/aws-routed-eni/network-policy-agent.log",
                                    "--metrics-bind-addr=:8162",
                                    "--health-probe-bind-addr=:8163",
                                    "--conntrack-cache-cleanup-period=300",
                                    "--conntrack-cache-table-size=524288",
                                    "--log-level=debug",
                                ],
                                "env": [
                                    {
                                        "name": "MY_NODE_NAME",
                                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                                    },
                                ],
                                "image": vpc.get("networkPolicyAgentImage") or pinned(ECR + "/amazon/aws-network-policy-agent"),
                                "imagePullPolicy": "IfNotPresent",
                                "name": "aws-eks-nodeagent",
                                "ports": [{"containerPort": 8162, "name": "agentmetrics"}],
                                "resources": {"requests": {"cpu": "25m"}},
                                "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}, "privileged": True},
                                "volumeMounts": [
                                    {"mountPath": "/host/opt/cni/bin", "name": "cni-bin-dir"},
                                    {"mountPath": "/sys/fs/bpf", "name": "bpf-pin-path"},
                                    {"mountPath": "/var/log/aws-routed-eni", "name": "log-dir"},
                                    {"mountPath": "/var/run/aws-node", "name": "run-dir"},
                                ],
                            },
                        ],
                        "hostNetwork": True,
                        "initContainers": [
                            {
                                "env": [
                                    {"name": "DISABLE_TCP_EARLY_DEMUX", "value": "false"},
                                    {"name": "ENABLE_IPv6", "value": _bool(facts.ipv6_only)},
                                ],
                                "image": vpc.get("initImageName") or pinned(ECR + "/amazon-k8s-cni-init"),
                                "imagePullPolicy": "IfNotPresent",
                                "name": "aws-vpc-cni-init",
                                "resources": {"requests": {"cpu": "25m"}},
                                "securityContext": {"privileged": True},
                                "volumeMounts": [{"mountPath": "/host/opt/cni/bin", "name": "cni-bin-dir"}],
                            },
                        ],
                        "priorityClassName": "system-node-critical",
                        "serviceAccountName": "aws-node",
                        "terminationGracePeriodSeconds": 10,
                        "tolerations": [{"operator": "Exists"}],
                        "volumes": [
                            {"hostPath": {"path": "/sys/fs/bpf"}, "name": "bpf-pin-path"},
                            {"hostPath": {"path": "/opt/cni/bin"}, "name": "cni-bin-dir"},
                            {"hostPath": {"path": "/etc/cni/net.d"}, "name": "cni-net-dir"},
                            {
                                "hostPath": {"path": "/var/log/aws-routed-eni", "type": "DirectoryOrCreate"},
                                "name": "log-dir",
                            },
                            {"hostPath": {"path": "/var/run/aws-node", "type": "DirectoryOrCreate"}, "name": "run-dir"},
                            {"hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}, "name": "xtables-lock"},
                        ],
                    },
                },
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": "10%"}, "type": "RollingUpdate"},
            },
        },
    ]
