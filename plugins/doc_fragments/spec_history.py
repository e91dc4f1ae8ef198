# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  change_cause:
    description:
      - Why and from where this change is made, kept with the revision in the spec's history
        (C(<cluster>/.kubeops-history/) in the state store, docs/state-store.md), with the user, host, time and module.
      - When not given, the playbook, line and task that ran the module (set by the module's action plugin).
    type: str
"""
