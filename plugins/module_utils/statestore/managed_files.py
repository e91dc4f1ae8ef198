# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Which state-store files Terraform writes, under kops' names (pkg/model: ManagedFile names),
whatever the store's cloud (aws_s3_object on s3://, google_storage_bucket_object on gs://).

Keys, secrets and the user's own objects are written to the store directly (kops does the
same); the completed spec, version marker, etcd control specs, nodeup configs and addon
manifests become Terraform resources.
"""

from __future__ import annotations

import re

# (path pattern, name template) in kops' naming; {cluster} is the cluster name.
NAMES = (
    (r"^cluster-completed\.spec$", "cluster-completed.spec"),
    (r"^kops-version\.txt$", "kops-version.txt"),
    (r"^backups/etcd/(?P<etcd>[^/]+)/control/etcd-cluster-spec$", "etcd-cluster-spec-{etcd}"),
    (r"^igconfig/[^/]+/(?P<ig>[^/]+)/nodeupconfig\.yaml$", "nodeupconfig-{ig}"),
    (r"^igconfig/[^/]+/(?P<ig>[^/]+)/nodeupscript\.sh$", "nodeupscript-{ig}"),
    (r"^addons/bootstrap-channel\.yaml$", "{cluster}-addons-bootstrap"),
    (r"^addons/(?P<addon>.+)\.yaml$", "{cluster}-addons-{addon_dashed}"),
    (r"^manifests/etcd/(?P<manifest>[^/]+)\.yaml$", "manifests-etcdmanager-{manifest}"),
    (r"^manifests/static/(?P<manifest>[^/]+)\.yaml$", "manifests-static-{manifest}"),
    (r"^manifests/channels/(?P<manifest>[^/]+)\.yaml$", "manifests-channels-{manifest}"),
)


def object_name(cluster_name, relpath, renamed=None):
    """kops' ManagedFile name for a cluster-relative store path; None for what is written directly.

    renamed: {store path: kops' key} for the addon manifests whose file is not named after their id
    (addons/channel.manifest_keys(): limit-range); given by the caller, which knows the addons."""
    if relpath in (renamed or {}):
        return "%s-addons-%s" % (cluster_name, renamed[relpath])
    for pattern, template in NAMES:
        match = re.match(pattern, relpath)
        if match:
            values = dict(match.groupdict(), cluster=cluster_name)
            if values.get("addon"):
                values["addon_dashed"] = values["addon"].replace("/", "-")
            return template.format(**values)
    return None


def split_url(config_base):
    """(bucket, key prefix) of an s3:// or gs:// config base."""
    rest = config_base.split("://", 1)[1].rstrip("/")
    bucket, _sep, prefix = rest.partition("/")
    return bucket, prefix
