# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The GCE model of a cluster: completed spec -> tasks, one builder per concern (kops' gcemodel).

network.py (network, subnetworks, router + NAT), firewall.py (the rules), instances.py
(service accounts, etcd disks, instance templates, instance group managers) and
loadbalancer.py (the API's public and internal load balancers).  Cloud DNS records are not
tasks: kops' GCE model makes none (dns-controller and the nodes keep api.* up to date).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.gce import firewall, instances, loadbalancer, network
from ansible_collections.kubeops.kops.plugins.module_utils.model.gce.context import Context


def build_tasks(completed, groups, ssh_public_keys=(), user_data=None):
    """{task key: task} for a completed GCE Cluster, its instance groups and SSH public keys.

    user_data: {instance group name: boot script} for the templates' metadata (none: templates without).
    """
    tasks = {}
    ctx = Context(completed, groups, tasks)
    net = network.build_network(ctx)
    firewall.build_firewall(ctx, net)
    emails = instances.build_service_accounts(ctx)
    instances.build_etcd_disks(ctx)
    pool = loadbalancer.build_public(ctx)
    managers = instances.build_instance_groups(ctx, net, emails, list(ssh_public_keys), user_data, target_pool=pool)
    loadbalancer.build_internal(ctx, net, managers)
    return tasks
