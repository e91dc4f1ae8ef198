# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""How a control-plane node installs the etcd the spec asks for (roles/protokube's install plan).

kops runs etcd from etcd-manager's image; roles/protokube runs etcd under
systemd from etcd's release tarball, the exact version of
spec.etcdClusters[].version, pinned by the sha256 in asset_data (from
etcd's SHA256SUMS), from spec.assets.fileRepository when set (same path,
as kops mirrors its assets).  Each version unpacks into its own directory,
so a version change installs beside the running one and the unit switches.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import asset_data

RELEASE = "https://github.com/etcd-io/etcd/releases/download/v{version}/etcd-v{version}-linux-{arch}.tar.gz"
ARCHITECTURES = ("amd64", "arm64")
INSTALL_DIR = "/opt/etcd-v%s"


def pinned_versions():
    """The etcd versions asset_data has a sha256 for on every architecture, oldest first."""
    versions = set()
    for url in asset_data.SHA256:
        if url.startswith("https://github.com/etcd-io/etcd/releases/download/v"):
            versions.add(url.split("/")[7][1:])
    complete = [v for v in versions if all(RELEASE.format(version=v, arch=a) in asset_data.SHA256 for a in ARCHITECTURES)]
    return sorted(complete, key=lambda v: tuple(int(p) for p in v.split(".")))


def mirrored(url, file_repository):
    if not file_repository:
        return url
    return "%s/%s" % (file_repository.rstrip("/"), url.split("://", 1)[1].split("/", 1)[1])


def install_plan(etcd_name, version, file_repository=None):
    """{version, dir, assets: {arch: "<sha256>@<url>"}} for one etcd cluster; a version with no pinned hash is refused."""
    version = str(version or "").lstrip("v")
    assets = {}
    for arch in ARCHITECTURES:
        url = RELEASE.format(version=version, arch=arch)
        digest = asset_data.SHA256.get(url)
        if not digest:
            raise ValueError("etcd cluster %s: etcd %s has no pinned sha256 (nodes install etcd only from a release whose "
                             "hash asset_data holds: %s); set spec.etcdClusters[].version to one of them"
                             % (etcd_name, version or "(no version)", ", ".join(pinned_versions())))
        assets[arch] = "%s@%s" % (digest, mirrored(url, file_repository))
    return {"version": version, "dir": INSTALL_DIR % version, "assets": assets}
