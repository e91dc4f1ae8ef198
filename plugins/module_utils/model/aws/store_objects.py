# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Which state-store files Terraform writes, under kops' names (pkg/model: ManagedFile names).

Keys, secrets and the user's own objects are written to the store directly (kops
does the same); the completed spec, version marker, etcd control specs, nodeup
configs and addon manifests become aws_s3_object resources when the store is S3.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.statestore.managed_files import object_name, split_url
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.s3 import S3Object

__all__ = ["object_name", "build_store_objects"]  # object_name: the names live in statestore/managed_files.py


def build_store_objects(cluster_name, config_base, files, tasks):
    """Add one S3Object per Terraform-managed file; returns the paths they cover (to not write them directly)."""
    if not config_base.startswith("s3://"):
        return []
    bucket, prefix = split_url(config_base)
    covered = []
    for relpath, data in files:
        name = object_name(cluster_name, relpath)
        if name is None:
            continue
        task = S3Object(name, bucket=bucket, key="%s/%s" % (prefix, relpath) if prefix else relpath, content=data)
        tasks[task.key] = task
        covered.append(relpath)
    return covered
