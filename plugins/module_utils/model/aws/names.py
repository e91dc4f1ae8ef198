# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' names and tags for AWS objects (pkg/model/names.go, awsup tags, terraformWriter)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import terraform_name
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import truncate

__all__ = ["terraform_name"]  # kops' names.go has it; the model imports it from here

TAG_CLUSTER = "KubernetesCluster"
TAG_NAME = "Name"
TAG_CLUSTER_OWNERSHIP = "kubernetes.io/cluster/%s"


def cluster_tags(cluster_name, name, shared=False, extra=None):
    """The tags kops puts on every object it owns (or shares, for BYO network objects)."""
    tags = {
        TAG_CLUSTER: cluster_name,
        TAG_NAME: name,
        TAG_CLUSTER_OWNERSHIP % cluster_name: "shared" if shared else "owned",
    }
    tags.update(extra or {})
    return tags


def resource_name_32(cluster_name, prefix):
    """Load balancer / target group names: <prefix>-<cluster with dots as dashes>, 32 chars, hashed."""
    return truncate("%s-%s" % (prefix, cluster_name.replace(".", "-")), 32, always_hash=True)


def cidr_label(cidr):
    """A CIDR in a rule name: 0.0.0.0/0 -> 0-0-0-0--0, ::/0 -> __--0 (after terraform_name)."""
    return terraform_name(cidr.replace(":", "_"))
