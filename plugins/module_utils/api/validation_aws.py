# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""AWS-only validation rules (kops pkg/apis/kops/validation/aws.go), on v1alpha2 dicts.

validation.py calls these when spec.cloudProvider is aws; each returns FieldErrors.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re

from ansible_collections.kubeops.kops.plugins.module_utils import aws_models
from ansible_collections.kubeops.kops.plugins.module_utils.api import errors

ROUTE_TARGET_PREFIXES = ("pcx-", "i-", "nat-", "tgw-", "igw-", "eigw-")
SPOT_DURATIONS = (60, 120, 180, 240, 300, 360)
INTERRUPTION_BEHAVIORS = ("hibernate", "stop", "terminate")
CPU_CREDITS = ("standard", "unlimited")
TENANCIES = ("default", "dedicated", "host")
SPOT_ALLOCATION_STRATEGIES = ("lowest-price", "capacity-optimized", "capacity-optimized-prioritized",
                              "price-capacity-optimized")
# AWS refuses an ASG max instance lifetime under one day (0 switches it off).
MIN_MAX_INSTANCE_LIFETIME_SECONDS = 86400
MAX_LOAD_BALANCER_NAME = 32
INSTANCE_PROFILE_ARN = re.compile(r"^arn:[^:]+:iam::[0-9]*:instance-profile/.+$")
TARGET_GROUP_ARN = re.compile(r"^arn:[^:]+:elasticloadbalancing:[^:]*:[0-9]*:targetgroup/([^/]+)/[^/]+$")
DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
DURATION_SECONDS = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}


# The zone letters of each AWS region, for when no cloud facts can say (no credentials, offline runs).
# Facts win where they exist: accounts see different letters in some regions, and regions are added.
AWS_ZONE_LETTERS = {
    "af-south-1": "abc", "ap-east-1": "abc", "ap-east-2": "abc", "ap-northeast-1": "abcd",
    "ap-northeast-2": "abcd", "ap-northeast-3": "abc", "ap-south-1": "abc", "ap-south-2": "abc",
    "ap-southeast-1": "abc", "ap-southeast-2": "abc", "ap-southeast-3": "abc", "ap-southeast-4": "abc",
    "ap-southeast-5": "abc", "ap-southeast-7": "abc", "ca-central-1": "abd", "ca-west-1": "abc",
    "cn-north-1": "abd", "cn-northwest-1": "abc", "eu-central-1": "abc", "eu-central-2": "abc",
    "eu-north-1": "abc", "eu-south-1": "abc", "eu-south-2": "abc", "eu-west-1": "abc", "eu-west-2": "abc",
    "eu-west-3": "abc", "il-central-1": "abc", "me-central-1": "abc", "me-south-1": "abc",
    "mx-central-1": "abc", "sa-east-1": "abc", "us-east-1": "abcdef", "us-east-2": "abc",
    "us-gov-east-1": "abc", "us-gov-west-1": "abc", "us-west-1": "abc", "us-west-2": "abcd",
    # kops' own test cloud (the region of its integration fixtures).
    "us-test-1": "abc",
}
AWS_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z0-9]+)+-\d+)([a-z])$")


def known_zones(region, facts=None):
    """The zones of `region`: from the cloud facts when they can tell (availability_zones(region)), else
    from the static table; None when neither knows the region."""
    lookup = getattr(facts, "availability_zones", None)
    if lookup is not None:
        zones = lookup(region)
        if zones is not None:
            return sorted(zones)
    letters = AWS_ZONE_LETTERS.get(region)
    return [region + letter for letter in letters] if letters else None


def validate_zones(spec, facts=None):
    """Each subnet's zone is an availability zone its region has (kops asks EC2; a typo such as eu-west-1z
    would otherwise plan a whole cluster that AWS then refuses)."""
    problems = []
    for index, subnet in enumerate(spec.get("subnets") or []):
        zone = subnet.get("zone")
        if not zone or subnet.get("id"):
            continue
        path = "spec.subnets[%d].zone" % index
        match = AWS_ZONE.match(str(zone))
        if not match:
            problems.append(errors.invalid(path, zone, "is not an AWS availability zone: a region and a letter, "
                                           "e.g. us-east-1a"))
            continue
        zones = known_zones(match.group(1), facts)
        if zones is None:
            problems.append(errors.invalid(path, zone, "%s is not a known AWS region; check the zone, or give "
                                           "cloud_facts the region's zones" % match.group(1)))
        elif zone not in zones:
            problems.append(errors.invalid(path, zone, "region %s has the zones %s" % (match.group(1),
                                                                                       ", ".join(zones))))
    return problems


