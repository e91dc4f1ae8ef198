# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Karpenter (karpenter.sh), when spec.karpenter.enabled on AWS: its CustomResourceDefinitions (karpenter_crds,
generated from kops), the controller as kops renders Karpenter's Helm chart (RBAC, Service, Deployment on the
control plane, PodDisruptionBudget), and for each instance group with manager: Karpenter an EC2NodeClass (image,
root volume, subnets and security groups by tag, instance profile, tags, the group's boot script as user data)
and a NodePool (labels, taints, instance types, capacity type, replicas and limits), as kops' template functions
KarpenterEC2NodeClass and KarpenterNodePool build them.  The controller calls AWS as its own IAM role
(spec.iam.useServiceAccountExternalPermissions, which validation requires): service_accounts.wire adds it.

What the node objects take from the AWS model and the boot scripts comes in as facts.karpenter_nodes
(model/aws/karpenter.py node_inputs).  Objects before kops' relabelling (channel.remap)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import karpenter_crds
from ansible_collections.kubeops.kops.plugins.module_utils.addons.core import KUBE_SYSTEM, binding, role, rule, sa_subject
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError
from ansible_collections.kubeops.kops.plugins.module_utils.taints import parse_taint

ADDON = "karpenter.sh"
NAME = "karpenter"
CHART_VERSION = "1.13.0"  # kops' kustomization.yaml: the Helm chart its template was rendered from
HELM_LABELS = {"app.kubernetes.io/instance": NAME, "app.kubernetes.io/managed-by": "Helm",
               "app.kubernetes.io/name": NAME, "app.kubernetes.io/version": CHART_VERSION,
               "helm.sh/chart": "karpenter-" + CHART_VERSION}
SELECTOR = {"app.kubernetes.io/instance": NAME, "app.kubernetes.io/name": NAME}
DEFAULT_FEATURE_GATES = "ReservedCapacity=true,SpotToSpotConsolidation=false,NodeRepair=false,NodeOverlay=false,StaticCapacity=true"
AWS_GROUP = "karpenter.k8s.aws"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
# kops' DefaultInstanceGroupVolumeSize for a node, awsmodel's volume defaults.
NODE_VOLUME_SIZE = 128
DEFAULT_VOLUME_TYPE = "gp3"
GP3_IOPS, GP3_THROUGHPUT, IO_IOPS = 3000, 125, 100
# Tags Karpenter sets itself on what it launches (isKarpenterEC2NodeClassReservedTag).
RESERVED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim", "karpenter.k8s.aws/ec2nodeclass")
RESERVED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
# kops' ResolveImageOwnerAlias.
IMAGE_OWNERS = {"amazon": "137112412989", "amazon.com": "137112412989", "debian": "136693071363",
                "debian11": "136693071363", "flatcar": "075585003325", "redhat": "309956199498",
                "redhat.com": "309956199498", "ubuntu": "099720109477"}


def applies(facts):
    return facts.provider == "aws" and bool(facts.section("karpenter").get("enabled"))


def _metadata(name, namespace=KUBE_SYSTEM):
    metadata = {"labels": dict(HELM_LABELS), "name": name}
    if namespace:
        metadata["namespace"] = namespace
    return metadata


def _rbac():
    leases = ["coordination.k8s.io"]
    node_pools = ["nodepools", "nodepools/status", "nodeclaims", "nodeclaims/status"]
    admin = role("ClusterRole", "karpenter-admin", [
        rule(["karpenter.sh"], node_pools, ["get", "list", "watch", "create", "delete", "patch"]),
        rule([AWS_GROUP], ["ec2nodeclasses"], ["get", "list", "watch", "create", "delete", "patch"])])
    admin["metadata"] = _metadata("karpenter-admin", None)
    admin["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"] = "true"
    found = [
        dict(role("Role", NAME, [rule(leases, ["leases"], ["get", "watch"]),
                                 rule(leases, ["leases"], ["patch", "update"], names=["karpenter-leader-election"]),
                                 rule(leases, ["leases"], ["create"])]), metadata=_metadata(NAME)),
        dict(role("Role", "karpenter-dns", [rule([""], ["services"], ["get"], names=["kube-dns"])]),
             metadata=_metadata("karpenter-dns")),
        dict(role("ClusterRole", NAME, [rule([AWS_GROUP], ["ec2nodeclasses"], ["get", "list", "watch"]),
                                        rule([AWS_GROUP], ["ec2nodeclasses", "ec2nodeclasses/status"], ["patch", "update"])]),
             metadata=_metadata(NAME, None)),
        admin,
        dict(role("ClusterRole", "karpenter-core", [
            rule(["karpenter.sh"], node_pools + ["nodeoverlays", "nodeoverlays/status"], ["get", "list", "watch"]),
            rule([""], ["pods", "nodes", "persistentvolumes", "persistentvolumeclaims", "replicationcontrollers",
                        "namespaces"], ["get", "list", "watch"]),
            rule(["storage.k8s.io"], ["storageclasses", "csinodes", "volumeattachments"], ["get", "watch", "list"]),
            rule(["apps"], ["daemonsets", "deployments", "replicasets", "statefulsets"], ["list", "watch"]),
            rule(["policy"], ["poddisruptionbudgets"], ["get", "list", "watch"]),
            rule([""], ["events"], ["get", "list", "watch"]),
            rule(["karpenter.sh"], ["nodeclaims", "nodeclaims/status"], ["create", "delete", "update", "patch"]),
            rule(["karpenter.sh"], ["nodepools", "nodepools/status", "nodeoverlays/status"], ["update", "patch"]),
            rule([""], ["events"], ["create", "patch"]),
            rule([""], ["nodes"], ["patch", "delete", "update"]),
            rule([""], ["pods/eviction"], ["create"]),
            rule([""], ["pods"], ["delete"]),
        ]), metadata=_metadata("karpenter-core", None)),
    ]
    for kind, name, role_kind, namespace in (("RoleBinding", NAME, "Role", KUBE_SYSTEM),
                                             ("RoleBinding", "karpenter-dns", "Role", KUBE_SYSTEM),
                                             ("ClusterRoleBinding", NAME, "ClusterRole", None),
                                             ("ClusterRoleBinding", "karpenter-core", "ClusterRole", None)):
        found.append(dict(binding(kind, name, role_kind, name, [sa_subject(NAME)]), metadata=_metadata(name, namespace)))
    return found


def _env(name, value):
    return {"name": name, "value": value}


def _resource_env(name, divisor, resource):
    return {"name": name, "valueFrom": {"resourceFieldRef": {"containerName": "controller", "divisor": divisor,
                                                             "resource": resource}}}


def _controller(facts, config):
    env = [
        _env("FEATURE_GATES", config.get("featureGates") or DEFAULT_FEATURE_GATES),
        _env("KUBERNETES_MIN_VERSION", "1.19.0-0"),
        _env("KARPENTER_SERVICE", NAME),
        _env("LOG_LEVEL", config.get("logLevel") or ""),
        _env("LOG_OUTPUT_PATHS", "stdout"),
        _env("LOG_ERROR_OUTPUT_PATHS", "stderr"),
        _env("METRICS_PORT", "8080"),
        _env("HEALTH_PROBE_PORT", "8081"),
        {"name": "SYSTEM_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        _resource_env("CPU_REQUESTS", "1m", "requests.cpu"),
        _resource_env("MEMORY_LIMIT", "0", "limits.memory"),
        _env("BATCH_MAX_DURATION", "10s"),
        _env("BATCH_IDLE_DURATION", "1s"),
        _env("PREFERENCE_POLICY", "Respect"),
        _env("MIN_VALUES_POLICY", "Strict"),
        _env("CLUSTER_NAME", facts.name),
        _env("CLUSTER_ENDPOINT", "https://" + (facts.spec.get("masterInternalName") or "api.internal." + facts.name)),
        _env("VM_MEMORY_OVERHEAD_PERCENT", "0.075"),
        _env("RESERVED_ENIS", "0"),
        _env("IGNORE_DRA_REQUESTS", "true"),
        _env("AMI_REFRESH_INTERVAL", "1m"),
        _env("SUBNET_REFRESH_INTERVAL", "1m"),
        _env("AWS_REGION", facts.region),
    ]
    probe = {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 30, "timeoutSeconds": 30}
    container = {
        "env": env,
        "image": config["image"],
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": probe,
        "name": "controller",
        "ports": [{"containerPort": 8080, "name": "http-metrics", "protocol": "TCP"},
                  {"containerPort": 8081, "name": "http", "protocol": "TCP"}],
        "readinessProbe": dict(probe, httpGet={"path": "/readyz", "port": "http"}, initialDelaySeconds=5),
        "resources": {"limits": {"memory": str(config.get("memoryLimit") or "1Gi")},
                      "requests": {"cpu": str(config.get("cpuRequest") or "500m"),
                                   "memory": str(config.get("memoryRequest") or "1Gi")}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False,
                            "readOnlyRootFilesystem": True, "runAsGroup": 65532, "runAsNonRoot": True,
                            "runAsUser": 65532},
    }
    expressions = [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                   {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                   {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]
    pod = {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]}},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": dict(SELECTOR)}, "topologyKey": "kubernetes.io/hostname"}]},
        },
        "automountServiceAccountToken": True,
        "containers": [container],
        "dnsPolicy": "ClusterFirst" if facts.ipv6_only else "Default",  # IPv6 clusters need DNS64
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "system-cluster-critical",
        "schedulerName": "default-scheduler",
        "securityContext": {"fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
        "serviceAccountName": NAME,
        "tolerations": [{"key": key, "operator": "Exists"} for key in
                        ("node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane", "CriticalAddonsOnly")],
        "topologySpreadConstraints": [{"labelSelector": {"matchLabels": dict(SELECTOR)}, "maxSkew": 1,
                                       "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway"}],
    }
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _metadata(NAME),
        "spec": {"replicas": 1, "revisionHistoryLimit": 10, "selector": {"matchLabels": dict(SELECTOR)},
                 "strategy": {"rollingUpdate": {"maxUnavailable": 1}},
                 "template": {"metadata": {"labels": dict(SELECTOR)}, "spec": pod}},
    }


