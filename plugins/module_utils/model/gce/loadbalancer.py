# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The API load balancer (kops' gcemodel APILoadBalancerBuilder).

Public: an external address, a legacy HTTP health check on kube-apiserver-healthcheck's port,
a target pool the API's instance groups join, and a forwarding rule on 443; kops adds the
internal one beside it.  Internal: a regional TCP health check, a regional backend service
over the API's instance groups, and per subnet serving the API an internal address with a
forwarding rule on 443 (and, without DNS, on kops-controller's 3988; with Cilium's etcd, 4003).
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names
from ansible_collections.kubeops.kops.plugins.module_utils.model.gce.context import GceModelError
from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Ref
from ansible_collections.kubeops.kops.plugins.module_utils.tasks.gce import compute

API_PORT, API_HEALTH_PORT, KOPS_CONTROLLER_PORT, CILIUM_ETCD_PORT = 443, 3990, 3988, 4003


def build_public(ctx):
    """The public load balancer's parts; returns the target pool (the API's instance groups join it)."""
    lb = ctx.load_balancer()
    if lb is None or lb.get("type") != "Public":
        return None
    name = ctx.suffixed("api")
    check = ctx.add(compute.HttpHealthCheck(name, name=name, port=API_HEALTH_PORT, request_path="/healthz"))
    pool = ctx.add(compute.TargetPool(name, name=name, health_checks=[Ref(check, "self_link")]))
    address = ctx.add(compute.Address(name, name=name))
    ctx.add(compute.ForwardingRule(name, name=name, ip_address=Ref(address, "address"), ip_protocol="TCP",
                                   labels=_labels(ctx, "api"), load_balancing_scheme="EXTERNAL",
                                   port_range="%d-%d" % (API_PORT, API_PORT), target=Ref(pool, "self_link")))
    return pool


def _labels(ctx, name):
    return {names.LABEL_CLUSTER: names.safe_cluster_name(ctx.name), "name": name}


def _backend_service(ctx, key, check_block, managers):
    check_name = ctx.suffixed(key)
    check = ctx.add(compute.RegionHealthCheck(check_name, name=check_name, **check_block))
    return ctx.add(compute.RegionBackendService(
        check_name, name=check_name, protocol="TCP", load_balancing_scheme="INTERNAL",
        health_checks=[Ref(check, "id")],
        backend=[{"balancing_mode": "CONNECTION", "group": Ref(m, "instance_group")}
                 for m in sorted(managers, key=lambda m: m.terraform_name)]))


def build_internal(ctx, network, managers):
    """The internal load balancer (for a Public or an Internal API load balancer)."""
    if ctx.load_balancer() is None:
        return
    api_groups = ctx.groups_with(objects.ROLE_CONTROL_PLANE, objects.ROLE_APISERVER)
    for group in api_groups:
        if len(ctx.group_zones(group)) > 1:
            raise GceModelError("instance group %s has %d zones; a GCE API load balancer needs one zone per "
                                "control-plane or API server group" % (objects.name_of(group), len(ctx.group_zones(group))))
    api_managers = [m for g in api_groups for m in managers[objects.name_of(g)]]
    control_plane = [m for g in ctx.groups_with(objects.ROLE_CONTROL_PLANE) for m in managers[objects.name_of(g)]]
    api = _backend_service(ctx, "api", {"tcp_health_check": {"port": API_PORT}}, api_managers)
    kops_controller = api
    if ctx.has_apiserver_groups():
        kops_controller = _backend_service(ctx, "kops-controller", {"ssl_health_check": {"port": KOPS_CONTROLLER_PORT}},
                                           control_plane)
    served = {s for g in api_groups for s in (g.get("spec") or {}).get("subnets") or []}
    for subnet in ctx.spec.get("subnets") or []:
        if subnet["name"] not in served:
            continue
        subnetwork = ctx.task(compute.Subnetwork.kind, ctx.subnet_name(subnet))
        address_name = ctx.suffixed("api-" + subnet["name"])
        address = ctx.add(compute.Address(address_name, name=address_name, address_type="INTERNAL",
                                          purpose="SHARED_LOADBALANCER_VIP", subnetwork=Ref(subnetwork, "name")))
        rules = [("api-", api, API_PORT)]
        if ctx.dns_none():
            rules.append(("kops-controller-", kops_controller, KOPS_CONTROLLER_PORT))
        if ctx.cilium_etcd():
            rules.append(("cilium-etcd-", kops_controller, CILIUM_ETCD_PORT))
        for prefix, service, port in rules:
            name = ctx.suffixed(prefix + subnet["name"])
            ctx.add(compute.ForwardingRule(
                name, name=name, backend_service=Ref(service, "id"), ip_address=Ref(address, "address"),
                ip_protocol="TCP", labels=_labels(ctx, prefix + subnet["name"]), load_balancing_scheme="INTERNAL",
                network=Ref(network, "name"), ports=[str(port)], subnetwork=Ref(subnetwork, "name")))
