# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cloud drivers: what the update pipeline asks of a provider (kops' per-cloud builders).

A driver (providers/<provider>.py) builds the cluster's tasks, its cloud, the
Terraform provider blocks and outputs, the boot environment and the
Terraform-managed store objects.  The pipeline (updates.py) and the engine call
only the driver; a new cloud adds a driver here and its model/, tasks/ and
cloud/ modules, and nothing else changes.
"""

from __future__ import annotations

import importlib

# cloudProvider -> the module holding its DRIVER; a provider listed as None is known but not built.
DRIVERS = {"aws": "aws", "gce": None}


class DriverError(ValueError):
    pass


def driver_for(spec):
    """The driver of a completed cluster spec's cloudProvider, or a DriverError saying what is possible."""
    provider = spec.get("cloudProvider")
    if provider not in DRIVERS:
        raise DriverError("spec.cloudProvider: %r is not a cloud kubeops.kops knows (one of %s)"
                          % (provider, ", ".join(sorted(DRIVERS))))
    if DRIVERS[provider] is None:
        raise DriverError("spec.cloudProvider: %s clusters can be created and stored, but cluster_update does not "
                          "build their cloud objects yet (built: %s)"
                          % (provider, ", ".join(sorted(p for p, m in DRIVERS.items() if m))))
    module = importlib.import_module("ansible_collections.kubeops.kops.plugins.module_utils.providers." + DRIVERS[provider])
    return module.DRIVER