def objects(facts):
    config = facts.section("karpenter")
    if not config.get("image"):
        raise AddonError("addon %s: spec.karpenter.image is missing from the completed spec (complete the cluster "
                         "spec first)" % ADDON)
    documents = [dict(crd) for crd in karpenter_crds.CRDS]
    documents.append({"apiVersion": "v1", "automountServiceAccountToken": False, "kind": "ServiceAccount",
                      "metadata": _metadata(NAME)})
    documents += _rbac()
    documents.append({"apiVersion": "v1", "kind": "Service", "metadata": _metadata(NAME), "spec": {
        "ports": [{"name": "http-metrics", "port": 8080, "protocol": "TCP", "targetPort": "http-metrics"}],
        "selector": dict(SELECTOR), "type": "ClusterIP"}})
    documents.append(_controller(facts, config))
    documents.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _metadata(NAME),
                      "spec": {"maxUnavailable": 1, "selector": {"matchLabels": dict(SELECTOR)}}})
    # kops' KarpenterInstanceGroups: the groups as its store lists them, by name.
    for group in sorted(facts.groups, key=lambda g: (g.get("metadata") or {}).get("name") or ""):
        name = (group.get("metadata") or {}).get("name")
        if (group.get("spec") or {}).get("manager") != "Karpenter":
            continue
        node = (facts.karpenter_nodes or {}).get(name)
        if node is None:
            raise AddonError("addon %s: instance group %s is managed by Karpenter, but its EC2NodeClass and NodePool "
                             "were not given what the AWS model builds for them (render through cluster_update)"
                             % (ADDON, name))
        documents.append(node_class(facts, name, node))
        documents.append(node_pool(name, node))
    return documents


