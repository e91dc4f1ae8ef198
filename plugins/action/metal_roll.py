# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.metal_roll, printing each step of a drain as it happens (plugin_utils/notices.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.plugin_utils.notices import NoticesAction


class ActionModule(NoticesAction):

    MODULE = "kubeops.kops.metal_roll"
