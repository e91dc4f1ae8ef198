#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: instance_group
short_description: Create, update or delete one kops instance group in the state store
version_added: 0.1.0
description:
  - Manages one C(InstanceGroup) of a kops cluster in the state store, like C(kops create instancegroup),
    C(kops replace -f) of one group and C(kops delete instancegroup) (state store only; the cloud group is
    changed by M(kubeops.kops.cluster_update)).
  - A new group gets kops' defaults for what it leaves out; role V(Node), the cluster's subnets, the
    channel image, the default machine type, min/max size (1/1 for control plane and bastion, 2/2 otherwise)
    and the C(kops.k8s.io/instancegroup) node label.
  - The group is validated together with its cluster (subnets exist, etcd membership, sizes, ...) before
    anything is written.
options:
  cluster_name:
    description: The cluster the group belongs to.
    type: str
    required: true
  name:
    description: Instance group name. Taken from O(definition) when not given.
    type: str
  state:
    description: V(present) creates or replaces the group, V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  spec:
    description:
      - The group's C(spec), as in kops' InstanceGroup YAML (C(role), C(machineType), C(minSize), C(maxSize),
        C(subnets), C(image), C(nodeLabels), C(taints), ...).
      - It replaces the stored spec as a whole, like C(kops replace).
    type: dict
  definition:
    description: A whole InstanceGroup object, as YAML text or a dict. Alternative to O(name) + O(spec).
    type: raw
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
  - kubeops.kops.spec_history
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
- name: Add a spot-friendly node group
  kubeops.kops.instance_group:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    name: nodes-batch
    spec:
      role: Node
      machineType: c5.xlarge
      minSize: 0
      maxSize: 10
      subnets: [eu-west-1a, eu-west-1b]
      nodeLabels:
        workload: batch

- name: Remove it again
  kubeops.kops.instance_group:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    name: nodes-batch
    state: absent
"""

RETURN = r"""
instance_group:
  description: The InstanceGroup object as stored.
  returned: when state=present
  type: dict
changed_paths:
  description: State store paths, relative to the cluster, written or deleted (or that would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [instancegroup/nodes-batch]
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    params = module.params
    group = _group_from_params(module)
    service = module.service()
    plan = service.plan_instance_group(params["cluster_name"], group, state=params["state"])
    if not module.check_mode:
        service.execute(plan)
    result = dict(changed=plan.changed, changed_paths=plan.changed_paths)
    if module._diff:
        result["diff"] = plan.diff()
    if params["state"] == "present":
        name = objects.name_of(group)
        result["instance_group"] = next(o for o in plan.objects_after()
                                        if o["kind"] == objects.INSTANCE_GROUP and objects.name_of(o) == name)
    module.exit_json(**result)


def _group_from_params(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    params = module.params
    if params["definition"] is not None:
        definition = params["definition"]
        text = definition if isinstance(definition, str) else objects.dump_object(definition)
        warnings = []
        documents = objects.load_objects(text, source="definition", warnings=warnings)
        for warning in warnings:
            module.warn(warning)
        groups = [d for d in documents if d["kind"] == objects.INSTANCE_GROUP]
        if len(groups) != 1 or len(documents) != 1:
            module.fail_json(msg="definition must hold exactly one InstanceGroup object")
        group = groups[0]
        if params["name"] and params["name"] != objects.name_of(group):
            module.fail_json(msg="name %r differs from the definition's metadata.name %r"
                             % (params["name"], objects.name_of(group)))
        return group
    if not params["name"]:
        module.fail_json(msg="name is required unless definition is given")
    group = objects.new_instance_group(params["cluster_name"], params["name"])
    group["spec"] = dict(params["spec"] or {})
    if params["state"] == "present":
        # Schema check of the spec the user gave, with field paths like a YAML file would get.
        warnings = []
        checked = objects.load_objects(objects.dump_object(group), source="instance_group %s" % params["name"],
                                       warnings=warnings)
        for warning in warnings:
            module.warn(warning)
        group["spec"] = checked[0]["spec"]  # without the fields kops ignores
    return group


def main():
    module = KopsModule(
        argument_spec=dict(
            cluster_name=dict(type="str", required=True),
            name=dict(type="str"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            spec=dict(type="dict"),
            definition=dict(type="raw"),
            change_cause=dict(type="str"),
        ),
        mutually_exclusive=[["spec", "definition"]],
    )
    run(module)


if __name__ == "__main__":
    main()
