#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gce_etcd_peers
short_description: Find where each etcd member of a control-plane node's cluster runs, in GCE
version_added: 0.1.0
description:
  - For the first etcd cluster of the nodeup config (members share instances across clusters), each member's
    address is the internal address of the RUNNING instance its persistent disk (label C(k8s-io-etcd-<cluster>))
    is attached to, else of the one RUNNING instance of its instance group (label C(k8s-io-instance-group)), both
    labelled C(k8s-io-cluster-name) for the cluster. What M(kubeops.kops.etcd_peers) does on AWS.
  - Waits up to O(wait) seconds for every member to have an instance, as members boot together.
  - Credentials are Google's application default credentials (on an instance, its service account) or
    O(credentials_file).
options:
  nodeup_config:
    description: The instance group's nodeup config (its C(ClusterName) and C(kubeops.etcdClusters)).
    type: dict
    required: true
  wait:
    description: Seconds to wait for every member to have a running instance.
    type: int
    default: 600
  project:
    description: The GCE project. Read from the metadata server when omitted.
    type: str
  region:
    description: The cluster's region. Read from the metadata server (this instance's zone) when omitted.
    type: str
  credentials_file:
    description: A service-account key file; by default the application default credentials.
    type: path
attributes:
  check_mode:
    description: Reads only, in check mode as otherwise.
    support: full
  diff_mode:
    description: Not applicable.
    support: none
requirements:
  - google-auth
  - requests
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Find the etcd members' instances in GCE
  kubeops.kops.gce_etcd_peers:
    nodeup_config: "{{ nodeup_document }}"
  register: etcd_peers
"""

RETURN = r"""
peers:
  description: Member name to internal IPv4 address.
  returned: always
  type: dict
  sample: {a: 10.0.16.2, b: 10.0.16.3, c: 10.0.16.4}
missing:
  description: Members without a running instance when the wait ran out.
  returned: failure
  type: list
  elements: str
"""

import time

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        nodeup_config=dict(type="dict", required=True),
        wait=dict(type="int", default=600),
        project=dict(type="str"),
        region=dict(type="str"),
        credentials_file=dict(type="path"),
    ), supports_check_mode=True)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_peers, etcd_volume
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of_zone

    params = module.params
    config = params["nodeup_config"]
    clusters = (config.get("kubeops") or {}).get("etcdClusters") or []
    if not clusters:
        module.exit_json(changed=False, peers={})
    project, region = params["project"], params["region"]
    try:
        if not (project and region):
            _instance, zone, metadata_project = etcd_volume.gce_instance_identity()
            project, region = project or metadata_project, region or region_of_zone("gce", zone)
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and decoding errors alike
        module.fail_json(msg="the GCE metadata server did not answer (%s): give project and region" % exc)
    try:
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud, GceError
    except ImportError as exc:
        module.fail_json(msg="google-auth and requests are needed: %s" % exc)
    names = [m["name"] for m in clusters[0].get("members") or []]
    deadline = time.monotonic() + params["wait"]
    try:
        cloud = GceCloud(config["ClusterName"], project, region, credentials_file=params["credentials_file"])
        while True:
            peers = etcd_peers.gce_member_addresses(cloud, clusters[0])
            missing = [n for n in names if n not in peers]
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(5)
    except (ValueError, GceError) as exc:
        module.fail_json(msg=str(exc))
    if missing:
        module.fail_json(msg="etcd members %s of %s have no running instance yet (waited %d s)"
                             % (", ".join(missing), config["ClusterName"], params["wait"]), missing=missing, peers=peers)
    module.exit_json(changed=False, peers=peers)


if __name__ == "__main__":
    main()
