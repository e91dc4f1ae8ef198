# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's day-2 reader: the cluster's pools and their machines, read from its API."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy.cloud import ToyCloud


def cloud(cluster_name, region, profile=None):
    del profile
    return ToyCloud(cluster_name, region)


def _group_of(pool, cluster_name):
    """The instance group a pool serves: its name less the cluster's ("nodes-toy-1a-toy-example-com")."""
    return pool["name"][:-len(cluster_name.replace(".", "-")) - 1]


def cloud_groups(toy):
    """{instance group: {"name", "group_name", "desired", "min", "max", "instances"}} (providers/base.py ReaderPart)."""
    machines = toy.owned("machines")
    groups = {}
    for pool in toy.owned("pools"):
        group = _group_of(pool, toy.cluster_name)
        members = sorted((m for m in machines if m["pool_id"] == pool["id"]), key=lambda m: m["name"])
        groups[group] = {"name": pool["name"], "group_name": group, "desired": pool["min_size"],
                         "min": pool["min_size"], "max": pool["max_size"], "role": pool["role"],
                         "instances": [{"id": m["id"], "name": m["name"], "private_dns_name": m["name"],
                                        "private_ip": m["private_ip"], "zone": m["zone"], "detached": False,
                                        "warm": False, "needs_update": False} for m in members]}
    return groups


def api_endpoint(toy):
    """The toy has no load balancer: the API's address is its DNS name, None here."""
    del toy
    return None
