#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: metal_roll
short_description: The controller's steps of an in-place rolling update of a metal cluster's hosts
version_added: 0.1.0
description:
  - A metal cluster's machines are the hosts of an Ansible inventory, so its rolling update updates them in place
    instead of replacing instances. C(playbooks/rolling_update.yml) runs the roll; this module is its controller
    side, one O(step) per call (docs/metal.md, "Rolling update").
  - O(step=plan) decides which hosts need an update. enroll records on each host the digest of the nodeup config it
    applied; a host whose record (O(applied)) is not the digest of its group's nodeup config in the state store
    (C(igconfig/<role>/<group>/nodeupconfig.yaml)), or that has none, needs one; O(force) rolls every host. It
    returns kops' table (NAME STATUS NEEDUPDATE READY MIN TARGET MAX NODES) and the order, control-plane hosts one
    at a time, then the node hosts O(max_unavailable) at a time across the node groups. Nothing surges on hosts.
  - O(step=drain) taints, cordons and drains the host's Node as the cloud roll does (evictions honour
    PodDisruptionBudgets). O(step=ready) waits for the Node to be Ready after its host was updated and uncordons it.
  - Check mode makes no change (O(step=plan) is read-only; the other steps then say what they would do).
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  step:
    description: V(plan), V(drain) or V(ready) (see the description).
    type: str
    choices: [plan, drain, ready]
    default: plan
  hosts:
    description: "The inventory's machines, {instance group: [host]} (O(step=plan))."
    type: dict
  applied:
    description: "{host: the digest its enroll record holds, or an empty string without a record} (O(step=plan))."
    type: dict
  instance_groups:
    description: Only these instance groups (kops' C(--instance-group)).
    type: list
    elements: str
  roles:
    description: Only groups of these roles (kops' C(--instance-group-roles)).
    type: list
    elements: str
  force:
    description: Roll every host of the selected groups, up to date or not.
    type: bool
    default: false
  max_unavailable:
    description: Node hosts drained at once (a number, or a percentage of the node hosts rounded down, at least 1).
    type: raw
  budget_max_unavailable:
    description:
      - The cluster-wide budget of the cloud roll; on metal it is the node batch and wins over O(max_unavailable).
    type: raw
  max_surge:
    description: Not possible on metal (there is no machine to add); when given, the plan says so and ignores it.
    type: raw
  budget_max_surge:
    description: Likewise not possible on metal.
    type: raw
  host:
    description: The inventory host whose Node to drain or wait for (O(step=drain), O(step=ready)).
    type: str
  instance_group:
    description: The host's instance group, for the log lines.
    type: str
  drain_timeout:
    description: Seconds to drain the Node (V(40s), V(10m) accepted).
    type: raw
    default: 900
  post_drain_delay:
    description: Seconds to wait after the drain.
    type: raw
    default: 5
  ready_timeout:
    description: Seconds for the Node to be Ready after its host was updated.
    type: raw
    default: 900
  fail_on_drain_error:
    description: Stop when the Node cannot be drained; false logs the failure and goes on.
    type: bool
    default: true
  progress_file:
    description: A file each step is appended to as it happens (for C(tail -f)).
    type: path
  kubeconfig:
    description:
      - A kubeconfig for the API; without it admin credentials are made from the store's CA for C(spec.api.publicName).
    type: path
  context:
    description: The context of O(kubeconfig).
    type: str
  api_server:
    description: The API's URL, instead of C(spec.api.publicName).
    type: str
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: O(step=plan) reads only; the other steps change nothing and say what they would do.
    support: full
  diff_mode:
    description: Not applicable (the plan is in RV(lines)).
    support: none
requirements:
  - kubernetes (the Python client)
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Which hosts of the metal cluster need an update (playbooks/rolling_update.yml does this)
  kubeops.kops.metal_roll:
    state_store: file:///home/me/kops-state
    cluster_name: metal.k8s.local
    step: plan
    hosts: {control-plane-main: [vm0], nodes-main: [vm1, vm2]}
    applied: {vm0: "sha256:0f1e...", vm1: "", vm2: "sha256:0f1e..."}
  register: plan

- name: Drain a host's Node before updating the host
  kubeops.kops.metal_roll:
    state_store: file:///home/me/kops-state
    cluster_name: metal.k8s.local
    step: drain
    host: vm1
"""

RETURN = r"""
lines:
  description:
    - kops' table, then "No rolling-update required." or the plan per group (O(step=plan)); the steps otherwise.
  returned: always
  type: list
  elements: str
groups:
  description:
    - Each selected instance group with hosts, as the plan found it (name, role, status, need_update, instances).
  returned: when O(step=plan)
  type: list
  elements: dict
control_plane:
  description: The control-plane hosts to update, in order, one at a time.
  returned: when O(step=plan)
  type: list
  elements: str
nodes:
  description: The node hosts to update, in order, RV(node_batch) at a time.
  returned: when O(step=plan)
  type: list
  elements: str
node_batch:
  description: How many node hosts are drained and updated at once.
  returned: when O(step=plan)
  type: int
control_plane_hosts:
  description: Every inventory host of a control-plane group (the API's addresses a re-enrolled host is given).
  returned: when O(step=plan)
  type: list
  elements: str
configs:
  description: "{instance group: its nodeup config} for the groups of the hosts to update."
  returned: when O(step=plan)
  type: dict
digests:
  description: "{instance group: the digest of its nodeup config} (what a host records once updated)."
  returned: when O(step=plan)
  type: dict
log:
  description: 'The steps as "[elapsed] group host phase: message" (O(step=drain), O(step=ready)).'
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors

CONTROL_PLANE_ROLES = ("Master", "ControlPlane", "APIServer")


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, progress, updates
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import client
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
    params = module.params
    durations.in_seconds(module, "drain_timeout", "post_drain_delay", "ready_timeout")
    name = params["cluster_name"]
    service = module.service()
    completed, instance_groups = updates.load_completed(service, name)
    if completed["spec"].get("cloudProvider") != "metal":
        module.fail_json(msg="metal_roll: %s is a %s cluster, not metal: roll it with kubeops.kops.rolling_update"
                         % (name, completed["spec"].get("cloudProvider")))
    try:
        client.import_kubernetes()
    except ImportError as exc:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(exc))
    hosts = params["hosts"] or {}
    _reader, cloud = providers.cloud_for(completed, params["region"], params["profile"], hosts)
    api = client.cluster_client(service, completed, cloud, params["kubeconfig"], params["context"],
                                params["api_server"])
    if params["step"] == "plan":
        module.exit_json(**_plan(module, service, completed, instance_groups, hosts, api))
    log = progress.Progress(None if module.check_mode else params["progress_file"])
    module.exit_json(**_node_step(module, api, log))


def _plan(module, service, completed, instance_groups, hosts, api):
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeconfig
    from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place as roll
    import yaml
    params = module.params
    if not hosts:
        module.fail_json(msg="rolling update of metal cluster %s: no inventory host names one of its instance groups; "
                         "run with the inventory of its hosts (-i hosts.yml, each host with kops_instance_group)"
                         % params["cluster_name"])
    store = service.cluster_store(params["cluster_name"])
    by_name = {g["metadata"]["name"]: g for g in instance_groups}
    configs = {}
    for group in hosts:
        if group not in by_name:
            continue  # roll.plan names it
        text = store.read(nodeconfig.config_path(by_name[group]))
        if text is None:
            module.fail_json(msg="rolling update of %s: the store has no nodeup config for instance group %s; run "
                             "update_cluster.yml first" % (params["cluster_name"], group))
        configs[group] = yaml.safe_load(text)  # as the playbooks' from_yaml reads it: the digests agree
    digests = {group: roll.config_digest(config) for group, config in configs.items()}
    try:
        nodes = api.nodes()
    except ValueError as exc:
        if not module.check_mode:
            module.fail_json(msg="rolling update of %s: the Kubernetes API does not answer (%s); the roll drains each "
                             "host's Node through it" % (params["cluster_name"], exc))
        module.warn("the Kubernetes API does not answer (%s): the table's NODES are 0" % exc)
        nodes = []
    found = roll.plan(completed, instance_groups, hosts, digests, params["applied"] or {}, nodes, params["force"],
                      params["instance_groups"], params["roles"], params["max_unavailable"],
                      params["budget_max_unavailable"], params["max_surge"], params["budget_max_surge"])
    rolled = set(found["control_plane"] + found["nodes"])
    control_plane_hosts = sorted(host for group, names in hosts.items()
                                 if (by_name.get(group, {}).get("spec") or {}).get("role") in CONTROL_PLANE_ROLES
                                 for host in names)
    return {"changed": False, "lines": found["lines"], "groups": [g.as_result() for g in found["groups"]],
            "control_plane": found["control_plane"], "nodes": found["nodes"], "node_batch": found["node_batch"],
            "control_plane_hosts": control_plane_hosts, "log": [], "digests": digests,
            "configs": {group: config for group, config in configs.items()
                        if any(host in rolled for host in hosts[group])}}


def _node_step(module, api, log):
    from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place as roll
    from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place_node as node_steps
    params = module.params
    if not params["host"]:
        module.fail_json(msg="metal_roll: step %s needs host (the inventory host whose Node it is)" % params["step"])
    node = roll.node_name(params["host"])

    def report(phase, message):
        log.step(phase, message, params["instance_group"] or "-", params["host"])

    if module.check_mode:
        report(params["step"], "would %s node %s" % ("drain" if params["step"] == "drain" else
                                                     "wait for Ready and uncordon", node))
        return {"changed": True, "lines": log.lines, "log": log.lines}
    if params["step"] == "drain":
        try:
            changed = node_steps.drain(api.core, node, params["drain_timeout"], params["post_drain_delay"], report)
        except node_steps.DrainFailed as exc:
            if params["fail_on_drain_error"]:
                raise
            report("drain", "%s; fail_on_drain_error is false: going on" % exc)
            changed = True
    else:
        changed = node_steps.wait_ready_and_uncordon(api.core, node, params["ready_timeout"], report)
    return {"changed": changed, "lines": log.lines, "log": log.lines}


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        step=dict(type="str", choices=["plan", "drain", "ready"], default="plan"),
        hosts=dict(type="dict"),
        applied=dict(type="dict"),
        instance_groups=dict(type="list", elements="str"),
        roles=dict(type="list", elements="str"),
        force=dict(type="bool", default=False),
        max_unavailable=dict(type="raw"),
        budget_max_unavailable=dict(type="raw"),
        max_surge=dict(type="raw"),
        budget_max_surge=dict(type="raw"),
        host=dict(type="str"),
        instance_group=dict(type="str"),
        drain_timeout=dict(type="raw", default=900),
        post_drain_delay=dict(type="raw", default=5),
        ready_timeout=dict(type="raw", default=900),
        fail_on_drain_error=dict(type="bool", default=True),
        progress_file=dict(type="path"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str"),
    ), supports_check_mode=True)
    run(module)


if __name__ == "__main__":
    main()