def check_region(region, zones_region):
    """A region given to a module must be the region of the cluster's zones (else it would plan a second
    cluster in the wrong place)."""
    if region and zones_region and region != zones_region:
        raise errors.ValidationError([errors.invalid("region", region, "the cluster's zones are in %s; omit "
                                                     "region or give %s" % (zones_region, zones_region))],
                                     "the options")


def _duration_seconds(text):
    """Seconds in a Go duration such as 24h0m0s, or None if it is not one."""
    text = str(text)
    if text == "0":
        return 0
    parts = DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(number) * DURATION_SECONDS[unit] for number, unit in parts)


def security_groups(path, groups):
    problems, seen = [], set()
    for index, group in enumerate(groups or []):
        item = "%s[%d]" % (path, index)
        if group in seen:
            problems.append(errors.duplicate(item, group, "list each security group once"))
        seen.add(group)
        if not str(group).strip():
            problems.append(errors.invalid(item, group, "security group cannot be empty; remove the entry"))
        elif not str(group).startswith("sg-"):
            problems.append(errors.invalid(item, group, "must be a security group id (sg-...)"))
    return problems


def _dns_none(spec):
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") == "None"


# -- cluster ---------------------------------------------------------------------

def validate_api_load_balancer(spec, lb):
    """The API load balancer on AWS: class Network only, and what an NLB allows."""
    problems = []
    path = "spec.api.loadBalancer"
    lb_class = lb.get("class")
    if _dns_none(spec) and lb_class != "Network" and lb_class != "Classic":
        problems.append(errors.forbidden(path + ".class", "topology.dns.type None requires a Network Load "
                                         "Balancer; set class: Network"))
    if lb_class == "Classic":
        problems.append(errors.forbidden(path + ".class", "Classic load balancers were removed in kOps 1.37; use "
                                         "class: Network"))
    elif lb_class not in (None, "Network"):
        problems.append(errors.unsupported(path + ".class", lb_class, ("Network",)))
    if lb.get("useForInternalApi") and lb.get("type") == "Internal":
        problems.append(errors.forbidden(path + ".useForInternalApi", "an internal NLB cannot hairpin traffic from "
                                         "its own targets; remove useForInternalApi"))
    if lb.get("sslPolicy") and not lb.get("sslCertificate"):
        problems.append(errors.forbidden(path + ".sslPolicy", "sslPolicy requires sslCertificate; set both or "
                                         "remove sslPolicy"))
    override = lb.get("securityGroupOverride")
    if override is not None and not str(override).strip():
        problems.append(errors.invalid(path + ".securityGroupOverride", override, "security group override cannot "
                                       "be empty; give a security group id (sg-...) or remove the field"))
    elif override is not None and not str(override).startswith("sg-"):
        problems.append(errors.invalid(path + ".securityGroupOverride", override, "must be a security group id "
                                       "(sg-...)"))
    problems.extend(security_groups(path + ".additionalSecurityGroups", lb.get("additionalSecurityGroups")))
    if lb.get("type") == "Internal" and not any(s.get("type") == "Private" for s in spec.get("subnets") or []):
        problems.append(errors.forbidden(path + ".type", "an Internal load balancer needs at least one Private "
                                         "subnet"))
    problems.extend(_load_balancer_subnets(spec, lb, path + ".subnets"))
    return problems


def _load_balancer_subnets(spec, lb, path):
    problems = []
    cluster_subnets = {s.get("name"): s for s in spec.get("subnets") or []}
    internal = lb.get("type") == "Internal"
    for index, mapping in enumerate(lb.get("subnets") or []):
        item = "%s[%d]" % (path, index)
        name = mapping.get("name")
        if not name:
            problems.append(errors.required(item + ".name", "the cluster subnet to place the load balancer in"))
        elif name not in cluster_subnets:
            problems.append(errors.not_found(item + ".name", name, "the cluster's subnets are: %s"
                                             % ", ".join(sorted(n for n in cluster_subnets if n))))
        address = mapping.get("privateIPv4Address")
        if address is not None:
            problems.extend(_private_address(item + ".privateIPv4Address", address, cluster_subnets.get(name),
                                             internal))
        if mapping.get("allocationId") is not None:
            if not mapping["allocationId"]:
                problems.append(errors.required(item + ".allocationId", "an elastic IP allocation id (eipalloc-...)"))
            elif internal:
                problems.append(errors.forbidden(item + ".allocationId", "allocationId (an elastic IP) is only for a "
                                                 "Public load balancer"))
    return problems


def _private_address(path, address, subnet, internal):
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        ip = None
    if ip is None or ip.version != 4:
        return [errors.invalid(path, address, "must be an IPv4 address inside the subnet's CIDR")]
    cidr = (subnet or {}).get("cidr")
    if cidr:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            network = None  # the subnet's own CIDR error says it
        if network is not None and ip not in network:
            return [errors.invalid(path, address, "is not inside subnet %s (%s)" % (subnet.get("name"), cidr))]
    if not internal:
        return [errors.forbidden(path, "privateIPv4Address is only for an Internal load balancer")]
    return []


