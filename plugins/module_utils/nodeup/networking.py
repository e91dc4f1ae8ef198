# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What kops' nodeup networking builders write for the CNIs (nodeup/pkg/model/networking/*.go).

- Cilium: the BPF and cgroup2 mount units (kops writes each unless that filesystem is mounted already; a mount
  unit for a mounted filesystem is harmless, so they are always written), and, by distribution, the systemd-networkd
  and cloud-init settings that keep the host from undoing CNI routes; with ENI IPAM also the ENI rules below.
- Amazon VPC CNI: the ENI rules: no policy routes from amazon-ec2-net-utils (Amazon Linux 2023), no foreign route
  management, no MAC address policy, secondary ENIs unmanaged by systemd-networkd, no cloud-init hotplug, and on
  Debian 11 cloud-ifupdown-helper kept off the CNI's eni* interfaces.
- kube-router: its kubeconfig (files.py) and /usr/share/iproute2 (roles/nodeup, a link); Calico: the wireguard
  package (Ubuntu, when wireguard is enabled); kindnet, flannel: nothing on the node.
Kubenet and the modes derived from it: containerd.py (the CNI template and cni-iptables-setup).

Each file names what applies it: "systemd-networkd" and "udev-rules" (the role restarts networkd when it is
running and reloads udev's rules).
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

NETWORKD = ("systemd-networkd",)
UDEV = ("udev-rules",)

BPF_MOUNT = """
[Unit]
Description=Cilium BPF mounts
Documentation=http://docs.cilium.io/
DefaultDependencies=no
Before=local-fs.target umount.target kubelet.service

[Mount]
What=bpffs
Where=/sys/fs/bpf
Type=bpf

[Install]
WantedBy=multi-user.target
"""

CGROUP2_MOUNT = """
[Unit]
Description=Cilium Cgroup2 mounts
Documentation=http://docs.cilium.io/
DefaultDependencies=no
Before=local-fs.target umount.target kubelet.service

[Mount]
What=cgroup2
Where=/run/cilium/cgroupv2
Type=cgroup2

[Install]
WantedBy=multi-user.target
"""

FOREIGN_ROUTES = """
# Do not clobber any routes or rules added by CNI.
[Network]
ManageForeignRoutes=no
ManageForeignRoutingPolicyRules=no
"""

MAC_ADDRESS_POLICY = """
[Match]
OriginalName=*
[Link]
NamePolicy=keep kernel database onboard slot path
AlternativeNamesPolicy=database onboard slot path
MACAddressPolicy=none
"""

SECONDARY_ENIS = """
[Match]
Driver=ena
Property=!INTERFACE=%s

[Link]
Unmanaged=yes
"""

CLOUD_INIT_HOTPLUG = """# Disable cloud-init network hotplug to prevent interference with CNI ENI management.
# See: https://github.com/kubernetes/kops/issues/17881
updates:
  network:
    when: [boot-new-instance]
"""

IFUPDOWN_RULE = """# Handle allow-hotplug interfaces.
# kops: ENV{INTERFACE} narrowed from "eth*|en*" to "eth*|ens*" so AWS VPC CNI
# veths (eni*) are not hijacked by cloud-ifupdown-helper.
SUBSYSTEM=="net", ACTION=="add", ENV{INTERFACE}=="eth*|ens*", RUN+="/etc/network/cloud-ifupdown-helper"
"""


def _version(distribution, project):
    match = re.match(r"^%s(\d+)$" % project, distribution or "")
    if not match:
        return None
    digits = match.group(1)
    return float("%s.%s" % (digits[:2], digits[2:])) if project == "ubuntu" else float(digits)


def _networkd_distribution(distribution):
    ubuntu, debian = _version(distribution, "ubuntu"), _version(distribution, "debian")
    return (ubuntu is not None and ubuntu >= 22.04) or (debian is not None and debian >= 12) or \
        distribution == "amazonlinux2023"


def _no_hotplug_distribution(distribution):
    ubuntu, debian = _version(distribution, "ubuntu"), _version(distribution, "debian")
    return (ubuntu is not None and ubuntu >= 24.04) or (debian is not None and debian >= 12)


def _eni_files(node):
    distribution = node.get("distribution") or ""
    files = []
    if distribution == "amazonlinux2023":
        files.append(NodeFile("/etc/udev/rules.d/99-vpc-policy-routes.rules", "", restarts=UDEV))
    if _networkd_distribution(distribution):
        files.append(NodeFile("/etc/systemd/network/99-default.link", MAC_ADDRESS_POLICY, restarts=NETWORKD))
    debian = _version(distribution, "debian")
    if distribution == "amazonlinux2023" or (debian is not None and debian >= 12):
        primary = node.get("primary_interface")
        if not primary:
            raise NodeError("the node's primary network interface is unknown: secondary ENIs cannot be left to the "
                            "CNI (node_files reads it from the default route)")
        files.append(NodeFile("/etc/systemd/network/75-eni-secondary.network", SECONDARY_ENIS % primary,
                              restarts=NETWORKD))
    return files


def _common(node):
    distribution = node.get("distribution") or ""
    files = []
    if _networkd_distribution(distribution):
        files.append(NodeFile("/usr/lib/systemd/networkd.conf.d/40-disable-manage-foreign-routes.conf",
                              FOREIGN_ROUTES, restarts=NETWORKD))
    if _no_hotplug_distribution(distribution):
        files.append(NodeFile("/etc/cloud/cloud.cfg.d/99-disable-network-hotplug.cfg", CLOUD_INIT_HOTPLUG))
    return files


def networking_files(config, node=None):
    """[NodeFile] of kops' networking builders for this node (module docstring)."""
    node = node or {}
    networking = config.get("Networking") or {}
    files = []
    if "cilium" in networking:
        files += [NodeFile("/etc/systemd/system/sys-fs-bpf.mount", BPF_MOUNT, restarts=("sys-fs-bpf.mount",)),
                  NodeFile("/etc/systemd/system/run-cilium-cgroupv2.mount", CGROUP2_MOUNT,
                           restarts=("run-cilium-cgroupv2.mount",))]
        files += _common(node)
        if (networking.get("cilium") or {}).get("ipam") == "eni":
            files += _eni_files(node)
    if "amazonvpc" in networking:
        files += _eni_files(node) + _common(node)
        if node.get("distribution") == "debian11":
            files.append(NodeFile("/etc/udev/rules.d/75-cloud-ifupdown.rules", IFUPDOWN_RULE, restarts=UDEV))
    unique = {}
    for node_file in files:
        unique.setdefault(node_file.path, node_file)
    return [unique[path] for path in sorted(unique)]
