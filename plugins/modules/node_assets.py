#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_assets
short_description: Plan and install a node's binaries and packages from its nodeup config, as kops' nodeup does
version_added: 0.1.0
description:
  - With O(state=plan), returns what the node installs, decided here so the role only loops over it. That is
    its architecture (from O(arch), else the node's machine), the assets to download (as O(state=download)), and
    every distribution package in one list (O(distro_packages), O(control_plane_packages),
    O(worker_packages), O(node_packages), O(update_package)). Changes nothing.
  - With O(state=download), returns the assets of the node's architecture to download (URL, sha256, cache file
    name), less those that distribution packages replace. Changes nothing.
  - With O(state=install), reads the archives unpacked under O(cache)C(/extracted/<file>) and installs each binary
    where kops' nodeup does. These are kubelet and the credential provider in C(/usr/local/bin), kubectl on API
    server nodes, containerd's C(bin/containerd*) and C(bin/ctr) in C(/usr/bin), runc as C(/usr/sbin/runc), and
    every CNI plugin in C(/opt/cni/bin). Flatcar and Container-Optimized OS keep their own containerd and use
    kops' binary directories. Only files whose content or mode differ are written (atomically).
options:
  nodeup_config:
    description: The instance group's nodeup config document (docs/nodeup-config.md).
    type: dict
    required: true
  state:
    description:
      - C(plan) to plan the node's architecture, downloads and packages; C(download) to plan the downloads only;
        C(install) to install the downloaded binaries.
    type: str
    choices: [plan, download, install]
    default: download
  arch:
    description:
      - The node's architecture (amd64 or arm64).
      - Empty, the node's own (C(x86_64) is amd64, C(aarch64) arm64; another machine fails).
    type: str
    default: ""
  assets:
    description: With O(state=plan), C(false) plans no downloads (the node's image brings its binaries).
    type: bool
    default: true
  distribution:
    description:
      - The node's distribution as kops names it (C(flatcar), C(containeros), C(debian12), ...).
      - Empty, read from O(root)C(/etc/os-release).
    type: str
    default: ""
  distro_packages:
    description:
      - Assets (containerd, runc, kubelet, ...) installed from distribution packages instead.
      - A list of asset names, or a mapping of asset name to its package (O(state=plan) installs those packages).
      - An empty package name means the machine image brings the asset (nothing is downloaded or installed for it).
      - With C(cni-plugins) replaced, O(state=install) links every plugin of the distribution's CNI directory
        (C(/usr/lib/cni), C(/usr/libexec/cni)) into C(/opt/cni/bin), where the containerd config looks.
    type: raw
    default: []
  control_plane_packages:
    description: With O(state=plan), packages a node that runs an API server or the control plane's services needs.
    type: list
    elements: str
    default: []
  worker_packages:
    description: With O(state=plan), packages a node that asks the bootstrap service (and does not serve it) needs.
    type: list
    elements: str
    default: []
  node_packages:
    description: With O(state=plan), packages every node needs (the node's modules write YAML).
    type: list
    elements: str
    default: []
  update_package:
    description: With O(state=plan), the package of kops' update service, unless the spec's updatePolicy is external.
    type: str
    default: ""
  file_repository:
    description: A mirror base URL that replaces the release hosts (same paths, same sha256).
    type: str
    default: ""
  cache:
    description: The asset cache directory (downloads there, archives unpacked under its C(extracted/)).
    type: path
    default: /opt/kubeops/assets
  root:
    description: Install under this directory instead of C(/) (for tests).
    type: path
    default: /
attributes:
  check_mode:
    description: Reports the binaries that would be installed; writes nothing.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Plan the downloads
  kubeops.kops.node_assets:
    nodeup_config: "{{ nodeup_document }}"
    arch: amd64
  register: plan

- name: Plan what this node installs
  kubeops.kops.node_assets:
    nodeup_config: "{{ nodeup_document }}"
    state: plan
    distro_packages: {containerd: containerd}
    update_package: unattended-upgrades
  register: node_plan
"""

RETURN = r"""
arch:
  description: The node's architecture as kops names it (state=plan).
  returned: when state is plan
  type: str
  sample: amd64
packages:
  description: Every distribution package the node installs, in one list (state=plan).
  returned: when state is plan
  type: list
  elements: str
downloads:
  description: What to download (state=plan, download); checksum is C(sha256:<hex>) or the release's C(<url>.sha256).
  returned: always
  type: list
  elements: dict
installs:
  description: Every binary installed (path, mode, file, member), whether changed or not (state=install).
  returned: always
  type: list
  elements: dict
links:
  description: The CNI plugins of a distribution package linked into C(/opt/cni/bin) (path, target) (state=install).
  returned: when state is install
  type: list
  elements: dict
changed_files:
  description: Paths written (state=install).
  returned: always
  type: list
  elements: str
"""

import os
import platform
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.node_file import read_current, write_atomically


def _members(directory):
    found = []
    for base, _dirs, names in os.walk(directory):
        for name in names:
            found.append(os.path.relpath(os.path.join(base, name), directory).replace(os.sep, "/"))
    return found


def _install(source, path, mode):
    """Copy source to path in 1 MB pieces, renamed into place (a running binary keeps its old inode)."""
    with open(source, "rb") as original:
        write_atomically(path, mode, lambda handle: shutil.copyfileobj(original, handle, 1 << 20))


def _plugins_by_dir(root):
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import assets
    found = {}
    for directory in assets.DISTRO_CNI_DIRS:
        path = os.path.join(root, directory.lstrip("/"))
        if os.path.isdir(path):
            found[directory] = [name for name in os.listdir(path) if os.path.isfile(os.path.join(path, name))]
    return found


def _link(target, path):
    """A symlink at path to target, replacing what is there (renamed into place)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".kubeops-new"
    if os.path.lexists(temporary):
        os.unlink(temporary)
    os.symlink(target, temporary)
    os.replace(temporary, path)


def main():
    module = AnsibleModule(argument_spec=dict(
        nodeup_config=dict(type="dict", required=True),
        state=dict(type="str", choices=["plan", "download", "install"], default="download"),
        arch=dict(type="str", default=""),
        assets=dict(type="bool", default=True),
        distribution=dict(type="str", default=""),
        distro_packages=dict(type="raw", default=[]),
        control_plane_packages=dict(type="list", elements="str", default=[]),
        worker_packages=dict(type="list", elements="str", default=[]),
        node_packages=dict(type="list", elements="str", default=[]),
        update_package=dict(type="str", default=""),
        file_repository=dict(type="str", default=""),
        cache=dict(type="path", default="/opt/kubeops/assets"),
        root=dict(type="path", default="/"),
    ), supports_check_mode=True)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import assets, distribution

    params = module.params
    distro_packages = params["distro_packages"] or []
    if not isinstance(distro_packages, (list, dict)) or not all(isinstance(name, str) for name in distro_packages):
        module.fail_json(msg="distro_packages: give asset names or {asset name: package}, not %r" % (distro_packages,))
    try:
        arch = params["arch"] or assets.arch_of(platform.machine())
    except ValueError as exc:
        module.fail_json(msg="arch: %s; give arch" % exc)
    try:
        planned = assets.downloads(params["nodeup_config"], arch, list(distro_packages), params["file_repository"]) \
            if params["state"] != "plan" or params["assets"] else []
    except ValueError as exc:
        module.fail_json(msg="nodeup_config: %s" % exc)
    listing = [dict(name=d.name, url=d.url, file=d.file, archive=d.archive,
                    checksum=("sha256:%s" % d.sha256) if d.sha256 else "sha256:%s.sha256" % d.url) for d in planned]
    if params["state"] == "plan":
        module.exit_json(changed=False, arch=arch, downloads=listing,
                         packages=assets.packages(params["nodeup_config"],
                                                  distro_packages if isinstance(distro_packages, dict) else {},
                                                  params["control_plane_packages"], params["worker_packages"],
                                                  params["update_package"], params["node_packages"]),
                         installs=[], changed_files=[])
    if params["state"] == "download":
        module.exit_json(changed=False, downloads=listing, installs=[], changed_files=[])
    extracted = os.path.join(params["cache"], "extracted")
    members = {d.file: _members(os.path.join(extracted, d.file)) for d in planned if d.archive}
    missing = [d.file for d in planned if (d.archive and not members[d.file]) or
               (not d.archive and not os.path.isfile(os.path.join(params["cache"], d.file)))]
    if missing:
        module.fail_json(msg="assets not downloaded (or unpacked) into %s: %s" % (params["cache"], ", ".join(missing)))
    wanted = assets.installs(params["nodeup_config"], planned, members,
                             params["distribution"] or distribution.read(params["root"]))
    try:
        links = assets.cni_links(params["nodeup_config"], list(distro_packages), _plugins_by_dir(params["root"]))
    except ValueError as exc:
        module.fail_json(msg="distro_packages: %s" % exc)
    changed = []
    for item in wanted:
        source = os.path.join(extracted, item.file, item.member) if item.member else \
            os.path.join(params["cache"], item.file)
        path = os.path.join(params["root"], item.path.lstrip("/"))
        data, mode = read_current(path)
        if mode == item.mode and data is not None:
            with open(source, "rb") as handle:
                if handle.read() == data:
                    continue
        changed.append(item.path)
        if not module.check_mode:
            _install(source, path, item.mode)
    for link in links:
        path = os.path.join(params["root"], link.path.lstrip("/"))
        if os.path.islink(path) and os.readlink(path) == link.target:
            continue
        changed.append(link.path)
        if not module.check_mode:
            _link(link.target, path)
    module.exit_json(changed=bool(changed), downloads=listing, changed_files=changed,
                     installs=[dict(path=i.path, mode="%04o" % i.mode, file=i.file, member=i.member) for i in wanted],
                     links=[dict(path=link.path, target=link.target) for link in links])


if __name__ == "__main__":
    main()
