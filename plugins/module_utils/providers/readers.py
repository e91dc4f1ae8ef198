# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""cloudProvider -> providers/<cloud>/groups.py, the day-2 reader (the cloud's groups, the API load balancer's
address).  A registry of its own, apart from registry.py, so that a module that only reads the running cluster
(channel_apply on a control-plane node, through kube/endpoint.py) ships the clouds' readers and not their update
drivers, models and node configuration.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError


def _aws():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import groups
    return groups


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups
    return groups


BUILT_IN = {"aws": _aws, "gce": _gce}


class ReaderError(CloudError):
    pass


def reader_for(spec):
    """The day-2 reader of a spec's cloudProvider; a cloud without one is refused, naming those that have one."""
    name = spec.get("cloudProvider")
    reader = provider_names.part(name, "groups", BUILT_IN) if isinstance(name, str) else None
    if reader is None:
        raise ReaderError("spec.cloudProvider: reading the running cluster's groups is built for %s, not %r"
                          % (", ".join(provider_names.names()), name))
    return reader
