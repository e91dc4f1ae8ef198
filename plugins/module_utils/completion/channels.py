# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Release channels: default images and Kubernetes versions per kops version."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.completion.generated.channel_data import CHANNEL_TEXT
# The kops release whose behaviour this collection reproduces; channels pick their recommendations by it.
from ansible_collections.kubeops.kops.plugins.module_utils.kops_version import KOPS_VERSION
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError
DEFAULT_CHANNEL = "stable"
ARCH_AMD64 = "amd64"
ARCH_ARM64 = "arm64"


class ChannelError(SpecError):
    pass


class Channel(object):
    def __init__(self, name, spec):
        self.name = name
        self.spec = spec or {}

    def find_image(self, provider, kubernetes_version, architecture=ARCH_AMD64):
        """First image in the channel matching provider, architecture and k8s version (kops' rule)."""
        version = semver.kubernetes_version(kubernetes_version)
        for image in self.spec.get("images") or []:
            if image.get("providerID") != provider:
                continue
            if image.get("architectureID") and image["architectureID"] != architecture:
                continue
            if image.get("kubernetesVersion") and not semver.in_range(version, image["kubernetesVersion"]):
                continue
            return image["name"]
        return None

    def recommended_kubernetes_version(self, kops_version=KOPS_VERSION):
        """The Kubernetes version the channel recommends to this kops version."""
        version = semver.parse(kops_version)
        for entry in self.spec.get("kopsVersions") or []:
            if semver.in_range(version, entry["range"]) and entry.get("kubernetesVersion"):
                return str(semver.parse(entry["kubernetesVersion"]))
        return None


def load_channel(name=DEFAULT_CHANNEL):
    """Load an embedded channel by name.  URLs are not fetched: kops users can pin
    ``kubernetesVersion`` and images instead, and nothing here needs a network."""
    text = CHANNEL_TEXT.get(name or DEFAULT_CHANNEL)
    if text is None:
        raise ChannelError(
            "spec.channel: channel %r is not available offline; use one of %s, or set "
            "kubernetesVersion and instance group images explicitly" % (name, ", ".join(sorted(CHANNEL_TEXT))))
    documents = objects.load_yaml_documents(text, source="channel %s" % name)
    return Channel(name, (documents[0] if documents else {}).get("spec"))
