# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' GCE object names, labels and network tags.

GCE names allow [a-z0-9-] and at most 63 characters, so kops replaces the dots of the
cluster name by dashes and, where a name would be too long, cuts it and ends it with a
6-character hash of the whole (pkg/truncate).  Which rule applies depends on the kind,
as kops decided per kind; each function below names the kinds that use it.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.truncate import truncate

MAX_NAME = 63
# Terraform's google provider refuses a name_prefix longer than this (kops' InstanceTemplateNamePrefixMaxLength).
TEMPLATE_PREFIX_MAX = 32
SERVICE_ACCOUNT_MAX = 30

LABEL_CLUSTER = "k8s-io-cluster-name"
LABEL_INSTANCE_GROUP = "k8s-io-instance-group"
LABEL_ROLE_PREFIX = "k8s-io-role-"
LABEL_ETCD_PREFIX = "k8s-io-etcd-"

# Instance-group role (v1alpha2 spelling) -> kops' lower-case role (network tags, labels).
ROLE_NAMES = {"Master": "master", "ControlPlane": "control-plane", "Node": "node", "Bastion": "bastion",
              "APIServer": "apiserver"}


def safe_cluster_name(cluster_name):
    """The cluster name GCE accepts (kops' SafeClusterName): the value of the k8s-io-cluster-name label."""
    return cluster_name.replace(".", "-")


def cluster_suffixed(object_name, cluster_name, max_length=MAX_NAME):
    """<object>-<cluster dashes>, the cluster part cut with a hash to fit (kops' ClusterSuffixedName):
    subnetworks, firewall rules, routers, addresses, health checks, backend services, forwarding
    rules, target pools, etcd disks and (at 30) service accounts."""
    prefix = object_name + "-"
    return prefix + truncate(safe_cluster_name(cluster_name), max_length - len(prefix))


def cluster_prefixed(object_name, cluster_name, max_length=MAX_NAME):
    """<cluster dashes>-<object>, the cluster part cut with a hash to fit (kops' ClusterPrefixedName): network tags."""
    suffix = "-" + object_name
    return truncate(safe_cluster_name(cluster_name), max_length - len(suffix)) + suffix


def network_name(cluster_name):
    """The cluster's network (kops' SafeTruncatedClusterName)."""
    return truncate(safe_cluster_name(cluster_name), MAX_NAME)


def safe_object_name(name, cluster_name):
    """<name>-<cluster>, dots to dashes, never cut (kops' SafeObjectName): instance templates' task names."""
    return safe_cluster_name("%s-%s" % (name, cluster_name))


def template_name_prefix(group_name, cluster_name):
    """The instance template's name prefix (a timestamp follows it in GCE)."""
    return truncate(safe_object_name(group_name, cluster_name), TEMPLATE_PREFIX_MAX)


def instance_group_manager_name(cluster_name, group_name, zone):
    """<zone letter>-<group>-<cluster dashes>, cut with a hash at 63 (kops' NameForInstanceGroupManager)."""
    short_zone = zone.rsplit("-", 1)[-1]
    return truncate(safe_object_name("%s.%s" % (short_zone, group_name), cluster_name), MAX_NAME)


def role_tag(cluster_name, role):
    """The network tag of an instance-group role (kops' TagForRole); role in kops' lower-case spelling."""
    return cluster_prefixed(LABEL_ROLE_PREFIX + role, cluster_name)


def service_account_id(name, cluster_name):
    """A service account's id (the part before @): <name>-<cluster>, at most 30 characters."""
    return cluster_suffixed(name, cluster_name, SERVICE_ACCOUNT_MAX)


def etcd_disk_name(member, etcd_cluster, cluster_name):
    """<member>-etcd-<cluster>-<cluster dashes>; a leading digit or dash gets a 'd' (disk names start with a letter)."""
    prefix = ("%s.etcd-%s" % (member, etcd_cluster)).replace(".", "-")
    if prefix[0] in "0123456789-":
        prefix = "d" + prefix
    return cluster_suffixed(prefix, cluster_name)


def encode_label(value):
    """A label value GCE accepts (kops' EncodeGCELabel): [0-9a-z] kept, any other byte as -<hex>."""
    out = []
    for byte in value.encode("utf-8"):
        char = chr(byte)
        out.append(char if "0" <= char <= "9" or "a" <= char <= "z" else "-%02x" % byte)
    return "".join(out)
