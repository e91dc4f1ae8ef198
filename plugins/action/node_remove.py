# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.node_remove, printing what the drain waits for as it waits (plugin_utils/notices.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.plugin_utils.notices import NoticesAction


class ActionModule(NoticesAction):

    MODULE = "kubeops.kops.node_remove"
