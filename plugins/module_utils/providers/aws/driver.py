# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The AWS driver: AWS's tasks, cloud, Terraform provider, boot environment."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.hcl import Expression
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import cluster as aws_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import karpenter as karpenter_model
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import kops_controller, lookalike
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import service_accounts, store_objects
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import made_objects, update_facts
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Driver
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import autoscaling as autoscaling_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws import ec2, elbv2, iam, ipv6, nth, route53, s3
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import managed_task_classes
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Task
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import discovery as discovery_store
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

TASK_MODULES = (ec2, ipv6, elbv2, iam, nth, route53, s3, autoscaling_tasks)


class AwsDriver(Driver):
    provider = "aws"
    targets = ("direct", "terraform", "cloudformation")

    def cloud(self, cluster_name, region, profile=None, spec=None):
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
        return AwsCloud(cluster_name, region, profile=profile)

    def task_classes(self):
        """Every AWS task kind that manages objects (asked for orphans on every run)."""
        return managed_task_classes(TASK_MODULES, Task)

    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        return aws_model.build_tasks(completed, groups, ssh_public_keys, user_data, account_id=account_id)

    def choose_names(self, cloud, store, completed, dry_run):
        """Decide (once, recorded in the store) whether this cluster's derived AWS names are kops' or unique because
        a look-alike cluster holds kops' (model/aws/lookalike.py); annotates completed; returns plan entries.  The
        cloud is asked who holds the names only while no record has decided."""
        record = lookalike.apply_record(store, completed)
        held = None if record is not None else update_facts.held_names(cloud, completed["metadata"]["name"])
        return lookalike.choose(store, completed, record, held, dry_run)

    def account_id(self, cloud):
        return update_facts.account_of(cloud)

    def recorded_names(self, store, completed):
        """The names choice a direct run recorded, for a render (no cloud is asked)."""
        lookalike.apply_record(store, completed)

    def recall_made_objects(self, cloud, store, tasks, dry_run):
        """The cluster's record of its service-account IAM objects, handed to the cloud, where their orphans are looked
        for by name instead of listing the account (providers/aws/made_objects.py); returns the tasks' names."""
        return made_objects.recall(cloud, store, tasks, dry_run)

    def record_made_objects(self, store, recalled, dry_run):
        made_objects.record(store, recalled, dry_run)

    def boot_environment(self, completed):
        """What the boot script exports for nodeup (kops exports AWS_REGION)."""
        return {"AWS_REGION": region_of(completed["spec"])}

    def karpenter_nodes(self, cloud_factory, completed, groups, user_data, warn):
        """What the Karpenter addon's EC2NodeClass and NodePool of each Karpenter group take from the model (the
        boot scripts among user_data, the images' root devices asked of the cloud); None without Karpenter."""
        if not ((completed["spec"].get("karpenter") or {}).get("enabled") and karpenter_model.karpenter_groups(groups)):
            return None
        try:
            cloud = cloud_factory()
        except ValueError:
            cloud = None
        root_devices = update_facts.root_device_names(cloud, groups, warn)
        return karpenter_model.node_inputs(completed, groups, user_data, root_devices, node_labels.build_node_labels)

    def control_plane_addresses(self, cloud, completed, wait=0):
        """The API balancer's private addresses workers pin api.internal and kops-controller.internal to, when the
        cluster has no DNS (kops' BootConfig.APIServerIPs); [] otherwise or before the balancer exists.
        wait: seconds to wait for a balancer just made to be active first."""
        if wait and kops_controller.uses_load_balancer(completed["spec"]):
            update_facts.wait_until_active(cloud, completed, wait)
        return update_facts.control_plane_addresses(cloud, completed)

    def made_control_plane_endpoint(self, plan, completed):
        """Whether this run's plan created the API load balancer whose addresses the workers pin (dns None): the
        pipeline then waits for it and writes the workers' launch templates again with them."""
        return kops_controller.uses_load_balancer(completed["spec"]) and any(
            entry.action == "create" and (entry.kind, entry.name) == ("aws_lb", "api.%s" % completed["metadata"]["name"])
            for entry in plan)

    def terraform_providers(self, region, spec=None):
        """(provider blocks [(name, body)], required_providers {name: body}) of kubernetes.tf (spec: the completed
        cluster spec, for what a provider block needs beyond the region; AWS needs nothing)."""
        return ([("aws", {"region": region}), ("aws", {"alias": "files", "region": region})],
                {"aws": {"source": "hashicorp/aws", "version": ">= 5.0.0",
                         "configuration_aliases": [Expression("aws.files")]}})

    def discovery_objects(self, completed, documents, tasks, warn=None):
        """Terraform: the issuer discovery documents as aws_s3_object (an s3:// store); the names covered."""
        public = discovery_store.needs_public_acl(completed, warn=warn)
        return service_accounts.build_discovery_objects(completed, documents, tasks, public_read=public)

    def store_objects(self, cluster_name, config_base, files, tasks):
        """Add the Terraform-managed store files as tasks (aws_s3_object on an s3:// store); the paths covered."""
        return store_objects.build_store_objects(cluster_name, config_base, files, tasks)


DRIVER = AwsDriver()
