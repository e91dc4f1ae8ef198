# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS model of a cluster: completed spec -> tasks, one builder per concern.

Built so far: the network (network.py), the firewall (firewall.py), IAM
(iam.py) and the etcd volumes (volumes.py).  Launch templates, autoscaling
groups, the SSH key, the API load balancer, node-termination-handler queues
and the state-store files follow the same pattern.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import firewall, iam, network, volumes


def build_tasks(completed_cluster, instance_groups):
    """{task key: task} for a completed Cluster and its instance groups."""
    tasks = {}
    network.build_network(completed_cluster, tasks)
    vpc = tasks["aws_vpc/%s" % completed_cluster["metadata"]["name"]]
    firewall.build_firewall(completed_cluster, tasks, vpc)
    iam.build_iam(completed_cluster, instance_groups, tasks)
    volumes.build_etcd_volumes(completed_cluster, instance_groups, tasks)
    return tasks
