# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS model of a cluster: completed spec -> tasks, one builder per concern.

Built so far: the network (network.py), the firewall (firewall.py), IAM
(iam.py), the etcd volumes (volumes.py) and the API load balancer
(api_loadbalancer.py), the service-account roles and OIDC provider (service_accounts.py), the bastion's groups and load balancer (bastion.py), the
Route53 records (dns.py), the SSH key pair (sshkey.py) and node-termination-
handler's queue and event rules (nth.py), and per instance group the launch
template, autoscaling group and lifecycle hooks (autoscaling.py).  The
state-store files follow the same pattern.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import (
    api_loadbalancer, autoscaling, bastion, dns, firewall, iam, network, nth, service_accounts, sshkey, volumes)


def build_tasks(completed_cluster, instance_groups, ssh_public_keys=(), user_data=None, account_id=None):
    """{task key: task} for a completed Cluster, its instance groups and its SSH public keys.

    user_data: {instance group name: boot script} for the launch templates (none: templates without).
    account_id: the AWS account, which the service-account roles' trust policies name (IRSA).
    """
    tasks = {}
    key_pair = sshkey.build_ssh_key(completed_cluster, list(ssh_public_keys), tasks)
    subnets = network.build_network(completed_cluster, tasks, instance_groups)
    vpc = tasks["aws_vpc/%s" % completed_cluster["metadata"]["name"]]
    groups = firewall.build_firewall(completed_cluster, tasks, vpc, instance_groups)
    api_balancer = api_loadbalancer.build_api_loadbalancer(completed_cluster, tasks, vpc, subnets, groups)
    bastion.build_bastion(completed_cluster, instance_groups, tasks, vpc, subnets, groups)
    dns.build_dns(completed_cluster, tasks, api_balancer)
    profiles = iam.build_iam(completed_cluster, instance_groups, tasks)
    service_accounts.build_service_account_iam(completed_cluster, instance_groups, tasks, account_id)
    volumes.build_etcd_volumes(completed_cluster, instance_groups, tasks)
    nth.build_nth(completed_cluster, tasks)
    autoscaling.build_autoscaling(completed_cluster, instance_groups, tasks, user_data, subnets=subnets,
                                  security_groups=groups, profiles=profiles, key_pair=key_pair)
    add_cloud_labels(completed_cluster, tasks)
    return tasks


def add_cloud_labels(completed_cluster, tasks):
    """spec.cloudLabels on every object the cluster tags (kops' CloudTags): the labels first, so kops' own
    tags (KubernetesCluster, Name, ownership, roles) win where a label uses the same key."""
    labels = completed_cluster["spec"].get("cloudLabels") or {}
    if not labels:
        return
    for task in tasks.values():
        tags = task.fields.get("tags")
        if isinstance(tags, dict) and "KubernetesCluster" in tags:
            task.fields["tags"] = dict(labels, **tags)
