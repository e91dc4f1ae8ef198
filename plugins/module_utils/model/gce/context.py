# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What the GCE builders share about a completed cluster (kops' GCEModelContext)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names import gce as names
from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError


class GceModelError(ModelError):
    pass


class Context(object):
    def __init__(self, completed, groups, tasks):
        self.cluster = completed
        self.name = completed["metadata"]["name"]
        self.spec = completed["spec"]
        self.groups = list(groups)
        self.tasks = tasks
        self.project = self.spec.get("project")
        if not self.project:
            raise GceModelError("spec.project: a GCE cluster needs its project (kops create cluster --project)")
        self.region = region_of(self.spec)

    def add(self, task):
        if task.key in self.tasks:
            raise GceModelError("two GCE objects are named %s; rename one of the instance groups or subnets" % task.key)
        self.tasks[task.key] = task
        return task

    def task(self, kind, name):
        return self.tasks["%s/%s" % (kind, name)]

    def suffixed(self, name, max_length=names.MAX_NAME):
        return names.cluster_suffixed(name, self.name, max_length)

    # -- the cluster's choices ------------------------------------------------------------------------
    def role(self, group):
        return (group.get("spec") or {}).get("role")

    def groups_with(self, *roles):
        return [g for g in self.groups if self.role(g) in roles]

    def has_apiserver_groups(self):
        return bool(self.groups_with(objects.ROLE_APISERVER))

    def tag(self, role):
        return names.role_tag(self.name, names.ROLE_NAMES[role])

    def api_targets(self):
        """Network tags of what serves the API (kops' GCETagsForAPIServerTargets)."""
        tags = [self.tag("ControlPlane")]
        if self.has_apiserver_groups():
            tags.append(self.tag(objects.ROLE_APISERVER))
        return tags

    def control_plane_tags(self):
        return self.api_targets() + [self.tag("Master")]

    def load_balancer(self):
        return (self.spec.get("api") or {}).get("loadBalancer")

    def dns_none(self):
        return ((self.spec.get("topology") or {}).get("dns") or {}).get("type") == "None"

    def networking(self):
        return self.spec.get("networking") or {}

    def ip_alias(self):
        """kops' UsesIPAliases: GCP ("ip-alias") networking (v1alpha2's networking.gce) or kindnet."""
        return any(name in self.networking() for name in ("gce", "kindnet"))

    def gce_routes(self):
        return "kubenet" in self.networking()

    def cilium_etcd(self):
        return "cilium" in self.networking() and any(e.get("name") == "cilium" for e in self.spec.get("etcdClusters") or [])

    def subnet(self, name):
        for subnet in self.spec.get("subnets") or []:
            if subnet["name"] == name:
                return subnet
        raise GceModelError("subnet %r is not one of spec.subnets" % name)

    def subnet_name(self, subnet):
        return subnet.get("id") or self.suffixed(subnet["name"])

    def group_subnet(self, group):
        subnets = (group.get("spec") or {}).get("subnets") or []
        if len(subnets) != 1:
            raise GceModelError("instance group %s: a GCE instance group has exactly one subnet (has %s)"
                                % (objects.name_of(group), ", ".join(subnets) or "none"))
        return self.subnet(subnets[0])

    def group_zones(self, group):
        zones = (group.get("spec") or {}).get("zones") or []
        if not zones:
            raise GceModelError("instance group %s: spec.zones is empty; GCE instance groups are zonal"
                                % objects.name_of(group))
        return zones
