# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Zones and regions, for every cloud: the one place a region is derived from a zone."""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

# eu-west-1a, us-gov-west-1b, kops' test zone us-test-1a; local zones us-west-2-lax-1a belong to us-west-2.
_AWS_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z0-9]+)*?-[a-z]+-\d+)(?:[a-z]|-[a-z]+-\d+[a-z])$")
# us-central1-a, europe-west4-b
_GCE_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
ZONE_PATTERNS = {"aws": (_AWS_ZONE, "us-east-1a"), "gce": (_GCE_ZONE, "us-central1-a")}
# AWS's ARN partitions by region prefix (the SDK's partition table, for the regions kops supports).
AWS_PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"), ("us-iso-", "aws-iso"))


class ZoneError(CloudError):
    pass


def region_of_zone(provider, zone):
    """The region a zone belongs to: ("aws", "us-east-1a") -> us-east-1, ("gce", "us-central1-a") -> us-central1."""
    # aws and gce first: the node side asks too, and its zip holds no cloud package; a cloud added as a package
    # declares its own (Provider.zone_pattern).
    known = ZONE_PATTERNS.get(provider) or provider_names.declared_value(provider, "zone_pattern", None)
    if not known:
        raise ZoneError("cloudProvider %r has no zones known to kubeops.kops (%s)"
                        % (provider, ", ".join(provider_names.names())))
    pattern, example = known
    match = re.match(pattern, zone or "")
    if not match:
        raise ZoneError("zone %r is not a %s zone (expected e.g. %s)" % (zone, provider.upper(), example))
    return match.group(1)


def region_of(spec):
    """The region of a cluster spec: a subnet's region (GCE subnets carry one), else its first zone's."""
    provider = spec.get("cloudProvider")
    for subnet in spec.get("subnets") or []:
        if subnet.get("region"):
            return subnet["region"]
        if subnet.get("zone"):
            return region_of_zone(provider, subnet["zone"])
    return None


def split_across_zones(count, zones):
    """kops' SplitCountAcrossZones: an even share per zone, the remainder to the first zones."""
    sizes = [count // len(zones)] * len(zones)
    for i in range(count - sum(sizes)):
        sizes[i] += 1
    return dict(zip(zones, sizes))


def aws_partition_of(region):
    """The partition of an AWS region's ARNs: aws, aws-cn, aws-us-gov, ..."""
    return next((p for prefix, p in AWS_PARTITIONS if (region or "").startswith(prefix)), "aws")
