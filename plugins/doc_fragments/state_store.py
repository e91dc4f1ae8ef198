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
      - Facts about the cloud that spec completion would otherwise look up, as data. They win over a lookup;
        with O(cloud_lookup=false) they are the only source (an offline run).
      - "Keys: C(machine_types) (cloud -> role -> machine type), C(vpcs) (VPC id -> CIDR),
        C(subnets) (subnet id -> C(cidr), C(zone), C(vpc)), C(hosted_zones) (DNS name -> zone id),
        C(egress_only_internet_gateways) (shared VPC id -> the id of its egress-only internet gateway, which the
        Terraform output of an IPv6 cluster's private routes names),
        C(gce_used_cidrs) (list of CIDRs already used in the GCE network), C(etcd_sha256) (etcd version ->
        C(amd64)/C(arm64) -> sha256 of its release tarball, for a version the collection does not pin; read from
        the release's published C(SHA256SUMS) when not given)."
      - When a needed fact is neither given nor found the module fails and names it; it never guesses a CIDR
        and never leaves out the Route53 records of a cluster without a hosted zone.
    type: dict
  cloud_lookup:
    description:
      - Whether to ask AWS (read-only EC2 and Route53 calls, with the AWS options) for the facts O(cloud_facts)
        does not give, as kops does; for example the CIDR of an existing VPC, the zone and CIDR of shared
        subnets, the hosted zone of the cluster's DNS name, the default machine type offered in the zones.
      - When unset, the module looks facts up when AWS credentials resolve (options, environment, profile or
        instance role) and the cluster is not a GCE one, and works offline otherwise.
      - V(true) always looks up and fails without credentials; V(false) never asks AWS.
    type: bool
requirements:
  - python >= 3.9
  - PyYAML
  - boto3 (for s3:// state stores and cloud lookups)
  - google-auth and requests (for gs:// state stores)
"""
