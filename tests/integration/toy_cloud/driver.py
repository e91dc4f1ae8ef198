# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's update driver: its tasks from the completed spec, its Terraform provider; renders only."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref, managed_task_classes, Task
from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Driver
from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import tasks as toy_tasks


class ToyDriver(Driver):
    provider = "toy"
    targets = ("terraform",)

    def cloud(self, cluster_name, region, profile=None, spec=None):
        raise ValueError("spec.cloudProvider: the toy cloud has no API; use target: terraform")

    def task_classes(self):
        return managed_task_classes([toy_tasks], Task)

    def build_tasks(self, completed, groups, ssh_public_keys, user_data, account_id=None):
        del ssh_public_keys, account_id
        name = completed["metadata"]["name"]
        labels = {"kubernetes-cluster": name}
        network = toy_tasks.ToyNetwork(name, name=name.replace(".", "-"), cidr=completed["spec"]["networkCIDR"],
                                       labels=labels)
        tasks = {network.key: network}
        for group in groups:
            spec = group["spec"]
            pool = toy_tasks.ToyMachinePool(
                "%s.%s" % (group["metadata"]["name"], name), name="%s-%s" % (group["metadata"]["name"], name.replace(".", "-")),
                network_id=Ref(network), zones=list(spec.get("subnets") or []), min_size=spec.get("minSize"),
                max_size=spec.get("maxSize"), machine_type=spec.get("machineType"), image=spec.get("image"),
                role=spec.get("role"), user_data=user_data.get(group["metadata"]["name"]), labels=labels)
            tasks[pool.key] = pool
        return tasks

    def choose_names(self, cloud, store, completed, dry_run):
        return []

    def recorded_names(self, store, completed):
        pass

    def boot_environment(self, completed):
        return {}

    def control_plane_addresses(self, cloud, completed, wait=0):
        return []

    def made_control_plane_endpoint(self, plan, completed):
        return False

    def terraform_providers(self, region, spec=None):
        return [("toy", {"region": region})], {"toy": {"source": "example.com/kubeops/toy", "version": ">= 0.1.0"}}

    def discovery_objects(self, completed, documents, tasks, warn=None):
        return []

    def store_objects(self, cluster_name, config_base, files, tasks):
        return []


DRIVER = ToyDriver()
