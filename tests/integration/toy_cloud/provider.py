# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""toy: a third cloud, as one package (tests/integration/test_third_cloud.py copies it to providers/toy/ of a copy
of the collection).  It answers the whole contract of providers/base.py: its objects are two kinds of its own
(tasks.py) applied through its API (cloud.py, served by tests/integration/toy_api.py) or rendered as Terraform
resources of a made-up provider; check mode reads only; delete finds what the cluster's label marks (deletion.py);
the day-2 reader (groups.py) and the kops inventory (inventory.py) read its machines.  What kops' create cluster
would default for it is declared below as data, so a create needs no image nor machine sizes."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class ToyProvider(Provider):
    name = "toy"
    zone_pattern = (r"^(toy-\d+)[a-z]$", "toy-1a")
    default_image = "toy-os-2026"
    default_machine_types = {"Master": "toy.medium", "Node": "toy.small", "APIServer": "toy.medium",
                             "Bastion": "toy.small"}

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import driver
        return driver.DRIVER

    def reader(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import groups
        return groups

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import inventory
        return inventory.hosts(plugin, service, cluster, groups, region)


PROVIDER = ToyProvider()
