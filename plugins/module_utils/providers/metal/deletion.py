# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Deleting a metal cluster: no cloud holds anything of it, so `delete cluster` removes the state store only.

The hosts keep what enroll put on them until they are reset (kubelet, etcd and containerd state, the units):
that is the host side of delete, a later slice (docs/metal.md)."""

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
    """What deleting a metal cluster does not do yet: reset its hosts (a later slice, docs/metal.md)."""
    del spec
    return ["the hosts of a metal cluster are not reset by delete yet: kubelet, etcd and containerd state and their "
            "units stay on each host until it is reset by hand (docs/metal.md, 'What is not built yet')"]
