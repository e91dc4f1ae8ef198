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
      - "Keys: C(machine_types) (cloud -> role -> machine type), C(vpcs) (VPC id -> CIDR),
        C(subnets) (subnet id -> C(cidr), C(zone), C(vpc)), C(hosted_zones) (DNS name -> zone id),
        C(gce_used_cidrs) (list of CIDRs already used in the GCE network)."
      - When a needed fact is missing the module fails and names it; it never guesses a CIDR.
    type: dict
  cloud_lookup:
    description:
      - Ask AWS (read-only EC2 and Route53 calls) for the facts O(cloud_facts) does not give,
        as C(kops create cluster) does; for example the CIDR of an existing VPC or the default machine
        type offered in the cluster's zones.
      - Credentials, profile and endpoint resolve like the AWS CLI.
    type: bool
    default: false
  region:
    description: AWS region for O(cloud_lookup). Defaults to the region of the cluster's first zone.
    type: str
  profile:
    description: AWS profile for O(cloud_lookup).
    type: str
requirements:
  - python >= 3.9
  - PyYAML
  - boto3 (for s3:// state stores)
  - google-auth and requests (for gs:// state stores)
"""
