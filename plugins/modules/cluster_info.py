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
    C(kops get cluster -o yaml) (and C(--full) for the completed spec); the objects, their YAML, and kops' tables
    as lines (RV(lines)).
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
  revision:
    description:
      - Read the spec as the state store held it at this revision of its history (C(<cluster>/.kubeops-history/),
        docs/state-store.md) instead of as it is now. Fails naming the kept revisions when it is not kept.
    type: int
  compare_to:
    description:
      - Also return RV(revision_diff), a unified diff of the spec from this revision to O(revision) (or to the
        spec as stored now, without O(revision)).
    type: int
  history:
    description: Also return RV(history), every kept revision with who made it, when, and with which playbook.
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

- name: The spec at revision 50, and what changed from revision 40 to it
  kubeops.kops.cluster_info:
    state_store: s3://my-kops-state
    name: k8s.example.com
    revision: 50
    compare_to: 40
  register: kops_cluster_50

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
lines:
  description:
    - What C(kops get) prints by default (C(-o table)), as lines. With O(name), C(kops get all NAME)'s tables
      (C(Cluster), NAME CLOUD ZONES; C(Instance Groups), NAME ROLE MACHINETYPE MIN MAX ZONES) of the spec read
      (at O(revision) when given); without it, C(kops get clusters)' table of every cluster in the store.
  returned: when the named cluster exists, or without name
  type: list
  elements: str
  sample: ["Cluster", "NAME                    CLOUD   ZONES", "k8s.example.com         aws     eu-west-1a", "",
           "Instance Groups", "NAME                    ROLE            MACHINETYPE     MIN     MAX     ZONES",
           "control-plane-eu-west-1a ControlPlane    t3.medium       1       1       eu-west-1a"]
yaml:
  description:
    - Cluster and instance groups as one multi-document YAML text, as C(kops get -o yaml) prints it.
    - The Cluster carries the annotation C(kubeops.kops/revision) (RV(revision)) in C(metadata.annotations); a
      replace of the text (M(kubeops.kops.cluster) O(kubeops.kops.cluster#module:definition)) checks it for changes
      stored since, and takes it off before storing. kops reads it as any annotation, so the text stays valid for
      C(kops replace -f).
  returned: when the named cluster exists
  type: str
completed_spec:
  description: The completed Cluster.
  returned: when the named cluster exists and full=true
  type: dict
revision:
  description:
    - The revision of the spec's history that was read (O(revision), else the one the store is at now); RV(yaml)
      carries it as the Cluster's annotation C(kubeops.kops/revision). C(replace_cluster.yml) refuses the file when
      it would undo a change stored since.
    - A spec changed by another tool since the last revision kubeops.kops recorded reads as the next number followed
      by C((unrecorded <sha256 prefix>)); the next write records it as a revision of its own.
  returned: when the named cluster exists
  type: str
  sample: "51"
history_lines:
  description: RV(history) as a table, oldest first (REVISION OPERATION TIME WHO CAUSE).
  returned: when history=true and the cluster exists
  type: list
  elements: str
revision_diff:
  description: Unified diff of the spec (config, then instance groups) from O(compare_to) to the revision read.
  returned: when compare_to is given and the cluster exists
  type: str
history:
  description: Every kept revision, oldest first.
  returned: when history=true and the cluster exists
  type: list
  elements: dict
  contains:
    revision:
      description: Its number (1 is the create; one more per change of the spec).
      type: int
    operation:
      description: >-
        create, replace, rollback, instance_group, upgrade, keypair; outside (a change by another tool, recorded at the
        next write here) or found (the spec as stored when the history began).
      type: str
    time:
      description: When it was written (UTC).
      type: str
    user:
      description: The user that ran the module.
      type: str
    host:
      description: The host the module ran on.
      type: str
    module:
      description: The module that wrote it.
      type: str
    cause:
      description: The module's change_cause; by default the playbook, line and task.
      type: str
    paths:
      description: The spec files it changed.
      type: list
      elements: str
    restores:
      description: The revision a rollback wrote back.
      type: int
"""

import difflib

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import revisions
    from ansible_collections.kubeops.kops.plugins.module_utils import listings
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects

    service = module.service()
    name = module.params["name"]
    if not name:
        names = service.list_clusters()
        stored = [cluster for cluster in (service.read(n)[0] for n in names) if cluster is not None]
        lines = listings.clusters(stored) if stored else ["No clusters found in %s" % service.store.url("")]
        module.exit_json(changed=False, clusters=names, lines=lines)
    cluster, groups = service.read(name)
    if cluster is None:
        module.exit_json(changed=False, exists=False)
    params = module.params
    revision = str(service.revision(name))
    if params["revision"] is not None:
        cluster, groups = service.read_revision(name, params["revision"])
        revision = str(params["revision"])
    # The revision travels on the Cluster, where YAML tools keep it; a replace of the text checks it (revisions.py).
    text = objects.dump_objects([revisions.annotate(cluster, revision)] + groups)
    result = dict(changed=False, exists=True, cluster=cluster, instance_groups=groups, yaml=text, revision=revision,
                  lines=listings.everything(cluster, groups))
    if params["compare_to"] is not None:
        old_cluster, old_groups = service.read_revision(name, params["compare_to"])
        result["revision_diff"] = "".join(difflib.unified_diff(
            objects.dump_objects([old_cluster] + old_groups).splitlines(True),
            objects.dump_objects([cluster] + groups).splitlines(True),
            "%s revision %d" % (name, params["compare_to"]), "%s revision %s" % (name, revision)))
    if params["history"]:
        result["history"] = [{k: v for k, v in entry.items() if k not in ("snapshot", "sha256")}
                             for entry in service.history(name).revisions()]
        result["history_lines"] = listings.history(result["history"])
    if params["full"]:
        result["completed_spec"] = service.validate(cluster, groups)
    module.exit_json(**result)


def main():
    module = KopsModule(argument_spec=dict(name=dict(type="str"), full=dict(type="bool", default=False),
                                           revision=dict(type="int"), compare_to=dict(type="int"),
                                           history=dict(type="bool", default=False)))
    run(module)


if __name__ == "__main__":
    main()
