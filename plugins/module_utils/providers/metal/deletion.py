# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Deleting a metal cluster: no cloud holds anything of it, so `delete cluster` removes the state store only.

The hosts are reset by playbooks/delete_cluster.yml over SSH (roles/enroll tasks/reset.yml), before this deletes the
store; without an inventory the playbook says, in one line, that they are not (docs/metal.md)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal.cloud import MetalCloud

KINDS_BY_NAME = {}


def cloud(cluster_name, region, profile=None, spec=None):
    del profile, spec
    return MetalCloud(cluster_name, region)


def discover(cloud, spec):
    del cloud, spec
    return []


def any_owned(cloud):
    del cloud
    return None


def left_behind(spec):
    """The hosts, which this module does not reach over SSH: delete_cluster.yml resets them with the inventory."""
    del spec
    return ["the hosts of a metal cluster are reset by playbooks/delete_cluster.yml given the inventory (-i hosts.yml),"
            " not by this module (docs/metal.md, 'Delete and remove a node')"]
