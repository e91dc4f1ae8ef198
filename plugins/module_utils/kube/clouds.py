# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The day-2 cloud seam: per cloudProvider, what the day-2 verbs act through.

One row per cloud (a new cloud adds its row here, its driver in providers.DRIVERS and its deletion module in
deletion.DRIVERS; no module changes):
- ``reader``: a module with cloud(name, region, profile, **options), cloud_groups(cloud) and
  api_endpoint(cloud): validate, kubeconfig and rolling update read the running cluster with it;
- ``rolling``: the class rolling update replaces instances with (rolling/roller.py's cloud side);
- ``spec_options``: options of reader.cloud() taken from the spec ({option: spec field}).
Imported statically, so Ansible ships them with the module.
"""

from __future__ import annotations

import collections

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws_groups, gce_groups
from ansible_collections.kubeops.kops.plugins.module_utils.rolling.aws import AwsRolling
from ansible_collections.kubeops.kops.plugins.module_utils.rolling.gce import GceRolling
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

Day2Cloud = collections.namedtuple("Day2Cloud", "reader rolling spec_options")

DAY2 = {
    "aws": Day2Cloud(aws_groups, AwsRolling, {}),
    "gce": Day2Cloud(gce_groups, GceRolling, {"project": "project"}),
}


class CloudReaderError(CloudError):
    pass


def day2_for(provider, verb="reading the running cluster's groups"):
    """The cloud's row; a cloud without one is refused, naming those that have one."""
    if provider not in DAY2:
        raise CloudReaderError("spec.cloudProvider: %s is built for %s, not %r"
                               % (verb, ", ".join(sorted(DAY2)), provider))
    return DAY2[provider]


def reader_for(spec):
    return day2_for(spec.get("cloudProvider")).reader


def cloud_for(completed, region=None, profile=None):
    """(reader module, its cloud) for a completed cluster; region defaults to the spec's."""
    spec = completed["spec"]
    day2 = day2_for(spec.get("cloudProvider"))
    options = {option: spec.get(field) for option, field in day2.spec_options.items()}
    return day2.reader, day2.reader.cloud(completed["metadata"]["name"], region or region_of(spec), profile, **options)
