# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cloud facts for spec completion, asked of EC2 and Route53 (read-only calls)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import (
    AWS_MACHINE_TYPE_CANDIDATES, CloudFactsError, StaticCloudFacts)


class AwsCloudFacts(StaticCloudFacts):
    """Facts given as data win; what is missing is looked up in the region."""

    def __init__(self, region, data=None, profile=None):
        StaticCloudFacts.__init__(self, data)
        self.region = region
        self.profile = profile
        self._clients = {}

    def _client(self, service):
        if service not in self._clients:
            self._clients[service] = aws.client(service, region=self.region, profile=self.profile)
        return self._clients[service]

    @staticmethod
    def _guard(what, call, *args, **kwargs):
        """Run one read-only AWS call; its failure becomes a CloudFactsError naming `what`."""
        import botocore.exceptions
        try:
            return call(*args, **kwargs)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            raise CloudFactsError(str(aws.describe_error(exc, what)))

    def _call(self, what, service, operation, **kwargs):
        return self._guard(what, getattr(self._client(service), operation), **kwargs)

    def default_machine_type(self, cloud, role, zones, architecture="amd64"):
        if (self.machine_types.get(cloud) or {}).get(role) or cloud != "aws" or not zones:
            return StaticCloudFacts.default_machine_type(self, cloud, role, zones, architecture)
        candidates = [c for c in AWS_MACHINE_TYPE_CANDIDATES[role] if c.startswith("t4g") == (architecture == "arm64")]
        offered = {}
        for offering in self._offerings(candidates, zones):
            offered.setdefault(offering["InstanceType"], set()).add(offering["Location"])
        for candidate in candidates:
            if set(zones) <= offered.get(candidate, set()):
                return candidate
        raise CloudFactsError("none of %s is offered in all of %s; set the machine type explicitly"
                              % (", ".join(candidates), ", ".join(zones)))

    def _offerings(self, candidates, zones):
        return self._guard("describing instance type offerings", aws.paginate, self._client("ec2"),
                           "describe_instance_type_offerings", "InstanceTypeOfferings",
                           LocationType="availability-zone",
                           Filters=[{"Name": "instance-type", "Values": list(candidates)},
                                    {"Name": "location", "Values": list(zones)}])

    def vpc_cidr(self, vpc_id):
        if vpc_id in self.vpcs:
            return self.vpcs[vpc_id]
        found = self._call("describing VPC %s" % vpc_id, "ec2", "describe_vpcs", VpcIds=[vpc_id]).get("Vpcs") or []
        if not found:
            raise CloudFactsError("VPC %r not found in %s" % (vpc_id, self.region))
        return found[0]["CidrBlock"]

    def subnet(self, subnet_id):
        if subnet_id in self.subnets:
            return self.subnets[subnet_id]
        found = self._call("describing subnet %s" % subnet_id, "ec2", "describe_subnets",
                           SubnetIds=[subnet_id]).get("Subnets") or []
        if not found:
            raise CloudFactsError("subnet %r not found in %s" % (subnet_id, self.region))
        subnet = found[0]
        return {"cidr": subnet.get("CidrBlock"), "zone": subnet.get("AvailabilityZone"), "vpc": subnet.get("VpcId")}

    def find_hosted_zone(self, name):
        known = StaticCloudFacts.find_hosted_zone(self, name)
        if known:
            return known
        zones = self._guard("listing Route53 hosted zones", aws.paginate, self._client("route53"),
                            "list_hosted_zones", "HostedZones")
        lookup = StaticCloudFacts({"hosted_zones": {z["Name"]: z["Id"].rsplit("/", 1)[-1] for z in zones}})
        return lookup.find_hosted_zone(name)
