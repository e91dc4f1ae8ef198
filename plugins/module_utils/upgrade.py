# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops upgrade cluster: the Kubernetes version and images a cluster should move to.

Follows kops' cmd/kops/upgrade_cluster.go: the actions are the cluster's
``channel`` (when the one asked for differs from the spec's), its
``kubernetesVersion`` (the channel's recommendation for the current minor, or
the next minor's when this kops supports it; or the version the user gives)
and each instance group's ``image`` when it is empty or one of kops' upstream
channel images (a custom image is kept).  kops never proposes a downgrade.

Stricter than kops on a version the user gives (kops writes it unchecked and
only ``kops update`` complains): a downgrade, a skipped minor version, a
version below the channel's required one for its range, or outside what this
kops supports is refused here, naming the versions to take instead.
"""

from __future__ import annotations

import collections
import copy

from ansible_collections.kubeops.kops.plugins.module_utils import semver, tables
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.api.validation import OLDEST_SUPPORTED_KUBERNETES
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels
from ansible_collections.kubeops.kops.plugins.module_utils.completion.instance_groups import machine_architecture
from ansible_collections.kubeops.kops.plugins.module_utils.kops_version import KOPS_VERSION
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ServiceError

# Images kops' channels have shipped (kops Channel.HasUpstreamImagePrefix): an instance group running one of
# these follows the channel; any other image is the user's choice and is kept.
UPSTREAM_IMAGE_PREFIXES = (
    "kope.io/k8s-",
    "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-",
    "099720109477/ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-",
    "099720109477/ubuntu/images/hvm-ssd/ubuntu-focal-20.04-",
    "cos-cloud/cos-stable-",
    "ubuntu-os-cloud/ubuntu-2004-focal-",
    "ubuntu-os-cloud/ubuntu-2204-jammy-",
    "ubuntu-os-cloud/ubuntu-2404-noble-",
    "Canonical:0001-com-ubuntu-server-focal:20_04-lts-gen2:",
    "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:",
    "Canonical:ubuntu-24_04-lts:server-gen1:",
    "Canonical:ubuntu-24_04-lts:server:",
    "Canonical:ubuntu-24_04-lts:server-arm64:",
)

# One line of kops' ITEM / PROPERTY / OLD / NEW table; field is the spec field it sets.
Action = collections.namedtuple("Action", "item property old new field")


class UpgradeError(ServiceError):
    """An upgrade kops' rules refuse; the message names the versions to take instead."""


def has_upstream_image_prefix(image):
    return any(image.startswith(prefix) for prefix in UPSTREAM_IMAGE_PREFIXES)


def kubernetes_version_spec(channel, version):
    """The channel's kubernetesVersions entry whose range holds version (kops FindKubernetesVersionSpec)."""
    for entry in channel.spec.get("kubernetesVersions") or []:
        if not entry.get("range") or semver.in_range(version, entry["range"]):
            return entry
    return None


def recommended_for(channel, version):
    """The channel's recommended version for version's range, or None."""
    entry = kubernetes_version_spec(channel, version)
    return semver.parse(entry["recommendedVersion"]) if entry and entry.get("recommendedVersion") else None


def channel_proposal(channel, current, kops_version=KOPS_VERSION):
    """kops' proposal: the recommendation for the current minor, or the next minor's when this kops reaches it."""
    if current is None:  # kops' fallback when the spec names no version: the channel's pick for this kops
        recommended = channel.recommended_kubernetes_version(kops_version)
        return semver.parse(recommended) if recommended else None
    proposed = recommended_for(channel, current)
    if proposed is None:
        return None
    next_minor = semver.parse("%d.%d.0" % (proposed.major, proposed.minor + 1))
    if next_minor <= semver.parse(kops_version):
        proposed = recommended_for(channel, next_minor) or proposed
    return proposed


def upgrade_path(channel, current, target):
    """The versions to take from current to target, one minor at a time: the channel's recommendation per minor."""
    path = []
    for minor in range(current.minor + 1, target.minor + 1):
        recommended = recommended_for(channel, semver.parse("%d.%d.0" % (current.major, minor)))
        path.append(str(recommended) if recommended and recommended.minor == minor else "%d.%d.x" % (current.major, minor))
    path[-1] = str(target)
    return path


def _version_of(text):
    """A version as kops reads spec.kubernetesVersion (ParseKubernetesVersion): a release, or a Kubernetes build's base
    URL naming v1.<minor> (patch 0: the URL does not say); None for anything else."""
    try:
        return semver.kubernetes_version(text) if semver.is_base_url(text) else semver.parse(text)
    except ValueError:
        return None


def check_target(channel, current, target, kops_version=KOPS_VERSION):
    """Refuse a target kops' rules do not allow from current (None: the spec names no version)."""
    kops = semver.parse(kops_version)
    if target < semver.parse(OLDEST_SUPPORTED_KUBERNETES):
        raise UpgradeError("kubernetes_version %s: kOps %d.%d supports Kubernetes %s and newer"
                           % (target, kops.major, kops.minor, OLDEST_SUPPORTED_KUBERNETES))
    if target[:2] > kops[:2]:
        raise UpgradeError("kubernetes_version %s: kOps %d.%d supports Kubernetes up to %d.%d.x (kops: \"This version "
                           "of kubernetes is not yet supported; upgrading kops is required\")"
                           % (target, kops.major, kops.minor, kops.major, kops.minor))
    entry = kubernetes_version_spec(channel, target)
    required = entry.get("requiredVersion") if entry else None
    if required and semver.parse(required) > target:
        raise UpgradeError("kubernetes_version %s: the %s channel requires at least %s for range %s"
                           % (target, channel.name, required, entry.get("range")))
    if current is None:
        return
    if target < current:
        raise UpgradeError("kubernetes_version %s is older than the cluster's %s: kops does not downgrade a cluster"
                           % (target, current))
    if target.major != current.major:
        raise UpgradeError("kubernetes_version %s: kops upgrades within Kubernetes %d.x only" % (target, current.major))
    if target.minor > current.minor + 1:
        path = upgrade_path(channel, current, target)
        raise UpgradeError(
            "kubernetes_version %s: Kubernetes upgrades one minor version at a time and %s -> %s skips %s; take %s "
            "(set kubernetes_version=%s, update and roll the cluster, then the next)"
            % (target, current, target, ", ".join("%d.%d" % (current.major, m) for m in range(current.minor + 1, target.minor)),
               " -> ".join([str(current)] + path), path[0]))


def plan_upgrade(cluster, instance_groups, channel_name=None, kubernetes_version=None, kops_version=KOPS_VERSION):
    """(actions, cluster after, instance groups after, notes) for kops upgrade cluster; nothing is written."""
    spec = cluster.get("spec") or {}
    cluster = copy.deepcopy(cluster)
    instance_groups = [copy.deepcopy(ig) for ig in instance_groups]
    actions, notes = [], []
    name = channel_name or spec.get("channel") or channels.DEFAULT_CHANNEL
    channel = channels.load_channel(name)
    if name != spec.get("channel"):
        actions.append(Action("Cluster", "Channel", spec.get("channel") or "", name, "spec.channel"))
        cluster["spec"]["channel"] = name

    text = spec.get("kubernetesVersion") or ""
    current = _version_of(text)
    if text and current is None:
        notes.append("spec.kubernetesVersion %r is not a version; taking the channel's recommendation" % text)
    if kubernetes_version:
        proposed = _version_of(kubernetes_version)
        if proposed is None:
            raise UpgradeError("kubernetes_version %r is neither a version (e.g. 1.35.7) nor the URL of a Kubernetes "
                               "build naming its version (e.g. https://example.com/builds/v1.35.7)"
                               % kubernetes_version)
        check_target(channel, current, proposed, kops_version)
        # A side-loaded build (kops' base URL) is written as given: its URL is where the nodes take it from.
        new_text = kubernetes_version if semver.is_base_url(kubernetes_version) else str(proposed)
    else:
        proposed = channel_proposal(channel, current, kops_version)
        if proposed is not None and current is not None and current > proposed:
            notes.append("cluster version %s is newer than the %s channel's %s; kept" % (current, name, proposed))
            proposed = current
        if proposed is not None and current is not None and proposed != current:
            check_target(channel, current, proposed, kops_version)
        new_text = str(proposed) if proposed is not None else text
    if new_text != text and (proposed != current or semver.is_base_url(new_text)):
        actions.append(Action("Cluster", "KubernetesVersion", text, new_text, "spec.kubernetesVersion"))
        cluster["spec"]["kubernetesVersion"] = new_text
    proposed = proposed or current

    if proposed is not None:
        for ig in instance_groups:
            ig_spec = ig.setdefault("spec", {})
            group = objects.name_of(ig)
            image = channel.find_image(spec.get("cloudProvider"), str(proposed),
                                       machine_architecture(ig_spec.get("machineType")))
            old = ig_spec.get("image") or ""
            if image is None:
                notes.append("instance group %s: the %s channel has no %s image for Kubernetes %s; image kept"
                             % (group, name, spec.get("cloudProvider"), proposed))
            elif old and not has_upstream_image_prefix(old):
                notes.append("instance group %s: custom image %s kept" % (group, old))
            elif old != image:
                actions.append(Action("InstanceGroup/" + group, "Image", old, image, "spec.image"))
                ig_spec["image"] = image
    return actions, cluster, instance_groups, notes


def table(actions):
    """kops' ITEM PROPERTY OLD NEW table."""
    return tables.render(["ITEM", "PROPERTY", "OLD", "NEW"], [(a.item, a.property, a.old, a.new) for a in actions])
