# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""metal: kops' bare-metal cloud (`kops create cluster --cloud=metal`, experimental in kops behind
KOPS_FEATURE_FLAGS=Metal): a cluster on machines the user already owns, here the hosts of an Ansible inventory.

What kops writes for it (docs/metal.md compares field by field): the Cluster carries the label
alpha.kops.k8s.io/cloud: metal instead of a spec.cloudProvider (kops' Cluster.GetCloudProvider; api/objects.py
reads and writes that form), DNS none, the subnet of its zone (kops' e2e: main) without CIDRs, and the image
"dummy-metal-image" (the hosts bring their OS).  driver.py (update: the store's files, nothing in a cloud),
deletion.py (the store only), inventory.py (the hosts of the user's inventory, by instance group).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class MetalProvider(Provider):
    name = "metal"
    # kops' metal cloud has no regions (metal.Cloud.Region() is ""): a zone is any DNS label (kops' e2e: main).
    zone_pattern = (r"^()[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$", "main")
    default_image = "dummy-metal-image"  # kops' defaultImage for metal: the hosts bring their own OS
    machine_types = False  # kops' defaultMachineType has none for metal: the machines exist already
    assigns_network_cidrs = False  # kops' PerformAssignments carves CIDRs on AWS, OpenStack and Azure only
    named_by_label = True  # kops' Cluster.GetCloudProvider: metadata.labels["alpha.kops.k8s.io/cloud"] == "metal"
    # No instance to replace: the hosts are updated in place by the playbook, which has the inventory.
    instead_of = {"rolling update": "a metal cluster's hosts are updated in place: run rolling_update.yml with the "
                                    "inventory of its hosts (ansible-playbook kubeops.kops.rolling_update -i hosts.yml "
                                    "-e cluster_name=...; docs/metal.md)"}
    kubelet_cloud_provider = ""  # no cloud controller manager: the kubelet runs without --cloud-provider

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import driver
        return driver.DRIVER

    # cloud_for reads the API's address from the completed spec (v1alpha2's masterPublicName is kops' api.publicName).
    spec_options = {"public_name": "masterPublicName"}

    def reader(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import groups
        return groups

    def check_region(self, region, completed):
        """A region option means nothing to a metal cluster (it serves an s3:// store only)."""
        del region, completed

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import inventory
        return inventory.hosts(plugin, service, cluster, groups, region)


PROVIDER = MetalProvider()
