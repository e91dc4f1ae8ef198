# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.channel_apply, printing each addon as it is applied and what it waits for as it waits
(plugin_utils/notices.py).  On a node (another connection, or the bootstrap service's own interpreter) it runs the
normal way."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.plugin_utils.notices import NoticesAction


class ActionModule(NoticesAction):

    MODULE = "kubeops.kops.channel_apply"
