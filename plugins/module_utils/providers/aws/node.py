# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS's node side: what the node modules (etcd_volume, etcd_peers, api_dns) do on an AWS instance.

Each function takes the running AnsibleModule (its params: the module's options) and ends it with exit_json or
fail_json.  Imports only what a node has (cloud/aws.py, nodeup/): the node modules ship this file, never the
controller's layers (providers/node.py).
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws

# The options each function needs that the cloud-neutral module cannot require for every cloud.
REQUIRED = {"etcd_volume": ("volume_tags",), "etcd_peers": (), "api_dns": ()}


def _configure(module, function):
    missing = [o for o in REQUIRED[function] if module.params.get(o) in (None, "", {})]
    if missing:
        module.fail_json(msg="%s: required with provider aws (%s)" % (", ".join(missing), function))
    aws.configure_module(module)


def etcd_volume(module):
    """Attach this instance's etcd EBS volume, found by its volume tags (etcd-manager's AWS volume provider)."""
    _configure(module, "etcd_volume")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_volume

    params = module.params
    instance_id, zone, region = params["instance_id"], params["zone"], params["region"]
    try:
        if not (instance_id and zone and region):
            metadata = etcd_volume.instance_identity()
            instance_id, zone, region = instance_id or metadata[0], zone or metadata[1], region or metadata[2]
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and JSON errors alike
        module.fail_json(msg="instance metadata (IMDSv2) did not answer (%s): give instance_id, zone and region" % exc)
    try:
        ec2 = aws.client("ec2", region=region)
        volume_id, changed = etcd_volume.ensure_attached(
            ec2, {k: str(v) for k, v in params["volume_tags"].items()}, instance_id, zone,
            device_name=params["device_name"], dry_run=module.check_mode, wait=params["wait"])
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "attaching the etcd volume")))
    module.exit_json(changed=changed, volume_id=volume_id, instance_id=instance_id,
                     device=etcd_volume.local_device(volume_id, params["device_name"]))


def etcd_peers(module):
    """Every member's private address: the instance its volume is attached to, else its group's one instance."""
    _configure(module, "etcd_peers")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_peers, etcd_volume

    config = module.params["nodeup_config"]
    clusters = (config.get("kubeops") or {}).get("etcdClusters") or []
    if not clusters:
        module.exit_json(changed=False, peers={})
    region = module.params["region"]
    try:
        if not region:
            region = etcd_volume.instance_identity()[2]
    except Exception as exc:  # pylint: disable=broad-except  # URL, connection and JSON errors alike
        module.fail_json(msg="instance metadata (IMDSv2) did not answer (%s): give region" % exc)
    names = [m["name"] for m in clusters[0].get("members") or []]
    deadline = time.monotonic() + module.params["wait"]
    try:
        ec2 = aws.client("ec2", region=region)
        while True:
            peers = etcd_peers.member_addresses(ec2, config["ClusterName"], clusters[0])
            missing = [n for n in names if n not in peers]
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(5)
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "finding the etcd members")))
    if missing:
        module.fail_json(msg="etcd members %s of %s have no running instance yet (waited %d s)"
                             % (", ".join(missing), config["ClusterName"], module.params["wait"]),
                         missing=missing, peers=peers)
    module.exit_json(changed=False, peers=peers)


def api_dns(module):
    """Keep the record (Route53) pointing at the running control-plane instances' addresses."""
    _configure(module, "api_dns")
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import api_dns

    params = module.params
    name = params["record_name"] or "api.internal.%s" % params["cluster_name"]
    try:
        ec2 = aws.client("ec2", region=params["region"])
        route53 = aws.client("route53", region=params["region"])
        zone_id = api_dns.zone_id(route53, params["dns_zone"])
        addresses = api_dns.control_plane_addresses(ec2, params["cluster_name"], params["address_type"])
        if not addresses:
            module.fail_json(msg="no running control-plane instance of %s has a %s address; nothing to point "
                                 "%s at" % (params["cluster_name"], params["address_type"], name))
        before = api_dns.current_addresses(route53, zone_id, name)
        changed = before != addresses
        if changed and not module.check_mode:
            api_dns.upsert(route53, zone_id, name, addresses, params["ttl"])
    except aws.AwsError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # pylint: disable=broad-except  # botocore errors: say which call
        module.fail_json(msg=str(aws.describe_error(exc, "keeping %s" % name)))
    result = dict(changed=changed, record_name=name, addresses=addresses, zone_id=zone_id)
    if module._diff and changed:
        result["diff"] = {"before": "%s A %s\n" % (name, " ".join(before)),
                          "after": "%s A %s\n" % (name, " ".join(addresses))}
    module.exit_json(**result)
