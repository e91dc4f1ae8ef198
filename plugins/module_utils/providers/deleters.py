# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""cloudProvider -> providers/<cloud>/deletion.py, the module `delete cluster` finds and deletes a cloud's objects
with (deletion/__init__.py's walker).  A registry of its own, apart from registry.py, so that a module that may
delete (cluster, cluster_delete) ships the clouds' deletion modules and not their update drivers.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names


def _aws():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import deletion
    return deletion


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import deletion
    return deletion


BUILT_IN = {"aws": _aws, "gce": _gce}


def deletion_for(name):
    """The cloud's deletion module, or None when the cloud has none."""
    return provider_names.part(name, "deletion", BUILT_IN) if isinstance(name, str) else None
