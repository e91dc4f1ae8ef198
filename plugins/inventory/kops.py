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

import re

from ansible.errors import AnsibleError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"
# AWS tags every instance launched from a launch template with the template and the version it used.
TEMPLATE_ID_TAG = "aws:ec2launchtemplate:id"
TEMPLATE_VERSION_TAG = "aws:ec2launchtemplate:version"
ROLE_GROUPS = {"Master": "role_control_plane", "ControlPlane": "role_control_plane", "Node": "role_node",
               "APIServer": "role_apiserver", "Bastion": "role_bastion"}
HOSTNAME_FIELDS = {"private-ip-address": "PrivateIpAddress", "public-ip-address": "PublicIpAddress",
                   "private-dns-name": "PrivateDnsName", "instance-id": "InstanceId"}
# The same choices on GCE (providers/gce/groups' instance fields): the zonal internal DNS name, the instance's name.
GCE_HOSTNAME_FIELDS = {"private-ip-address": "private_ip", "public-ip-address": "public_ip",
                       "private-dns-name": "private_dns_name", "instance-id": "name"}
# Autoscaling members on their way out are not hosts to run on (kops ignores them too).
GONE_STATES = ("Terminating", "Terminating:Wait", "Terminating:Proceed", "Terminated", "Detaching", "Detached")
# API maxima: DescribeInstances pages of 1000, DescribeAutoScalingGroups of 100, DescribeLaunchTemplates of 200.
INSTANCE_PAGE = 1000
GROUP_PAGE = 100
TEMPLATE_PAGE = 200
NEEDS_UPDATE_GROUP = "needs_update"


def safe_group(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _tags(items):
    return {t["Key"]: t["Value"] for t in items or []}


def group_template(asg):
    """The launch template spec an autoscaling group launches from (plain or mixed-instances), or {}."""
    mixed = ((asg.get("MixedInstancesPolicy") or {}).get("LaunchTemplate") or {}).get("LaunchTemplateSpecification")
    return asg.get("LaunchTemplate") or mixed or {}


def resolve_version(spec, templates):
    """The version number (a string) an autoscaling group's template spec means: $Latest and $Default
    resolved through templates ({template id: DescribeLaunchTemplates item}); None if unknown."""
    version = spec.get("Version") or "$Default"
    template = templates.get(spec.get("LaunchTemplateId")) or {}
    if version == "$Latest":
        version = template.get("LatestVersionNumber")
    elif version == "$Default":
        version = template.get("DefaultVersionNumber")
    return None if version is None else str(version)


def memberships(asgs, templates):
    """{instance id: membership} for the live members of the cluster's autoscaling groups: the group's name,
    its template id and resolved version, and what the group reports for the instance."""
    members = {}
    for asg in asgs:
        spec = group_template(asg)
        wanted = (spec.get("LaunchTemplateId"), resolve_version(spec, templates))
        for member in asg.get("Instances") or []:
            if member.get("LifecycleState") not in GONE_STATES:
                members[member["InstanceId"]] = {"group": asg["AutoScalingGroupName"], "wanted": wanted,
                                                 "template": member.get("LaunchTemplate") or {},
                                                 "lifecycle_state": member.get("LifecycleState")}
    return members


def update_status(instance_tags, member):
    """(status, needs_update, (template id, version)) as kops' rolling update decides them.

    A member of its group needs an update when the template id:version it runs differs from the group's;
    the instance's own aws:ec2launchtemplate tags say what it was launched from (the autoscaling record as
    fallback).  An instance detached from its group (a surge) is replaced by a roll, as in kops; an instance
    that belongs to no autoscaling group of the cluster is not rolled: its need is unknown (None)."""
    if member is None:
        running = (instance_tags.get(TEMPLATE_ID_TAG), instance_tags.get(TEMPLATE_VERSION_TAG))
        if DETACHED_TAG in instance_tags:
            return "Detached", True, running
        return "NotInAutoscalingGroup", None, running
    running = (instance_tags.get(TEMPLATE_ID_TAG) or member["template"].get("LaunchTemplateId"),
               instance_tags.get(TEMPLATE_VERSION_TAG) or member["template"].get("Version"))
    needs = running != member["wanted"]
    return ("NeedsUpdate" if needs else "UpToDate"), needs, running


def instance_hosts(cluster_name, groups, instances, hostname, state_store, user, members=None, jump_host=None):
    """[(host name, {var: value}, [group names])] for the cluster's instances (pure, unit-testable).

    members: memberships(); jump_host: where SSH to hosts without a public address goes through
    (the bastion's load balancer or public name); without it, the bastion instance's public address."""
    members = members or {}
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    hosts = []
    for instance in sorted(instances, key=lambda i: i["InstanceId"]):
        tags = _tags(instance.get("Tags"))
        group = tags.get(INSTANCE_GROUP_TAG)
        if group not in roles:
            continue  # not one of the cluster's instance groups (e.g. a Karpenter node)
        name = instance.get(HOSTNAME_FIELDS[hostname])
        if not name:
            continue
        zone = (instance.get("Placement") or {}).get("AvailabilityZone")
        member = members.get(instance["InstanceId"])
        status, needs_update, (template_id, template_version) = update_status(tags, member)
        variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group, "kops_role": roles[group],
                     "kops_state_store": state_store, "kops_instance_id": instance["InstanceId"],
                     "kops_zone": zone, "kops_private_ip": instance.get("PrivateIpAddress"),
                     "kops_public_ip": instance.get("PublicIpAddress"),
                     "kops_autoscaling_group": member["group"] if member else None,
                     "kops_launch_template_id": template_id, "kops_launch_template_version": template_version,
                     "kops_group_launch_template_version": member["wanted"][1] if member else None,
                     "kops_status": status, "kops_needs_update": needs_update,
                     "ansible_host": instance.get("PublicIpAddress") or instance.get("PrivateIpAddress")}
        names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(roles[group], "role_node"),
                 "ig_" + safe_group(group)] + (["zone_" + safe_group(zone)] if zone else [])
        if needs_update:
            names.append(NEEDS_UPDATE_GROUP)
        hosts.append((name, variables, names))
    return through_bastion(hosts, user, jump_host)


