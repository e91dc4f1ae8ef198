# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""How a control-plane node installs the etcd the spec asks for (roles/protokube's install plan).

kops runs etcd from etcd-manager's image; roles/protokube runs etcd under
systemd from etcd's release tarball, the exact version of
spec.etcdClusters[].version, pinned by the sha256 in asset_data (from
etcd's SHA256SUMS), from spec.assets.fileRepository when set (same path,
as kops mirrors its assets).  kops runs any etcd version (its image): for one
asset_data does not pin, the hashes are the user's (cloud_facts.etcd_sha256)
or read from the release's published SHA256SUMS, and the plan says which.  Each version unpacks into its own directory,
so a version change installs beside the running one and the unit switches.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.generated import asset_data
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

RELEASE = "https://github.com/etcd-io/etcd/releases/download/v{version}/etcd-v{version}-linux-{arch}.tar.gz"
SUMS = "https://github.com/etcd-io/etcd/releases/download/v{version}/SHA256SUMS"
TARBALL = "etcd-v{version}-linux-{arch}.tar.gz"
SUMS_FETCH_TIMEOUT = 30
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
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


def sums_url(version, file_repository=None):
    """Where etcd publishes a release's checksums (SHA256SUMS beside its tarballs), mirrored like the tarballs."""
    return mirrored(SUMS.format(version=version), file_repository)


def fetch_sums(url):
    """{file name: sha256} of a SHA256SUMS file (sha256sum's "<hash>  <name>" lines); one line naming the URL when
    it cannot be read."""
    from ansible.module_utils.urls import open_url
    try:
        text = open_url(url, timeout=SUMS_FETCH_TIMEOUT).read().decode("utf-8")
    except Exception as error:  # pylint: disable=broad-except  # any failure: one line naming the URL
        raise NodeConfigError("cannot read %s (%s)" % (url, error)) from None
    sums = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and HEX64.match(parts[0]):
            sums[parts[1].lstrip("*")] = parts[0].lower()
    return sums


def _given_or_fetched(etcd_name, version, file_repository, given, fetch):
    """({arch: sha256}, how they were obtained) of a version asset_data does not pin: the user's
    (cloud_facts.etcd_sha256 {version: {arch: sha256}}), else the release's published SHA256SUMS."""
    mine = (given or {}).get(version) or (given or {}).get("v" + version)
    if mine:
        missing = [a for a in ARCHITECTURES if not HEX64.match(str(mine.get(a) or ""))]
        if missing:
            raise NodeConfigError("cloud_facts.etcd_sha256[%s]: give the sha256 (64 hex digits) of the linux-%s tarball"
                                  % (version, " and linux-".join(missing)))
        return {a: mine[a].lower() for a in ARCHITECTURES}, "given in cloud_facts.etcd_sha256"
    url = sums_url(version, file_repository)
    try:
        sums = (fetch or fetch_sums)(url)
    except ValueError as error:
        raise NodeConfigError("etcd cluster %s: etcd %s has no pinned sha256 and %s" % (etcd_name, version, error),
                              fix="give them as cloud_facts.etcd_sha256 {%s: {amd64: <sha256>, arm64: <sha256>}}, "
                                  "or use a pinned version (%s)" % (version, ", ".join(pinned_versions()))) from None
    digests = {a: sums.get(TARBALL.format(version=version, arch=a)) for a in ARCHITECTURES}
    missing = [TARBALL.format(version=version, arch=a) for a, d in digests.items() if not d]
    if missing:
        raise NodeConfigError("etcd cluster %s: %s lists no sha256 for %s" % (etcd_name, url, ", ".join(missing)),
                              fix="give them as cloud_facts.etcd_sha256")
    return digests, "read from " + url


def install_plan(etcd_name, version, file_repository=None, given=None, fetch=None):
    """{version, dir, assets: {arch: "<sha256>@<url>"}} for one etcd cluster.

    The sha256 of each tarball: asset_data's pin; for a version it does not pin (kops runs any version), the
    one the user gives (given: cloud_facts.etcd_sha256) or the one etcd publishes in the release's SHA256SUMS
    (fetch(url) -> {file: sha256}, default: read over HTTP); the plan then says which in sha256Source."""
    version = str(version or "").lstrip("v")
    if not version:
        raise NodeConfigError("etcd cluster %s: no etcd version" % etcd_name,
                              fix="set spec.etcdClusters[].version (one of %s)" % ", ".join(pinned_versions()))
    pinned = {a: asset_data.SHA256.get(RELEASE.format(version=version, arch=a)) for a in ARCHITECTURES}
    source = None
    if not all(pinned.values()):
        pinned, source = _given_or_fetched(etcd_name, version, file_repository, given, fetch)
    assets = {a: "%s@%s" % (pinned[a], mirrored(RELEASE.format(version=version, arch=a), file_repository))
              for a in ARCHITECTURES}
    plan = {"version": version, "dir": INSTALL_DIR % version, "assets": assets}
    if source:
        plan["sha256Source"] = source
    return plan
