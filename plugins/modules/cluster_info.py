#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_info
short_description: Read kops clusters from the state store
version_added: 0.1.0
description:
  - Reads clusters from a kops state store, like C(kops get clusters), C(kops get instancegroups) and
    C(kops get cluster -o yaml) (and C(--full) for the completed spec).
  - Never writes anything.
options:
  name:
    description: The cluster to read. Without it, every cluster in the store is listed.
    type: str
  full:
    description:
      - Also return the completed spec (every default filled in), like C(kops get cluster --full).
      - Computed from the user spec, so it is current even before C(cluster_update) has run.
    type: bool
    default: false
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: The module only reads.
    support: full
  diff_mode:
    description: Nothing changes, so there is nothing to diff.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: List clusters
  kubeops.kops.cluster_info:
    state_store: s3://my-kops-state
  register: kops

- name: Export a cluster's YAML, like `kops get cluster k8s.example.com -o yaml`
  kubeops.kops.cluster_info:
    state_store: s3://my-kops-state
    name: k8s.example.com
  register: kops_cluster

- name: Save it
  ansible.builtin.copy:
    content: "{{ kops_cluster.yaml }}"
    dest: clusters/k8s.example.com.yaml
    mode: "0644"
"""

RETURN = r"""
clusters:
  description: Cluster names in the store (when O(name) is not given).
  returned: when name is not given
  type: list
  elements: str
exists:
  description: Whether the named cluster exists.
  returned: when name is given
  type: bool
cluster:
  description: The Cluster object (user spec).
  returned: when the named cluster exists
  type: dict
instance_groups:
  description: Its InstanceGroup objects, sorted by name.
  returned: when the named cluster exists
  type: list
  elements: dict
yaml:
  description: Cluster and instance groups as one multi-document YAML text, as C(kops get -o yaml) prints it.
  returned: when the named cluster exists
  type: str
completed_spec:
  description: The completed Cluster.
  returned: when the named cluster exists and full=true
  type: dict
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    service = module.service()
    name = module.params["name"]
    if not name:
        module.exit_json(changed=False, clusters=service.list_clusters())
    cluster, groups = service.read(name)
    if cluster is None:
        module.exit_json(changed=False, exists=False)
    result = dict(changed=False, exists=True, cluster=cluster, instance_groups=groups,
                  yaml=objects.dump_objects([cluster] + groups))
    if module.params["full"]:
        result["completed_spec"] = service.validate(cluster, groups)
    module.exit_json(**result)


def main():
    module = KopsModule(argument_spec=dict(name=dict(type="str"), full=dict(type="bool", default=False)))
    run(module)


if __name__ == "__main__":
    main()
