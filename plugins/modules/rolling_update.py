#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: rolling_update
short_description: Replace a kops cluster's instances that run an old launch template (kops rolling-update cluster)
version_added: 0.1.0
description:
  - Like C(kops rolling-update cluster --yes). Per instance group it finds which instances need an update (AWS
    the instance's launch template C(id:version) differs from its autoscaling group's, C($Latest) and C($Default)
    resolved; instances on their way out ignored; instances tagged C(kops.k8s.io/detached-from-asg) are the group's
    detached surge; nodes annotated C(kops.k8s.io/needs-update) need one too) and prints kops' table.
  - Then it replaces them in kops' order, bastions first, then the control-plane groups one at a
    time (sorted by name), then the API server groups, then the node groups (sorted by name). Within a group it
    surges first. It detaches up to C(maxSurge) instances from the autoscaling group without lowering its
    desired capacity, so the group launches their replacements. Then, with up to C(maxSurge + maxUnavailable) at
    once, it cordons each node, labels it C(node.kubernetes.io/exclude-from-external-load-balancers), takes it
    out of the group's load balancers and drains it by eviction (PodDisruptionBudgets honoured, DaemonSet pods
    left, pods without a controller evicted as kops' force). Then it terminates the instance
    without lowering the desired capacity, waits for the group to be back to its desired number of InService
    instances, and validates the cluster O(validate_count) times in a row before the next.
  - The control plane never surges. The cluster and each instance group can set C(spec.rollingUpdate)
    (C(maxSurge), C(maxUnavailable), C(drainAndTerminate)) as in kops. The default surge is 1 on AWS.
  - Check mode prints the table and the plan and makes only read calls. Without check mode the roll happens; no
    C(--yes) is needed, since check mode is the preview, as for M(kubeops.kops.cluster_update).
  - A roll takes long. Each step (group, instance, phase, elapsed time) is a line of RV(log), and is appended to
    O(progress_file) as it happens, for C(tail -f).
  - On GCE, as in kops, nothing surges (C(maxSurge) defaults to 0 and a surge asked for is logged as impossible).
    After draining, each instance is recreated through its managed instance group (C(recreateInstances), the
    group's target size kept), and the roll waits until every manager of the group has its target size of
    running instances again. An instance group in several zones has a managed instance group per zone; the
    table has one row per instance group with their sizes summed (kops prints one row per manager).
  - Clouds built so far are AWS and GCE.
options:
  cluster_name:
    description: The cluster to roll.
    type: str
    required: true
  instance_groups:
    description: Only these instance groups (kops' C(--instance-group)); an unknown name fails.
    type: list
    elements: str
  roles:
    description: Only groups of these roles (kops' C(--instance-group-roles)), V(Bastion), V(ControlPlane), V(APIServer), V(Node).
    type: list
    elements: str
  force:
    description: Replace every instance of the selected groups, up to date or not (kops' C(--force)).
    type: bool
    default: false
  cloud_only:
    description:
      - Roll without the Kubernetes API (kops' C(--cloudonly)). Nodes are not drained and the cluster is not
        validated, and instances are not detached first (kops surges only with the API). This causes downtime.
    type: bool
    default: false
  max_surge:
    description:
      - Overrides C(spec.rollingUpdate.maxSurge) of every rolled group (a number or a percentage of the group,
        rounded up). The control plane never surges.
    type: raw
  max_unavailable:
    description:
      - Overrides C(spec.rollingUpdate.maxUnavailable) (a number or a percentage, rounded down but at least 1).
    type: raw
  budget_max_unavailable:
    description:
      - A cluster-wide budget for the node groups (beyond kops, whose node groups roll one after the other). With
        it, the node groups (role V(Node)) roll side by side, in waves, while at most this many of all the cluster's
        node-group nodes (a number, or a percentage of them rounded down) are unavailable (cordoned, draining, or
        replaced and not yet back), counted against the groups' desired sizes. Bastions, the control plane and the
        API servers still roll first, in kops' order.
      - Each group stays bound by its own C(spec.rollingUpdate) (or O(max_surge)/O(max_unavailable)). Surge
        instances of all groups are launched before the first drain; an instance replaced beyond its group's surge
        counts against the budget.
      - Check mode prints the schedule (pre-scale, the waves and their instances, the peak unavailable).
      - Without it the node groups roll one after the other, as in kops.
    type: raw
  budget_max_surge:
    description:
      - With O(budget_max_unavailable), caps the surge of all node groups together (a number, or a percentage of
        the node-group nodes rounded up); the smallest groups get it first, so a 1-node group keeps a node. Without
        it each group surges as its settings say.
    type: raw
  pending_pods_timeout:
    description:
      - Under a budget, before a node is drained the roll waits while the cluster has Pending pods that the
        node's capacity may be needed for (they do not fit on the other Ready, schedulable nodes), up to this many
        seconds; then the roll stops and names the pods.
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 300
  fail_on_validate_error:
    description:
      - Stop when the cluster does not validate within O(validation_timeout); false logs and goes on.
      - Under O(budget_max_unavailable) the validation after pre-scaling and after each wave always stops the roll at the
        timeout, since the next wave would add its nodes to those that did not come back.
    type: bool
    default: true
  fail_on_drain_error:
    description: Stop when a node cannot be drained within O(drain_timeout); false logs and terminates it anyway.
    type: bool
    default: true
  drain_timeout:
    description:
      - Seconds to drain one node (evictions refused by a disruption budget are retried every 5 s until then).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 900
  validation_timeout:
    description:
      - Seconds for the cluster to validate after each step, and for a group's replacements to be InService.
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 900
  validate_count:
    description: Consecutive successful validations needed after each step (0 skips validation).
    type: int
    default: 2
  validate_retry_interval:
    description:
      - Seconds between validations that fail (kops' 30 s).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 30
  validate_recheck_interval:
    description:
      - Seconds between consecutive successful validations (kops' 10 s).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 10
  post_drain_delay:
    description:
      - Seconds to wait after draining a node, before terminating it.
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 5
  interval:
    description:
      - Seconds to wait after terminating or detaching an instance (kops' node, control-plane and bastion interval).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 15
  progress_file:
    description: A file each step is appended to as it happens (for C(tail -f)); none by default.
    type: path
  kubeconfig:
    description:
      - A kubeconfig for the cluster's API. Without it, admin credentials are made from the cluster's CA in the
        state store (as C(kops export kubeconfig --admin)) for the API load balancer's address.
    type: path
  context:
    description: The context of O(kubeconfig) to use.
    type: str
  api_server:
    description: The API's URL when neither O(kubeconfig) nor the cloud gives it.
    type: str
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: The table and the plan; only read calls.
    support: full
  diff_mode:
    description: The table and the plan, as the diff's after text.
    support: full
requirements:
  - kubernetes (the Python client), unless O(cloud_only=true)
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: What would be rolled (kops rolling-update cluster)
  kubeops.kops.rolling_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
  check_mode: true

- name: Roll the nodes, two new ones at a time, and watch it with tail -f /tmp/roll.log
  kubeops.kops.rolling_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    roles: [Node]
    max_surge: 2
    progress_file: /tmp/roll.log

- name: The node groups side by side, at most 10% of the nodes unavailable and 4 surge instances in all
  kubeops.kops.rolling_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    budget_max_unavailable: 10%
    budget_max_surge: 4
"""

RETURN = r"""
groups:
  description: Each selected instance group that has a cloud group, as the roll found it before starting.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: The instance group., type: str}
    role: {description: "Its phase: bastion, control-plane, apiserver or node.", type: str}
    status: {description: V(Ready) or V(NeedsUpdate) as in kops' table., type: str}
    need_update: {description: Instances that need an update (detached ones included)., type: int}
    ready: {description: Instances up to date., type: int}
    min: {description: The cloud group's minimum size., type: int}
    target: {description: Its desired size., type: int}
    max: {description: Its maximum size., type: int}
    nodes: {description: Instances registered as Kubernetes nodes (0 with cloud_only)., type: int}
    cloud_group: {description: The cloud's name of the group (the autoscaling group)., type: str}
    instances: {description: "Each instance: id, status (UpToDate, NeedsUpdate, Detached), node name.", type: list}
    outcome: {description: "What the roll did: rolled, failed: <why>, nothing to do, or (under a budget) stopped: <why> when
              another group's failure stopped the roll first.", type: str}
lines:
  description: kops' output, the table then "No rolling-update required." or the plan per group.
  returned: always
  type: list
  elements: str
  sample: ["NAME                    STATUS          NEEDUPDATE      READY   MIN     TARGET  MAX",
           "nodes-us-east-1a        NeedsUpdate     2               0       2       2       2"]
log:
  description: Every step of the roll as "[elapsed] group instance phase message", in order.
  returned: always
  type: list
  elements: str
steps:
  description: The same steps as data (elapsed, group, instance, phase, message).
  returned: always
  type: list
  elements: dict
schedule:
  description: With O(budget_max_unavailable), the node groups' schedule (also printed in RV(lines)).
  returned: when O(budget_max_unavailable) is set and node groups need a roll
  type: dict
  contains:
    max_unavailable: {description: The budget as a count of nodes., type: int}
    max_surge: {description: The surge budget as a count (null for each group's own)., type: int}
    nodes: {description: The node-group nodes a percentage is of., type: int}
    surge: {description: "Per group, the instances detached before the first drain (group, instances).", type: list}
    waves: {description: "Each wave: groups (group, instances) and unavailable.", type: list}
    peak_unavailable: {description: The most unavailable in a wave., type: int}
    notes: {description: What the budget changed in the groups' settings., type: list}
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, watchdog
    from ansible_collections.kubeops.kops.plugins.module_utils.rolling import service

    watchdog.start("rolling_update")  # a killed ansible-playbook stops the roll (its worker would not)
    durations.in_seconds(module, *service.DURATIONS)
    rolling_update = service.RollingUpdate(module.params, check_mode=module.check_mode, diff=module._diff)
    module.exit_json(**rolling_update.run(module.service()))


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        instance_groups=dict(type="list", elements="str"),
        roles=dict(type="list", elements="str"),
        force=dict(type="bool", default=False),
        cloud_only=dict(type="bool", default=False),
        max_surge=dict(type="raw"),
        max_unavailable=dict(type="raw"),
        budget_max_unavailable=dict(type="raw"),
        budget_max_surge=dict(type="raw"),
        pending_pods_timeout=dict(type="raw", default=300),
        fail_on_validate_error=dict(type="bool", default=True),
        fail_on_drain_error=dict(type="bool", default=True),
        drain_timeout=dict(type="raw", default=900),
        validation_timeout=dict(type="raw", default=900),
        validate_count=dict(type="int", default=2),
        validate_retry_interval=dict(type="raw", default=30),
        validate_recheck_interval=dict(type="raw", default=10),
        post_drain_delay=dict(type="raw", default=5),
        interval=dict(type="raw", default=15),
        progress_file=dict(type="path"),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str"),
    ))
    run(module)


if __name__ == "__main__":
    main()
