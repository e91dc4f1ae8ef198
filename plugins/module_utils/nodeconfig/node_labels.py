# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The labels a node of an instance group carries, as kops computes them (pkg/nodelabels BuildNodeLabels).

Since Kubernetes 1.16 a kubelet may not set node-role.kubernetes.io/* or other kubernetes.io / k8s.io labels
outside its own set on its Node (the NodeRestriction admission plugin), so kops' nodeup starts the kubelet
without --node-labels and kops-controller labels each node from its instance group.  The controller computes
the set here, once per group, into the nodeup config's kubeops.nodeLabels; the node labeller on the control
plane (nodeup/node_labeller.py) reads it from the store and patches the Nodes (docs/node-labels.md).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, zones
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

LABELLER_DIR = "/etc/kubernetes/kubeops-node-labeller"
LABELLER_INTERVAL_SECONDS = 10


def build_node_labels(cluster_spec, instance_group):
    """kops' BuildNodeLabels: the cluster kubelet's nodeLabels (masterKubelet's for the control plane), the
    group kubelet's over them, the role's labels, then the group's spec.nodeLabels over all."""
    spec = instance_group.get("spec") or {}
    role = spec.get("role") or objects.ROLE_NODE
    if role not in populate.ROLE_NODE_LABELS:
        raise NodeConfigError("instance group %s: spec.role %r has no node labels (one of %s)"
                              % (objects.name_of(instance_group), role, ", ".join(sorted(populate.ROLE_NODE_LABELS))))
    if role == objects.ROLE_BASTION:
        return {}  # kops: "no labels to add"
    cluster_kubelet = cluster_spec.get("masterKubelet" if role == objects.ROLE_CONTROL_PLANE else "kubelet") or {}
    labels = dict(cluster_kubelet.get("nodeLabels") or {})
    labels.update((spec.get("kubelet") or {}).get("nodeLabels") or {})  # JSONMergeStruct merges the maps' keys
    labels.update(populate.ROLE_NODE_LABELS[role])
    labels.update(spec.get("nodeLabels") or {})
    return labels


def node_labels(completed_cluster, instance_group):
    """What the labeller keeps on a node of the group: BuildNodeLabels plus kops.k8s.io/instancegroup.

    kops' AWS identifier sets the instance-group label only when the group's nodeLabels has it (every group
    `kops create` makes does); its GCE identifier always sets it.  We always set it: the labeller knows the
    group from the cloud, and the label is kops' own."""
    labels = build_node_labels(completed_cluster["spec"], instance_group)
    if (instance_group.get("spec") or {}).get("role") != objects.ROLE_BASTION:
        labels[objects.IG_LABEL] = objects.name_of(instance_group)
    return dict(sorted(labels.items()))


def labels_nodes(completed_cluster):
    """Whether the cluster's control plane runs the node labeller (and gets its RBAC addon): on a cloud whose node
    identity the labeller checks (Provider.labels_nodes; nodeup/node_labeller.py); elsewhere nodes keep the labels
    their kubelet may set."""
    return provider_names.declared_value(completed_cluster["spec"].get("cloudProvider"), "labels_nodes", False)


def labeller_settings(completed_cluster, instance_group, api_port=443):
    """The kubeops.nodeLabeller section of a control-plane group's nodeup config: what roles/protokube writes to
    the labeller's settings file; None for other roles and clouds."""
    spec = completed_cluster["spec"]
    if (instance_group.get("spec") or {}).get("role") != objects.ROLE_CONTROL_PLANE or not labels_nodes(completed_cluster):
        return None
    settings = {"cloud": spec["cloudProvider"], "clusterName": completed_cluster["metadata"]["name"],
                "configBase": spec.get("configBase"), "region": zones.region_of(spec),
                "apiServer": "https://127.0.0.1:%d" % api_port, "caCert": LABELLER_DIR + "/ca.crt",
                "clientCert": LABELLER_DIR + "/client.crt", "clientKey": LABELLER_DIR + "/client.key",
                "intervalSeconds": LABELLER_INTERVAL_SECONDS}
    settings.update({option: spec.get(field) for option, field in
                     provider_names.declared_value(spec["cloudProvider"], "spec_options", {}).items()})
    return settings
