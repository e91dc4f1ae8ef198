# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""create-cluster options -> the user spec `kops create cluster` writes.

The options are kops' CreateClusterOptions, snake-cased (see
docs/create-cluster-options.md).  The result is the Cluster and the
InstanceGroups exactly as kops stores them in `<cluster>/config` and
`<cluster>/instancegroup/<name>`: after kops' PerformAssignments (network and
subnet CIDRs) but before the full completion, which update computes.
"""

from __future__ import annotations

import copy
import csv
import difflib
import io

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels
from ansible_collections.kubeops.kops.plugins.module_utils.completion import fieldpaths
from ansible_collections.kubeops.kops.plugins.module_utils.completion import instance_groups
from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, semver
from ansible_collections.kubeops.kops.plugins.module_utils.zones import ZoneError, region_of_zone
from ansible_collections.kubeops.kops.plugins.module_utils.completion import subnets as subnet_alloc
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import (
    REGION_OF_ZONE, CloudFactsError, StaticCloudFacts)
from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

MASTER, NODE, BASTION, APISERVER = (objects.ROLE_CONTROL_PLANE, objects.ROLE_NODE,
                                    objects.ROLE_BASTION, objects.ROLE_APISERVER)
DEFAULT_ACCESS = ["0.0.0.0/0", "::/0"]
DEFAULT_AWS_NETWORK_CIDR = "172.20.0.0/16"
DEFAULT_NON_MASQUERADE_CIDR = "100.64.0.0/10"

# kops --networking values -> spec.networking
NETWORKING = {
    "kubenet": {"kubenet": {}},
    "external": {"external": {}},
    "cni": {"cni": {}},
    "kopeio": {"kopeio": {}},
    "kopeio-vxlan": {"kopeio": {}},
    "flannel": {"flannel": {"backend": "vxlan"}},
    "flannel-vxlan": {"flannel": {"backend": "vxlan"}},
    "flannel-udp": {"flannel": {"backend": "udp"}},
    "calico": {"calico": {}},
    "kube-router": {"kuberouter": {}},
    "amazonvpc": {"amazonvpc": {}},
    "amazon-vpc-routed-eni": {"amazonvpc": {}},
    "cilium": {"cilium": {"enableNodePort": True}},
    "cilium-etcd": {"cilium": {"enableNodePort": True, "etcdManaged": True}},
    "cilium-eni": {"cilium": {"enableNodePort": True, "ipam": "eni"}},
    "gcp": {"gce": {}},
    "gce": {"gce": {}},
    "kindnet": {"kindnet": {}},
}
# Networking that replaces kube-proxy: kops writes kubeProxy.enabled=false at create.
NETWORKING_WITHOUT_KUBE_PROXY = ("kube-router", "cilium", "cilium-etcd", "cilium-eni")

DNS_TYPES = {"public": "Public", "private": "Private", "none": "None"}
TOPOLOGIES = ("public", "private")
# Cilium's etcd gets compaction settings kops adds to the extra "cilium" etcd cluster.
CILIUM_ETCD_ENV = [{"name": "ETCD_AUTO_COMPACTION_MODE", "value": "revision"},
                   {"name": "ETCD_AUTO_COMPACTION_RETENTION", "value": "2500"}]
# Clouds whose subnets are regional and get their ranges from the network's used CIDRs (no carving).
GCE_LIKE_NETWORKS = ("gce",)


def _str():
    return dict(type="str")


def _count():
    return dict(type="int", default=0)


def _flag():
    return dict(type="bool", default=False)


def _list(*default):
    return dict(type="list", elements="str", default=list(default))


# Every option create_cluster accepts: an Ansible argument spec (the cluster
# module's `options` suboptions, documented there), so types are checked and
# converted the same way for the module and for Python callers.  Allowed values
# are checked by the code that uses them, whose message names the option.  Keys
# are kops' CreateClusterOptions names snake-cased (conformance/kops/options-map.yaml).
OPTION_SPEC = {
    "cluster_name": _str(),
    "cloud_provider": _str(),
    "channel": dict(type="str", default=channels.DEFAULT_CHANNEL),
    "kubernetes_version": _str(),
    "config_base": _str(),
    "authorization": dict(type="str", default="RBAC"),
    "admin_access": _list(),
    "ssh_access": _list(),
    "zones": _list(),
    "control_plane_zones": _list(),
    "control_plane_count": _count(),
    "control_plane_sizes": _list(),
    "control_plane_image": _str(),
    "control_plane_volume_size": _count(),
    "control_plane_volume_type": _str(),
    "control_plane_security_groups": _list(),
    "control_plane_tenancy": _str(),
    "node_count": _count(),
    "node_sizes": _list(),
    "node_image": _str(),
    "node_volume_size": _count(),
    "node_volume_type": _str(),
    "node_security_groups": _list(),
    "node_tenancy": _str(),
    "bastion_image": _str(),
    "image": _str(),
    "networking": dict(type="str", default="cilium"),
    "network_cidrs": _list(),
    "network_id": _str(),
    "subnet_ids": _list(),
    "utility_subnet_ids": _list(),
    "topology": _str(),
    "ipv6": _flag(),
    "bastion": _flag(),
    "dns_type": _str(),
    "dns_zone": _str(),
    "egress": _str(),
    "api_load_balancer_type": _str(),
    "api_ssl_certificate": _str(),
    "api_public_name": _str(),
    "api_server_count": _count(),
    "api_server_sizes": _list(),
    "associate_public_ip": dict(type="bool"),
    "project": _str(),
    "gce_service_account": _str(),
    "discovery_store": _str(),
    "encrypt_etcd_storage": dict(type="bool"),
    "etcd_clusters": _list("main", "events"),
    "etcd_storage_type": _str(),
    "instance_manager": dict(type="str", default="cloudgroups"),
    "kubernetes_feature_gates": _list(),
    "cloud_labels": dict(type="raw"),
    "disable_subnet_tags": _flag(),
    "sets": _list(),
    "unsets": _list(),
    # Accepted like kops accepts them; kops 1.37 creates no instance groups
    # for these experimental roles yet, and neither do we.
    "etcd_count": _count(),
    "etcd_sizes": _list(),
    "kube_controller_manager_count": _count(),
    "kube_controller_manager_sizes": _list(),
    "scheduler_count": _count(),
    "scheduler_sizes": _list(),
}
OPTION_DEFAULTS = {name: spec.get("default") for name, spec in OPTION_SPEC.items()}
COUNT_OPTIONS = tuple(name for name, spec in OPTION_SPEC.items() if spec["type"] == "int")


class CreateClusterError(SpecError):
    """A bad create-cluster option: the message names the option and the fix."""


def unknown_options_message(options):
    """The error for option names create_cluster does not know, with the closest known name; None if all are known."""
    unknown = sorted(k for k in (options or {}) if k not in OPTION_SPEC)
    if not unknown:
        return None
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(str(name), list(OPTION_SPEC), n=1)
        hints.append("%s (did you mean %s?)" % (name, close[0]) if close else str(name))
    return ("unknown create-cluster option %s; the options are listed by `ansible-doc kubeops.kops.cluster` "
            "(options) and in docs/create-cluster-options.md" % ", ".join(hints))


def normalize_options(options):
    """Options checked and converted against OPTION_SPEC, defaults filled in.

    Unknown names fail with the closest known one; a value of the wrong type
    fails naming the option; lists may be given as comma-separated strings.
    """
    if options is not None and not isinstance(options, dict):
        raise CreateClusterError("cluster_options must be a mapping of create-cluster options "
                                 "(e.g. {cluster_name: k8s.example.com, zones: [eu-west-1a]}), not %r" % (options,))
    message = unknown_options_message(options)
    if message:
        raise CreateClusterError(message)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    result = ArgumentSpecValidator(OPTION_SPEC).validate(given)
    if result.error_messages:
        raise CreateClusterError("create-cluster options: %s" % "; ".join(result.error_messages))
    opt = copy.deepcopy(result.validated_parameters)
    for name in COUNT_OPTIONS:
        if opt[name] < 0:
            raise CreateClusterError("%s: must be 0 or more, not %d" % (name, opt[name]))
    return opt


def new_cluster(options, state_store=None, facts=None):
    """Return (cluster, instance_groups) for create-cluster options.

    state_store is the store URL (configBase = <store>/<cluster name>);
    facts is a CloudFacts (see cloudfacts.py) answering cloud questions.
    """
    opt = normalize_options(options)
    facts = facts or StaticCloudFacts()
    name = opt["cluster_name"]
    if not name:
        raise CreateClusterError("cluster_name is required (the cluster's DNS name, e.g. k8s.example.com)")
    check_cluster_name(name)
    if not opt["zones"]:
        raise CreateClusterError("zones: must specify at least one zone for the cluster (e.g. zones: [us-east-1a])")

    channel = channels.load_channel(opt["channel"])
    cluster = objects.new_cluster(name)
    spec = cluster["spec"]
    spec["channel"] = opt["channel"]
    spec["kubernetesVersion"] = opt["kubernetes_version"] or channel.recommended_kubernetes_version()
    _check_version(spec["kubernetesVersion"])
    spec["configBase"] = opt["config_base"] or _config_base(state_store, name)
    spec["authorization"] = _authorization(opt["authorization"])
    spec["iam"] = {"allowContainerRegistry": True, "legacy": False}
    spec["kubelet"] = {"anonymousAuth": False}
    _apply_feature_gates(spec, opt["kubernetes_feature_gates"])
    spec["kubernetesApiAccess"] = list(opt["admin_access"] or DEFAULT_ACCESS)
    spec["sshAccess"] = list(opt["ssh_access"] or spec["kubernetesApiAccess"])

    cloud = _cloud_provider(opt, spec["configBase"])
    spec["cloudProvider"] = cloud
    _setup_discovery(opt, spec, cloud)
    _setup_vpc(opt, spec, cloud, facts)
    zone_subnets = _setup_zones(opt, spec, cloud, facts)
    _setup_networking(opt, spec)
    bastions = _setup_topology(opt, spec, cloud, facts)
    control_planes = _setup_control_plane(opt, spec, cloud, zone_subnets)
    nodes = _setup_nodes(opt, spec, cloud, zone_subnets)
    apiservers = _setup_apiservers(opt, cloud, zone_subnets)
    _setup_api(opt, spec, cloud)

    groups = control_planes + apiservers + nodes + bastions
    for ig in groups:
        try:
            instance_groups.fill_new_group_defaults(cluster, ig, channel, facts, image=opt["image"])
        except instance_groups.InstanceGroupDefaultsError as exc:
            raise CreateClusterError(str(exc))
    _apply_flag_overrides(opt, spec, control_planes, nodes, groups)
    fieldpaths.unset_fields(cluster, opt["unsets"])
    fieldpaths.set_fields(cluster, opt["sets"])
    if (spec.get("networking", {}).get("calico") or {}).get("bpfEnabled"):
        spec.setdefault("kubeProxy", {}).setdefault("enabled", False)
    perform_assignments(cluster, facts)
    for ig in groups:
        ig["metadata"]["labels"] = {objects.CLUSTER_LABEL: name}
    groups.sort(key=objects.name_of)
    objects.with_cloud_from_label(cluster)  # kops names some clouds by a label (metal)
    return cluster, groups


def check_cluster_name(name):
    """kops' rule for a new cluster's name: a DNS-1123 subdomain with at least one dot."""
    if len(name) > 253 or not validation.DNS1123_SUBDOMAIN.match(name):
        raise CreateClusterError("cluster_name: %r is not a DNS name; use at most 253 lower-case letters, digits, "
                                 "'-' and '.', e.g. k8s.example.com" % (name if len(name) <= 60 else name[:57] + "...",))
    if "." not in name:
        raise CreateClusterError("cluster_name: %r must be a fully-qualified DNS name, e.g. %s.example.com"
                                 % (name, name))


def _check_version(version):
    try:
        semver.kubernetes_version(version or "")
    except ValueError:
        raise CreateClusterError("kubernetes_version: cannot parse %r (expected e.g. v1.34.2, or a build's base URL "
                                 "such as https://dl.k8s.io/release/v1.35.0)" % (version,))


def _config_base(state_store, name):
    if not state_store:
        raise CreateClusterError("state_store is required (e.g. s3://my-kops-state or file:///var/lib/kops); "
                                 "or set KOPS_STATE_STORE")
    return "%s/%s" % (state_store.rstrip("/"), name)


def _authorization(mode):
    mode = (mode or "RBAC").lower()
    if mode == "rbac":
        return {"rbac": {}}
    if mode == "alwaysallow":
        return {"alwaysAllow": {}}
    raise CreateClusterError("authorization: unknown mode %r (use RBAC or AlwaysAllow)" % mode)


def parse_feature_gate(text):
    """"+Gate"/"Gate" -> ("Gate", True); "-Gate" -> ("Gate", False)."""
    text = (text or "").strip()
    enabled = not text.startswith("-")
    gate = text.lstrip("+-").strip()
    if not gate:
        raise CreateClusterError("kubernetes_feature_gates: %r must name a feature gate (e.g. +InPlacePodVerticalScaling)"
                                 % text)
    return gate, enabled


def _apply_feature_gates(spec, gates):
    if not gates:
        return
    parsed = dict(parse_feature_gate(g) for g in gates)
    values = {gate: "true" if on else "false" for gate, on in parsed.items()}
    for component in ("kubelet", "kubeAPIServer", "kubeControllerManager", "kubeProxy", "kubeScheduler"):
        spec.setdefault(component, {})["featureGates"] = dict(values)


def _cloud_provider(opt, config_base):
    cloud = opt["cloud_provider"]
    if not cloud:
        # kops guesses the cloud from the store's scheme: the cloud whose storage it is (Provider.store_scheme).
        schemes = {c: provider_names.declared_value(c, "store_scheme", None) for c in provider_names.names()}
        cloud = next((c for c, scheme in schemes.items() if scheme and config_base.startswith(scheme)), None)
        if not cloud:
            raise CreateClusterError("cloud_provider: cannot guess the cloud from the state store %r; "
                                     "set cloud_provider to one of: %s" % (config_base, ", ".join(provider_names.names())))
    if cloud not in provider_names.names():  # the clouds with a package under providers/
        raise CreateClusterError("cloud_provider: %r is not supported (use one of: %s)"
                                 % (cloud, ", ".join(provider_names.names())))
    return cloud


def _setup_discovery(opt, spec, cloud):
    if not opt["discovery_store"]:
        return
    discovery = {"discoveryStore": "%s/%s" % (opt["discovery_store"].rstrip("/"), opt["cluster_name"])}
    if cloud == "aws":
        discovery["enableAWSOIDCProvider"] = True
        spec["iam"]["useServiceAccountExternalPermissions"] = True
    spec["serviceAccountIssuerDiscovery"] = discovery


def _setup_vpc(opt, spec, cloud, facts):
    if opt["network_id"]:
        spec["networkID"] = opt["network_id"]
    if cloud == "aws":
        if not opt["network_id"] and opt["subnet_ids"]:
            spec["networkID"] = _fact(facts.subnet, opt["subnet_ids"][0], "subnet_ids").get("vpc")
            if not spec["networkID"]:
                raise CreateClusterError("subnet_ids: cannot determine the VPC of subnet %s; set network_id"
                                         % opt["subnet_ids"][0])
    elif cloud == "gce":
        spec["cloudConfig"] = {}
        if opt["project"]:
            spec["project"] = opt["project"]
        if opt["gce_service_account"]:
            spec["cloudConfig"]["gceServiceAccount"] = opt["gce_service_account"]


def _fact(lookup, key, option):
    try:
        return lookup(key)
    except CloudFactsError as exc:
        raise CreateClusterError("%s: %s" % (option, exc))


def _region(cloud, zone, option="zones"):
    try:
        return REGION_OF_ZONE[cloud](zone) if cloud in REGION_OF_ZONE else region_of_zone(cloud, zone)
    except (CloudFactsError, ZoneError) as exc:
        raise CreateClusterError("%s: %s" % (option, exc))


def _all_zones(opt):
    return sorted(set(opt["zones"]) | set(opt["control_plane_zones"]))


def _one_region(opt, cloud):
    """kops: clusters cannot span regions.  Said before anything is asked of a region: the machine types of the
    other region's zones would otherwise be reported as not offered."""
    by_region = {}
    for zone in _all_zones(opt):
        by_region.setdefault(_region(cloud, zone), []).append(zone)
    if len(by_region) > 1:
        raise CreateClusterError("zones: %s are in %d regions (%s); a cluster lives in one region: use zones of one "
                                 "region" % (", ".join(_all_zones(opt)), len(by_region),
                                             "; ".join("%s: %s" % (region, ", ".join(zones))
                                                       for region, zones in sorted(by_region.items()))))


