# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Facts about the cloud that spec completion needs, passed in as data.

Completion never calls a cloud API itself (see docs/architecture.md): what it
needs to know -- the CIDR of an existing VPC, the zone of an existing subnet,
the default machine type offered in some zones, a hosted zone's ID -- comes
from a CloudFacts object.  StaticCloudFacts answers from a dict (tests, kops'
own test cloud, users who want no lookups); AwsCloudFacts asks EC2/Route53
through cloud/aws.py.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError


class CloudFactsError(SpecError):
    pass


class UnknownZoneError(CloudFactsError):
    """A zone the cloud does not have: reported as the zone, not as what was being looked up in it."""


AWS_ZONE = re.compile(r"^[a-z]{2}(-[a-z0-9]+)+-\d+[a-z]$")
# How to supply a fact that no lookup gave (offline, or lookup found nothing); {what} names the fact.
OFFLINE_HINT = "give it in cloud_facts.%s, or let the module look it up (AWS credentials, cloud_lookup not false)"


def is_aws_zone(zone):
    return bool(AWS_ZONE.match(zone or ""))


def aws_region_of_zone(zone):
    """us-east-1a -> us-east-1 (and kops' test zone us-test-1a -> us-test-1)."""
    if not is_aws_zone(zone):
        raise CloudFactsError("zone %r is not an AWS availability zone (expected e.g. us-east-1a)" % (zone,))
    return zone[:-1]


def gce_region_of_zone(zone):
    """us-central1-a -> us-central1."""
    parts = (zone or "").rsplit("-", 1)
    if len(parts) != 2 or not parts[0] or len(parts[1]) != 1:
        raise CloudFactsError("zone %r is not a GCE zone (expected e.g. us-central1-a)" % (zone,))
    return parts[0]


REGION_OF_ZONE = {"aws": aws_region_of_zone, "gce": gce_region_of_zone}


FACT_KEYS = ("machine_types", "vpcs", "subnets", "hosted_zones", "gce_used_cidrs", "docker_tags", "etcd_sha256",
             "egress_only_internet_gateways")
RELEASE_FETCH_TIMEOUT = 30


def fetch_release_text(url):
    """The text at a Kubernetes build's URL (kops reads <kubernetesVersion>/bin/linux/amd64/<component>.docker_tag
    when kubernetesVersion is a URL); one line naming the URL when it cannot be read."""
    from ansible.module_utils.urls import open_url
    if not url.startswith(("http://", "https://")):
        raise CloudFactsError("%s: only http(s) build URLs can be read; give the tag in cloud_facts.docker_tags"
                              % url)
    try:
        return open_url(url, timeout=RELEASE_FETCH_TIMEOUT).read().decode("utf-8")
    except Exception as error:  # pylint: disable=broad-except  # any failure: one line naming the URL
        raise CloudFactsError("cannot read %s (%s); give the tag in cloud_facts.docker_tags {url: tag}"
                              % (url, error))


