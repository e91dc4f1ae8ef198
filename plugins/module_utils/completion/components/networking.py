# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Networking: makes sure the kubelet section exists for the CNI builders (kops NetworkingOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context


def build(spec, ctx):
    context.section(spec, "kubelet")
    if "classic" in context.networking(spec):
        problem = errors.forbidden("spec.networking.classic", "classic networking is not supported")
        raise errors.ValidationError([problem], "completed cluster")
