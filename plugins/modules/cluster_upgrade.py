#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_upgrade
short_description: Move a kops cluster's Kubernetes version and images to the channel's (kops upgrade cluster)
version_added: 0.1.0
description:
  - Like C(kops upgrade cluster --yes) - changes the cluster spec in the state store only; apply it with
    M(kubeops.kops.cluster_update), then replace the instances with a rolling update.
  - Without O(kubernetes_version), C(spec.kubernetesVersion) moves to the channel's recommended version for the
    cluster's minor version, or to the next minor's recommended version when this kOps supports it (kops' rule),
    so each run moves at most one minor version and the cluster reaches the channel's recommendation for this kOps
    (1.36.3 on V(stable)) in steps; there the module reports no change. A newer version than the channel's is kept.
  - With O(kubernetes_version), that version, refused when it is older than the cluster's, skips a minor version
    (the message names the versions to take), is below the channel's required version for its range, or is outside
    the versions this kOps supports (1.32.0 to 1.37.x).
  - Each instance group whose C(image) is empty or one of kops' channel images (C(099720109477/ubuntu/...),
    C(kope.io/k8s-...), ...) gets the channel's image for the new version and its machine type's architecture;
    a custom image is kept (reported in RV(notes)).
  - C(spec.channel) is set to O(channel) when it differs (an empty one becomes V(stable)), as kops does.
  - The new spec is validated like any other change before anything is written, under the cluster's lease.
options:
  cluster_name:
    description: The cluster to upgrade.
    type: str
    required: true
  channel:
    description:
      - Release channel to take versions and images from; default the cluster's C(spec.channel), else V(stable).
      - The channels are embedded (kops' C(channels/stable) and C(channels/alpha)); a URL is not fetched.
    type: str
    choices: [stable, alpha]
  kubernetes_version:
    description:
      - The Kubernetes version to move to (e.g. V(1.35.7)) instead of the channel's recommendation.
      - Or the base URL of a Kubernetes build whose path names its version (e.g.
        V(https://builds.example.com/v1.36.3)), as C(spec.kubernetesVersion) takes one (kops' side-loaded builds); it
        is written as given and checked by the minor version it names.
    type: str
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
  - kubeops.kops.spec_history
attributes:
  check_mode:
    description: Check mode computes the same upgrade and writes nothing (kops without C(--yes)).
    support: full
  diff_mode:
    description: Shows the YAML of the Cluster and every InstanceGroup that changes, before and after.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Preview the upgrade the stable channel recommends (kops upgrade cluster)
  kubeops.kops.cluster_upgrade:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
  check_mode: true
  register: upgrade

- name: Upgrade to a given version (one minor at a time)
  kubeops.kops.cluster_upgrade:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    kubernetes_version: 1.35.7
"""

RETURN = r"""
actions:
  description: What changes, one entry per row of kops' table.
  returned: always
  type: list
  elements: dict
  sample: [{item: Cluster, property: KubernetesVersion, old: v1.34.2, new: 1.35.7, field: spec.kubernetesVersion}]
table:
  description: kops' ITEM / PROPERTY / OLD / NEW table, or C(No upgrade required).
  returned: always
  type: list
  elements: str
kubernetes_version:
  description: The cluster's C(spec.kubernetesVersion) before and after.
  returned: always
  type: dict
  sample: {before: v1.34.2, after: 1.35.7}
notes:
  description: What was kept and why (a custom image, a version newer than the channel's).
  returned: always
  type: list
  elements: str
changed_paths:
  description: State store paths, relative to the cluster, written (or that would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [config, instancegroup/nodes-us-east-1a]
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import upgrade
    from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterError

    params = module.params
    service = module.service()
    cluster, groups = service.read(params["cluster_name"])
    if cluster is None:
        raise ClusterError("cluster %r does not exist in %s" % (params["cluster_name"], service.store.url("")))
    actions, cluster_after, groups_after, notes = upgrade.plan_upgrade(
        cluster, groups, channel_name=params["channel"], kubernetes_version=params["kubernetes_version"])
    result = dict(changed=False, changed_paths=[], notes=notes,
                  actions=[a._asdict() for a in actions],
                  table=upgrade.table(actions) if actions else ["No upgrade required"],
                  kubernetes_version=dict(before=cluster["spec"].get("kubernetesVersion"),
                                          after=cluster_after["spec"].get("kubernetesVersion")))
    if actions:
        plan = service.plan_replace([cluster_after] + groups_after)
        plan.operation = "upgrade"
        if not module.check_mode:
            service.execute(plan)
        result.update(changed=plan.changed, changed_paths=plan.changed_paths)
        if module._diff:
            result["diff"] = plan.diff()
    module.exit_json(**result)


def main():
    module = KopsModule(
        argument_spec=dict(
            cluster_name=dict(type="str", required=True),
            channel=dict(type="str", choices=["stable", "alpha"]),
            kubernetes_version=dict(type="str"),
            change_cause=dict(type="str"),
        ),
    )
    run(module)


if __name__ == "__main__":
    main()
