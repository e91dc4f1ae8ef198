# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The network, its subnetworks (with the pods' and services' ranges for IP aliases) and, for
private subnets, a router with Cloud NAT (kops' gcemodel NetworkModelBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names
from ansible_collections.kubeops.kops.plugins.module_utils.model.gce.context import GceModelError
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute

NAT_EGRESS = ("", None, "Nat", "NatGateway")


def build_network(ctx):
    network_id = ctx.networking().get("networkID") or ctx.spec.get("networkID")
    network = ctx.add(compute.Network(network_id.rsplit("/", 1)[-1] if network_id else names.network_name(ctx.name),
                                      auto_create_subnetworks=False))
    network.fields["name"] = network.name
    network.shared = bool(network_id)
    if network.shared:
        network.outputs["name"] = network.name
    for subnet in ctx.spec.get("subnets") or []:
        fields = {"network": Ref(network, "name"), "region": ctx.region, "ip_cidr_range": subnet.get("cidr"),
                  "stack_type": "IPV4_ONLY"}
        if ctx.ip_alias():
            fields["secondary_ip_range"] = [
                {"range_name": ctx.suffixed("pods"), "ip_cidr_range": ctx.spec.get("podCIDR")},
                {"range_name": ctx.suffixed("services"), "ip_cidr_range": ctx.spec.get("serviceClusterIPRange")}]
        task = ctx.add(compute.Subnetwork(ctx.subnet_name(subnet), name=ctx.subnet_name(subnet), **fields))
        if subnet.get("id"):
            task.shared = True
            task.outputs["name"] = task.name
    nat_subnets = []
    for subnet in ctx.spec.get("subnets") or []:
        if subnet.get("type") not in ("Private", "DualStack") or subnet.get("id"):
            continue
        if subnet.get("egress") == "External":
            continue
        if subnet.get("egress") not in NAT_EGRESS:
            raise GceModelError("subnet %s: egress %r is not supported on GCE (Cloud NAT or External)"
                                % (subnet["name"], subnet["egress"]))
        nat_subnets.append(ctx.task(compute.Subnetwork.kind, ctx.subnet_name(subnet)))
    if nat_subnets:
        name = ctx.suffixed("nat")
        router = ctx.add(compute.Router(name, name=name, network=Ref(network, "name")))
        ctx.add(compute.RouterNat(name, name=name, region=ctx.region, router=Ref(router, "name"),
                                  nat_ip_allocate_option="AUTO_ONLY",
                                  source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                                  subnetwork=[{"name": Ref(s, "name"), "source_ip_ranges_to_nat": ["ALL_IP_RANGES"]}
                                              for s in nat_subnets]))
    return network
