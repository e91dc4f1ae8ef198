# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Which binaries a node installs from its nodeup config's Assets, and where (kops' nodeup builders).

kops' nodeup downloads every asset of the node's architecture into its asset store, unpacks the archives
(.tar.gz, .tgz) and indexes every file by its key (a downloaded file's name, or an unpacked file's base name)
and its asset path (the URL, or the file's path inside the archive).  The builders then pick files from it:

- KubeletBuilder: kubelet and the cloud's credential provider into the kubelet's binary directory;
- KubectlBuilder: kubectl, on nodes that run an API server only;
- ContainerdBuilder: the release tarball's bin/containerd* and bin/ctr into /usr/bin, runc into /usr/sbin
  (neither on Flatcar or Container-Optimized OS, whose containerd is the image's, nor with skipInstall);
- networking CommonBuilder: every file of the CNI plugins archive into /opt/cni/bin (InstallCNIAssets).

Ours besides: an asset may come from a distribution package instead (nodeup_distro_packages: {asset: package}),
or from the machine image (an empty package: kops' custom-image case, nothing downloaded or installed).  CNI plugins
from a package live where the distribution puts them (Debian: /usr/lib/cni); cni_links() links each into
/opt/cni/bin, where the containerd config kops writes looks for them.

The plan is two steps, as the node needs them: downloads() says what to fetch (URL, sha256, the cache file
name), installs() says, once the archives are unpacked (their member lists known), which file goes where.
"""

from __future__ import annotations

import collections
import posixpath
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

Download = collections.namedtuple("Download", "name url sha256 file archive")
Install = collections.namedtuple("Install", "path mode file member key")
Link = collections.namedtuple("Link", "path target")

ARCHITECTURES = ("amd64", "arm64")
# A node's machine name (uname -m, Python's platform.machine()) -> kops' name of its architecture.
MACHINES = {"x86_64": "amd64", "aarch64": "arm64"}
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
CNI_BIN_DIR = "/opt/cni/bin"
# Where distribution packages put the CNI plugins (Debian and Ubuntu's containernetworking-plugins; Fedora's).
DISTRO_CNI_DIRS = ("/usr/lib/cni", "/usr/libexec/cni")

# What each asset is, by its file name: the name nodeup_distro_packages replaces it by.
ASSET_NAMES = (
    ("kubelet", re.compile(r"^kubelet$")),
    ("kubectl", re.compile(r"^kubectl$")),
    ("ecr-credential-provider", re.compile(r"^ecr-credential-provider-linux-(amd64|arm64)$")),
    ("auth-provider-gcp", re.compile(r"^auth-provider-gcp$")),
    ("runc", re.compile(r"^runc\.(amd64|arm64)$")),
    ("cni-plugins", re.compile(r"^cni-plugins-linux-.*\.(tgz|tar\.gz)$")),
    ("containerd", re.compile(r"^containerd-.*\.(tgz|tar\.gz)$")),
)
# kops' ContainerdBuilder: the release tarball's files it installs (matched on the path inside the archive).
CONTAINERD_MEMBERS = re.compile(r"^bin/(containerd|ctr)")
# Distributions whose image brings containerd (kops only configures it) and their binary directories.
OS_CONTAINERD = ("flatcar", "containeros")
KUBELET_BIN_DIR = {"flatcar": "/opt/kubernetes/bin", "containeros": "/home/kubernetes/bin"}
KUBECTL_BIN_DIR = {"flatcar": "/opt/kops/bin", "containeros": "/home/kubernetes/bin"}


def asset_name(file_name):
    """The asset's name (kubelet, containerd, ...) for a downloaded file's name; ValueError for an unknown one."""
    for name, pattern in ASSET_NAMES:
        if pattern.search(file_name):
            return name
    raise NodeError("Assets: no node install rule for %r (known: %s)" % (
        file_name, ", ".join(name for name, _pattern in ASSET_NAMES)))


def parse_asset(entry):
    """(sha256 or None, url) of one of the config's "<sha256>@<url>" or bare URL entries."""
    if not isinstance(entry, str) or "://" not in entry:
        raise NodeError("Assets: %r is not \"<sha256>@<url>\" nor a URL" % (entry,))
    digest, _at, url = entry.partition("@") if "@" in entry.split("://", 1)[0] else ("", "", entry)
    if digest and not re.match(r"^[0-9a-f]{64}$", digest):
        raise NodeError("Assets: %r has no sha256 before its '@' (64 hex digits)" % (entry,))
    return digest or None, url


def mirrored(url, file_repository):
    """The URL under a mirror that keeps the release hosts' paths (kops' assets.fileRepository)."""
    if not file_repository:
        return url
    path = url.split("://", 1)[1].split("/", 1)[1] if "/" in url.split("://", 1)[1] else ""
    return "%s/%s" % (file_repository.rstrip("/"), path)


def _is_archive(file_name):
    return file_name.lower().endswith(ARCHIVE_SUFFIXES)


def downloads(config, arch, distro_packages=(), file_repository=""):
    """[Download] for the node's architecture, less the assets distribution packages replace."""
    if arch not in ARCHITECTURES:
        raise NodeError("architecture %r is not one kops builds nodes for (%s)" % (arch, ", ".join(ARCHITECTURES)))
    result = []
    for entry in (config.get("Assets") or {}).get(arch) or []:
        digest, url = parse_asset(entry)
        file_name = posixpath.basename(url.split("?", 1)[0])
        name = asset_name(file_name)
        if name in distro_packages:
            continue
        result.append(Download(name, mirrored(url, file_repository), digest, file_name, _is_archive(file_name)))
    return result


def arch_of(machine):
    """kops' name (amd64, arm64) of a node's machine (x86_64, aarch64); ValueError for one kops builds no node for."""
    if machine not in MACHINES:
        raise NodeError("the node's machine %r is not one kops builds nodes for (%s)" % (
            machine, ", ".join("%s: %s" % item for item in MACHINES.items())))
    return MACHINES[machine]


def packages(config, distro_packages=None, control_plane_packages=(), worker_packages=(), update_package="",
             node_packages=()):
    """Every distribution package the node installs, in one apt call (the role installs this list as it is).

    distro_packages: {asset name: package} that replace the config's downloads; control_plane_packages: the Python
    libraries node_certificates needs on a node that runs an API server or the control plane's services;
    worker_packages: node_bootstrap's, on a node that asks the bootstrap service (not one that serves it);
    update_package: kops' update service (unattended-upgrades), unless the spec's updatePolicy is external;
    node_packages: what every node's modules need (node_files writes YAML), a worker that joins with a bootstrap token
    too, which needs neither list above.  Each package once, in that order.
    """
    found = [package for package in (distro_packages or {}).values() if package] + list(node_packages)
    if "APIServerConfig" in config or "ControlPlaneConfig" in config:
        found += control_plane_packages
    kubeops = config.get("kubeops") or {}
    if "bootstrapService" in kubeops and "serverCert" not in (kubeops["bootstrapService"] or {}):
        found += worker_packages
    if update_package and config.get("UpdatePolicy", "automatic") != "external":
        found.append(update_package)
    return list(dict.fromkeys(found))


def _skips_containerd(config, distribution):
    return bool((config.get("containerdConfig") or {}).get("skipInstall")) or distribution in OS_CONTAINERD


# The kubelet's binaries by asset name -> the file kops' KubeletBuilder installs (getGCPCredentialProviderPath: GCP's
# provider is renamed; the kubelet's credential-provider.conf names these files).
KUBELET_BINARIES = {"kubelet": "kubelet", "ecr-credential-provider": "ecr-credential-provider",
                    "auth-provider-gcp": "gcp-credential-provider"}


def installs(config, planned, members, distribution=""):
    """[Install] for the planned downloads; members = {archive file: [paths inside it]} once unpacked.

    Each asset kind installs as its kops builder does (module docstring); an archive whose members are not
    known yet installs nothing.
    """
    result = []
    api_server = config.get("APIServerConfig") is not None
    for download in planned:
        name, file_name = download.name, download.file
        inside = sorted(m.lstrip("./") for m in members.get(file_name, ()) if m.lstrip("./"))
        if name in KUBELET_BINARIES:
            result.append(Install("%s/%s" % (KUBELET_BIN_DIR.get(distribution, "/usr/local/bin"), KUBELET_BINARIES[name]),
                                  0o755, file_name, "", file_name))
        elif name == "kubectl":
            if api_server:
                result.append(Install("%s/kubectl" % KUBECTL_BIN_DIR.get(distribution, "/usr/local/bin"),
                                      0o755, file_name, "", file_name))
        elif name == "runc":
            if not _skips_containerd(config, distribution):
                result.append(Install("/usr/sbin/runc", 0o755, file_name, "", file_name))
        elif name == "containerd":
            if not _skips_containerd(config, distribution):
                result.extend(Install(posixpath.join("/usr/bin", posixpath.basename(m)), 0o755, file_name, m,
                                      posixpath.basename(m)) for m in inside if CONTAINERD_MEMBERS.search(m))
        elif name == "cni-plugins":
            if config.get("InstallCNIAssets"):
                result.extend(Install(posixpath.join(CNI_BIN_DIR, posixpath.basename(m)), 0o755, file_name, m,
                                      posixpath.basename(m)) for m in inside)
    return sorted(result, key=lambda install: install.path)


def cni_links(config, distro_packages, plugins_by_dir):
    """[Link] of the CNI plugins a distribution package installed into kops' /opt/cni/bin, when the config installs
    CNI assets and distro_packages replaces them; plugins_by_dir: {distribution CNI dir: [plugin names]} as found on
    the node (the first of DISTRO_CNI_DIRS that has plugins is the package's).  ValueError when none has any."""
    if "cni-plugins" not in distro_packages or not config.get("InstallCNIAssets"):
        return []
    for directory in DISTRO_CNI_DIRS:
        names = sorted(plugins_by_dir.get(directory) or ())
        if names:
            return [Link(posixpath.join(CNI_BIN_DIR, name), posixpath.join(directory, name)) for name in names]
    raise NodeError("cni-plugins come from a distribution package, but none of %s holds a plugin"
                    % ", ".join(DISTRO_CNI_DIRS), fix="install the package (nodeup_distro_packages[cni-plugins]) first")