def validate_additional_routes(path, subnet, network_cidrs):
    """A subnet's additionalRoutes: private, kops-managed subnets only, known targets, no duplicate CIDRs."""
    problems = []
    routes = subnet.get("additionalRoutes") or []
    if subnet.get("id"):
        problems.append(errors.forbidden(path, "additional routes cannot be added to a shared subnet (id set); "
                                         "add them to its route table yourself"))
    elif subnet.get("type") != "Private":
        problems.append(errors.forbidden(path, "additional routes can only be added on Private subnets"))
    seen = {str(n) for n in network_cidrs}
    for index, route in enumerate(routes):
        item = "%s[%d]" % (path, index)
        target = str(route.get("target") or "")
        if not target.startswith(ROUTE_TARGET_PREFIXES):
            problems.append(errors.invalid(item + ".target", target, "unknown route target; use a peering (pcx-), "
                                           "instance (i-), NAT gateway (nat-), transit gateway (tgw-), internet "
                                           "gateway (igw-) or egress-only gateway (eigw-) id"))
        cidr = route.get("cidr")
        try:
            network = ipaddress.ip_network(str(cidr), strict=False)
        except ValueError:
            problems.append(errors.invalid(item + ".cidr", cidr, "must be a CIDR such as 10.100.0.0/16"))
            continue
        if target.startswith("pcx-") and any(network.version == n.version and network.network_address in n
                                             for n in network_cidrs):
            problems.append(errors.forbidden(item + ".target", "a route inside the VPC's own CIDR can only target "
                                             "an interface or an instance, not a peering"))
        if cidr in seen:
            problems.append(errors.duplicate(item + ".cidr", cidr, "a route for this CIDR already exists (the VPC "
                                             "or another additional route)"))
        seen.add(cidr)
    return problems


# -- instance groups ---------------------------------------------------------------

def ec2_instance_types():
    """Every EC2 instance type, as the installed botocore's EC2 API model lists them (its InstanceType enum):
    the table comes with the library that makes the calls, as current as it is."""
    if not _INSTANCE_TYPES:
        # The process's loader (aws_models.py): the run's EC2 client parses the same model.
        model = aws_models.loader(os.environ.get("AWS_DATA_PATH")).load_service_model("ec2", "service-2")
        _INSTANCE_TYPES.update(model["shapes"]["InstanceType"]["enum"])
    return _INSTANCE_TYPES


_INSTANCE_TYPES = set()


def validate_machine_types(spec):
    """spec.machineType (a comma-separated list: kops' mixed types) and the mixed instances policy's types are EC2
    instance types (kops asks EC2 for each at create; a typo would otherwise be stored and fail at launch)."""
    problems = []
    fields = [("spec.machineType", t.strip()) for t in str(spec.get("machineType") or "").split(",") if t.strip()]
    fields += [("spec.mixedInstancesPolicy.instances[%d]" % i, t)
               for i, t in enumerate((spec.get("mixedInstancesPolicy") or {}).get("instances") or [])]
    known = ec2_instance_types() if fields else set()
    for path, machine_type in fields:
        if machine_type not in known:
            close = difflib.get_close_matches(machine_type, sorted(known), n=3, cutoff=0.6)
            problems.append(errors.invalid(path, machine_type, "is not an EC2 instance type%s" % (
                "; did you mean %s?" % " or ".join(close) if close else " (e.g. t3.medium, m6i.large)")))
    return problems


def _zones_of(cluster_spec, ig_spec):
    subnets = {s.get("name"): s.get("zone") for s in cluster_spec.get("subnets") or []}
    return sorted(set(ig_spec.get("zones") or [subnets[n] for n in ig_spec.get("subnets") or [] if subnets.get(n)]))


def validate_offerings(cluster, instance_groups, facts):
    """Each group's machine types are offered in each of its zones, when the cloud answers (facts that look up:
    DescribeInstanceTypeOfferings, one call for every group); kops asks EC2 for each type too. Types that are not
    EC2 instance types at all are validate_machine_types' to report; without an answer nothing is claimed."""
    lookup = getattr(facts, "offered_instance_types", None)
    cluster_spec = cluster.get("spec") or {}
    if lookup is None or cluster_spec.get("cloudProvider") != "aws":
        return []
    known = ec2_instance_types()
    wanted = []  # (group, type, zones)
    for ig in instance_groups:
        spec = ig.get("spec") or {}
        if spec.get("manager") == "Karpenter":
            continue
        zones = _zones_of(cluster_spec, spec)
        for machine_type in (t.strip() for t in str(spec.get("machineType") or "").split(",")):
            if machine_type in known and zones:
                wanted.append(((ig.get("metadata") or {}).get("name") or "?", machine_type, zones))
    if not wanted:
        return []
    try:
        offered = lookup(sorted({w[1] for w in wanted}), sorted({z for w in wanted for z in w[2]}))
    except ValueError:
        return []  # the cloud did not answer (the lookup's error names why); the type itself was checked above
    problems = []
    for group, machine_type, zones in wanted:
        missing = [z for z in zones if z not in offered.get(machine_type, ())]
        if missing:
            where = sorted(offered.get(machine_type, ()))
            problems.append(errors.invalid("instancegroup[%s].spec.machineType" % group, machine_type,
                                           "is not offered in %s (%s); choose another type or zone" % (
                                               ", ".join(missing),
                                               "offered in " + ", ".join(where) if where else
                                               "offered in none of the group's zones")))
    return problems


