#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_remove
short_description: Drain a metal cluster's host's Node, or delete it (kubespray's remove-node, the Kubernetes side)
version_added: 0.1.0
description:
  - O(state=drained) cordons the host's Node and evicts its pods as the rolling update drains (kops' drain,
    PodDisruptionBudgets honoured, an eviction refused is tried again every 5 s until O(drain_timeout); DaemonSet and
    static pods stay). O(state=absent) deletes the Node object. playbooks/remove_node.yml drains, resets the host
    (roles/enroll C(tasks/reset.yml)), then deletes the Node.
  - Refuses, in one line naming the way, a host that runs an etcd member or is the last control-plane host of
    O(control_plane_hosts).
  - The API is reached as cluster_validate reaches it (O(kubeconfig), or an admin certificate minted from the store).
  - Check mode lists the pods a drain would evict and changes nothing. A Node already gone changes nothing.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  node:
    description: The inventory host to remove (its Node is the one of its name, lowercased).
    type: str
    required: true
  instance_group:
    description: The host's instance group (its C(kops_instance_group)).
    type: str
    required: true
  control_plane_hosts:
    description: The inventory's control-plane hosts of the cluster (the last one is not removed).
    type: list
    elements: str
    default: []
  state:
    description: V(drained) to cordon and drain the Node, V(absent) to delete it.
    type: str
    choices: [drained, absent]
    default: drained
  drain_timeout:
    description: Seconds a drain may take (kops' C(--drain-timeout)).
    type: int
    default: 900
  kubeconfig:
    description: A kubeconfig file to reach the API with. Without it, admin credentials come from the state store.
    type: path
  context:
    description: The kubeconfig context to use.
    type: str
  api_server:
    description: The API's URL or host, for the credentials from the state store (default C(spec.api.publicName)).
    type: str
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
requirements:
  - kubernetes (the Python client)
attributes:
  check_mode:
    description: Lists the pods a drain would evict, changes nothing.
    support: full
  diff_mode:
    description: No diff.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Drain vm2's Node
  kubeops.kops.node_remove:
    state_store: file:///home/me/kops-state
    cluster_name: metal.k8s.local
    node: vm2
    instance_group: nodes-main
    control_plane_hosts: [vm0]
"""

RETURN = r"""
found:
  description: Whether the Node was there.
  returned: always
  type: bool
pods:
  description: The pods the drain evicts (namespace/name).
  returned: state=drained
  type: list
  elements: str
evicted:
  description: Pods evicted.
  returned: state=drained
  type: int
"""

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import updates
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import client
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import removal
    from ansible_collections.kubeops.kops.plugins.module_utils.rolling.drain import Drainer
    try:
        client.import_kubernetes()
    except ImportError as exc:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(exc))
    params = module.params
    completed, groups = updates.load_completed(module.service(), params["cluster_name"])
    group = next((g for g in groups if g["metadata"]["name"] == params["instance_group"]), None)
    if group is None:
        module.fail_json(msg="host %s: kops_instance_group: %s is not an instance group of %s; fix the host's "
                             "kops_instance_group" % (params["node"], params["instance_group"], params["cluster_name"]))
    refused = removal.refusal(params["node"], group, completed["spec"].get("etcdClusters"),
                              params["control_plane_hosts"])
    if refused:
        module.fail_json(msg=refused)
    _reader, cloud = providers.cloud_for(completed, params["region"], params["profile"], {})
    api = client.cluster_client(module.service(), completed, cloud, params["kubeconfig"], params["context"],
                                params["api_server"])
    name = params["node"].lower()
    if params["state"] == "absent":
        found = removal.delete_node(api.core, name, module.check_mode)
        module.exit_json(changed=found, found=found)
    outcome = removal.drain(Drainer(api.core), name, params["drain_timeout"], module.check_mode)
    module.exit_json(changed=outcome["found"], **outcome)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        node=dict(type="str", required=True),
        instance_group=dict(type="str", required=True),
        control_plane_hosts=dict(type="list", elements="str", default=[]),
        state=dict(type="str", choices=["drained", "absent"], default="drained"),
        drain_timeout=dict(type="int", default=900),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str"),
    ), supports_check_mode=True)
    run(module)


if __name__ == "__main__":
    main()
