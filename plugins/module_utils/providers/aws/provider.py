# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS: everything cloud-specific about an AWS cluster, reached through PROVIDER.

driver.py (update), groups.py (day-2 reader), rolling.py, deletion.py; the EC2/S3 client and the
cloud facts lookup stay in cloud/aws.py and cloud/aws_facts.py because node-side code and the state store use them
too (nodeup/ must not import providers/).  Options: doc fragment kubeops.kops.aws (plugins/doc_fragments/aws.py).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class AwsProvider(Provider):
    name = "aws"

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver
        return driver.DRIVER

    def reader(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import groups
        return groups

    def rolling(self, cloud):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.rolling import AwsRolling
        return AwsRolling(cloud)

    def inventory_hosts(self, plugin, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import inventory
        return inventory.hosts(plugin, service, cluster, groups, region)


PROVIDER = AwsProvider()
