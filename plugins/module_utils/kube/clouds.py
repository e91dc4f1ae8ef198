# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cloud seam of the day-2 reads: per cloudProvider, a module with cloud(name, region, profile),
cloud_groups(cloud) and api_endpoint(cloud).  Imported statically, so Ansible ships them with the module."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws_groups, gce_groups
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

READERS = {"aws": aws_groups, "gce": gce_groups}
# Options of a reader's cloud() taken from the spec: {cloudProvider: {option: spec field}}.
SPEC_OPTIONS = {"gce": {"project": "project"}}


class CloudReaderError(ValueError):
    pass


def reader_for(spec):
    provider = spec.get("cloudProvider")
    if provider not in READERS:
        raise CloudReaderError("spec.cloudProvider: reading the running cluster's groups is built for %s, not %r"
                               % (", ".join(sorted(READERS)), provider))
    return READERS[provider]


def cloud_for(completed, region=None, profile=None):
    """(reader module, its cloud) for a completed cluster; region defaults to the spec's."""
    spec = completed["spec"]
    reader = reader_for(spec)
    options = {option: spec.get(field) for option, field in SPEC_OPTIONS.get(spec["cloudProvider"], {}).items()}
    return reader, reader.cloud(completed["metadata"]["name"], region or region_of(spec), profile, **options)