class StaticCloudFacts(object):
    """Cloud facts from plain data.

    data keys (all optional):
      machine_types: {cloud: {role: type}} default machine type per IG role ("Master", "Node", "Bastion", "APIServer")
      vpcs: {vpc_id: cidr}
      subnets: {subnet_id: {"cidr": ..., "zone": ..., "vpc": ...}}
      hosted_zones: {dns_name: zone_id}
      egress_only_internet_gateways: {vpc_id: gateway_id} of shared VPCs (an IPv6 cluster's private routes use it)
      gce_used_cidrs: [cidr, ...] already used in the GCE network
      etcd_sha256: {version: {amd64: sha256, arm64: sha256}} of etcd's release tarballs, for a version the
        collection does not pin; read from the release's SHA256SUMS when not given (nodeconfig/etcd_assets.py)
      docker_tags: {url: tag} the docker_tag files of a Kubernetes build (kubernetesVersion a URL); read from the
        URL itself when not given
    """

    looks_up = False

    def settle_region(self, spec):
        """Where facts are looked up, the cluster's region (a cloud's facts: cloud/aws_facts.py); data has none."""
        del spec

    def __init__(self, data=None):
        data = data or {}
        unknown = sorted(set(data) - set(FACT_KEYS))
        if unknown:
            raise CloudFactsError("cloud_facts: unknown key(s) %s; known: %s" % (", ".join(unknown), ", ".join(FACT_KEYS)))
        self.machine_types = dict(data.get("machine_types") or {})
        self.vpcs = dict(data.get("vpcs") or {})
        self.subnets = dict(data.get("subnets") or {})
        self.hosted_zones = dict(data.get("hosted_zones") or {})
        self.gce_used_cidrs = list(data.get("gce_used_cidrs") or [])
        self.docker_tags = dict(data.get("docker_tags") or {})
        self.etcd_sha256 = dict(data.get("etcd_sha256") or {})
        self.egress_only_internet_gateways = dict(data.get("egress_only_internet_gateways") or {})

    def default_machine_type(self, cloud, role, zones, architecture="amd64"):
        """The facts' machine type for role, else the cloud's Provider.default_machine_types, else the first of its
        machine_type_candidates of the architecture (the facts of a cloud that looks them up keep those offered
        in the zones: cloud/aws_facts.py)."""
        chosen = (self.machine_types.get(cloud) or {}).get(role) or \
            provider_names.declared_value(cloud, "default_machine_types", {}).get(role)
        if chosen:
            return chosen
        candidates = provider_names.declared_value(cloud, "machine_type_candidates", {}).get(architecture) or {}
        if candidates.get(role):
            return candidates[role][0]
        raise CloudFactsError("no default machine type known for role %s on %s; set machineType" % (role, cloud))

    def vpc_cidr(self, vpc_id):
        if vpc_id not in self.vpcs:
            raise CloudFactsError("VPC %r not found in cloud_facts.vpcs: check network_id, or %s"
                                  % (vpc_id, OFFLINE_HINT % ("vpcs {%s: CIDR}" % vpc_id)))
        return self.vpcs[vpc_id]

    def subnet(self, subnet_id):
        """{"cidr", "zone", "vpc"} of an existing subnet."""
        if subnet_id not in self.subnets:
            raise CloudFactsError("subnet %r not found in cloud_facts.subnets: check the subnet ids, or %s"
                                  % (subnet_id, OFFLINE_HINT % ("subnets {%s: {cidr, zone, vpc}}" % subnet_id)))
        return self.subnets[subnet_id]

    def find_hosted_zone(self, name):
        """ID of the hosted zone with the longest name that is a suffix of ``name``."""
        best = None
        for zone_name, zone_id in self.hosted_zones.items():
            zone_name = zone_name.rstrip(".")
            if name == zone_name or name.endswith("." + zone_name):
                if best is None or len(zone_name) > len(best[0]):
                    best = (zone_name, zone_id)
        return best[1] if best else None

    def hosted_zone_id(self, name):
        """ID of the hosted zone named exactly ``name`` (spec.dnsZone given by name), or None."""
        wanted = name.rstrip(".").lower()
        return next((zone_id for zone_name, zone_id in self.hosted_zones.items()
                     if zone_name.rstrip(".").lower() == wanted), None)

    def egress_only_internet_gateway(self, vpc_id):
        """ID of the egress-only internet gateway attached to a shared VPC, or None."""
        return self.egress_only_internet_gateways.get(vpc_id)

    def used_gce_cidrs(self, network_name):
        return list(self.gce_used_cidrs)

    def docker_tag(self, url):
        """The tag in a build's <component>.docker_tag file (given, or read from the URL as kops reads it)."""
        if url not in self.docker_tags:
            self.docker_tags[url] = fetch_release_text(url).strip()
        return self.docker_tags[url]


def kops_test_cloud(cloud="aws"):
    """The mock cloud of kops' own integration tests (region us-test-1, GCE us-test1).

    Its values are what kops' fixtures under conformance/kops were generated
    against, so the conformance tests feed them in as facts.  kops' mock GCE
    DNS names its one managed zone "1".
    """
    if cloud == "gce":
        return StaticCloudFacts({"hosted_zones": {"example.com": "1"}})
    return StaticCloudFacts({
        "machine_types": {"aws": {"Master": "m3.medium", "Node": "t2.medium", "APIServer": "m3.medium",
                                  "Bastion": "t2.micro"}},
        "vpcs": {"vpc-12345678": "10.0.0.0/12"},
        "subnets": {
            "subnet-1": {"cidr": "10.10.0.0/24", "zone": "us-test-1a", "vpc": "vpc-12345678"},
            "subnet-2": {"cidr": "10.11.0.0/24", "zone": "us-test-1a", "vpc": "vpc-12345678"},
        },
        "hosted_zones": {"example.com": "Z1AFAKE1ZON3YO"},
    })
