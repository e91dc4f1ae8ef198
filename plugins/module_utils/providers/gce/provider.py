# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""GCE: everything cloud-specific about a GCE cluster, reached through PROVIDER.

driver.py (update), groups.py (day-2 reader), rolling.py, deletion.py; the Compute client stays in
cloud/gce.py because node-side code uses it too (nodeup/ must not import providers/).  GCE takes the AWS options
every module has (an s3:// state store serves GCE clusters too) and no options of its own: the project comes
from the spec, credentials from Google's application default.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class GceProvider(Provider):
    name = "gce"
    spec_options = {"project": "project"}
    user_data_limit = (262144, "GCE's metadata value limit")
    node_functions = True  # etcd's peers and volume through Compute (kops' labels), api.internal in Cloud DNS
    labels_nodes = True
    completion_builders = ("gce_cloud_controller_manager", "gcp_pd_csi")
    cloud_config_fields = (("multizone", "multizone", False), ("nodeTags", "nodeTags", False),
                           ("nodeInstancePrefix", "nodeInstancePrefix", False))
    credential_provider_url = ("https://artifacts.k8s.io/binaries/cloud-provider-gcp/v35.0.0"
                               "/auth-provider-gcp/linux/{arch}/auth-provider-gcp")
    store_scheme = "gs://"
    dns_types = ("Public", "Private", "None")
    api_server_groups = True
    default_machine_types = {"Master": "e2-medium", "Node": "e2-medium", "APIServer": "e2-medium",
                             "Bastion": "e2-micro"}

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import driver
        return driver.DRIVER

    def reader(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups
        return groups

    def rolling(self, cloud):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce.rolling import GceRolling
        return GceRolling(cloud)

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import inventory
        return inventory.hosts(plugin, service, cluster, groups, region)


PROVIDER = GceProvider()
