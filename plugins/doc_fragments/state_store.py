# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  state_store:
    description:
      - The kops state store, as kops' C(--state) takes it.
      - C(s3://bucket/prefix), C(gs://bucket/prefix), C(file:///path) or a plain path,
        C(memfs://name) (in-process, for tests).
      - Defaults to the environment variable E(KOPS_STATE_STORE), like kops.
    type: str
  cloud_facts:
    description:
      - Facts about the cloud that spec completion would otherwise look up, as data.
      - Keys C(machine_types) (C({cloud: {role: type}})), C(vpcs) (C({vpc_id: cidr})),
        C(subnets) (C({subnet_id: {cidr, zone, vpc}})), C(hosted_zones) (C({dns_name: zone_id})),
        C(gce_used_cidrs) (list).
      - When a needed fact is missing the module fails and names it; it never guesses a CIDR.
    type: dict
requirements:
  - python >= 3.9
  - PyYAML
  - boto3 (for s3:// state stores)
  - google-auth and requests (for gs:// state stores)
"""