# ---------------------------------------------------------------- per Karpenter instance group


def ami_selector_terms(group_name, image):
    """kops buildKarpenterAMITerms: ami-..., ssm:<parameter>, <name> (owner self) or <owner>/<name>."""
    image = (image or "").strip()
    usage = "must be ami-*, ssm:<parameter>, <name>, or <owner>/<name>"
    if not image or "://" in image:
        raise AddonError("instance group %s: spec.image %r %s for Karpenter's EC2NodeClass" % (group_name, image, usage))
    if image.startswith("ami-"):
        return [{"id": image}]
    if image.startswith("ssm:"):
        if image == "ssm:":
            raise AddonError("instance group %s: spec.image ssm: names no parameter" % group_name)
        return [{"ssmParameter": image[len("ssm:"):]}]
    owner, sep, name = image.partition("/")
    if not sep:
        return [{"name": image, "owner": "self"}]
    if not owner or not name:
        raise AddonError("instance group %s: spec.image %r %s for Karpenter's EC2NodeClass" % (group_name, image, usage))
    return [{"name": name, "owner": IMAGE_OWNERS.get(owner, owner)}]


def block_device_mappings(spec, root_device_name):
    """kops buildKarpenterBlockDeviceMappings: the root volume, with the launch templates' defaults."""
    root = {"size": spec.get("rootVolumeSize"), "type": spec.get("rootVolumeType"),
            "encryption": spec.get("rootVolumeEncryption"), "key": spec.get("rootVolumeEncryptionKey"),
            "iops": spec.get("rootVolumeIops"), "throughput": spec.get("rootVolumeThroughput")}
    size = root["size"] if root["size"] and root["size"] > 0 else NODE_VOLUME_SIZE
    volume_type = root["type"] or DEFAULT_VOLUME_TYPE
    encrypted = True if root["encryption"] is None else bool(root["encryption"])
    iops, throughput = root["iops"], root["throughput"]
    if volume_type in ("io1", "io2"):
        iops, throughput = max(iops or 0, IO_IOPS), None
    elif volume_type == "gp3":
        iops, throughput = max(iops or 0, GP3_IOPS), max(throughput or 0, GP3_THROUGHPUT)
    else:
        iops = throughput = None
    ebs = {"deleteOnTermination": True, "encrypted": encrypted, "volumeSize": "%dGi" % size, "volumeType": volume_type}
    if root["encryption"] and root["key"]:  # kops: only an explicitly encrypted volume takes the key
        ebs["kmsKeyID"] = root["key"]
    if iops is not None:
        ebs["iops"] = iops
    if throughput is not None:
        ebs["throughput"] = throughput
    return [{"deviceName": root_device_name, "ebs": ebs, "rootVolume": True}]


