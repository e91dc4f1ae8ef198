# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations


class ModuleDocFragment(object):
    # The options every cloud-neutral node module (etcd_volume, etcd_peers, api_dns) takes to pick and reach the
    # node's cloud; their argument spec is providers/node.py's CLOUD_OPTIONS.
    DOCUMENTATION = r"""
options:
  provider:
    description:
      - The node's cloud (the cluster's C(spec.cloudProvider)); each cloud's package does the work
        (C(plugins/module_utils/providers/<cloud>/node.py)). V(aws) reads the AWS options, V(gce) the GCE ones
        (what they omit, O(region) included, is read from the metadata server).
    type: str
    default: aws
  project:
    description: GCE only. The project. Read from the metadata server when omitted.
    type: str
  credentials_file:
    description: GCE only. A service-account key file; by default the application default credentials.
    type: path
"""
