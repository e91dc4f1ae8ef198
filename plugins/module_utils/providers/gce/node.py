# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""GCE's node side: what the node modules (etcd_volume, etcd_peers, api_dns) do on a GCE instance.

Each function takes the running AnsibleModule (its params: the module's options) and ends it with exit_json or
fail_json.  Imports only what a node has (cloud/gce.py, nodeup/, zones.py): the node modules ship this file,
never the controller's layers (providers/node.py).
"""

from __future__ import annotations

import time

# The options each function needs that the cloud-neutral module cannot require for every cloud.
REQUIRED = {"etcd_volume": ("cluster_name", "etcd_cluster", "member"), "etcd_peers": (), "api_dns": ()}


def _required(module, function):
    missing = [o for o in REQUIRED[function] if module.params.get(o) in (None, "")]
    if missing:
        module.fail_json(msg="%s: required with provider gce (%s)" % (", ".join(missing), function))


def _client(module):
    """(GceCloud, GceError), or the module fails naming the libraries to install."""
    try:
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud, GceError
    except ImportError as exc:
        module.fail_json(msg="google-auth and requests are needed: %s" % exc)
    return GceCloud, GceError


def _project_and_region(module):
    """The module's project and region, what it omits read from the instance's metadata server."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_volume
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of_zone

    project, region = module.params["project"], module.params["region"]
    try:
        if not (project and region):
            _instance, zone, metadata_project = etcd_volume.gce_instance_identity()
            project, region = project or metadata_project, region or region_of_zone("gce", zone)
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and decoding errors alike
        module.fail_json(msg="the GCE metadata server did not answer (%s): give project and region" % exc)
    return project, region


def etcd_volume(module):
    """Attach this instance's etcd persistent disk, found by kops' labels (etcd-manager's GCE volume provider)."""
    _required(module, "etcd_volume")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_volume
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of_zone

    params = module.params
    instance, zone, project = params["instance"], params["zone"], params["project"]
    try:
        if not (instance and zone and project):
            metadata = etcd_volume.gce_instance_identity()
            instance, zone, project = instance or metadata[0], zone or metadata[1], project or metadata[2]
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and decoding errors alike
        module.fail_json(msg="the GCE metadata server did not answer (%s): give instance, zone and project" % exc)
    GceCloud, GceError = _client(module)  # pylint: disable=invalid-name  # the classes
    try:
        cloud = GceCloud(params["cluster_name"], project, region_of_zone("gce", zone),
                         credentials_file=params["credentials_file"])
        disk, changed = etcd_volume.gce_ensure_attached(cloud, params["cluster_name"], params["etcd_cluster"],
                                                        params["member"], instance, zone, dry_run=module.check_mode)
    except (ValueError, GceError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=changed, disk=disk, instance=instance, device=etcd_volume.gce_device(disk))


def etcd_peers(module):
    """Every member's internal address: the RUNNING instance its disk is attached to, else its group's one."""
    _required(module, "etcd_peers")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_peers

    params = module.params
    config = params["nodeup_config"]
    clusters = (config.get("kubeops") or {}).get("etcdClusters") or []
    if not clusters:
        module.exit_json(changed=False, peers={})
    project, region = _project_and_region(module)
    GceCloud, GceError = _client(module)  # pylint: disable=invalid-name  # the classes
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


def api_dns(module):
    """Keep the record (Cloud DNS) pointing at the RUNNING control-plane instances' internal addresses."""
    _required(module, "api_dns")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import api_dns

    params = module.params
    name = params["record_name"] or "api.internal.%s" % params["cluster_name"]
    project, region = _project_and_region(module)
    GceCloud, GceError = _client(module)  # pylint: disable=invalid-name  # the classes
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
