# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node labeller's RBAC (kops-controller's: `+kubebuilder:rbac:groups=,resources=nodes,verbs=get;list;watch;patch`
on its node controller), an addon of the collection's own: nodeconfig/store.py writes it to
addons/node-labeller.kubeops.io/k8s-1.16.yaml and the bootstrap channel lists it, so protokube applies it with the
rest.  The subject is the user of the labeller's client certificate (nodeup/credentials.py node_labeller_request).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_labeller

NAME = "node-labeller.kubeops.io"
ADDON_ID = "k8s-1.16"
PATH = "addons/%s/%s.yaml" % (NAME, ADDON_ID)
ROLE = "kubeops:node-labeller"
RBAC = "rbac.authorization.k8s.io"


def rbac_objects():
    labels = {"addon.kops.k8s.io/name": NAME}
    return [
        {"apiVersion": RBAC + "/v1", "kind": "ClusterRole", "metadata": {"name": ROLE, "labels": labels},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]}]},
        {"apiVersion": RBAC + "/v1", "kind": "ClusterRoleBinding", "metadata": {"name": ROLE, "labels": labels},
         "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": ROLE},
         "subjects": [{"apiGroup": RBAC, "kind": "User", "name": node_labeller.USER}]},
    ]


def manifest():
    return objects.dump_objects(rbac_objects()).encode("utf-8")
