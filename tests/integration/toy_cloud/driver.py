# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's update driver: its tasks from the completed spec, applied through its API (cloud.py) or
rendered for its Terraform provider.  It answers what every driver must (providers/base.py Driver) and keeps the
defaults of the features it does not have (names chosen once, discovery documents, Karpenter)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref, managed_task_classes, Task
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Driver
from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import tasks as toy_tasks
from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy.cloud import OWNER_LABEL, ToyCloud


class ToyDriver(Driver):
    provider = "toy"
    targets = ("direct", "terraform")

    def cloud(self, cluster_name, region, profile=None, spec=None):
        del profile, spec  # the modules' AWS option; the toy needs nothing of the spec
        return ToyCloud(cluster_name, region)

    def task_classes(self):
        return managed_task_classes([toy_tasks], Task)

    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        del ssh_public_keys, account_id
        name = completed["metadata"]["name"]
        safe_name = name.replace(".", "-")
        labels = {OWNER_LABEL: name}
        network = toy_tasks.ToyNetwork(name, name=safe_name, cidr=completed["spec"]["networkCIDR"],
                                       labels=labels)
        tasks = {network.key: network}
        for group in groups:
            spec = group["spec"]
            pool = toy_tasks.ToyMachinePool(
                "%s.%s" % (group["metadata"]["name"], name), name="%s-%s" % (group["metadata"]["name"], safe_name),
                network_id=Ref(network), zones=list(spec.get("subnets") or []), min_size=spec.get("minSize"),
                max_size=spec.get("maxSize"), machine_type=spec.get("machineType"), image=spec.get("image"),
                role=spec.get("role"), user_data=user_data.get(group["metadata"]["name"]), labels=labels)
            tasks[pool.key] = pool
        return tasks

    def boot_environment(self, completed):
        del completed
        return {}

    def control_plane_addresses(self, cloud, completed, wait=0):
        """The toy has no load balancer: the API is reached by its DNS name."""
        del cloud, completed, wait
        return []

    def terraform_providers(self, region, spec=None):
        del spec
        return [("toy", {"region": region})], {"toy": {"source": "example.com/kubeops/toy", "version": ">= 0.1.0"}}


DRIVER = ToyDriver()
