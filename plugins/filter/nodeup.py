# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What roles/protokube and playbooks/nodeup.yml work out on the node, in Python (module_utils/nodeup/etcd_members.py and
nodeconfig/config.py): the playbooks and roles only loop over the results."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_members


def etcd_node_clusters(nodeup_config, peers, install_override=None):
    """The etcd clusters this node runs a member of, with the members' addresses (etcd_members.node_clusters)."""
    try:
        return etcd_members.node_clusters((nodeup_config or {}).get("kubeops") or {}, peers or {}, install_override or None)
    except ValueError as exc:
        raise AnsibleFilterError("kubeops.kops.etcd_node_clusters: %s" % exc)


def etcd_restart_units(clusters, changed_file_units, changed_certificate_paths, active_states):
    """The etcd units to restart after a run changed their files or certificates (etcd_members.restart_units)."""
    return etcd_members.restart_units(clusters, changed_file_units or [], changed_certificate_paths or [], active_states or [])


def nodeup_config_path(instance_group, role):
    """igconfig/<role directory>/<instance group>/nodeupconfig.yaml, relative to the cluster's directory."""
    try:
        return config.config_path_of(instance_group, role)
    except ValueError as exc:
        raise AnsibleFilterError("kubeops.kops.nodeup_config_path: %s" % exc)


class FilterModule(object):

    def filters(self):
        return {"etcd_node_clusters": etcd_node_clusters, "etcd_restart_units": etcd_restart_units,
                "nodeup_config_path": nodeup_config_path}