def _zone_to_subnet_ids(opt, spec, facts, ids, option):
    """Map each zone to the one given subnet id in it (kops: two subnets in a zone is an error)."""
    result = {}
    for subnet_id in ids:
        info = _fact(facts.subnet, subnet_id, option)
        if spec.get("networkID") and info.get("vpc") and info["vpc"] != spec["networkID"]:
            raise CreateClusterError("%s: subnet %s not found in VPC %s" % (option, subnet_id, spec["networkID"]))
        zone = info.get("zone")
        if zone in result:
            raise CreateClusterError("%s: subnet %s and %s have the same zone" % (option, subnet_id, result[zone]))
        result[zone] = subnet_id
    return result


def _setup_zones(opt, spec, cloud, facts):
    """Create the subnets (one per zone on AWS, one per region on GCE) and map zone -> subnets."""
    subnets = spec.setdefault("subnets", [])
    by_name = {}
    zone_subnets = {}

    def add(subnet):
        if subnet["name"] not in by_name:
            by_name[subnet["name"]] = subnet
            subnets.append(subnet)
        return by_name[subnet["name"]]

    _one_region(opt, cloud)
    if cloud == "gce":
        if len(opt["subnet_ids"]) > 1:
            raise CreateClusterError("subnet_ids: expected exactly one subnet for GCE, got %d" % len(opt["subnet_ids"]))
        for zone in _all_zones(opt):
            region = _region(cloud, zone)
            subnet = {"name": region, "region": region}
            if opt["subnet_ids"]:
                subnet["id"] = opt["subnet_ids"][0]
            zone_subnets.setdefault(zone, []).append(add(subnet))
        return zone_subnets

    ids = _zone_to_subnet_ids(opt, spec, facts, opt["subnet_ids"], "subnet_ids") if opt["subnet_ids"] else {}
    for zone in _all_zones(opt):
        _region(cloud, zone)
        subnet = {"name": zone, "zone": zone}
        if opt["egress"]:
            subnet["egress"] = opt["egress"]
        if zone in ids:
            subnet["id"] = ids[zone]
        zone_subnets.setdefault(zone, []).append(add(subnet))
    for index, cidr in enumerate(opt["network_cidrs"][1:]):
        zone = opt["zones"][index % len(opt["zones"])]
        subnet = {"name": "%s-%d" % (zone, index + 1), "zone": zone, "cidr": cidr}
        if opt["egress"]:
            subnet["egress"] = opt["egress"]
        if zone in ids:
            subnet["id"] = ids[zone]
        zone_subnets.setdefault(zone, []).append(add(subnet))
    return zone_subnets


