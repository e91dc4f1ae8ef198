# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cloud facts for spec completion, asked of EC2 and Route53 (read-only calls).

Facts given as data (cloud_facts) win; what they do not give is looked up
with the module's AWS options (cloud/aws.py), as kops asks its cloud.  A fact
that cannot be found is a CloudFactsError naming it and how to supply it.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import (
    AWS_MACHINE_TYPE_CANDIDATES, CloudFactsError, StaticCloudFacts)


class AwsCloudFacts(StaticCloudFacts):
    """Facts given as data win; what is missing is looked up in the region."""

    looks_up = True

    def __init__(self, region, data=None, profile=None):
        StaticCloudFacts.__init__(self, data)
        self.region = region
        self.profile = profile
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
        known = StaticCloudFacts.find_hosted_zone(self, name)
        if known:
            return known
        zones = self._guard("listing Route53 hosted zones", aws.paginate, self._client("route53"),
                            "list_hosted_zones", "HostedZones")
        lookup = StaticCloudFacts({"hosted_zones": {z["Name"]: z["Id"].rsplit("/", 1)[-1] for z in zones}})
        return lookup.find_hosted_zone(name)


def _facts_error(what, exc):
    return CloudFactsError("%s (or give the fact in cloud_facts; cloud_lookup: false never asks AWS)"
                           % aws.describe_error(exc, what))