def _associate_public_ip(facts, name, spec):
    subnets = {s.get("name"): s for s in facts.spec.get("subnets") or []}
    first = subnets.get((spec.get("subnets") or [None])[0])
    if first is None:
        raise AddonError("instance group %s: spec.subnets names no subnet of the cluster; Karpenter's EC2NodeClass "
                         "needs one" % name)
    kind = first.get("type")
    if kind in ("Public", "Utility"):
        return True if spec.get("associatePublicIp") is None else bool(spec["associatePublicIp"])
    if kind in ("DualStack", "Private"):
        return False
    raise AddonError("instance group %s: subnet %s has type %r (Public, Utility, Private or DualStack)"
                     % (name, first.get("name"), kind))


def node_class(facts, name, node):
    spec = node["group"]["spec"]
    if not node.get("user_data"):
        raise AddonError("instance group %s: Karpenter's EC2NodeClass needs the group's boot script (its user data)"
                         % name)
    if not node.get("root_device_name"):
        raise AddonError("instance group %s: Karpenter's EC2NodeClass needs the root device of image %s"
                         % (name, spec.get("image")))
    if spec.get("securityGroupOverride"):
        groups = [{"id": spec["securityGroupOverride"]}]
    else:
        groups = [{"tags": {"KubernetesCluster": facts.name, "Name": node["security_group"]}}]
    groups += [{"id": group} for group in spec.get("additionalSecurityGroups") or []]
    body = {
        "amiFamily": "Custom",
        "amiSelectorTerms": ami_selector_terms(name, spec.get("image")),
        "associatePublicIPAddress": _associate_public_ip(facts, name, spec),
        "blockDeviceMappings": block_device_mappings(spec, node["root_device_name"]),
        "instanceProfile": node["instance_profile"],
        "securityGroupSelectorTerms": groups,
        "subnetSelectorTerms": [{"tags": {"KubernetesCluster": facts.name,
                                          "kops.k8s.io/instance-group/" + name: "true"}}],
        "userData": node["user_data"],
    }
    tags = {k: v for k, v in node["tags"].items()
            if k and not k.startswith("kubernetes.io/cluster") and k not in RESERVED_TAGS}
    if tags:
        body["tags"] = tags
    kubelet = spec.get("kubelet") or {}
    kubelet = {key: kubelet[key] for key in ("maxPods", "systemReserved", "kubeReserved") if kubelet.get(key)}
    if kubelet:
        body["kubelet"] = kubelet
    return {"apiVersion": AWS_GROUP + "/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": body}


def _reserved_label(key):
    if key == CAPACITY_TYPE:
        return False
    if key == "kubernetes.io/hostname":
        return True
    domain, sep, _rest = key.partition("/")
    return bool(sep) and any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS)


def instance_types(spec):
    values = list(((spec.get("mixedInstancesPolicy") or {}).get("instances") or []))
    values += (spec.get("machineType") or "").split(",")
    return sorted({value.strip() for value in values} - {""})


def capacity_types(spec):
    if spec.get("maxPrice") is not None or spec.get("spotDurationInMinutes") is not None:
        return ["spot"]
    above_base = (spec.get("mixedInstancesPolicy") or {}).get("onDemandAboveBase")
    if above_base is not None and above_base < 100:
        return ["on-demand", "spot"]
    return ["on-demand"]


def node_pool(name, node):
    spec = node["group"]["spec"]
    requirements = [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
    types = instance_types(spec)
    if types:
        requirements.append({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": types})
    requirements.append({"key": CAPACITY_TYPE, "operator": "In", "values": capacity_types(spec)})
    claim = {"nodeClassRef": {"group": AWS_GROUP, "kind": "EC2NodeClass", "name": name}, "requirements": requirements}
    taints = []
    for text in spec.get("taints") or []:
        taint = parse_taint(text)
        if taint is None:
            raise AddonError("instance group %s: spec.taints %r is not key[=value]:effect" % (name, text))
        taint = {"effect": taint["effect"], "key": taint["key"], "value": taint["value"]}
        taints.append({k: v for k, v in taint.items() if v or k != "value"})
    if taints:
        claim["taints"] = taints
    template = {"spec": claim}
    labels = {k: v for k, v in node["node_labels"].items() if not _reserved_label(k)}
    if labels:
        template["metadata"] = {"labels": labels}
    body = {"template": template}
    if (spec.get("minSize") or 0) > 0:
        body["replicas"] = spec["minSize"]
    if spec.get("maxSize") is not None:
        body["limits"] = {"nodes": str(spec["maxSize"])}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": body}
