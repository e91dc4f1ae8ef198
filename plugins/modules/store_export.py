#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: store_export
short_description: Copy a cluster's files from the state store to a private directory on the controller
version_added: 0.1.0
description:
  - Reads every file under C(<state store>/<cluster name>/) (V(s3://), V(gs://) or V(file://)) with the
    controller's credentials and writes it under O(dest) (directories 0700, files 0600), so that
    roles/enroll can copy a control plane's files onto its host from any store (kops' control planes read the
    store with their IAM role; a metal host reads nothing itself).
  - Leaves out the boot wheels (C(boot/)) and the store's run journal and lease (C(.kubeops-*)), as enroll copies
    them not.
  - The directory holds the cluster's CA keys; roles/enroll removes it when the copy is made.
  - Writes only the controller's O(dest), never the store; check mode writes it too (roles/enroll compares the
    host's copy with it), so it says changed false.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  dest:
    description: An existing, empty or earlier-exported directory on the controller.
    type: path
    required: true
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: Writes the controller's directory in check mode too (a read of the store); the store is untouched.
    support: full
  diff_mode:
    description: No diff.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: The cluster's store files on the controller
  kubeops.kops.store_export:
    state_store: s3://my-kops-state
    cluster_name: metal.k8s.local
    dest: /tmp/kops-store-copy
"""

RETURN = r"""
files:
  description: The files written, relative to O(dest).
  returned: always
  type: list
  elements: str
"""

import os

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors

LEFT_OUT = ("boot/", ".kubeops-")


def _private_directories(root, relative):
    """Each directory of relative under root made 0700 (os.makedirs gives the intermediate ones the umask's mode)."""
    path = root
    for part in [p for p in relative.split("/") if p]:
        path = os.path.join(path, part)
        if not os.path.isdir(path):
            os.mkdir(path, 0o700)


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout

    params = module.params
    if not os.path.isdir(params["dest"]):
        module.fail_json(msg="dest: %s is not a directory on the controller; make it first" % params["dest"])
    service = module.service()
    cluster = layout.ClusterStore(service.store, params["cluster_name"])
    if not cluster.exists():
        module.fail_json(msg="cluster %s not found in %s" % (params["cluster_name"], service.store.url("")))
    prefix = params["cluster_name"] + "/"
    written = []
    for path in sorted(service.store.list(prefix)):
        relpath = path[len(prefix):]
        if relpath.startswith(LEFT_OUT) or not relpath or "/../" in "/%s/" % relpath:
            continue
        target = os.path.join(params["dest"], relpath)
        _private_directories(params["dest"], os.path.dirname(relpath))
        atomic_write(target, 0o600, cluster.read(relpath))
        written.append(relpath)
    module.exit_json(changed=False, files=written)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        dest=dict(type="path", required=True),
    ))
    run(module)


if __name__ == "__main__":
    main()
