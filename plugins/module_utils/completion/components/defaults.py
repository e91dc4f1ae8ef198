# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cluster-wide defaults every other builder relies on (kops DefaultsOptionsBuilder)."""

from __future__ import annotations


def build(spec, ctx):
    if not spec.get("clusterDNSDomain"):
        spec["clusterDNSDomain"] = "cluster.local"
