# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Subnet CIDR allocation, the way kops assigns CIDRs to subnets that lack one.

AWS (and OpenStack/Azure): split networkCIDR into 1, 2, 4 or 8 equal blocks;
utility subnets share the first block split into 8; the others take one block
each in zone order.  GCE: each subnet gets the next free /20 of 10.0.0.0/8.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import CloudFactsError
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

BIG_SUBNET_TYPES = ("Public", "Private", "DualStack")
UTILITY = "Utility"
GCE_SUBNET_RANGE = "10.0.0.0/8"
GCE_SUBNET_PREFIX = 20


class AllocationError(SpecError):
    pass


def _network(cidr, field):
    try:
        return ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        raise AllocationError("%s: %r is not a valid CIDR (expected e.g. 172.20.0.0/16)" % (field, cidr))


def _is_ipv6_only_private(subnet):
    return bool(subnet.get("ipv6CIDR")) and subnet.get("type") == "Private"


def _needs_cidr(subnet):
    return not subnet.get("cidr") and not _is_ipv6_only_private(subnet)


def split_into(network, bits):
    """The 2**bits equal blocks of network, lowest first."""
    return list(network.subnets(prefixlen_diff=bits)) if bits else [network]


def _slice_bits(slices):
    for bits, capacity in ((0, 1), (1, 2), (2, 4)):
        if slices <= capacity:
            return bits
    return 3


def fill_shared_subnets(spec, facts):
    """Take CIDR (and a missing zone) of subnets given by ``id`` from the cloud; a mismatch is an error."""
    subnets = spec.get("subnets") or []
    if not spec.get("networkID") or not any(s.get("id") for s in subnets):
        return
    for index, subnet in enumerate(subnets):
        if not subnet.get("id"):
            continue
        try:
            actual = facts.subnet(subnet["id"])
        except CloudFactsError as exc:
            raise AllocationError("spec.subnets[%d].id: %s" % (index, exc))
        if actual.get("vpc") and actual["vpc"] != spec["networkID"]:
            raise AllocationError("spec.subnets[%d].id: subnet %s is in VPC %s, not in networkID %s"
                                  % (index, subnet["id"], actual["vpc"], spec["networkID"]))
        if not subnet.get("cidr"):
            if actual.get("cidr"):
                subnet["cidr"] = actual["cidr"]
            elif not _is_ipv6_only_private(subnet):
                raise AllocationError("spec.subnets[%d].id: subnet %s has no IPv4 CIDR" % (index, subnet["id"]))
        elif actual.get("cidr") and subnet["cidr"] != actual["cidr"]:
            raise AllocationError("spec.subnets[%d].cidr: subnet %s is configured as %s but is %s in the cloud"
                                  % (index, subnet["id"], subnet["cidr"], actual["cidr"]))
        if not subnet.get("zone"):
            subnet["zone"] = actual.get("zone")
        elif actual.get("zone") and subnet["zone"] != actual["zone"]:
            raise AllocationError("spec.subnets[%d].zone: subnet %s is configured in %s but is in %s"
                                  % (index, subnet["id"], subnet["zone"], actual["zone"]))


def allocate_subnet_cidrs(spec):
    """Give every subnet without a CIDR one carved from spec.networkCIDR (in place)."""
    subnets = spec.get("subnets") or []
    if not any(_needs_cidr(s) for s in subnets):
        return
    network = _network(spec.get("networkCIDR"), "spec.networkCIDR")

    big, little, reserved = [], [], []
    for subnet in subnets:
        preset = _network(subnet["cidr"], "spec.subnets[%s].cidr" % subnet.get("name")) if subnet.get("cidr") else None
        if preset is not None and preset.network_address not in network:
            continue  # lives in an additional network CIDR: not ours to carve
        kind = subnet.get("type")
        if kind in BIG_SUBNET_TYPES:
            big.append(subnet)
        elif kind == UTILITY:
            little.append(subnet)
        else:
            raise AllocationError("subnet %r has unknown type %r (expected Public, Private, Utility or DualStack)"
                                  % (subnet.get("name"), kind))
        if preset is not None:
            reserved.append(preset)

    # A stable sort by zone keeps the user's order within a zone, as kops does.
    big.sort(key=lambda s: s.get("zone") or "")
    little.sort(key=lambda s: s.get("zone") or "")

    slices = len(big) + (1 if little else 0)
    blocks = [b for b in split_into(network, _slice_bits(slices)) if not any(b.overlaps(r) for r in reserved)]
    if not blocks:
        raise AllocationError("spec.networkCIDR: no free block left in %s for the subnets without a CIDR; "
                              "give their cidr explicitly" % network)

    if little:
        little_blocks = split_into(blocks.pop(0), 3)
        for subnet in little:
            if subnet.get("cidr"):
                continue
            if not little_blocks:
                raise AllocationError("insufficient (little) CIDRs remaining for automatic CIDR allocation "
                                      "to subnet %r; give its cidr explicitly" % subnet.get("name"))
            subnet["cidr"] = str(little_blocks.pop(0))

    for subnet in big:
        if not _needs_cidr(subnet):
            continue
        if not blocks:
            raise AllocationError("insufficient (big) CIDRs remaining for automatic CIDR allocation to "
                                  "subnet %r; widen networkCIDR or give its cidr explicitly" % subnet.get("name"))
        subnet["cidr"] = str(blocks.pop(0))


def allocate_gce_subnet_cidrs(spec, used_cidrs=()):
    """Give GCE subnets without id or CIDR the next free /20 of 10.0.0.0/8 (never the first one)."""
    pool = ipaddress.ip_network(GCE_SUBNET_RANGE)
    used = [ipaddress.ip_network(c, strict=False) for c in used_cidrs]
    used += [ipaddress.ip_network(s["cidr"], strict=False) for s in spec.get("subnets") or [] if s.get("cidr")]
    candidates = pool.subnets(new_prefix=GCE_SUBNET_PREFIX)
    next(candidates)  # kops increments before the first check, so 10.0.0.0/20 is never handed out
    for subnet in spec.get("subnets") or []:
        if subnet.get("id") or subnet.get("cidr"):
            continue
        for candidate in candidates:
            if not any(candidate.overlaps(u) for u in used):
                subnet["cidr"] = str(candidate)
                used.append(candidate)
                break
        else:
            raise AllocationError("no free /20 left in %s for GCE subnet %r" % (pool, subnet.get("name")))
