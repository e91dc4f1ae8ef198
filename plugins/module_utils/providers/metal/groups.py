# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A running metal cluster, as the day-2 verbs see it: its machines are the inventory's hosts that name an instance
group (kops_instance_group), which the playbook hands over (validate_cluster.yml: the inventory it runs with); the
API's address is spec.api.publicName (kops' metal GetApiIngressStatus).

A host is matched to its Node by name: a metal node registers under its host name (kops' nodeup on metal), which
is the inventory's name of the host, lowercased as the kubelet lowercases it (a Node's name is a DNS name)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

# The machines come from the inventory, not from a cloud API (registry.cloud_for passes them).
MACHINES_FROM_INVENTORY = True


class MetalReadError(CloudError):
    """The inventory does not say which hosts are the cluster's machines."""


class MetalMachines(object):
    """The cluster's machines: {instance group: [host name]} from the inventory, and the API's address."""

    def __init__(self, cluster_name, public_name, hosts):
        self.cluster_name = cluster_name
        self.public_name = public_name
        self.hosts = hosts


def cloud(cluster_name, region, profile=None, public_name=None, hosts=None):
    """region and profile are the modules' AWS options (an s3:// store): no meaning for the machines."""
    del region, profile
    return MetalMachines(cluster_name, public_name, hosts)


def cloud_groups(machines):
    """{instance group: {"name", "desired", "instances"}} in providers/aws/groups.py's form: every host naming the
    group is one of its machines, and one is wanted per host (a metal group is as big as its hosts)."""
    if not machines.hosts:
        raise MetalReadError("no inventory host names an instance group of metal cluster %s: run with the inventory of "
                             "its hosts (-i hosts.yml, each host with kops_instance_group; docs/metal.md)"
                             % machines.cluster_name)
    return {group: {"name": group, "group_name": group, "desired": len(names), "min": len(names), "max": len(names),
                    "instances": [{"id": name, "name": name, "private_dns_name": name.lower(), "detached": False,
                                   "warm": False, "needs_update": False} for name in sorted(names)]}
            for group, names in machines.hosts.items()}


def api_endpoint(machines):
    return machines.public_name
