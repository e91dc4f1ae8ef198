# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""containerd's files, as kops' nodeup ContainerdBuilder writes them (nodeup/pkg/model/containerd.go)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import NodeFile


def containerd_toml(config):
    """/etc/containerd/config.toml (schema version 2, read by containerd 1.6 to 2.x)."""
    containerd = config.get("containerdConfig") or {}
    systemd_cgroup = (config.get("KubeletConfig") or {}).get("cgroupDriver") == "systemd"
    lines = [
        "version = 2",
        "",
        "[plugins]",
        '  [plugins."io.containerd.grpc.v1.cri"]',
        '    sandbox_image = "%s"' % containerd.get("sandboxImage", "registry.k8s.io/pause:3.10.1"),
        '    [plugins."io.containerd.grpc.v1.cri".containerd]',
        '      default_runtime_name = "runc"',
        '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '        runtime_type = "io.containerd.runc.v2"',
        '        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        "          SystemdCgroup = %s" % ("true" if systemd_cgroup else "false"),
        '    [plugins."io.containerd.grpc.v1.cri".cni]',
        '      bin_dir = "/opt/cni/bin"',
        '      conf_dir = "/etc/cni/net.d"',
    ]
    return "\n".join(lines) + "\n"


def containerd_dropin(config):
    level = (config.get("containerdConfig") or {}).get("logLevel", "info")
    return "[Service]\nEnvironment=\"CONTAINERD_LOG_LEVEL=%s\"\nExecStart=\nExecStart=/usr/bin/containerd --log-level %s\n" \
        % (level, level)


# The base unit, so a containerd from its release tarball (unpacked over /usr) runs like Debian's package.
CONTAINERD_UNIT = """[Unit]
Description=containerd container runtime (kubeops.kops)
Documentation=https://containerd.io
After=network.target local-fs.target

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
LimitNOFILE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
"""


def containerd_files(config):
    """containerd's config, unit, drop-in and crictl's config."""
    return [
        NodeFile("/etc/containerd/config.toml", containerd_toml(config), restarts=("containerd",)),
        NodeFile("/etc/systemd/system/containerd.service", CONTAINERD_UNIT, restarts=("containerd",)),
        NodeFile("/etc/systemd/system/containerd.service.d/10-kubeops.conf", containerd_dropin(config),
                 restarts=("containerd",)),
        NodeFile("/etc/crictl.yaml", "runtime-endpoint: unix:///run/containerd/containerd.sock\n"),
    ]
