#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster
short_description: Create, replace or delete a kops cluster spec in the state store
version_added: 0.1.0
description:
  - Writes a kops cluster (the C(kops.k8s.io/v1alpha2) Cluster and its InstanceGroups) to a kops state store,
    exactly as C(kops create cluster), C(kops create -f), C(kops replace -f) and C(kops delete cluster --unregister) do.
  - With O(options), the spec is built from C(kops create cluster) options (snake-cased flag names, see
    docs/create-cluster-options.md), including subnet CIDR allocation, control-plane and etcd layout and channel images.
  - With O(definition), the given objects (the YAML a user keeps in git) replace the stored ones.
  - Everything is validated (kops' rules) before anything is written; a failed validation writes nothing.
  - No cloud resource is touched; use M(kubeops.kops.cluster_update) to apply the spec to a cloud.
options:
  name:
    description:
      - Cluster name (a DNS name such as V(k8s.example.com)).
      - Taken from C(options.cluster_name) or the Cluster in O(definition) when not given.
    type: str
  state:
    description:
      - V(present) writes the spec, V(absent) removes the cluster and everything under it from the state store.
      - V(absent) is refused while the cloud still holds objects the cluster owns (one tagged lookup); delete the
        cluster with M(kubeops.kops.cluster_delete) (playbook C(delete_cluster.yml)), which removes the store last.
    type: str
    choices: [present, absent]
    default: present
  options:
    description:
      - C(kops create cluster) options, e.g. C(zones), C(control_plane_zones), C(node_count), C(networking),
        C(topology), C(bastion), C(network_cidrs), C(sets).
      - Lists may be given as lists or comma-separated strings.
    type: dict
  definition:
    description:
      - Cluster and/or InstanceGroup objects, as YAML text (multi-document) or a list of dicts.
      - Like C(kops replace -f); a new cluster also needs O(force=true).
    type: raw
  force:
    description:
      - With O(definition), create the cluster when it does not exist (C(kops replace --force)).
      - With O(state=absent), remove the cluster from the store even though its cloud objects still exist
        (C(kops delete cluster --unregister)); they keep running.
    type: bool
    default: false
  overwrite:
    description:
      - With O(options), rewrite an existing cluster whose stored spec differs from what the options produce.
      - Without it such a run fails and nothing is written, as C(kops create cluster) refuses an existing cluster.
    type: bool
    default: false
  prune:
    description:
      - With O(definition), delete stored instance groups that the definition does not list.
    type: bool
    default: false
extends_documentation_fragment:
  - kubeops.kops.state_store
attributes:
  check_mode:
    description: Check mode computes the same plan and writes nothing.
    support: full
  diff_mode:
    description: Shows the YAML of every object that changes, before and after.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Create a cluster spec like `kops create cluster`
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    options:
      cluster_name: k8s.example.com
      cloud_provider: aws
      zones: [eu-west-1a, eu-west-1b, eu-west-1c]
      control_plane_zones: [eu-west-1a, eu-west-1b, eu-west-1c]
      networking: cilium
      topology: private
      bastion: true

- name: Apply the spec kept in git, like `kops replace -f`
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    definition: "{{ lookup('ansible.builtin.file', 'clusters/k8s.example.com.yaml') }}"

- name: Remove the cluster from the state store only, leaving its cloud objects (kops delete cluster --unregister)
  kubeops.kops.cluster:
    state_store: s3://my-kops-state
    name: k8s.example.com
    state: absent
    force: true
"""

RETURN = r"""
cluster:
  description: The Cluster object as stored (the user spec).
  returned: when state=present
  type: dict
instance_groups:
  description: The InstanceGroup objects as stored, sorted by name.
  returned: when state=present
  type: list
  elements: dict
completed_spec:
  description: The completed Cluster (every default filled in), as C(cluster-completed.spec) would hold it.
  returned: when state=present
  type: dict
changed_paths:
  description: State store paths, relative to the cluster, that were (or in check mode would be) written or deleted.
  returned: always
  type: list
  elements: str
  sample: [config, instancegroup/control-plane-us-east-1a, instancegroup/nodes-us-east-1a]
config_base:
  description: The cluster's location in the state store.
  returned: always
  type: str
  sample: s3://my-kops-state/k8s.example.com
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    params = module.params
    options = dict(params["options"] or {})
    zones = options.get("zones") or []
    service = module.service(zone_hint=(zones.split(",")[0] if isinstance(zones, str) else (zones or [None])[0]))
    if params["name"] and options and options.get("cluster_name") not in (None, params["name"]):
        module.fail_json(msg="name %r and options.cluster_name %r differ; give one of them"
                         % (params["name"], options["cluster_name"]))
    if options and params["name"]:
        options["cluster_name"] = params["name"]

    if params["state"] == "absent":
        # Named here so that AnsiballZ packs it: the cloud check loads a provider by name.
        from ansible_collections.kubeops.kops.plugins.module_utils.deletion import aws as _aws  # noqa: F401 pylint: disable=unused-import
        name = params["name"] or options.get("cluster_name") or _definition_name(module)
        plan = service.plan_delete(name, force=params["force"], region=params["region"], profile=params["profile"])
    elif options:
        plan = service.plan_create(options, overwrite=params["overwrite"])
    else:
        documents = _load_definition(module)
        plan = service.plan_replace(documents, force=params["force"], prune=params["prune"])

    if not module.check_mode:
        service.execute(plan)

    result = dict(changed=plan.changed, changed_paths=plan.changed_paths,
                  config_base=service.cluster_store(plan.cluster_name).config_base())
    if module._diff:
        result["diff"] = plan.diff()
    if params["state"] == "present":
        after = plan.objects_after()
        result["cluster"] = next(o for o in after if o["kind"] == objects.CLUSTER)
        result["instance_groups"] = sorted((o for o in after if o["kind"] == objects.INSTANCE_GROUP),
                                           key=objects.name_of)
        result["completed_spec"] = plan.completed
    module.exit_json(**result)


def _load_definition(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    definition = module.params["definition"]
    if definition is None:
        module.fail_json(msg="state=present needs options (create-cluster options) or definition (Cluster/InstanceGroup YAML)")
    if isinstance(definition, str):
        return objects.load_objects(definition, source="definition")
    documents = definition if isinstance(definition, list) else [definition]
    return objects.load_objects(objects.dump_objects(documents), source="definition")


def _definition_name(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    if module.params["definition"] is None:
        module.fail_json(msg="state=absent needs name (the cluster to delete)")
    cluster = objects.split_objects(_load_definition(module))[0]
    return objects.name_of(cluster)


def main():
    module = KopsModule(
        argument_spec=dict(
            name=dict(type="str"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            options=dict(type="dict"),
            definition=dict(type="raw"),
            force=dict(type="bool", default=False),
            overwrite=dict(type="bool", default=False),
            prune=dict(type="bool", default=False),
        ),
        mutually_exclusive=[["options", "definition"]],
    )
    run(module)


if __name__ == "__main__":
    main()