def _setup_networking(opt, spec):
    choice = opt["networking"] or "cilium"
    if choice not in NETWORKING:
        raise CreateClusterError("networking: unknown networking mode %r (use one of: %s)"
                                 % (choice, ", ".join(sorted(NETWORKING))))
    spec["networking"] = copy.deepcopy(NETWORKING[choice])
    if choice in NETWORKING_WITHOUT_KUBE_PROXY:
        spec.setdefault("kubeProxy", {})["enabled"] = False


def _topology(opt):
    topology = (opt["topology"] or ("private" if opt["ipv6"] else "public")).lower()
    if topology not in TOPOLOGIES:
        raise CreateClusterError("topology: invalid topology %r (use public or private)" % opt["topology"])
    return topology


def _dns_type(opt):
    if not opt["dns_type"]:
        return "Public" if opt["dns_zone"] else "None"
    dns = DNS_TYPES.get(str(opt["dns_type"]).lower())
    if not dns:
        raise CreateClusterError("dns_type: unknown DNS type %r (use public, private or none)" % opt["dns_type"])
    return dns


def _new_group(name, role, min_size=None, max_size=None):
    ig = objects.new_instance_group("", name)
    ig["metadata"].pop("labels")
    if min_size is not None:
        ig["spec"]["minSize"] = min_size
    if max_size is not None:
        ig["spec"]["maxSize"] = max_size
    ig["spec"]["role"] = role
    return ig


