#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gce_etcd_volume
short_description: Attach this control-plane instance's etcd persistent disk on GCE (etcd-manager's GCE volume provider)
version_added: 0.1.0
deprecated:
  removed_in: 1.0.0
  why: One cloud-neutral module does this on every cloud.
  alternative: Use M(kubeops.kops.etcd_volume) with O(kubeops.kops.etcd_volume#module:provider=gce).
description:
  - Finds the one persistent disk in the instance's zone with kops' labels for the etcd member
    (C(k8s-io-cluster-name=<cluster with dots as dashes>), C(k8s-io-role-master=master) and
    C(k8s-io-etcd-<etcd cluster>) whose decoded value starts with C(<member>/), as C(cluster_update) creates it)
    and attaches it to this instance with the disk's name as device name.
  - A disk already attached here is left alone; one attached to another instance is refused, so that an etcd
    member's data is never used twice.
  - Returns the device the disk appears as, C(/dev/disk/by-id/google-<disk name>). Formatting and mounting are
    roles/protokube's next tasks.
  - Credentials are Google's application default credentials (on an instance, its service account through the
    metadata server) or O(credentials_file).
options:
  cluster_name:
    description: The cluster (as kops names it, with dots).
    type: str
    required: true
  etcd_cluster:
    description: The etcd cluster, V(main) or V(events).
    type: str
    required: true
  member:
    description: The etcd member this instance runs (C(spec.etcdClusters[].etcdMembers[].name)).
    type: str
    required: true
  instance:
    description: This instance's name. Read from the GCE metadata server when omitted.
    type: str
  zone:
    description: This instance's zone. Read from the metadata server when omitted.
    type: str
  project:
    description: The GCE project. Read from the metadata server when omitted.
    type: str
  credentials_file:
    description: A service-account key file; by default the application default credentials.
    type: path
attributes:
  check_mode:
    description: Finds the disk and reports whether it would be attached; attaches nothing.
    support: full
  diff_mode:
    description: Not applicable; the result says which disk and instance.
    support: none
requirements:
  - google-auth
  - requests
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Attach the disk of etcd main member a on this control-plane instance
  kubeops.kops.gce_etcd_volume:
    cluster_name: k8s.example.com
    etcd_cluster: main
    member: a
  register: etcd_main_volume
"""

RETURN = r"""
disk:
  description: The etcd member's persistent disk.
  returned: success
  type: str
  sample: a-etcd-main-k8s-example-com
instance:
  description: The instance it is attached to.
  returned: success
  type: str
device:
  description: Where the disk appears on this machine.
  returned: success
  type: str
  sample: /dev/disk/by-id/google-a-etcd-main-k8s-example-com
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        etcd_cluster=dict(type="str", required=True),
        member=dict(type="str", required=True),
        instance=dict(type="str"),
        zone=dict(type="str"),
        project=dict(type="str"),
        credentials_file=dict(type="path"),
    ), supports_check_mode=True)
    # The cloud-neutral module's GCE side (providers/gce/node.py), with this module's own options.
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import node
    node.etcd_volume(module)


if __name__ == "__main__":
    main()
