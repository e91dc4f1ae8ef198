#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_files
short_description: Write all of a node's configuration files from its nodeup config in one call
version_added: 0.1.0
description:
  - Renders what kops' nodeup writes on a node from the instance group's nodeup config. These are the sysctls,
    the kernel modules to load, containerd's files as kops' ContainerdBuilder writes them (C(config.toml), registry
    mirrors' C(hosts.toml), its unit and C(/etc/sysconfig/containerd), C(crictl.yaml), the kubenet CNI template and
    masquerade setup), the cluster CA,
    the kubelet's C(KubeletConfiguration), flags, systemd unit and kubeconfig (a bootstrap kubeconfig for
    workers), the config's file assets, the spec's hooks as systemd units, and the apt configuration of the
    update policy.
  - Where the config says so, also the static pods kops' nodeup writes to C(/etc/kubernetes/manifests)
    (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy) with their kubeconfigs, the
    service-account public key and their log files (created once, never truncated). Their certificates come
    from M(kubeops.kops.node_certificates).
  - Writes only the files whose content or mode differ (atomically) and returns which systemd units must
    restart because of them, so handlers restart only what changed. One task instead of one per file.
  - Roles pass their own rendered files in O(files) the same way (roles/protokube's etcd units and backups).
options:
  nodeup_config:
    description:
      - The instance group's nodeup config document (docs/nodeup-config.md).
      - At least one of O(nodeup_config) and O(files) is required.
    type: dict
  files:
    description: Further files, already rendered.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path on the node.
        type: str
        required: true
      content:
        description: The file's text.
        type: str
        required: true
      mode:
        description: Octal mode.
        type: str
        default: "0644"
      restarts:
        description: systemd units to restart when this file changes.
        type: list
        elements: str
        default: []
  node_name:
    description: This node's name (required with O(nodeup_config)).
    type: str
  node_address:
    description: This node's IP address (the kubelet's C(--node-ip)); omitted when empty.
    type: str
    default: ""
  bootstrap_token:
    description: The kubelet bootstrap token, for worker groups (read from the state store secret).
    type: str
  distribution:
    description:
      - The node's distribution as kops names it (C(debian12), C(ubuntu2404), C(flatcar), C(containeros), ...).
      - Empty, read from O(root)C(/etc/os-release).
      - containerd's unit and config, the kubelet's volume plugin directory and C(resolvConf) depend on it, as in
        kops' nodeup.
    type: str
    default: ""
  containerd_version:
    description:
      - The version of a containerd the node did not install from the config's release tarball (a distribution
        package), or C(containerd --version)'s output. It decides C(config.toml)'s schema (2 for containerd 1.x).
      - Empty, the config's C(containerdConfig.version).
    type: str
    default: ""
  root:
    description: Write under this directory instead of C(/) (for inspection and tests).
    type: path
    default: /
attributes:
  check_mode:
    description: Reports the files and units that would change; writes nothing.
    support: full
  diff_mode:
    description: Shows before and after of each changed text file (never of files written 0600).
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Write the node's files
  kubeops.kops.node_files:
    nodeup_config: "{{ nodeup_config }}"
    node_name: "{{ inventory_hostname }}"
    node_address: "{{ ansible_host }}"
  register: nodeup_files
"""

RETURN = r"""
changed_files:
  description: Paths written (or that would be written in check mode).
  returned: always
  type: list
  elements: str
restart:
  description: systemd units whose inputs changed.
  returned: always
  type: list
  elements: str
  sample: [containerd, kubelet]
files:
  description: Every path this module manages for the node.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import read_current, write_atomically


def gpu_vendor(root):
    """"nvidia" where the machine has an NVIDIA PCI device (kops' nodeup: the containerd nvidia runtime), else ""."""
    devices = os.path.join(root, "sys/bus/pci/devices")
    try:
        names = os.listdir(devices)
    except OSError:
        return ""
    for name in names:
        vendor, _mode = read_current(os.path.join(devices, name, "vendor"))
        if vendor and vendor.strip().lower() == b"0x10de":
            return "nvidia"
    return ""


def primary_interface(root):
    """The interface of the IPv4 default route (AWS: the primary ENI, as kops finds it from the metadata's MAC)."""
    data, _mode = read_current(os.path.join(root, "proc/net/route"))
    for line in (data or b"").decode("ascii", "replace").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 2 and fields[1] == "00000000":
            return fields[0]
    return ""


def main():
    module = AnsibleModule(argument_spec=dict(
        nodeup_config=dict(type="dict"),
        files=dict(type="list", elements="dict", default=[], options=dict(
            path=dict(type="str", required=True), content=dict(type="str", required=True),
            mode=dict(type="str", default="0644"), restarts=dict(type="list", elements="str", default=[]))),
        node_name=dict(type="str"),
        node_address=dict(type="str", default=""),
        bootstrap_token=dict(type="str", no_log=True),
        distribution=dict(type="str", default=""),
        containerd_version=dict(type="str", default=""),
        root=dict(type="path", default="/"),
    ), supports_check_mode=True)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import distribution
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import files as node_files

    params = module.params
    if not params["nodeup_config"] and not params["files"]:
        module.fail_json(msg="give nodeup_config, files or both")
    if params["nodeup_config"] and not params["node_name"]:
        module.fail_json(msg="node_name is required with nodeup_config")
    try:
        node = {"name": params["node_name"], "address": params["node_address"],
                "distribution": params["distribution"] or distribution.read(params["root"]),
                "containerd_version": params["containerd_version"], "gpu_vendor": gpu_vendor(params["root"]),
                "primary_interface": primary_interface(params["root"]),
                # systemd-resolved's real resolv.conf (kops' HasLoopbackEtcResolvConf on other distributions).
                "resolved": os.path.exists(os.path.join(params["root"], "run/systemd/resolve/resolv.conf"))}
        wanted = node_files.node_files(params["nodeup_config"], node, bootstrap_token=params["bootstrap_token"]) \
            if params["nodeup_config"] else []
    except (ValueError, KeyError, TypeError) as exc:
        module.fail_json(msg="nodeup_config: %s" % exc)
    try:
        wanted += [node_files.NodeFile(f["path"], f["content"], mode=int(f["mode"], 8), restarts=f["restarts"])
                   for f in params["files"]]
    except ValueError:
        module.fail_json(msg="files: mode must be octal, for example 0644")
    changed, restart, befores, afters = [], [], [], []
    for item in wanted:
        path = os.path.join(params["root"], item.path.lstrip("/"))
        data, mode = read_current(path)
        if (data == item.content and mode == item.mode) or (item.if_missing and data is not None):
            continue
        changed.append(item.path)
        restart.extend(u for u in item.restarts if u not in restart)
        if item.mode & 0o077:  # never show files that hold credentials
            befores.append("# %s\n%s" % (item.path, to_text(data or b"")))
            afters.append("# %s\n%s" % (item.path, to_text(item.content)))
        if not module.check_mode:
            write_atomically(path, item.mode, lambda handle, data=item.content: handle.write(data))
    result = dict(changed=bool(changed), changed_files=changed, restart=restart, files=[w.path for w in wanted])
    if module._diff and changed:
        result["diff"] = {"before": "\n".join(befores), "after": "\n".join(afters)}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
