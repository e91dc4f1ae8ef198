# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS model of a cluster: completed spec -> tasks, one builder per concern.

Built so far: the network (network.py) and the firewall (firewall.py).  IAM,
launch templates, autoscaling groups, etcd volumes, the API load balancer,
node-termination-handler queues and the state-store files follow the same
pattern.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import firewall, network


def build_tasks(completed_cluster):
    """{task key: task} for a completed Cluster."""
    tasks = {}
    network.build_network(completed_cluster, tasks)
    vpc = tasks["aws_vpc/%s" % completed_cluster["metadata"]["name"]]
    firewall.build_firewall(completed_cluster, tasks, vpc)
    return tasks
