# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Deleting a toy cluster: its pools, then its network, found by the cluster's label (OWNER_LABEL) in the toy's
API; the walker (deletion/__init__.py) deletes each kind after the kinds it waits for."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import Resource, each_object
from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy.cloud import ToyCloud


class Kind(object):
    def __init__(self, name, collection, after=()):
        self.name = name
        self.collection = collection
        self.after = after

    def find(self, toy):
        return [Resource(self.name, item["id"], item["name"]) for item in toy.owned(self.collection)]

    def delete(self, toy, resources):
        return each_object(resources, lambda resource: toy.delete(self.collection, resource.id))


KINDS = (Kind("toy_machine_pool", "pools"), Kind("toy_network", "networks", after=("toy_machine_pool",)))
KINDS_BY_NAME = {kind.name: kind for kind in KINDS}


def cloud(cluster_name, region, profile=None, spec=None):
    del profile, spec
    return ToyCloud(cluster_name, region)


def discover(toy, spec):
    del spec
    return [resource for kind in KINDS for resource in kind.find(toy)]


def any_owned(toy):
    return next(iter(discover(toy, None)), None)
