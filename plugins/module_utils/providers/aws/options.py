# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS's part of every kubeops.kops module: its options (documented by the kubeops.kops.aws doc fragment), applying
them, and the cloud facts it looks up in EC2 (providers/module_options.py)."""

from __future__ import annotations


def argument_spec():
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
    return aws.argument_spec()


def configure_module(module):
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
    aws.configure_module(module)


def cloud_facts(params, data, zone_hint):
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


def cloud_error(exc):
    """A botocore error that reached the module unexplained, as one AwsError naming its call (cloud/aws.py's
    describe_error), else None."""
    if not type(exc).__module__.startswith("botocore"):
        return None
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
    return aws.describe_error(exc)
