# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Runs kubeops.kops.instance_group with its change_cause defaulting to the playbook, line and task (plugins/action/cluster.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.action.cluster import ActionModule  # noqa: F401 pylint: disable=unused-import
