# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cloud drivers: what the update pipeline asks of a provider (kops' per-cloud builders).

A driver (providers/<provider>.py) names the targets it renders (``targets``), builds the cluster's tasks, its cloud, the
Terraform provider blocks, the boot environment and the Terraform-managed store objects.  Terraform
outputs are not a driver's: each task writes its own (Task.terraform_outputs), the pipeline adds
cluster_name, region and project (updates.terraform_variables).  The pipeline (updates.py) and the
engine call only the driver; a new cloud adds a driver here and its model/, tasks/ and cloud/
modules, and nothing else changes.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError


def _aws():
    # Imported here, not at the top, so a GCE run never loads boto3-facing code; written as a plain
    # import (not importlib) so that Ansible's module packager sees it and ships the driver.
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import aws
    return aws.DRIVER


def _gce():
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import gce
    return gce.DRIVER


# cloudProvider -> its driver's loader.
DRIVERS = {"aws": _aws, "gce": _gce}


class DriverError(CloudError):
    pass


def driver_for(spec):
    """The driver of a completed cluster spec's cloudProvider, or a DriverError saying what is possible."""
    provider = spec.get("cloudProvider")
    if provider not in DRIVERS:
        raise DriverError("spec.cloudProvider: %r is not a cloud kubeops.kops knows (one of %s)"
                          % (provider, ", ".join(sorted(DRIVERS))))
    return DRIVERS[provider]()
