# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cloud facts for spec completion, asked of EC2 and Route53 (read-only calls).

Facts given as data (cloud_facts) win; what they do not give is looked up
with the module's AWS options (cloud/aws.py), as kops asks its cloud.  A fact
that cannot be found is a CloudFactsError naming it and how to supply it.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.api import validation_aws
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import (
    CloudFactsError, StaticCloudFacts, UnknownZoneError, aws_region_of_zone)


class AwsCloudFacts(StaticCloudFacts):
    """Facts given as data win; what is missing is looked up in the region."""

    looks_up = True

    def __init__(self, region, data=None, profile=None):
        StaticCloudFacts.__init__(self, data)
        self.region = region
        self.profile = profile
        self._clients = {}
        self._zones = {}  # region -> its zones as EC2 lists them (None: EC2 did not say)
        self._hosted_zones = None  # _listed_hosted_zones

    def settle_region(self, spec):
        """Look up in the cluster's region when the module named none: a day-2 module is given no zone before it reads
        the cluster, and botocore's default region (or none) is not the cluster's."""
        if self.region or spec.get("cloudProvider") != "aws":
            return
        from ansible_collections.kubeops.kops.plugins.module_utils import zones
        try:
            self.region = zones.region_of(spec)
        except zones.ZoneError:
            return  # validation names the zone
        self._clients = {}

    def _client(self, service):
        if service not in self._clients:
            region = self.region if service != "route53" else (self.region or aws.GLOBAL_SERVICE_REGION)
            self._clients[service] = aws.client(service, region=region, profile=self.profile)
        return self._clients[service]

    def _where(self):
        region = self.region or self._client("ec2").meta.region_name
        return "region %s (set region to look elsewhere)" % region

    @staticmethod
    def _guard(what, call, *args, **kwargs):
        """Run one read-only AWS call; its failure becomes a CloudFactsError naming `what`."""
        import botocore.exceptions
        try:
            return call(*args, **kwargs)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            raise _facts_error(what, exc)

    def _call(self, what, service, operation, **kwargs):
        return self._guard(what, getattr(self._client(service), operation), **kwargs)

    def _describe_one(self, what, operation, result_key, not_found_code, **kwargs):
        """The one item a describe by id returns, or None when EC2 says it does not exist."""
        import botocore.exceptions
        try:
            found = getattr(self._client("ec2"), operation)(**kwargs).get(result_key) or []
        except botocore.exceptions.ClientError as exc:
            if ((exc.response or {}).get("Error") or {}).get("Code") == not_found_code:
                return None
            raise _facts_error(what, exc)
        except botocore.exceptions.BotoCoreError as exc:
            raise _facts_error(what, exc)
        return found[0] if found else None

    def default_machine_type(self, cloud, role, zones, architecture="amd64"):
        if (self.machine_types.get(cloud) or {}).get(role) or cloud != "aws" or not zones:
            return StaticCloudFacts.default_machine_type(self, cloud, role, zones, architecture)
        # kops' preferences (providers/aws/provider.py): the first offered in every zone of the group wins.
        candidates = list(provider_names.declared_value(cloud, "machine_type_candidates", {})[architecture][role])
        self._check_regions(zones)
        offered = {}
        for offering in self._offerings(candidates, zones):
            offered.setdefault(offering["InstanceType"], set()).add(offering["Location"])
        for candidate in candidates:
            if set(zones) <= offered.get(candidate, set()):
                return candidate
        # A zone where none of kops' candidates is offered is almost always a zone the region does not have.
        self._check_zones([z for z in zones if not any(z in where for where in offered.values())])
        raise CloudFactsError("none of %s is offered in all of %s; set the machine type explicitly"
                              % (", ".join(candidates), ", ".join(zones)))

    @staticmethod
    def _check_regions(zones):
        """Each zone's region is one AWS has (the static table or botocore's endpoints): else the calls would go
        to an endpoint that does not exist (a DNS failure on AWS, a server error on a test endpoint)."""
        known = set(validation_aws.AWS_ZONE_LETTERS) | _aws_regions()
        for zone in zones:
            region = aws_region_of_zone(zone)
            if region not in known:
                raise UnknownZoneError('zone "%s": %s is not an AWS region; check zones' % (zone, region))

    def availability_zones(self, region):
        """The zones EC2 lists for region (DescribeAvailabilityZones), None when it cannot say."""
        import botocore.exceptions
        if region not in _aws_regions():
            return None  # kops' test region (us-test-1) or a typo: no endpoint to ask
        if region not in self._zones:
            try:
                found = self._client("ec2").describe_availability_zones(
                    Filters=[{"Name": "region-name", "Values": [region]}]).get("AvailabilityZones") or []
            except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError):
                found = []  # the static table answers (validation_aws.known_zones)
            self._zones[region] = sorted(z["ZoneName"] for z in found) or None
        return self._zones[region]

    def _check_zones(self, zones):
        for zone in zones:
            region = aws_region_of_zone(zone)
            known = validation_aws.known_zones(region, self)
            if known is not None and zone not in known:
                raise UnknownZoneError('zone "%s" is not an availability zone of %s (its zones: %s); check zones'
                                       % (zone, region, ", ".join(known)))

    def offered_instance_types(self, types, zones):
        """{type: set(zones offering it)} for the given types in the given zones (DescribeInstanceTypeOfferings)."""
        region = self.region or self._client("ec2").meta.region_name
        asked = [z for z in zones if aws_region_of_zone(z) == region]
        # Zones of another region are not judged here (check_region refuses a region other than the zones').
        offered = {t: set(z for z in zones if z not in asked) for t in types}
        for offering in self._offerings(types, asked) if asked else []:
            offered.setdefault(offering["InstanceType"], set()).add(offering["Location"])
        return offered

    def _offerings(self, candidates, zones):
        return self._guard("describing instance type offerings", aws.paginate, self._client("ec2"),
                           "describe_instance_type_offerings", "InstanceTypeOfferings",
                           LocationType="availability-zone",
                           Filters=[{"Name": "instance-type", "Values": list(candidates)},
                                    {"Name": "location", "Values": list(zones)}])

    def vpc_cidr(self, vpc_id):
        if vpc_id in self.vpcs:
            return self.vpcs[vpc_id]
        found = self._describe_one("describing VPC %s" % vpc_id, "describe_vpcs", "Vpcs", "InvalidVpcID.NotFound",
                                   VpcIds=[vpc_id])
        if not found:
            raise CloudFactsError("VPC %r not found in %s; check network_id, or give cloud_facts.vpcs"
                                  % (vpc_id, self._where()))
        return found["CidrBlock"]

    def subnet(self, subnet_id):
        if subnet_id in self.subnets:
            return self.subnets[subnet_id]
        subnet = self._describe_one("describing subnet %s" % subnet_id, "describe_subnets", "Subnets",
                                    "InvalidSubnetID.NotFound", SubnetIds=[subnet_id])
        if not subnet:
            raise CloudFactsError("subnet %r not found in %s; check the subnet ids, or give cloud_facts.subnets"
                                  % (subnet_id, self._where()))
        return {"cidr": subnet.get("CidrBlock"), "zone": subnet.get("AvailabilityZone"), "vpc": subnet.get("VpcId")}

    def find_hosted_zone(self, name):
        return StaticCloudFacts.find_hosted_zone(self, name) or self._listed_hosted_zones().find_hosted_zone(name)

    def hosted_zone_id(self, name):
        return StaticCloudFacts.hosted_zone_id(self, name) or self._listed_hosted_zones().hosted_zone_id(name)

    def _listed_hosted_zones(self):
        """The account's hosted zones as facts (ListHostedZones, once per lookup object)."""
        if self._hosted_zones is None:
            zones = self._guard("listing Route53 hosted zones", aws.paginate, self._client("route53"),
                                "list_hosted_zones", "HostedZones")
            self._hosted_zones = StaticCloudFacts({"hosted_zones": {z["Name"]: z["Id"].rsplit("/", 1)[-1]
                                                                    for z in zones}})
        return self._hosted_zones

    def egress_only_internet_gateway(self, vpc_id):
        known = StaticCloudFacts.egress_only_internet_gateway(self, vpc_id)
        if known:
            return known
        found = self._call("describing the egress-only internet gateways of VPC %s" % vpc_id, "ec2",
                           "describe_egress_only_internet_gateways",
                           Filters=[{"Name": "attachment.vpc-id", "Values": [vpc_id]}]).get(
                               "EgressOnlyInternetGateways") or []
        return next((g["EgressOnlyInternetGatewayId"] for g in found
                     if any(a.get("VpcId") == vpc_id for a in g.get("Attachments") or [])), None)


_REGIONS = []


def _aws_regions():
    """The regions the installed botocore has EC2 endpoints for (read once per process, through the process's one
    botocore data loader: a session of its own parsed botocore's endpoints again, a tenth of a second)."""
    if not _REGIONS:
        _REGIONS.append(frozenset(aws.session().get_available_regions("ec2")))
    return _REGIONS[0]


def _facts_error(what, exc):
    return CloudFactsError("%s (or give the fact in cloud_facts; cloud_lookup: false never asks AWS)"
                           % aws.describe_error(exc, what))
