# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The metal update driver: no cloud tasks (kops' apply_cluster adds no builders for metal and runs an empty
metal API target).  What update does for a metal cluster is the cloud-independent part of the pipeline
(updates.py): the completed spec, the nodeup config of each instance group, the keysets and secrets, the addons,
all in the state store, for the hosts to read when they are enrolled.  Nothing is rendered: there is no Terraform
or CloudFormation resource for a machine the user already owns."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Driver
from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal.cloud import MetalCloud, api_public_name


class MetalDriver(Driver):
    provider = "metal"
    targets = ("direct",)

    def cloud(self, cluster_name, region, spec=None, **options):
        """options: the AWS options every module has (region, profile): an s3:// store of a metal cluster uses them,
        nothing of the cluster does."""
        del options
        if spec is not None and not api_public_name(spec):
            raise SpecError("spec.api.publicName must be set for bare metal (kops' metal cloud): the API's address "
                            "the hosts and kubeconfig use; set the create option api_public_name (or sets: "
                            "[spec.api.publicName=<address>]) to a control-plane host's address or a name for it")
        return MetalCloud(cluster_name, region)

    def task_classes(self):
        return []

    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        del completed, groups, ssh_public_keys, user_data, account_id
        return {}

    def choose_names(self, cloud, store, completed, dry_run):
        del cloud, store, completed, dry_run
        return []

    def recorded_names(self, store, completed):
        del store, completed

    def boot_environment(self, completed):
        """Nothing to export: a host's boot environment is written by enroll (a later slice), not user data."""
        del completed
        return {}

    def control_plane_addresses(self, cloud, completed, wait=0):
        """No load balancer to find: the API is at spec.api.publicName, which the user gives."""
        del cloud, completed, wait
        return []

    def made_control_plane_endpoint(self, plan, completed):
        del plan, completed
        return False

    def terraform_providers(self, region, spec=None):
        del region, spec
        return [], {}

    def discovery_objects(self, completed, documents, tasks, warn=None):
        del completed, documents, tasks, warn
        return []

    def store_objects(self, cluster_name, config_base, files, tasks):
        del cluster_name, config_base, files, tasks
        return []


DRIVER = MetalDriver()