def validate_instance_group(spec):
    """AWS-only instance group fields: machine types, spot, mixed instances, ASG options, IAM profile, load
    balancers."""
    problems = validate_machine_types(spec)
    problems.extend(security_groups("spec.additionalSecurityGroups", spec.get("additionalSecurityGroups")))
    for field, value, allowed in (("spotDurationInMinutes", spec.get("spotDurationInMinutes"), SPOT_DURATIONS),
                                  ("instanceInterruptionBehavior", spec.get("instanceInterruptionBehavior"),
                                   INTERRUPTION_BEHAVIORS),
                                  ("cpuCredits", spec.get("cpuCredits"), CPU_CREDITS),
                                  ("tenancy", spec.get("tenancy"), TENANCIES)):
        if value not in (None, "") and value not in allowed:
            problems.append(errors.unsupported("spec.%s" % field, value, allowed))
    problems.extend(_mixed_instances(spec))
    lifetime = spec.get("maxInstanceLifetime")
    if lifetime is not None:
        seconds = _duration_seconds(lifetime)
        if seconds is not None and 0 < seconds < MIN_MAX_INSTANCE_LIFETIME_SECONDS:
            problems.append(errors.invalid("spec.maxInstanceLifetime", lifetime, "must be 0 (off) or at least 24h"))
    profile = (spec.get("iam") or {}).get("profile")
    if profile is not None and not INSTANCE_PROFILE_ARN.match(str(profile)):
        problems.append(errors.invalid("spec.iam.profile", profile, "must be an instance profile ARN such as "
                                       "arn:aws:iam::123456789012:instance-profile/KopsExampleRole"))
    for index, lb in enumerate(spec.get("externalLoadBalancers") or []):
        problems.extend(_external_load_balancer("spec.externalLoadBalancers[%d]" % index, lb))
    return problems


def _mixed_instances(spec):
    policy = spec.get("mixedInstancesPolicy")
    if not policy:
        return []
    problems = []
    path = "spec.mixedInstancesPolicy"
    base = policy.get("onDemandBase")
    if base is not None:
        if base < 0:
            problems.append(errors.invalid(path + ".onDemandBase", base, "cannot be less than zero"))
        elif spec.get("maxSize") is not None and base > spec["maxSize"]:
            problems.append(errors.invalid(path + ".onDemandBase", base, "cannot be greater than maxSize (%d)"
                                           % spec["maxSize"]))
    above = policy.get("onDemandAboveBase")
    if above is not None and not 0 <= above <= 100:
        problems.append(errors.invalid(path + ".onDemandAboveBase", above, "must be a percentage from 0 to 100"))
    strategy = policy.get("spotAllocationStrategy")
    if strategy is not None and strategy not in SPOT_ALLOCATION_STRATEGIES:
        problems.append(errors.unsupported(path + ".spotAllocationStrategy", strategy, SPOT_ALLOCATION_STRATEGIES))
    return problems


def _external_load_balancer(path, lb):
    name, arn = lb.get("loadBalancerName"), lb.get("targetGroupArn")
    if name is not None and arn is not None:
        return [errors.invalid(path, "loadBalancerName and targetGroupArn", "set either loadBalancerName or "
                               "targetGroupArn in one entry, not both")]
    if name is not None and len(str(name)) > MAX_LOAD_BALANCER_NAME:
        return [errors.invalid(path + ".loadBalancerName", name, "a load balancer name has at most %d characters"
                               % MAX_LOAD_BALANCER_NAME)]
    if arn is not None:
        match = TARGET_GROUP_ARN.match(str(arn))
        if not match:
            return [errors.invalid(path + ".targetGroupArn", arn, "must be a target group ARN such as "
                                   "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tg-name/"
                                   "1234567890123456")]
        if len(match.group(1)) > MAX_LOAD_BALANCER_NAME:
            return [errors.invalid(path + ".targetGroupArn", arn, "a target group name has at most %d characters"
                                   % MAX_LOAD_BALANCER_NAME)]
    return []
