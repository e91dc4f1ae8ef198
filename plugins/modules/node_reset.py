#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_reset
short_description: Reset a host enrolled into a metal cluster (kubespray's reset, on what kops' nodeup left)
version_added: 0.1.0
description:
  - Stops and disables the given systemd units (the kubelet first, containerd last; containerd's tasks are killed
    before it stops, so no pod outlives it), unmounts what is mounted at or under the paths to remove (the
    kubelet's volumes, containerd's, the pods' network namespaces in C(/run/netns/cni-*)), removes the iptables
    and ip6tables chains kube-proxy and the CNI plugins made (C(KUBE-*), C(CNI-*)) with every rule in or jumping
    to them (the host's own rules are kept), clears IPVS when kube-proxy's C(kube-ipvs0) link is there, deletes
    the given network links, and removes the given paths.
  - Which units and paths is the roles' to say (roles/nodeup, roles/protokube and roles/enroll C(tasks/reset.yml),
    from what they write); playbooks/delete_cluster.yml and playbooks/remove_node.yml run them.
  - Packages stay installed; kernel settings already applied and kernel modules loaded stay until the host
    reboots.
  - Check mode says what would be stopped, unmounted and removed, and changes nothing. A second run changes
    nothing.
options:
  units:
    description: systemd units to stop and disable, in order (those the host does not know are skipped).
    type: list
    elements: str
    default: []
  paths:
    description: Files and directories to remove (those absent are skipped; a directory goes with all it holds).
    type: list
    elements: path
    default: []
  links:
    description: Network links to delete where present (kube-proxy's C(kube-ipvs0), the CNI bridges).
    type: list
    elements: str
    default: []
  chain_prefixes:
    description: iptables chains whose names start with one of these are removed with their rules.
    type: list
    elements: str
    default: [KUBE-, CNI-]
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Reset the host
  kubeops.kops.node_reset:
    units: [kubelet, containerd]
    paths: [/var/lib/kubelet, /etc/kubernetes, /var/lib/containerd]
    links: [cbr0, kube-ipvs0]
"""

RETURN = r"""
stopped:
  description: Units stopped and disabled.
  returned: always
  type: list
  elements: str
containers:
  description: containerd tasks killed (namespace/id).
  returned: always
  type: list
  elements: str
unmounted:
  description: Mount points unmounted, deepest first.
  returned: always
  type: list
  elements: str
removed:
  description: Paths removed (a directory stands for all it held).
  returned: always
  type: list
  elements: str
  sample: [/etc/kubernetes, /var/lib/kubelet]
iptables_chains:
  description: iptables chains removed, as table:chain.
  returned: always
  type: list
  elements: str
  sample: ["nat:KUBE-SERVICES"]
ipvs_cleared:
  description: Whether the IPVS table was cleared.
  returned: always
  type: bool
links:
  description: Network links deleted.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeops.kops.plugins.module_utils.errors import reported


@reported  # ResetError: names the command that failed
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import host_reset

    params = module.params
    host = host_reset.Host(lambda args, data=None: module.run_command(args, data=data, binary_data=True))
    result = host_reset.reset(host, params["units"], params["paths"], params["links"], params["chain_prefixes"],
                              check_mode=module.check_mode)
    if module._diff and result["changed"]:
        result["diff"] = {"before": "".join("%s\n" % p for p in result["removed"]), "after": ""}
    module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=dict(
        units=dict(type="list", elements="str", default=[]),
        paths=dict(type="list", elements="path", default=[]),
        links=dict(type="list", elements="str", default=[]),
        chain_prefixes=dict(type="list", elements="str", default=["KUBE-", "CNI-"]),
    ), supports_check_mode=True)
    run(module)


if __name__ == "__main__":
    main()
