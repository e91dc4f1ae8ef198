# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.instance_group: change_cause defaults to the playbook, line and task, notices print as it waits
(plugins/action/cluster.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.action.cluster import ActionModule as SpecWriterAction


class ActionModule(SpecWriterAction):

    MODULE = "kubeops.kops.instance_group"
