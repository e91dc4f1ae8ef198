# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
name: kops
short_description: The instances of a kops cluster, grouped by instance group and role
version_added: 0.1.0
description:
  - Reads the cluster and its instance groups from the state store, then the cluster's autoscaling groups (one
    C(DescribeAutoScalingGroups) page walk filtered on the cluster's tag), its launch templates (one
    C(DescribeLaunchTemplates) walk by the same tag, which resolves C($Latest) and C($Default)) and its running
    instances (C(DescribeInstances) by the cluster's tag, 1000 per page). Never one call per instance.
  - "Groups built in Python (no Jinja cost per host): C(kops_<cluster>), C(role_control_plane), C(role_node),
    C(role_apiserver), C(role_bastion), C(ig_<group>), C(zone_<zone>), and C(needs_update) (hosts a rolling
    update would replace)."
  - "Host variables: C(kops_cluster_name), C(kops_instance_group), C(kops_role), C(kops_state_store),
    C(kops_instance_id), C(kops_zone), C(kops_private_ip), C(kops_public_ip), C(kops_autoscaling_group),
    C(kops_launch_template_id), C(kops_launch_template_version) (what the instance was launched from),
    C(kops_group_launch_template_version) (what its autoscaling group launches now), C(kops_status)
    (V(UpToDate), V(NeedsUpdate), V(Detached) or V(NotInAutoscalingGroup)) and C(kops_needs_update)
    (true when the instance's template id:version differs from its group's, as kops' rolling update decides;
    null for an instance outside every autoscaling group of the cluster)."
  - "With a bastion instance group, hosts without a public address get C(ansible_ssh_common_args) with a
    C(ProxyJump) through the bastion: its C(spec.topology.bastion.bastionPublicName), else the DNS name of the
    bastion's load balancer, else the bastion instance's public address."
  - "On GCE (C(spec.cloudProvider: gce)): the managed instance groups' instances (one C(instanceTemplates) list,
    per zone one C(instanceGroupManagers) and one C(instances) list, per manager one C(listManagedInstances)),
    with the same groups; host variables C(kops_instance_group_manager), C(kops_instance_template),
    C(kops_group_instance_template) instead of the autoscaling and launch template ones, C(kops_instance_id)
    the instance's name. Credentials are E(GOOGLE_APPLICATION_CREDENTIALS) or the application default credentials."
  - "On bare metal (kops' C(metal) cloud, the collection's docs/metal.md): no cloud is asked. The machines are the hosts
    the inventory sources before this one added that name an instance group of the cluster, by the variable
    C(kops_instance_group) or by membership of the group C(ig_<group>); they get the same groups and host variables
    (C(kops_status), C(kops_needs_update) and C(kops_public_ip) null), and keep their own C(ansible_user). A host
    naming an instance group the cluster does not have fails in one line."
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
    description: AWS (or GCE) region; by default the region of the cluster's zones.
    type: str
  profile:
    description: AWS profile to use (not used on GCE).
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
# Host variables and groups of your own (Constructable):
compose:
  ansible_host: kops_private_ip
keyed_groups:
  - key: kops_status
    prefix: status
groups:
  stale_nodes: kops_needs_update and kops_role == 'Node'
"""

from ansible.errors import AnsibleError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "kubeops.kops.kops"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("kops.yml", "kops.yaml"))

    def hosts_so_far(self):
        """(host name, variables with its groups', group names) of every host the inventory sources before this one
        added: a bare-metal cluster's machines (providers/metal/inventory.py)."""
        from ansible.inventory.helpers import get_group_vars
        from ansible.utils.vars import combine_vars

        return [(name, combine_vars(get_group_vars(host.get_groups()), host.get_vars()),
                 [g.name for g in host.get_groups()]) for name, host in self.inventory.hosts.items()]

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        cache_key = self.get_cache_key(path)
        # cache is False under --flush-cache / refresh_inventory: query, then refresh the cache (as aws_ec2).
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
        from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
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
        # The cluster's cloud lists its hosts (providers/<cloud>/inventory.py, through its Provider).
        try:
            cloud = providers.provider_for(cluster["spec"], "the kops inventory")
            return cloud.inventory_hosts(self, service, cluster, groups, region)
        except ValueError as exc:
            message = str(exc)
            raise AnsibleError(message if message.startswith("kops inventory: ") else "kops inventory: cluster %s: %s"
                               % (cluster_name, message))

    def _populate(self, hosts):
        strict = self.get_option("strict")
        for name, variables, groups in hosts:
            for group in groups:
                self.inventory.add_group(group)
            self.inventory.add_host(name, group=groups[0])
            for group in groups[1:]:
                self.inventory.add_child(group, name)
            variables = dict({"ansible_user": self.get_option("ansible_user")}, **variables)  # a cloud's row may keep its own
            for key, value in variables.items():
                self.inventory.set_variable(name, key, value)
            self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)
