#!/usr/bin/env python
"""Regenerate plugins/module_utils/nodeconfig/generated/asset_data.py from a kops checkout.

kops keeps the published sha256 of the release files it installs in
pkg/assets/assetdata/*.yaml (filestores: [{base}], files: [{name, sha256}]).
This keeps the files a node of this collection downloads, for linux amd64 and
arm64 (NODE_FILES below), keyed by their full URL.

kops runs etcd from etcd-manager's images, so its tables have no etcd
release; ours installs etcd's release tarball.  Its hashes come from etcd's
own SHA256SUMS, one per release (https://github.com/etcd-io/etcd/releases/
download/v<version>/SHA256SUMS), saved as <dir>/v<version>/SHA256SUMS and
given with --etcd-sums <dir>; the versions kept are the ones kops supports
(pkg/model/components/etcd.go: <minor>.0 up to each LatestEtcd3xVersion).

    hack/gen_asset_data.py --kops ../kops --etcd-sums ../etcd-sums > plugins/module_utils/nodeconfig/generated/asset_data.py
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

import yaml

import kops_go

ASSETDATA = "pkg/assets/assetdata"
ETCD_VERSIONS = "pkg/model/components/etcd.go"
ETCD_LATEST = re.compile(r'^\s*LatestEtcd\d+Version\s*=\s*"(\d+)\.(\d+)\.(\d+)"', re.MULTILINE)
ETCD_RELEASE = "https://github.com/etcd-io/etcd/releases/download/v%s/"
ETCD_FILE = re.compile(r"^etcd-v[^/]+-linux-(?:amd64|arm64)\.tar\.gz$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# What nodeup installs (kubelet, kubectl, the container runtime, CNI plugins and
# the cloud's credential provider); kops' tables also list darwin builds, the
# other Kubernetes binaries, crictl and checksum files, which nodes never fetch.
_ARCH = r"linux[-/](?:amd64|arm64)"
NODE_FILES = tuple(re.compile(pattern) for pattern in (
    r"^https://dl\.k8s\.io/release/v[^/]+/bin/linux/(?:amd64|arm64)/(?:kubelet|kubectl)$",
    r"^https://github\.com/containerd/containerd/releases/download/v[^/]+/containerd-[^/]+-%s\.tar\.gz$" % _ARCH,
    r"^https://github\.com/opencontainers/runc/releases/download/v[^/]+/runc\.(?:amd64|arm64)$",
    r"^https://github\.com/containernetworking/plugins/releases/download/v[^/]+/cni-plugins-%s-v[^/]+\.tgz$" % _ARCH,
    r"^https://artifacts\.k8s\.io/binaries/cloud-provider-aws/v[^/]+/%s/ecr-credential-provider-%s$" % (_ARCH, _ARCH),
    r"^https://artifacts\.k8s\.io/binaries/cloud-provider-gcp/v[^/]+/auth-provider-gcp/%s/auth-provider-gcp$" % _ARCH,
))

HEADER = '''# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""sha256 of the release files a node downloads, by URL (linux amd64/arm64).

These are the published hashes of each upstream release (the .sha256 files
next to the binaries), the same values kops ships in pkg/assets/assetdata;
etcd's release tarballs from etcd's SHA256SUMS, for the versions kops
supports (hack/gen_asset_data.py --etcd-sums).  A URL that is not here goes
into the nodeup config without a hash and the node fetches <url>.sha256
before it installs the file (etcd's, which has none, is refused).
"""

from __future__ import annotations

'''


def read_hashes(kops):
    """URL -> sha256 of every file a node downloads, from kops' assetdata YAML."""
    hashes = {}
    files = sorted((pathlib.Path(kops) / ASSETDATA).glob("*.yaml"))
    if not files:
        raise ValueError("no %s/*.yaml in %s" % (ASSETDATA, kops))
    for path in files:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        stores = document.get("filestores") or []
        if len(stores) != 1 or "base" not in stores[0]:
            raise ValueError("%s: expected one filestore with a base, found %r" % (path, stores))
        for entry in document.get("files") or []:
            url = stores[0]["base"] + entry["name"]
            if not any(pattern.match(url) for pattern in NODE_FILES):
                continue
            digest = str(entry.get("sha256"))
            if not SHA256.match(digest):
                raise ValueError("%s: %s has sha256 %r, not 64 hex digits" % (path, url, digest))
            if hashes.get(url, digest) != digest:
                raise ValueError("%s: %s has two different hashes" % (path, url))
            hashes[url] = digest
    return hashes


def etcd_versions(kops):
    """The etcd versions kops supports: every patch of each minor up to its LatestEtcd3xVersion."""
    text = (pathlib.Path(kops) / ETCD_VERSIONS).read_text(encoding="utf-8")
    latest = ETCD_LATEST.findall(text)
    if not latest:
        raise ValueError("%s: no LatestEtcd<minor>Version constant" % ETCD_VERSIONS)
    return ["%s.%s.%d" % (major, minor, patch) for major, minor, last in latest for patch in range(int(last) + 1)]


def read_etcd_hashes(kops, sums_dir):
    """URL -> sha256 of etcd's linux amd64/arm64 tarballs, from <sums_dir>/v<version>/SHA256SUMS."""
    hashes = {}
    missing = []
    for version in etcd_versions(kops):
        path = pathlib.Path(sums_dir) / ("v" + version) / "SHA256SUMS"
        if not path.is_file():
            missing.append(version)
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            fields = line.split()
            if len(fields) != 2 or not ETCD_FILE.match(fields[1]):
                continue
            if not SHA256.match(fields[0]):
                raise ValueError("%s:%d: %s has sha256 %r, not 64 hex digits" % (path, number, fields[1], fields[0]))
            hashes[ETCD_RELEASE % version + fields[1]] = fields[0]
    if missing:
        print("note: no SHA256SUMS in %s for etcd %s (kops supports them; nodes cannot install them)"
              % (sums_dir, ", ".join(missing)), file=sys.stderr)
    return hashes


def generate(kops, commit=None, etcd_sums=None):  # pylint: disable=unused-argument
    if not etcd_sums:
        raise ValueError("etcd's release hashes are not in kops: give --etcd-sums DIR (DIR/v<version>/SHA256SUMS "
                         "from https://github.com/etcd-io/etcd/releases)")
    hashes = read_hashes(kops)
    hashes.update(read_etcd_hashes(kops, etcd_sums))
    lines = [HEADER + "SHA256 = {"]
    for url in sorted(hashes):
        lines.append("    %s:\n        %s," % (json.dumps(url), json.dumps(hashes[url])))
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(kops_go.main(generate, __doc__.splitlines()[0],
                          options=[("--etcd-sums", "a directory of etcd's SHA256SUMS files, <dir>/v<version>/SHA256SUMS")]))
