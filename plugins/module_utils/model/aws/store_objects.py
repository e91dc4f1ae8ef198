# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Which state-store files Terraform writes, under kops' names (pkg/model: ManagedFile names).

Keys, secrets and the user's own objects are written to the store directly (kops
does the same); the completed spec, version marker, etcd control specs, nodeup
configs and addon manifests become aws_s3_object resources when the store is S3.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.s3 import S3Object

# (path pattern, name template) in kops' naming; {cluster} is the cluster name.
NAMES = (
    (r"^cluster-completed\.spec$", "cluster-completed.spec"),
    (r"^kops-version\.txt$", "kops-version.txt"),
    (r"^backups/etcd/(?P<etcd>[^/]+)/control/etcd-cluster-spec$", "etcd-cluster-spec-{etcd}"),
    (r"^igconfig/[^/]+/(?P<ig>[^/]+)/nodeupconfig\.yaml$", "nodeupconfig-{ig}"),
    (r"^addons/bootstrap-channel\.yaml$", "{cluster}-addons-bootstrap"),
    (r"^addons/(?P<addon>.+)\.yaml$", "{cluster}-addons-{addon_dashed}"),
    (r"^manifests/etcd/(?P<manifest>[^/]+)\.yaml$", "manifests-etcdmanager-{manifest}"),
    (r"^manifests/static/(?P<manifest>[^/]+)\.yaml$", "manifests-static-{manifest}"),
    (r"^manifests/channels/(?P<manifest>[^/]+)\.yaml$", "manifests-channels-{manifest}"),
)

ADDON_KEYS = channel.manifest_keys()


def object_name(cluster_name, relpath):
    """kops' ManagedFile name for a cluster-relative store path; None for what is written directly."""
    if relpath in ADDON_KEYS:  # an addon whose manifest file is not named after its id
        return "%s-addons-%s" % (cluster_name, ADDON_KEYS[relpath])
    for pattern, template in NAMES:
        match = re.match(pattern, relpath)
        if match:
            values = dict(match.groupdict(), cluster=cluster_name)
            if values.get("addon"):
                values["addon_dashed"] = values["addon"].replace("/", "-")
            return template.format(**values)
    return None


def split_s3_url(config_base):
    """(bucket, key prefix) of an s3:// config base."""
    rest = config_base[len("s3://"):].rstrip("/")
    bucket, _sep, prefix = rest.partition("/")
    return bucket, prefix


def build_store_objects(cluster_name, config_base, files, tasks):
    """Add one S3Object per Terraform-managed file; returns the paths they cover (to not write them directly)."""
    if not config_base.startswith("s3://"):
        return []
    bucket, prefix = split_s3_url(config_base)
    covered = []
    for relpath, data in files:
        name = object_name(cluster_name, relpath)
        if name is None:
            continue
        task = S3Object(name, bucket=bucket, key="%s/%s" % (prefix, relpath) if prefix else relpath, content=data)
        tasks[task.key] = task
        covered.append(relpath)
    return covered
