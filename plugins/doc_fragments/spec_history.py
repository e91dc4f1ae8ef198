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
      - The module's action plugin adds the playbook, line and task that ran the module after it (alone when this is
        not given).
    type: str
"""