def through_bastion(hosts, user, jump_host=None):
    """Hosts without a public address SSH through the bastion: jump_host, else the bastion instance's public address."""
    if jump_host is None:
        bastions = [v for _n, v, groups_of in hosts if "role_bastion" in groups_of and v["kops_public_ip"]]
        jump_host = bastions[0]["kops_public_ip"] if bastions else None
    if jump_host:
        for _name, variables, groups_of in hosts:
            if "role_bastion" not in groups_of and not variables["kops_public_ip"]:
                variables["ansible_host"] = variables["kops_private_ip"]
                variables["ansible_ssh_common_args"] = "-o ProxyJump=%s@%s" % (user, jump_host)
    return hosts


def gce_instance_hosts(cluster_name, groups, cloud_groups, hostname, state_store, user, jump_host=None):
    """[(host name, {var: value}, [group names])] for a GCE cluster, from providers/gce/groups.cloud_groups (pure).

    The instance groups' managed instance groups' instances; the instance's name is its id (the last part of
    its node's providerID).  needs_update: the template it was made from is not its manager's current one."""
    roles = {g["metadata"]["name"]: (g.get("spec") or {}).get("role") or "Node" for g in groups}
    hosts = []
    for group_name, cloud_group in sorted(cloud_groups.items()):
        if group_name not in roles:
            continue  # a manager of an instance group the state store no longer has
        current = {m["name"]: m["instance_template"] for m in cloud_group["managers"]}
        for instance in sorted(cloud_group["instances"], key=lambda i: i["name"]):
            name = instance[GCE_HOSTNAME_FIELDS[hostname]]
            if not name:
                continue
            needs_update = instance["needs_update"]
            variables = {"kops_cluster_name": cluster_name, "kops_instance_group": group_name,
                         "kops_role": roles[group_name], "kops_state_store": state_store,
                         "kops_instance_id": instance["name"], "kops_zone": instance["zone"],
                         "kops_private_ip": instance["private_ip"] or None, "kops_public_ip": instance["public_ip"] or None,
                         "kops_instance_group_manager": instance["manager"],
                         "kops_instance_template": instance["instance_template"] or None,
                         "kops_group_instance_template": current[instance["manager"]],
                         "kops_status": "NeedsUpdate" if needs_update else "UpToDate", "kops_needs_update": needs_update,
                         "ansible_host": instance["public_ip"] or instance["private_ip"]}
            names = ["kops_" + safe_group(cluster_name), ROLE_GROUPS.get(roles[group_name], "role_node"),
                     "ig_" + safe_group(group_name), "zone_" + safe_group(instance["zone"])]
            if needs_update:
                names.append(NEEDS_UPDATE_GROUP)
            hosts.append((name, variables, names))
    return through_bastion(hosts, user, jump_host)


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "kubeops.kops.kops"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(("kops.yml", "kops.yaml"))

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
        fetch = self.FETCHERS.get(cluster["spec"].get("cloudProvider"))
        if fetch is None:
            raise AnsibleError("kops inventory: cluster %s: spec.cloudProvider %r is not one this inventory reads (%s)"
                               % (cluster_name, cluster["spec"].get("cloudProvider"), ", ".join(sorted(self.FETCHERS))))
        return fetch(self, service, cluster, groups, region)

    def _gce_hosts(self, service, cluster, groups, region):
        """The managed instance groups' instances (providers/gce/groups: the day-2 verbs' reader)."""
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups as gce_groups

        cluster_name = cluster["metadata"]["name"]
        try:
            from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceError
        except ImportError as exc:
            raise AnsibleError("kops inventory: a GCE cluster needs google-auth and requests: %s" % exc)
        try:
            cloud = gce_groups.cloud(cluster_name, region, project=cluster["spec"].get("project"))
            cloud_groups = gce_groups.cloud_groups(cloud)
        except (GceError, ValueError) as exc:
            raise AnsibleError("kops inventory: %s in %s: %s" % (cluster_name, region, exc))
        bastion = (cluster["spec"].get("topology") or {}).get("bastion") or {}
        return gce_instance_hosts(cluster_name, groups, cloud_groups, self.get_option("hostname"), service.store.url(""),
                                  self.get_option("ansible_user"),
                                  bastion.get("bastionPublicName") or bastion.get("publicName") or None)

    def _aws_hosts(self, service, cluster, groups, region):
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws

        cluster_name = cluster["metadata"]["name"]
        where = "%s in %s" % (cluster_name, region)
        try:
            ec2 = aws.client("ec2", region=region, profile=self.get_option("profile"))
            autoscaling = aws.client("autoscaling", region=region, profile=self.get_option("profile"))
            by_cluster = [{"Name": "tag:KubernetesCluster", "Values": [cluster_name]}]
            asgs = aws.paginate(autoscaling, "describe_auto_scaling_groups", "AutoScalingGroups", Filters=by_cluster,
                                PaginationConfig={"PageSize": GROUP_PAGE})
            templates = self._templates(aws, ec2, by_cluster, asgs)
            instances = [i for r in aws.paginate(ec2, "describe_instances", "Reservations", PaginationConfig={
                "PageSize": INSTANCE_PAGE}, Filters=by_cluster + [{"Name": "instance-state-name", "Values": ["running"]}])
                for i in r.get("Instances") or []]
            jump_host = self._jump_host(aws, region, cluster, groups, service)
        except aws.AwsError as exc:
            raise AnsibleError("kops inventory: %s: %s" % (where, exc))
        except Exception as exc:  # botocore errors: report the cause, not a traceback
            raise AnsibleError("kops inventory: %s" % aws.describe_error(exc, "listing the instances of " + where))
        return instance_hosts(cluster_name, groups, instances, self.get_option("hostname"),
                              service.store.url(""), self.get_option("ansible_user"),
                              memberships(asgs, templates), jump_host)

    @staticmethod
    def _templates(aws, ec2, by_cluster, asgs):
        """{template id: DescribeLaunchTemplates item} for the groups' templates: one paginated call by the cluster
        tag (latest and default version numbers included), then one call for any template not tagged."""
        templates = {t["LaunchTemplateId"]: t for t in aws.paginate(
            ec2, "describe_launch_templates", "LaunchTemplates", Filters=by_cluster,
            PaginationConfig={"PageSize": TEMPLATE_PAGE})}
        untagged = sorted({group_template(g).get("LaunchTemplateId") for g in asgs} - set(templates) - {None})
        if untagged:
            templates.update((t["LaunchTemplateId"], t) for t in ec2.describe_launch_templates(
                LaunchTemplateIds=untagged)["LaunchTemplates"])
        return templates

    def _jump_host(self, aws, region, cluster, groups, service):
        """Where SSH to private hosts jumps: topology.bastion.bastionPublicName, else the DNS name of the bastion's
        load balancer (kops names it; a look-alike cluster's unique name as its store records it), else None
        (instance_hosts then uses the bastion's public address)."""
        from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import lookalike
        from ansible_collections.kubeops.kops.plugins.module_utils.tasks.aws.names import resource_name_32

        if not any((g.get("spec") or {}).get("role") == "Bastion" for g in groups):
            return None
        bastion = (cluster["spec"].get("topology") or {}).get("bastion") or {}
        if bastion.get("bastionPublicName") or bastion.get("publicName"):
            return bastion.get("bastionPublicName") or bastion.get("publicName")
        elbv2 = aws.client("elbv2", region=region, profile=self.get_option("profile"))
        try:
            unique = lookalike.read_record(service.cluster_store(cluster["metadata"]["name"])) is not None
            balancers = elbv2.describe_load_balancers(Names=[resource_name_32(cluster["metadata"]["name"], "bastion",
                                                                              unique)])
        except Exception as exc:
            if aws.error_code(exc) == "LoadBalancerNotFound":
                return None
            raise
        return (balancers.get("LoadBalancers") or [{}])[0].get("DNSName")

    FETCHERS = {"aws": _aws_hosts, "gce": _gce_hosts}

    def _populate(self, hosts):
        strict = self.get_option("strict")
        for name, variables, groups in hosts:
            for group in groups:
                self.inventory.add_group(group)
            self.inventory.add_host(name, group=groups[0])
            for group in groups[1:]:
                self.inventory.add_child(group, name)
            variables = dict(variables, ansible_user=self.get_option("ansible_user"))
            for key, value in variables.items():
                self.inventory.set_variable(name, key, value)
            self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)
