# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What `kops get` prints by default (-o table): `kops get clusters` (NAME CLOUD ZONES), `kops get instancegroups`
(NAME ROLE MACHINETYPE MIN MAX ZONES) and `kops get all NAME` (both, under their titles), as lines."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import tables
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.kube.validation import SPEC_ROLES


def clusters(cluster_objects):
    """kops' clusterOutputTable: each cluster's name, cloud and the zones of its subnets."""
    return tables.render(["NAME", "CLOUD", "ZONES"], [
        [objects.name_of(c), objects.cloud_of(c) or "", ",".join(sorted(set(_subnet_zones(c).values()) - {""}))]
        for c in cluster_objects])


def instance_groups(cluster, groups):
    """kops' igOutputTable: the role as kops' internal API names it (v1alpha2's Master is ControlPlane), MIN and MAX
    '-' when unset, the zones the group declares plus those of its subnets (FindZonesForInstanceGroup)."""
    zones_of_subnet = _subnet_zones(cluster)
    return tables.render(["NAME", "ROLE", "MACHINETYPE", "MIN", "MAX", "ZONES"], [
        [objects.name_of(g), SPEC_ROLES.get(_spec(g).get("role"), _spec(g).get("role") or ""),
         _spec(g).get("machineType") or "", _spec(g).get("minSize"), _spec(g).get("maxSize"),
         ",".join(sorted((set(_spec(g).get("zones") or []) | {zones_of_subnet.get(s, "") for s in
                                                              _spec(g).get("subnets") or []}) - {""}))]
        for g in groups])


def everything(cluster, groups):
    """`kops get all NAME`: the cluster's table, then its instance groups'."""
    return ["Cluster"] + clusters([cluster]) + ["", "Instance Groups"] + instance_groups(cluster, groups)


def _spec(obj):
    return obj.get("spec") or {}


def _subnet_zones(cluster):
    """Subnet name -> its zone ("" when it has none), from spec.networking.subnets (spec.subnets in v1alpha2)."""
    spec = _spec(cluster)
    subnets = (spec.get("networking") or {}).get("subnets") or spec.get("subnets") or []
    return {s.get("name"): s.get("zone") or "" for s in subnets}


def history(revisions):
    """The spec's history (cluster_info history=true), oldest first: REVISION OPERATION TIME WHO CAUSE."""
    return tables.render(["REVISION", "OPERATION", "TIME", "WHO", "CAUSE"], [
        [r["revision"], r["operation"] + (" of %s" % r["restores"] if r.get("restores") is not None else ""),
         r.get("time") or "", "%s@%s" % (r.get("user") or "?", r.get("host") or "?"), r.get("cause") or ""]
        for r in revisions], sort=False)
