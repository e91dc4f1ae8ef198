# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""etcd clusters: version by Kubernetes version, backup store, the image-volume gate etcd-manager needs
(kops EtcdOptionsBuilder and EtcdManagerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context, versions

# etcd-manager mounts etcd's image as a volume; the kubelet gate exists from 1.32 and is on by default from 1.36.
IMAGE_VOLUME_GATED = ("1.32.0", "1.36.0")


def build(spec, ctx):
    for etcd in spec.get("etcdClusters") or []:
        if not etcd.get("version"):
            etcd["version"] = versions.by_version(versions.ETCD_VERSIONS, ctx.control_plane_version)


def build_manager(spec, ctx):
    low, high = IMAGE_VOLUME_GATED
    if not ctx.control_plane_below(low) and ctx.control_plane_below(high):
        gates = context.section(context.section(spec, "masterKubelet"), "featureGates")
        gates.setdefault("ImageVolume", "true")
    base = spec.get("configBase") or ""
    for index, etcd in enumerate(spec.get("etcdClusters") or []):
        backups = context.section(etcd, "backups")
        if not backups.get("backupStore"):
            backups["backupStore"] = join_path(base, "backups", "etcd", etcd["name"])
        if not versions.etcd_version_is_bundled(etcd["version"]) and not etcd.get("image"):
            raise errors.ValidationError([errors.invalid(
                "spec.etcdClusters[%d].version" % index, etcd["version"],
                "etcd-manager bundles the 3.5, 3.6 and 3.7 patches up to %s; remove the version to use the "
                "recommended one, or also set image to run a custom one" % ", ".join(versions.ETCD_LATEST_PATCHES))],
                "completed cluster")


def join_path(base, *parts):
    path = base
    for part in parts:
        path = path.rstrip("/") + "/" + part.lstrip("/")
    return path
