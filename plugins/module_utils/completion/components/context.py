# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What every options builder needs to know about the cluster (kops' OptionsContext), and small helpers."""

from __future__ import annotations

import copy
import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.truncate import truncate
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import versions
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

CLOUD_AWS = "aws"
CLOUD_GCE = "gce"
CLOUD_AZURE = "azure"
CLOUD_OPENSTACK = "openstack"


class OptionsContext(object):
    """Cluster name, cloud and Kubernetes versions, read once from the spec being completed."""

    def __init__(self, cluster_name, spec, max_kubelet_version=None, bucket_region=None, docker_tag=None):
        self.cluster_name = cluster_name
        # bucket name -> region (or None), for discovery-store URLs; a cloud fact, so optional.
        self.bucket_region = bucket_region
        # url -> the text of a build's <component>.docker_tag file (a kubernetesVersion that is a URL).
        self.docker_tag = docker_tag
        self.cloud = spec.get("cloudProvider")
        # For comparisons, as kops compares them: without the prerelease (images keep the full version).
        self.control_plane_version = semver.release(semver.kubernetes_version(spec["kubernetesVersion"]))
        # Nodes may lag the control plane when kops pins the kubelet below it (upgrade in progress).
        self.node_version = (semver.release(semver.parse(max_kubelet_version)) if max_kubelet_version
                             else self.control_plane_version)
        self.assets = dict(spec.get("assets") or {})

    def control_plane_below(self, version):
        return self.control_plane_version < semver.parse(version)

    def remap_image(self, image):
        """An image through the user's proxy or mirror (spec.assets), like kops' RemapImage."""
        return normalize_image(self.assets, image)

    def kubernetes_image(self, spec, component):
        """registry.k8s.io/<component>:v<kubernetesVersion>, remapped to the mirror registry if any.

        A build URL (kops' side-loading): the image its amd64 tarball holds, registry.k8s.io/<component>-amd64:<the
        build's docker_tag>, not remapped (nodes of other architectures swap the suffix, as kops' nodeup does)."""
        if semver.is_base_url(spec["kubernetesVersion"]):
            url = "%s/bin/linux/amd64/%s.docker_tag" % (spec["kubernetesVersion"].rstrip("/"), component)
            if self.docker_tag is None:
                raise SpecError("spec.kubernetesVersion %s: the image tag of %s is read from %s"
                                % (spec["kubernetesVersion"], component, url),
                                fix="give the cloud facts a docker_tag lookup")
            return "%s/%s-amd64:%s" % (versions.KUBERNETES_REGISTRY, component, self.docker_tag(url).strip())
        version = semver.kubernetes_version(spec["kubernetesVersion"])
        return self.remap_image("%s/%s:v%s" % (versions.KUBERNETES_REGISTRY, component, version))


def fill(target, defaults):
    """Set every key of defaults that target lacks or has null (user values win)."""
    for key, value in defaults.items():
        if target.get(key) is None:
            target[key] = copy.deepcopy(value)
    return target


def section(parent, key):
    """parent[key] as a dict, created empty when missing or null."""
    if parent.get(key) is None:
        parent[key] = {}
    return parent[key]


def networking(spec):
    return spec.get("networking") or {}


def is_ipv6_only(spec):
    """kops IsIPv6Only: the non-masquerade CIDR is an IPv6 network."""
    nmc = spec.get("nonMasqueradeCIDR")
    if not nmc:
        return False
    try:
        return ipaddress.ip_network(nmc, strict=False).version == 6
    except ValueError:
        return False


def uses_kops_controller_ipam(spec):
    """IPv6-only clusters get their pod ranges from kops-controller, not from the controller managers."""
    return is_ipv6_only(spec)


def uses_kubenet(spec):
    return "kubenet" in networking(spec)


def uses_gce_ip_aliases(spec):
    """GCE "vpc-native" pod addressing: gce networking, and kindnet (which kops always runs on aliases)."""
    return "gce" in networking(spec) or "kindnet" in networking(spec)


def well_known_service_ip(spec, offset):
    network = ipaddress.ip_network(spec["serviceClusterIPRange"], strict=False)
    return str(network.network_address + offset)


def json_merge(target, source):
    """Overlay source on target the way Go's json.Unmarshal into an existing struct does.

    Objects merge key by key, everything else (lists, scalars) is replaced.
    """
    for key, value in (source or {}).items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            json_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def gce_safe_cluster_name(cluster_name):
    """GCE names and tags allow no dots."""
    return cluster_name.replace(".", "-")


def gce_cluster_prefixed_name(object_name, cluster_name, max_length=63):
    """<cluster-with-dashes>-<object>, the cluster part shortened with a hash to fit (kops ClusterPrefixedName)."""
    suffix = "-" + object_name
    return truncate(gce_safe_cluster_name(cluster_name), max_length - len(suffix)) + suffix


def normalize_image(assets, image):
    """kops' NormalizeImage: the image through spec.assets.containerProxy, then containerRegistry."""
    proxy = (assets.get("containerProxy") or "").rstrip("/")
    if proxy:
        first, _sep, rest = image.partition("/")
        if image.count("/") <= 1 and not any(c in first for c in ".:"):
            image = proxy + "/" + image  # a Docker Hub image (library/x or x)
        else:  # the registry host replaced (kops does this to a tagged one-part name too: nginx:1)
            image = proxy + ("/" + rest if rest else "")
    registry = assets.get("containerRegistry")
    if registry:
        name = image[len("registry.k8s.io/"):] if image.startswith("registry.k8s.io/") else image
        if not name.startswith(registry + "/"):
            image = registry + "/" + name.replace("/", "-")
    return image
