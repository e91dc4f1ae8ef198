# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
name: kops
short_description: The instances of a kops cluster, grouped by instance group and role
version_added: 0.1.0
description:
  - Reads the cluster and its instance groups from the state store, then lists the cluster's running
    instances with one paginated C(DescribeInstances) filtered on the cluster's tag (never all instances).
  - "Groups built in Python (no Jinja cost per host): C(kops_<cluster>), C(role_control_plane), C(role_node),
    C(role_apiserver), C(role_bastion), C(ig_<group>) and C(zone_<zone>)."
  - "Host variables: C(kops_cluster_name), C(kops_instance_group), C(kops_role), C(kops_state_store),
    C(kops_instance_id), C(kops_zone), C(kops_private_ip), C(kops_public_ip). In a private topology with a
    bastion, hosts without a public address get a C(ProxyJump) through the bastion."
  - The configuration file name must end in C(kops.yml) or C(kops.yaml).
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin.
    required: true
    choices: [kubeops.kops.kops]
  state_store:
    description: The kops state store, for example V(s3://my-kops-state); defaults to E(KOPS_STATE_STORE).
    type: str
    env:
      - name: KOPS_STATE_STORE
  cluster_name:
    description: The cluster whose instances to list.
    type: str
    required: true
  region:
    description: AWS region; by default the region of the cluster's zones.
    type: str
  profile:
    description: AWS profile to use.
    type: str
  hostname:
    description: What the inventory host name is.
    type: str
    choices: [private-ip-address, public-ip-address, private-dns-name, instance-id]
    default: private-ip-address
  ansible_user:
    description: The SSH user set on every host (Ubuntu images use V(ubuntu), Debian V(admin)).
    type: str
    default: ubuntu
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
# inventory/prod.kops.yml
plugin: kubeops.kops.kops
state_store: s3://my-kops-state
cluster_name: k8s.example.com
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/kubeops-inventory
"""

import re

from ansible.errors import AnsibleError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
ROLE_GROUPS = {"Master": "role_control_plane", "ControlPlane": "role_control_plane", "Node": "role_node",
               "APIServer": "role_apiserver", "Bastion": "role_bastion"}
HOSTNAME_FIELDS = {"private-ip-address": "PrivateIpAddress", "public-ip-address": "PublicIpAddress",
                   "private-dns-name": "PrivateDnsName", "instance-id": "InstanceId"}


def safe_group(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def instance_hosts(cluster_name, groups, instances, hostname, state_store, user):
    """[(host name, {var: value}, [group names])] for the cluster's instances (pure, unit-testable)."""
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    hosts = []
    for instance in sorted(instances, key=lambda i: i["InstanceId"]):
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags") or []}
        group = tags.get(INSTANCE_GROUP_TAG)
        if group not in roles:
            continue  # not one of the cluster's instance groups (e.g. a Karpenter node)
        name = instance.get(HOSTNAME_FIELDS[hostname])
        if not name:
            continue
        zone = (instance.get("Placement") or {}).get("AvailabilityZone")
        variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group, "kops_role": roles[group],
                     "kops_state_store": state_store, "kops_instance_id": instance["InstanceId"],
                     "kops_zone": zone, "kops_private_ip": instance.get("PrivateIpAddress"),
                     "kops_public_ip": instance.get("PublicIpAddress"),
                     "ansible_host": instance.get("PublicIpAddress") or instance.get("PrivateIpAddress")}
        names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(roles[group], "role_node"),
                 "ig_" + safe_group(group)] + (["zone_" + safe_group(zone)] if zone else [])
        hosts.append((name, variables, names))
    bastions = [v for _n, v, groups_of in hosts if "role_bastion" in groups_of and v["kops_public_ip"]]
    if bastions:
        jump = bastions[0]["kops_public_ip"]
        for _name, variables, groups_of in hosts:
            if "role_bastion" not in groups_of and not variables["kops_public_ip"]:
                variables["ansible_host"] = variables["kops_private_ip"]
                variables["ansible_ssh_common_args"] = "-o ProxyJump=%s@%s" % (user, jump)
    return hosts


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "kubeops.kops.kops"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("kops.yml", "kops.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        hosts = None
        if use_cache:
            try:
                hosts = self._cache[cache_key]
            except KeyError:
                hosts = None
        if hosts is None:
            hosts = self._fetch_hosts()
            if self.get_option("cache"):
                self._cache[cache_key] = hosts
        self._populate(hosts)

    def _fetch_hosts(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
        from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

        cluster_name = self.get_option("cluster_name")
        try:
            service = ClusterService(self.get_option("state_store"))
            cluster, groups = service.read(cluster_name)
        except ValueError as exc:
            raise AnsibleError("kops inventory: %s" % exc)
        if cluster is None:
            raise AnsibleError("kops inventory: cluster %s not found in %s" % (cluster_name, service.store.url("")))
        region = self.get_option("region") or region_of(cluster["spec"])
        ec2 = aws.client("ec2", region=region, profile=self.get_option("profile"))
        instances = []
        filters = [{"Name": "tag:KubernetesCluster", "Values": [cluster_name]},
                   {"Name": "instance-state-name", "Values": ["running"]}]
        try:
            for reservation in aws.paginate(ec2, "describe_instances", "Reservations", Filters=filters):
                instances.extend(reservation.get("Instances") or [])
        except Exception as exc:  # botocore errors: report the cause, not a traceback
            raise AnsibleError("kops inventory: listing instances of %s in %s: %s" % (cluster_name, region, exc))
        return instance_hosts(cluster_name, groups, instances, self.get_option("hostname"),
                              service.store.url(""), self.get_option("ansible_user"))

    def _populate(self, hosts):
        strict = self.get_option("strict")
        for name, variables, groups in hosts:
            for group in groups:
                self.inventory.add_group(group)
            self.inventory.add_host(name, group=groups[0])
            for group in groups[1:]:
                self.inventory.add_child(group, name)
            for key, value in dict(variables, ansible_user=self.get_option("ansible_user")).items():
                self.inventory.set_variable(name, key, value)
            self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)
