# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Deleting a toy cluster: the toy cloud holds nothing (it renders only), so only the state store goes."""

from __future__ import annotations

KINDS_BY_NAME = {}


class ToyCloud(object):
    def __init__(self, cluster_name, region):
        self.cluster_name = cluster_name
        self.region = region

    def failure(self, exc):
        return str(exc)


def cloud(cluster_name, region, profile=None, spec=None):
    del profile, spec
    return ToyCloud(cluster_name, region)


def discover(cloud, spec):
    return []


def any_owned(cloud):
    return None