def _setup_topology(opt, spec, cloud, facts):
    topology = _topology(opt)
    spec["topology"] = {"dns": {"type": _dns_type(opt)}}
    subnets = spec["subnets"]
    bastions = []
    if topology == "public":
        if opt["bastion"]:
            raise CreateClusterError("bastion: a bastion needs topology: private")
        for subnet in subnets:
            subnet["type"] = "Public"
    else:
        if "kubenet" in spec["networking"]:
            raise CreateClusterError("networking: kubenet does not support private topology; choose e.g. cilium or calico")
        for subnet in subnets:
            subnet["type"] = "Private"
        utility_ids = {}
        if opt["utility_subnet_ids"] and cloud == "aws":
            utility_ids = _zone_to_subnet_ids(opt, spec, facts, opt["utility_subnet_ids"], "utility_subnet_ids")
        private = [s for s in subnets if s["type"] == "Private"]
        if opt["ipv6"]:
            subnets.extend(_derived_subnet(s, "dualstack-", "DualStack", utility_ids) for s in private)
        if cloud != "gce":
            subnets.extend(_derived_subnet(s, "utility-", "Utility", utility_ids)
                           for s in [s for s in subnets if s["type"] == "Private"])
        if opt["bastion"]:
            bastion = _new_group("bastions", BASTION, 1, 1)
            if spec["topology"]["dns"]["type"] != "None":
                spec["topology"]["bastion"] = {"bastionPublicName": "bastion." + opt["cluster_name"]}
            if opt["ipv6"]:
                bastion["spec"]["subnets"] = [s["name"] for s in subnets if s["type"] == "DualStack"]
            if cloud == "gce":
                bastion["spec"]["zones"] = _all_zones(opt)
            if opt["bastion_image"]:
                bastion["spec"]["image"] = opt["bastion_image"]
            bastions.append(bastion)
    if opt["ipv6"]:
        if cloud != "aws":
            raise CreateClusterError("ipv6: IPv6 clusters are supported on AWS only")
        spec["nonMasqueradeCIDR"] = "::/0"
        spec["cloudControllerManager"] = {}
        for index, subnet in enumerate(subnets):
            subnet["ipv6CIDR"] = "/64#%x" % index
    return bastions


