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

    def deletion(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import deletion
        return deletion

    def argument_spec(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
        return aws.argument_spec()

    def configure_module(self, module):
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
        aws.configure_module(module)

    def cloud_facts(self, params, data, zone_hint):
        """Looked up in EC2 when cloud_lookup allows it: unset looks up when AWS credentials resolve (kops always asks
        its cloud), and never for a zone that is not AWS's.  Region: the region option, else zone_hint's, else
        botocore's."""
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
        from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts
        lookup = params.get("cloud_lookup")
        if lookup is False or (zone_hint and not cloudfacts.is_aws_zone(zone_hint)):
            return None
        if not aws.has_credentials():
            if lookup:
                aws.require_boto3()
                raise aws.AwsError("cloud_lookup: true: " + aws.NO_CREDENTIALS)
            return None
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws_facts import AwsCloudFacts
        region = params.get("region") or (cloudfacts.aws_region_of_zone(zone_hint) if zone_hint else None)
        return AwsCloudFacts(region, data)


PROVIDER = AwsProvider()
