# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The GCE driver: GCE's tasks, cloud, Terraform providers, boot environment."""

from __future__ import annotations

import os

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.model.gce import cluster as gce_model
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Driver
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import managed_files
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import managed_task_classes
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Task
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute, iam, storage
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

TASK_MODULES = (compute, iam)
GOOGLE_PROVIDER = {"source": "hashicorp/google", "version": ">= 5.11.0"}


class GceDriver(Driver):
    provider = "gce"
    targets = ("direct", "terraform")  # CloudFormation is AWS's

    def cloud(self, cluster_name, region, profile=None, spec=None, project=None, credentials_file=None):
        """The cluster's GceCloud; project from the spec unless given.  Credentials: application default
        (GOOGLE_APPLICATION_CREDENTIALS, gcloud's) unless credentials_file.  profile is the AWS option: on a
        GCE cluster it serves an s3:// state store only, never Compute."""
        project = project or (spec or {}).get("project")
        if not project:
            raise CloudError("spec.project: a GCE cluster needs its project (kops create cluster --project)")
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
        return GceCloud(cluster_name, project, region, credentials_file=credentials_file)

    def task_classes(self):
        """Every GCE task kind that manages objects (asked for orphans on every run)."""
        return managed_task_classes(TASK_MODULES, Task)

    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        del account_id  # an AWS account: no GCE object names one
        return gce_model.build_tasks(completed, groups, ssh_public_keys, user_data)

    def discovery_objects(self, completed, documents, tasks, warn=None):
        """The discovery documents are written to their store directly (no object resource is rendered)."""
        del completed, documents, tasks, warn
        return []

    def choose_names(self, cloud, store, completed, dry_run):
        """Not decided on GCE (kops' names always): GCE names too write the dots as dashes (model/gce/names.py),
        so look-alike GCE clusters still collide; the AWS driver's choice is AWS-only for now."""
        return []

    def recorded_names(self, store, completed):
        pass

    def boot_environment(self, completed):
        """Nothing to export: a GCE node reads its project and zone from the metadata server."""
        return {}

    def control_plane_addresses(self, cloud, completed, wait=0):
        """None to find: GCE workers do not ask the bootstrap service (it verifies AWS identities only), so the 3988
        forwarding rule the model builds for dns None has no client yet (docs/bootstrap-service.md)."""
        return []

    def made_control_plane_endpoint(self, plan, completed):
        """Never: there are no addresses to wait for (control_plane_addresses)."""
        return False

    def terraform_providers(self, region, spec=None):
        """google, plus aws.files when the store is s3:// (kops writes the store files with the AWS provider)."""
        spec = spec or {}
        blocks = [("google", {"project": spec.get("project"), "region": region})]
        required = {"google": GOOGLE_PROVIDER}
        if (spec.get("configBase") or "").startswith("s3://"):
            # The bucket's region is the AWS provider's; kops asks S3, we take the environment's (default us-east-1).
            files_region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
            blocks.append(("aws", {"alias": "files", "region": files_region}))
            required["aws"] = {"source": "hashicorp/aws", "version": ">= 5.0.0",
                               "configuration_aliases": [Expression("aws.files")]}
        return blocks, required

    def store_objects(self, cluster_name, config_base, files, tasks):
        """The Terraform-managed store files as tasks: google_storage_bucket_object on gs://, aws_s3_object on
        s3:// (as kops' GCE fixtures show); the paths covered."""
        if config_base.startswith("s3://"):
            # Only an s3:// store loads the S3 object kind (no AWS API is called: Terraform writes them).
            from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.s3 import S3Object as object_kind
        elif config_base.startswith("gs://"):
            object_kind = storage.StorageObject
        else:
            return []
        bucket, prefix = managed_files.split_url(config_base)
        covered = []
        for relpath, data in files:
            name = managed_files.object_name(cluster_name, relpath, channel.manifest_keys())
            if name is None:
                continue
            task = object_kind(name, bucket=bucket, key="%s/%s" % (prefix, relpath) if prefix else relpath,
                               content=data)
            tasks[task.key] = task
            covered.append(relpath)
        return covered


DRIVER = GceDriver()