def _derived_subnet(private, prefix, kind, ids):
    subnet = {"name": prefix + private["name"], "type": kind}
    for key in ("zone", "region"):
        if private.get(key):
            subnet[key] = private[key]
    if private.get("zone") in ids:
        subnet["id"] = ids[private["zone"]]
    return subnet


def _setup_control_plane(opt, spec, cloud, zone_subnets):
    count = int(opt["control_plane_count"] or 0)
    zones = list(opt["control_plane_zones"])
    if zones:
        if count and count < len(zones):
            raise CreateClusterError("control_plane_count: specified %d control-plane zones, but also requested %d "
                                     "control-plane nodes; if specifying both, the count should match"
                                     % (len(zones), count))
        count = count or len(zones)
    else:
        zones = list(opt["zones"])
        count = count or 1
    groups = []
    for index in range(count):
        zone = zones[index % len(zones)]
        name = zone + ("-%d" % (1 + index // len(zones)) if count > len(zones) else "")
        ig = _new_group("control-plane-" + name, MASTER, 1, 1)
        main_subnet = zone_subnets[zone][0]["name"]
        ig["spec"]["subnets"] = ["dualstack-" + main_subnet if opt["ipv6"] and _topology(opt) == "private"
                                 else main_subnet]
        if cloud == "gce":
            ig["spec"]["zones"] = [zone]
        _apply_sizes(ig, opt["control_plane_sizes"], cloud)
        if opt["control_plane_image"]:
            ig["spec"]["image"] = opt["control_plane_image"]
        groups.append(ig)
    spec["etcdClusters"] = [_etcd_cluster(name, groups, _encrypt_etcd(opt, cloud), opt["etcd_storage_type"])
                            for name in _etcd_cluster_names(opt)]
    return groups


def _etcd_cluster_names(opt):
    names = list(opt["etcd_clusters"])
    if opt["networking"] == "cilium-etcd":
        names.append("cilium")
    return names


def _encrypt_etcd(opt, cloud):
    if opt["encrypt_etcd_storage"] is not None:
        return bool(opt["encrypt_etcd_storage"])
    return cloud == "aws"


def etcd_member_names(group_names):
    """kops' member names: drop the control-plane- prefix, then the common prefix; digits get etcd-."""
    names = [n[len("control-plane-"):] if n.startswith("control-plane-") else
             n[len("master-"):] if n.startswith("master-") else n for n in group_names]
    while names and len(names[0]) > 1 and all(n.startswith(names[0][0]) for n in names):
        names = [n[1:] for n in names]
    return ["etcd-" + n if n[:1].isdigit() else n for n in names]


def _etcd_cluster(name, control_planes, encrypted, storage_type):
    cluster = {
        "name": name,
        "manager": {"backupRetentionDays": 90},
        "cpuRequest": "200m" if name == "main" else "100m",
        "memoryRequest": "100Mi",
        "etcdMembers": [],
    }
    for member, ig in zip(etcd_member_names([objects.name_of(g) for g in control_planes]), control_planes):
        entry = {"name": member, "instanceGroup": objects.name_of(ig)}
        if encrypted:
            entry["encryptedVolume"] = True
        if storage_type:
            entry["volumeType"] = storage_type
        cluster["etcdMembers"].append(entry)
    if name == "cilium":
        cluster["manager"]["env"] = copy.deepcopy(CILIUM_ETCD_ENV)
    return cluster


def _apply_sizes(ig, sizes, cloud, mixed=True):
    if not sizes:
        return
    ig["spec"]["machineType"] = sizes[0]
    if mixed and cloud == "aws" and len(sizes) > 1:
        ig["spec"]["mixedInstancesPolicy"] = {"instances": list(sizes)}


def _split_count(total, buckets):
    per, remainder = divmod(total, buckets)
    return [per + (1 if i < remainder else 0) for i in range(buckets)]


def _setup_nodes(opt, spec, cloud, zone_subnets):
    manager = opt["instance_manager"]
    if manager == "karpenter":
        if not opt["discovery_store"]:
            raise CreateClusterError("instance_manager: karpenter requires discovery_store")
        spec["karpenter"] = {"enabled": True}
        ig = _new_group("nodes", NODE)
        ig["spec"]["manager"] = "Karpenter"
        if opt["node_count"]:
            ig["spec"]["minSize"] = int(opt["node_count"])
        _apply_sizes(ig, opt["node_sizes"], "aws")
        return [ig]
    if manager != "cloudgroups":
        raise CreateClusterError("instance_manager: invalid value %r (use cloudgroups or karpenter)" % manager)
    zones = opt["zones"]
    groups = []
    for zone, count in zip(zones, _split_count(int(opt["node_count"] or len(zones)), len(zones))):
        ig = _new_group("nodes-" + zone, NODE, count, count)
        in_zone = zone_subnets[zone]
        # The main subnet may be smaller and is kept for the control plane.
        ig["spec"]["subnets"] = [s["name"] for s in (in_zone if len(in_zone) == 1 else in_zone[1:])]
        if cloud == "gce":
            ig["spec"]["zones"] = [zone]
        _apply_sizes(ig, opt["node_sizes"], cloud)
        if opt["node_image"]:
            ig["spec"]["image"] = opt["node_image"]
        groups.append(ig)
    return groups


def _setup_apiservers(opt, cloud, zone_subnets):
    total = int(opt["api_server_count"] or 0)
    if not total:
        return []
    if len(opt["api_server_sizes"]) > 1:
        raise CreateClusterError("api_server_sizes: multiple machine types for an API server group are not supported")
    groups = []
    for zone, count in zip(opt["zones"], _split_count(total, len(opt["zones"]))):
        ig = _new_group("apiserver-" + zone, APISERVER, count, count)
        ig["spec"]["subnets"] = [s["name"] for s in zone_subnets[zone]]
        if cloud == "gce":
            ig["spec"]["zones"] = [zone]
        _apply_sizes(ig, opt["api_server_sizes"], cloud, mixed=False)
        groups.append(ig)
    return groups


def _setup_api(opt, spec, cloud):
    api = spec.setdefault("api", {})
    lb_type = opt["api_load_balancer_type"]
    if lb_type or opt["api_ssl_certificate"] or _topology(opt) == "private" or spec["topology"]["dns"]["type"] == "None":
        types = {None: "Public", "": "Public", "public": "Public", "internal": "Internal"}
        if (lb_type or "").lower() not in types:
            raise CreateClusterError("api_load_balancer_type: unknown type %r (use public or internal)" % lb_type)
        api["loadBalancer"] = {"type": types[(lb_type or "").lower()]}
        if opt["api_ssl_certificate"]:
            api["loadBalancer"]["sslCertificate"] = opt["api_ssl_certificate"]
        if cloud == "aws":
            api["loadBalancer"]["class"] = "Network"
    else:
        api["dns"] = {}


def parse_cloud_labels(text):
    """kops' --cloud-labels: "k=v,k2=v2", values may be double-quoted (and contain , or =)."""
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    records = text.replace(",", "\n")
    labels = {}
    try:
        for row in csv.reader(io.StringIO(records), delimiter="=", skipinitialspace=True, strict=True):
            if not row:
                continue
            if len(row) != 2:
                raise SpecError("expected key=value, got %r" % "=".join(row))
            labels[row[0]] = row[1]
    except (csv.Error, ValueError) as exc:
        raise CreateClusterError("cloud_labels: one or more key=value pairs are malformed: %s" % exc)
    return labels


def _apply_flag_overrides(opt, spec, control_planes, nodes, groups):
    """What kops' create command sets after NewCluster (cmd/kops/create_cluster.go)."""
    if opt["cloud_labels"]:
        labels = parse_cloud_labels(opt["cloud_labels"])
        if labels:
            spec["cloudLabels"] = labels
    if opt["associate_public_ip"] is not None:
        for ig in groups:
            ig["spec"]["associatePublicIp"] = bool(opt["associate_public_ip"])
    per_role = (
        (control_planes, "tenancy", opt["control_plane_tenancy"]),
        (nodes, "tenancy", opt["node_tenancy"]),
        (nodes, "additionalSecurityGroups", list(opt["node_security_groups"]) or None),
        (control_planes, "additionalSecurityGroups", list(opt["control_plane_security_groups"]) or None),
        (control_planes, "rootVolumeSize", int(opt["control_plane_volume_size"] or 0) or None),
        (control_planes, "rootVolumeType", opt["control_plane_volume_type"]),
        (nodes, "rootVolumeSize", int(opt["node_volume_size"] or 0) or None),
        (nodes, "rootVolumeType", opt["node_volume_type"]),
    )
    for targets, field, value in per_role:
        if value:
            for ig in targets:
                ig["spec"][field] = copy.deepcopy(value)
    if opt["dns_zone"]:
        spec["dnsZone"] = opt["dns_zone"]
    if opt["network_cidrs"]:
        spec["networkCIDR"] = opt["network_cidrs"][0]
        if opt["network_cidrs"][1:]:
            spec["additionalNetworkCIDRs"] = list(opt["network_cidrs"][1:])
    if opt["disable_subnet_tags"]:
        spec["tagSubnets"] = False
    if opt["api_public_name"]:
        spec["masterPublicName"] = opt["api_public_name"]


def perform_assignments(cluster, facts):
    """kops' PerformAssignments: network CIDR, non-masquerade CIDR, API name, subnet CIDRs."""
    spec = cluster["spec"]
    cloud = spec.get("cloudProvider")
    for etcd in spec.get("etcdClusters") or []:
        etcd.setdefault("manager", {}).setdefault("backupRetentionDays", 90)
    spec.setdefault("topology", {})
    try:
        if cloud == "gce":
            _gce_network_assignments(spec, facts)
        if cloud == "aws" and not spec.get("networkCIDR"):
            spec["networkCIDR"] = (_fact(facts.vpc_cidr, spec["networkID"], "network_id")
                                   if spec.get("networkID") else DEFAULT_AWS_NETWORK_CIDR)
            if "amazonvpc" in spec.get("networking", {}) and spec.get("nonMasqueradeCIDR") != "::/0":
                spec["nonMasqueradeCIDR"] = spec["networkCIDR"]
        spec.setdefault("nonMasqueradeCIDR", DEFAULT_NON_MASQUERADE_CIDR)
        if (spec["topology"].get("dns") or {}).get("type", "Public") == "Public" and not spec.get("masterPublicName"):
            spec["masterPublicName"] = "api." + objects.name_of(cluster)
        if cloud == "aws":
            subnet_alloc.fill_shared_subnets(spec, facts)
        if cloud not in GCE_LIKE_NETWORKS and provider_names.declared_value(cloud, "assigns_network_cidrs", True):
            # kops carves the subnets from the network CIDR on every cloud whose subnets are zonal (AWS, OpenStack,
            # Azure); a cloud added as a package (providers/<cloud>/) gets the same, from kops' default network,
            # unless it declares otherwise (metal: no CIDRs).
            if cloud != "aws" and not spec.get("networkCIDR"):
                spec["networkCIDR"] = DEFAULT_AWS_NETWORK_CIDR
            subnet_alloc.allocate_subnet_cidrs(spec)
    except subnet_alloc.AllocationError as exc:
        raise CreateClusterError(str(exc))


def _gce_network_assignments(spec, facts):
    used = facts.used_gce_cidrs(spec.get("networkID"))
    if "gce" in spec.get("networking", {}) or "kindnet" in spec.get("networking", {}):
        _gce_ip_alias_assignments(spec, used)
    else:
        subnet_alloc.allocate_gce_subnet_cidrs(spec, used)


def _gce_ip_alias_assignments(spec, used):
    """IP aliases: pods /14, services /16, nodes /19, all from 10.0.0.0/8."""
    subnets = spec.get("subnets") or []
    if len(subnets) != 1:
        raise CreateClusterError("zones: GCE IP-alias networking needs exactly one subnet (one region)")
    if spec.get("podCIDR") and spec.get("serviceClusterIPRange") and subnets[0].get("cidr"):
        return
    import ipaddress
    pool = ipaddress.ip_network(subnet_alloc.GCE_SUBNET_RANGE)
    taken = [ipaddress.ip_network(c, strict=False) for c in used]

    def allocate(prefix):
        candidates = pool.subnets(new_prefix=prefix)
        next(candidates)
        for candidate in candidates:
            if not any(candidate.overlaps(t) for t in taken):
                taken.append(candidate)
                return str(candidate)
        raise CreateClusterError("no free /%d left in %s" % (prefix, pool))

    spec["podCIDR"] = allocate(14)
    spec["serviceClusterIPRange"] = allocate(16)
    subnets[0]["cidr"] = allocate(19)
    spec["nonMasqueradeCIDR"] = str(pool)
