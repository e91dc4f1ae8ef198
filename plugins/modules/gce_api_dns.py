#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gce_api_dns
short_description: Keep the API's internal DNS record pointing at the running control-plane instances (GCE Cloud DNS)
version_added: 0.1.0
description:
  - What kops' dns-controller does for C(api.internal.<cluster>) from the kube-apiserver pod's
    C(dns.alpha.kubernetes.io/internal) annotation, without needing the API first. It lists the cluster's RUNNING
    control-plane instances in the region's zones (labels C(k8s-io-cluster-name=<cluster with dots as dashes>) and
    C(k8s-io-role-control-plane) or C(k8s-io-role-master)) and keeps one A record of their internal addresses in
    the cluster's Cloud DNS managed zone, with one change that takes the old record set out and puts the new one in.
  - An unchanged record is left alone. Clusters with C(topology.dns.type=None) need no record; the role does not
    call this module for them.
  - Credentials are Google's application default credentials (on an instance, its service account) or
    O(credentials_file).
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  dns_zone:
    description: The cluster's zone, by DNS name (V(example.com)) or by managed zone name, as C(spec.dnsZone) says it.
    type: str
    required: true
  record_name:
    description: The record to keep. Defaults to C(api.internal.<cluster_name>).
    type: str
  ttl:
    description: Record TTL in seconds (kops' dns-controller uses 60).
    type: int
    default: 60
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
    description: Reads instances and the record; changes nothing.
    support: full
  diff_mode:
    description: Shows the addresses before and after.
    support: full
requirements:
  - google-auth
  - requests
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Point api.internal at the control plane
  kubeops.kops.gce_api_dns:
    cluster_name: k8s.example.com
    dns_zone: example.com
  run_once: true
"""

RETURN = r"""
record_name:
  description: The record kept.
  returned: success
  type: str
  sample: api.internal.k8s.example.com
addresses:
  description: The control-plane addresses it now holds.
  returned: success
  type: list
  elements: str
managed_zone:
  description: The Cloud DNS managed zone.
  returned: success
  type: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        dns_zone=dict(type="str", required=True),
        record_name=dict(type="str"),
        ttl=dict(type="int", default=60),
        project=dict(type="str"),
        region=dict(type="str"),
        credentials_file=dict(type="path"),
    ), supports_check_mode=True)
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import api_dns, etcd_volume
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of_zone

    params = module.params
    name = params["record_name"] or "api.internal.%s" % params["cluster_name"]
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
    try:
        cloud = GceCloud(params["cluster_name"], project, region, credentials_file=params["credentials_file"])
        managed_zone = api_dns.gce_managed_zone(cloud, params["dns_zone"])
        addresses = api_dns.gce_control_plane_addresses(cloud)
        if not addresses:
            module.fail_json(msg="no RUNNING control-plane instance of %s in %s has an internal address; nothing to "
                                 "point %s at" % (params["cluster_name"], region, name))
        current = api_dns.gce_current_record(cloud, managed_zone, name)
        before = sorted((current or {}).get("rrdatas") or [])
        changed = before != addresses or (current or {}).get("ttl") != params["ttl"]
        if changed and not module.check_mode:
            api_dns.gce_replace(cloud, managed_zone, name, addresses, params["ttl"], current)
    except (ValueError, GceError) as exc:
        module.fail_json(msg=str(exc))
    result = dict(changed=changed, record_name=name, addresses=addresses, managed_zone=managed_zone)
    if module._diff and changed:
        result["diff"] = {"before": "%s A %s\n" % (name, " ".join(before)),
                          "after": "%s A %s\n" % (name, " ".join(addresses))}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
