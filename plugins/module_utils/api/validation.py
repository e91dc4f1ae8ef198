# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' semantic validation rules (pkg/apis/kops/validation), on v1alpha2 dicts.

Every rule returns FieldErrors naming the field path, what is wrong and what
would be valid.  deep_validate() checks a cluster with its instance groups;
strict=True is for a completed spec, which must have every default filled.
"""

from __future__ import annotations

import ipaddress
import json
import re

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation_aws
from ansible_collections.kubeops.kops.plugins.module_utils import provider_names, semver, zones
from ansible_collections.kubeops.kops.plugins.module_utils.kops_version import KOPS_VERSION

OLDEST_SUPPORTED_KUBERNETES = "1.32.0"
MINIMUM_CONTAINERD = "2.1.0"
CLOUDS = ("aws", "gce", "azure", "digitalocean", "hetzner", "openstack", "scaleway", "linode", "metal")
DNS_TYPES = ("Public", "Private", "None")
# The DNS types of kops' clouds this collection has no package for (a package declares its own:
# Provider.dns_types); any other kops cloud takes None only.
DNS_TYPES_BY_CLOUD = {"openstack": DNS_TYPES, "digitalocean": ("None", "Public"), "scaleway": ("None", "Public")}
ETCD_CLUSTER_NAMES = ("main", "events", "cilium", "leases")
SUBNET_TYPES = ("Public", "Private", "Utility", "DualStack")
EGRESS_PREFIXES = ("nat-", "eipalloc-", "i-", "tgw-")
LB_TYPES = ("Public", "Internal")
NETWORKING_PLUGINS = ("cni", "cilium", "calico", "flannel", "kubenet", "amazonvpc", "kuberouter", "kindnet",
                      "gce", "external", "kopeio")
REMOVED_NETWORKING = {"classic": "removed", "weave": "removed in kOps 1.29", "romana": "removed",
                      "lyftvpc": "removed", "canal": "removed in kOps 1.28"}
NETWORKING_WITHOUT_IPV6 = ("kubenet", "flannel", "kopeio", "kuberouter", "amazonvpc")
AWS_ONLY_NETWORKING = ("amazonvpc",)
RESERVED_CLOUD_LABELS = ("Name", "KubernetesCluster")
RESERVED_CLOUD_LABEL_PREFIXES = ("kubernetes.io/cluster/", "k8s.io/role/", "kops.k8s.io/")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
UPDATE_POLICIES = ("automatic", "external")
FILESYSTEMS = ("ext4", "xfs", "btrfs")
USER_DATA_TYPES = ("text/x-include-once-url", "text/x-include-url", "text/cloud-config-archive", "text/upstart-job",
                   "text/cloud-config", "text/part-handler", "text/x-shellscript", "text/cloud-boothook")
# Containerd package overrides come as (url, hash) pairs per architecture.
PACKAGE_PAIRS = (("urlAmd64", "hashAmd64"), ("urlArm64", "hashArm64"))
INT_OR_PERCENT = re.compile(r"^-?\d+%?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
IPV6_SUBNET_SHORTHAND = re.compile(r"^/\d+#[0-9a-fA-F]+$")
# Fields a completed (strict) spec must have.
STRICT_CLUSTER_FIELDS = ("kubelet", "masterKubelet", "kubeControllerManager", "kubeDNS", "kubeScheduler",
                         "kubeAPIServer", "kubeProxy", "podCIDR", "serviceClusterIPRange")


# -- small helpers -------------------------------------------------------------

def _net(value):
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        return None


def _cidr(path, value, problems, detail="must be a CIDR such as 172.20.0.0/16"):
    network = _net(value)
    if network is None:
        problems.append(errors.invalid(path, value, detail))
    return network


def _contains(outer, inner):
    return outer is not None and inner is not None and outer.version == inner.version and inner.subnet_of(outer)


def _overlaps(left, right):
    return left is not None and right is not None and left.version == right.version and left.overlaps(right)


def _dns_type(spec):
    return ((spec.get("topology") or {}).get("dns") or {}).get("type") or "Public"


def _networking(spec):
    return spec.get("networking") or {}


def _is_ipv6(spec):
    return spec.get("nonMasqueradeCIDR") == "::/0"


# -- cluster -------------------------------------------------------------------

def validate_cluster(cluster, strict=False, facts=None):
    """kops' ValidateCluster; facts (cloud facts) answer which zones a region has, else a static table does."""
    problems = []
    spec = cluster.get("spec") or {}
    _check_name(cluster, spec, problems)
    _check_version(spec, problems)
    _check_cloud(spec, problems)
    if not isinstance(spec.get("cloudProvider"), (str, type(None))):
        raise errors.ValidationError(problems, subject="cluster")  # the checks below key on the cloud's name
    _check_dns(cluster, spec, problems)
    _check_network_cidrs(spec, problems, strict)
    _check_subnets(spec, problems, strict)
    if spec.get("cloudProvider") == "aws":
        problems.extend(validation_aws.validate_zones(spec, facts))
    _check_etcd(spec, problems)
    _check_networking(spec, problems)
    _check_access(spec, problems)
    _check_api(spec, problems)
    _check_components(spec, problems)
    _check_iam(spec, problems)
    _check_misc(spec, problems)
    if strict:
        for field in STRICT_CLUSTER_FIELDS:
            # IPv6 clusters have no podCIDR: kops-controller hands each node a prefix of its subnet.
            if not spec.get(field) and not (field == "podCIDR" and _is_ipv6(spec)):
                problems.append(errors.required("spec.%s" % field, "a completed spec must set it"))
    return problems


def _check_name(cluster, spec, problems):
    name = objects.name_of(cluster)
    if not name:
        problems.append(errors.required("metadata.name", "the cluster name (a DNS name such as k8s.example.com)"))
        return
    if len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        problems.append(errors.invalid("metadata.name", name, "must be a DNS-1123 subdomain: lower case "
                                       "letters, digits, '-' and '.', starting and ending with a letter or digit"))
    elif "." not in name and _dns_type(spec) != "None":
        problems.append(errors.invalid("metadata.name", name, "must be a fully-qualified DNS name (e.g. "
                                       "k8s.example.com), or set spec.topology.dns.type: None"))
    if name.endswith(".k8s.local") and _dns_type(spec) != "None":
        problems.append(errors.forbidden("spec.topology.dns.type", "gossip DNS support was removed in kOps 1.37; "
                                         "clusters named *.k8s.local must use dns type None"))
    for field in ("gossipConfig", "dnsControllerGossipConfig"):
        if spec.get(field):
            problems.append(errors.forbidden("spec.%s" % field, "gossip was removed in kOps 1.37; remove this field"))


def _check_version(spec, problems):
    version = spec.get("kubernetesVersion")
    if not version:
        problems.append(errors.required("spec.kubernetesVersion", "e.g. v1.34.2"))
        return
    try:
        # A version, or the base URL of a build whose path names it (kops' side-loading, CI builds).
        parsed = semver.kubernetes_version(version)
    except ValueError:
        parsed = None
    if parsed is None:
        problems.append(errors.invalid("spec.kubernetesVersion", version,
                                       "unable to determine kubernetes version; expected e.g. v1.34.2, or a build's "
                                       "base URL such as https://dl.k8s.io/release/v1.35.0"))
    elif parsed < semver.parse(OLDEST_SUPPORTED_KUBERNETES):
        problems.append(errors.invalid("spec.kubernetesVersion", version, "kOps 1.37 supports Kubernetes %s and "
                                       "newer; upgrade the cluster with an older kOps first" % OLDEST_SUPPORTED_KUBERNETES))
    elif parsed[:2] > semver.parse(KOPS_VERSION)[:2]:
        # kops refuses a Kubernetes minor above its own ("not yet supported; upgrading kops is required").
        kops = semver.parse(KOPS_VERSION)
        problems.append(errors.invalid("spec.kubernetesVersion", version, "kOps %d.%d supports Kubernetes up to "
                                       "%d.%d.x; use a version the channel recommends (or omit it)"
                                       % (kops.major, kops.minor, kops.major, kops.minor)))


def _check_cloud(spec, problems):
    objects.refuse_unbuilt_cloud({"kind": objects.CLUSTER, "spec": spec})
    cloud = spec.get("cloudProvider")
    # kops' clouds, and any cloud this collection has a package for (providers/<cloud>/).
    clouds = CLOUDS + tuple(c for c in provider_names.names() if c not in CLOUDS)
    if not isinstance(cloud, (str, type(None))):
        problems.append(errors.invalid("spec.cloudProvider", cloud, "a string, one of: %s" % ", ".join(clouds)))
    elif not cloud:
        problems.append(errors.required("spec.cloudProvider", "one of: %s" % ", ".join(clouds)))
    elif cloud not in clouds:
        problems.append(errors.unsupported("spec.cloudProvider", cloud, clouds))


def _check_dns(cluster, spec, problems):
    dns = _dns_type(spec)
    if dns not in DNS_TYPES:
        problems.append(errors.unsupported("spec.topology.dns.type", dns, DNS_TYPES))
        return
    allowed = provider_names.declared_value(spec.get("cloudProvider"), "dns_types", None) or \
        DNS_TYPES_BY_CLOUD.get(spec.get("cloudProvider"), ("None",))
    if spec.get("cloudProvider") in CLOUDS and dns not in allowed:
        problems.append(errors.unsupported("spec.topology.dns.type", dns, allowed,
                                           "not supported on %s" % spec.get("cloudProvider")))


def _check_network_cidrs(spec, problems, strict):
    cloud = spec.get("cloudProvider")
    network = None
    if spec.get("networkCIDR"):
        if cloud == "gce":
            problems.append(errors.forbidden("spec.networkCIDR", "networkCIDR is not used on GCE (subnets are "
                                             "regional); remove it"))
        network = _cidr("spec.networkCIDR", spec["networkCIDR"], problems)
    elif cloud == "aws" and strict:
        problems.append(errors.required("spec.networkCIDR", "the VPC CIDR, e.g. 172.20.0.0/16"))
    extras = []
    for index, cidr in enumerate(spec.get("additionalNetworkCIDRs") or []):
        path = "spec.additionalNetworkCIDRs[%d]" % index
        if cloud == "gce":
            problems.append(errors.forbidden(path, "additional network CIDRs are not supported on GCE"))
        extra = _cidr(path, cidr, problems)
        if _overlaps(extra, network):
            problems.append(errors.invalid(path, cidr, "overlaps the networkCIDR %s" % network))
        extras.append(extra)

    nmc = None
    if spec.get("nonMasqueradeCIDR"):
        nmc = _cidr("spec.nonMasqueradeCIDR", spec["nonMasqueradeCIDR"], problems)
        if nmc is not None and nmc.version == 6 and str(nmc) != "::/0":
            problems.append(errors.invalid("spec.nonMasqueradeCIDR", spec["nonMasqueradeCIDR"],
                                           "an IPv6 nonMasqueradeCIDR must be ::/0"))
        exempt = "amazonvpc" in _networking(spec) or ((_networking(spec).get("cilium") or {}).get("ipam") == "eni")
        if not exempt and nmc is not None and nmc.version == 4:
            for path, other in [("spec.networkCIDR", network)] + [
                    ("spec.additionalNetworkCIDRs[%d]" % i, e) for i, e in enumerate(extras)]:
                if _overlaps(nmc, other):
                    problems.append(errors.invalid("spec.nonMasqueradeCIDR", spec["nonMasqueradeCIDR"],
                                                   "must not overlap %s (%s); pods and services would clash with "
                                                   "the VPC" % (path, other)))
    elif strict:
        problems.append(errors.required("spec.nonMasqueradeCIDR", "e.g. 100.64.0.0/10"))

    if spec.get("podCIDR"):
        pod = _cidr("spec.podCIDR", spec["podCIDR"], problems)
        if nmc is not None and pod is not None and nmc.version == pod.version and not _contains(nmc, pod):
            problems.append(errors.invalid("spec.podCIDR", spec["podCIDR"],
                                           "must be inside the nonMasqueradeCIDR %s" % nmc))
    if spec.get("serviceClusterIPRange"):
        # kops does not ask the service range to lie inside the nonMasqueradeCIDR: with amazonvpc the
        # nonMasqueradeCIDR is the VPC's and services keep 100.64.0.0/13.
        _cidr("spec.serviceClusterIPRange", spec["serviceClusterIPRange"], problems)


def _check_subnets(spec, problems, strict):
    subnets = spec.get("subnets") or []
    cloud = spec.get("cloudProvider")
    if not subnets:
        problems.append(errors.required("spec.subnets", "must configure at least one subnet (use zones)"))
        return
    network = _net(spec.get("networkCIDR")) if spec.get("networkCIDR") else None
    extras = [_net(c) for c in spec.get("additionalNetworkCIDRs") or []]
    pod = _net(spec.get("podCIDR")) if spec.get("podCIDR") else None
    service = _net(spec.get("serviceClusterIPRange")) if spec.get("serviceClusterIPRange") else None
    names = {}
    with_id = [bool(s.get("id")) for s in subnets]
    if any(with_id) and not all(with_id):
        problems.append(errors.forbidden("spec.subnets", "cannot mix subnets with specified ID and unspecified ID; "
                                         "give every subnet an id (shared VPC) or none"))
    regions = set()
    seen_cidrs = []
    for index, subnet in enumerate(subnets):
        path = "spec.subnets[%d]" % index
        name = subnet.get("name")
        if not name:
            problems.append(errors.required(path + ".name", "each subnet needs a name"))
        elif name in names:
            problems.append(errors.duplicate(path + ".name", name, "subnet names must be unique"))
        names[name] = index
        kind = subnet.get("type")
        if kind not in SUBNET_TYPES:
            problems.append(errors.unsupported(path + ".type", kind, SUBNET_TYPES))
        elif kind == "DualStack" and not _is_ipv6(spec):
            problems.append(errors.forbidden(path + ".type", "DualStack subnets are only for IPv6 clusters "
                                             "(nonMasqueradeCIDR ::/0)"))
        if cloud == "aws" and not subnet.get("zone") and not subnet.get("id"):
            problems.append(errors.required(path + ".zone", "the availability zone of the subnet, e.g. us-east-1a"))
        if cloud == "gce":
            if not subnet.get("region"):
                problems.append(errors.required(path + ".region", "GCE subnets are regional, e.g. us-central1"))
            regions.add(subnet.get("region"))
        elif subnet.get("zone"):
            regions.add(_region_of_zone(cloud, subnet["zone"]))
        _check_subnet_cidr(spec, subnet, path, network, extras, pod, service, seen_cidrs, problems, strict)
        _check_egress(subnet, path, problems)
        if cloud == "aws" and subnet.get("additionalRoutes") is not None:
            problems.extend(validation_aws.validate_additional_routes(
                path + ".additionalRoutes", subnet, [n for n in [network] + extras if n is not None]))
        ipv6 = subnet.get("ipv6CIDR")
        if ipv6:
            if cloud != "aws":
                problems.append(errors.forbidden(path + ".ipv6CIDR", "IPv6 subnets are supported on AWS only"))
            elif not IPV6_SUBNET_SHORTHAND.match(ipv6):
                network6 = _cidr(path + ".ipv6CIDR", ipv6, problems, "must be an IPv6 CIDR or /64#N (the Nth /64 of "
                                 "the VPC's IPv6 block)")
                if network6 is not None and network6.version != 6:
                    problems.append(errors.invalid(path + ".ipv6CIDR", ipv6, "must be an IPv6 CIDR"))
                if _overlaps(network6, service):
                    problems.append(errors.invalid(path + ".ipv6CIDR", ipv6, "must not overlap serviceClusterIPRange"))
    if len({r for r in regions if r}) > 1:
        problems.append(errors.forbidden("spec.subnets", "clusters cannot span regions (found %s); use subnets of one "
                                         "region" % ", ".join(sorted(r for r in regions if r))))


def _region_of_zone(cloud, zone):
    """The zone's region by its cloud's pattern (a metal zone has none: kops' metal cloud has no regions), else
    the zone without its last letter (a zone no pattern knows is refused elsewhere)."""
    try:
        return zones.region_of_zone(cloud, zone)
    except zones.ZoneError:
        return zone[:-1]


def _check_subnet_cidr(spec, subnet, path, network, extras, pod, service, seen, problems, strict):
    cidr = subnet.get("cidr")
    if not cidr:
        # kops' requiresSubnetCIDR: not on a cloud that assigns no CIDRs (metal).
        if strict and not (subnet.get("ipv6CIDR") and subnet.get("type") == "Private") and \
                provider_names.declared_value(spec.get("cloudProvider"), "assigns_network_cidrs", True):
            problems.append(errors.required(path + ".cidr", "a completed spec gives every subnet a CIDR"))
        return
    net = _cidr(path + ".cidr", cidr, problems)
    if net is None:
        return
    parents = [n for n in [network] + extras if n is not None]
    if parents and not any(_contains(p, net) for p in parents):
        problems.append(errors.invalid(path + ".cidr", cidr, "is not a subnet of the networkCIDR %s%s" % (
            network, (" or of additionalNetworkCIDRs " + ", ".join(str(e) for e in extras if e)) if extras else "")))
    if pod is not None and "amazonvpc" not in _networking(spec) and _overlaps(net, pod):
        problems.append(errors.invalid(path + ".cidr", cidr, "overlaps the podCIDR %s" % pod))
    if _overlaps(net, service):
        problems.append(errors.invalid(path + ".cidr", cidr, "overlaps the serviceClusterIPRange %s" % service))
    for other_name, other in seen:
        if _overlaps(net, other):
            problems.append(errors.invalid(path + ".cidr", cidr, "overlaps subnet %s (%s); subnets must not overlap"
                                           % (other_name, other)))
    seen.append((subnet.get("name"), net))


def _check_egress(subnet, path, problems):
    egress = subnet.get("egress")
    if not egress:
        return
    if egress != "External" and not egress.startswith(EGRESS_PREFIXES):
        problems.append(errors.invalid(path + ".egress", egress, "must be a NAT gateway (nat-...), elastic IP "
                                       "(eipalloc-...), instance (i-...), transit gateway (tgw-...) or External"))
    elif egress != "External" and subnet.get("type") not in ("Private", "DualStack") and not (
            subnet.get("type") == "Public" and subnet.get("ipv6CIDR")):
        problems.append(errors.forbidden(path + ".egress", "egress can only be specified for private or IPv6-capable "
                                         "public subnets; remove it or make the subnet Private"))


def _check_etcd(spec, problems):
    clusters = spec.get("etcdClusters") or []
    if not clusters:
        problems.append(errors.required("spec.etcdClusters", "etcd clusters main and events"))
        return
    names, versions, stores = set(), set(), {}
    for index, etcd in enumerate(clusters):
        path = "spec.etcdClusters[%d]" % index
        name = etcd.get("name")
        if name not in ETCD_CLUSTER_NAMES:
            problems.append(errors.unsupported(path + ".name", name, ETCD_CLUSTER_NAMES))
        elif name in names:
            problems.append(errors.duplicate(path + ".name", name, "each etcd cluster name once"))
        names.add(name)
        members = etcd.get("etcdMembers") or []
        if not members:
            problems.append(errors.required(path + ".etcdMembers", "at least one member per control-plane group"))
        elif len(members) % 2 == 0:
            problems.append(errors.invalid(path + ".etcdMembers", len(members), "etcd needs an odd number of members "
                                           "for quorum (1, 3 or 5); use an odd number of control-plane zones"))
        member_names = set()
        for m_index, member in enumerate(members):
            m_path = "%s.etcdMembers[%d]" % (path, m_index)
            if not member.get("name"):
                problems.append(errors.required(m_path + ".name", "a member name such as a"))
            elif member["name"] in member_names:
                problems.append(errors.duplicate(m_path + ".name", member["name"], "member names must be unique"))
            member_names.add(member.get("name"))
            if not member.get("instanceGroup"):
                problems.append(errors.required(m_path + ".instanceGroup", "the control-plane group running it"))
        if etcd.get("image") and not etcd.get("version"):
            problems.append(errors.required(path + ".version", "set version when image is set"))
        if etcd.get("version"):
            if not semver.is_valid(etcd["version"]) or semver.parse(etcd["version"]).major != 3:
                problems.append(errors.invalid(path + ".version", etcd["version"], "etcd version must be 3.x"))
            versions.add(etcd["version"])
        store = (etcd.get("backups") or {}).get("backupStore")
        if store:
            if store in stores:
                problems.append(errors.duplicate(path + ".backups.backupStore", store, "shared with etcd cluster %s; "
                                                 "each etcd cluster needs its own backup store" % stores[store]))
            stores[store] = name
    if len(versions) > 1:
        problems.append(errors.invalid("spec.etcdClusters", sorted(versions), "all etcd clusters must run the same "
                                       "version"))


def _check_networking(spec, problems):
    networking = _networking(spec)
    chosen = [k for k in networking if k in NETWORKING_PLUGINS or k in REMOVED_NETWORKING]
    for name in chosen:
        if name in REMOVED_NETWORKING:
            problems.append(errors.forbidden("spec.networking.%s" % name, "%s networking was %s; choose e.g. "
                                             "cilium or calico" % (name, REMOVED_NETWORKING[name])))
    if len(chosen) > 1:
        problems.append(errors.forbidden("spec.networking", "only one networking option permitted (found %s)"
                                         % ", ".join(sorted(chosen))))
    elif not chosen and strictish(spec):
        problems.append(errors.required("spec.networking", "one networking option, e.g. cilium: {}"))
    for name in chosen:
        if name in NETWORKING_WITHOUT_IPV6 and _is_ipv6(spec):
            problems.append(errors.forbidden("spec.networking.%s" % name, "%s does not support IPv6" % name))
        if name in AWS_ONLY_NETWORKING and spec.get("cloudProvider") != "aws":
            problems.append(errors.forbidden("spec.networking.%s" % name, "%s networking is AWS only" % name))
    kube_proxy_enabled = (spec.get("kubeProxy") or {}).get("enabled", True)
    needs_no_kube_proxy = {
        "kuberouter": "kuberouter" in networking,
        "cilium.enableNodePort": bool((networking.get("cilium") or {}).get("enableNodePort")),
        "calico.bpfEnabled": bool((networking.get("calico") or {}).get("bpfEnabled")),
    }
    for what, needed in needs_no_kube_proxy.items():
        if needed and kube_proxy_enabled is not False:
            problems.append(errors.forbidden("spec.kubeProxy.enabled", "%s replaces kube-proxy; set "
                                             "spec.kubeProxy.enabled: false" % what))
    if "external" in networking:
        problems.append(errors.forbidden("spec.networking.external", "external networking is not supported for "
                                         "Kubernetes >= 1.26; use cni: {} and install the plugin yourself"))
    cilium = networking.get("cilium") or {}
    if cilium.get("ipam") == "eni":
        if spec.get("cloudProvider") != "aws":
            problems.append(errors.forbidden("spec.networking.cilium.ipam", "Cilium ENI IPAM is supported only on "
                                             "AWS"))
        elif _is_ipv6(spec):
            problems.append(errors.forbidden("spec.networking.cilium.ipam", "Cilium ENI IPAM does not support IPv6"))
    if (cilium.get("hubble") or {}).get("enabled") and not (spec.get("certManager") or {}).get("enabled"):
        problems.append(errors.forbidden("spec.networking.cilium.hubble.enabled", "Hubble requires cert-manager; "
                                         "set spec.certManager.enabled: true"))
    cilium_version = (networking.get("cilium") or {}).get("version")
    if cilium_version and not str(cilium_version).lstrip("v").startswith("1.18."):
        problems.append(errors.invalid("spec.networking.cilium.version", cilium_version, "kOps 1.37 supports "
                                       "Cilium v1.18.x"))


def strictish(spec):
    """Networking is required once a spec is completed or a cloud is chosen (kops requires one)."""
    return bool(spec.get("cloudProvider"))


def _check_access(spec, problems):
    for field in ("kubernetesApiAccess", "sshAccess", "nodePortAccess"):
        for index, entry in enumerate(spec.get(field) or []):
            path = "spec.%s[%d]" % (field, index)
            if str(entry).startswith("pl-"):
                if spec.get("cloudProvider") != "aws":
                    problems.append(errors.forbidden(path, "prefix lists (pl-...) are supported on AWS only"))
                continue
            _cidr(path, entry, problems, "must be a CIDR such as 203.0.113.0/24 (or an AWS prefix list pl-...)")


def _check_api(spec, problems):
    api = spec.get("api") or {}
    lb = api.get("loadBalancer")
    cloud = spec.get("cloudProvider")
    if api.get("dns") is not None and lb is not None:
        problems.append(errors.forbidden("spec.api", "use either api.dns or api.loadBalancer, not both"))
    if lb is None:
        if _dns_type(spec) == "None" and cloud == "aws" and "dns" in api:
            problems.append(errors.forbidden("spec.api.dns", "with dns type None the API needs a load balancer; "
                                             "set spec.api.loadBalancer"))
        return
    if lb.get("type") and lb["type"] not in LB_TYPES:
        problems.append(errors.unsupported("spec.api.loadBalancer.type", lb["type"], LB_TYPES))
    if cloud == "aws":
        problems.extend(validation_aws.validate_api_load_balancer(spec, lb))
    elif cloud in CLOUDS:
        for field in ("class", "sslCertificate", "sslPolicy", "crossZoneLoadBalancing", "accessLog",
                      "securityGroupOverride", "additionalSecurityGroups"):
            if lb.get(field) not in (None, [], ""):
                problems.append(errors.forbidden("spec.api.loadBalancer.%s" % field, "only supported on AWS"))


def _check_components(spec, problems):
    if spec.get("docker"):
        problems.append(errors.forbidden("spec.docker", "Docker CRI support was removed in Kubernetes 1.24; use "
                                         "containerd"))
    containerd = spec.get("containerd") or {}
    problems.extend(_containerd_version("spec.containerd.version", containerd.get("version")))
    apiserver = spec.get("kubeAPIServer") or {}
    if apiserver.get("insecurePort"):
        problems.append(errors.forbidden("spec.kubeAPIServer.insecurePort", "the insecure port is not supported; "
                                         "remove it"))
    if apiserver.get("admissionControl"):
        problems.append(errors.forbidden("spec.kubeAPIServer.admissionControl", "admissionControl was removed from "
                                         "kube-apiserver; use enableAdmissionPlugins"))
    if apiserver.get("auditWebhookConfigFile") and not apiserver.get("auditPolicyFile"):
        problems.append(errors.invalid("spec.kubeAPIServer.auditWebhookConfigFile", apiserver["auditWebhookConfigFile"],
                                       "an audit webhook needs an audit policy; set auditPolicyFile"))
    if spec.get("nodeAuthorization"):
        problems.append(errors.forbidden("spec.nodeAuthorization", "NodeAuthorization must be empty; Kubernetes' "
                                         "own Node authorizer replaced it, remove the field"))
    problems.extend(_cluster_cidr_inside_nmc(spec))
    problems.extend(_nameservers(spec.get("kubeDNS") or {}))
    problems.extend(_packages("spec.containerd.packages", containerd.get("packages")))
    problems.extend(_packages("spec.containerd.runc.packages", (containerd.get("runc") or {}).get("packages")))
    if bool(apiserver.get("proxyClientCertFile")) != bool(apiserver.get("proxyClientKeyFile")):
        problems.append(errors.forbidden("spec.kubeAPIServer.proxyClientCertFile", "proxyClientCertFile and "
                                         "proxyClientKeyFile must be set together"))
    if apiserver.get("serviceClusterIPRange") and spec.get("serviceClusterIPRange") and \
            apiserver["serviceClusterIPRange"] != spec["serviceClusterIPRange"]:
        problems.append(errors.invalid("spec.kubeAPIServer.serviceClusterIPRange", apiserver["serviceClusterIPRange"],
                                       "must equal spec.serviceClusterIPRange %s" % spec["serviceClusterIPRange"]))
    if spec.get("cloudProvider") == "aws" and apiserver.get("authorizationMode") and \
            "Node" not in apiserver["authorizationMode"].split(","):
        problems.append(errors.invalid("spec.kubeAPIServer.authorizationMode", apiserver["authorizationMode"],
                                       "must include Node (e.g. Node,RBAC)"))
    dns = spec.get("kubeDNS") or {}
    service = _net(spec.get("serviceClusterIPRange")) if spec.get("serviceClusterIPRange") else None
    if dns.get("serverIP"):
        try:
            address = ipaddress.ip_address(dns["serverIP"])
        except ValueError:
            problems.append(errors.invalid("spec.kubeDNS.serverIP", dns["serverIP"], "must be an IP address"))
        else:
            if service is not None and address not in service:
                problems.append(errors.invalid("spec.kubeDNS.serverIP", dns["serverIP"], "must be inside "
                                               "serviceClusterIPRange %s" % service))
        kubelet_dns = (spec.get("kubelet") or {}).get("clusterDNS")
        node_local = (dns.get("nodeLocalDNS") or {})
        allowed = {dns["serverIP"], node_local.get("localIP") or "169.254.20.10"}
        if kubelet_dns and kubelet_dns not in allowed and not node_local.get("enabled"):
            problems.append(errors.invalid("spec.kubelet.clusterDNS", kubelet_dns, "must match kubeDNS.serverIP %s"
                                           % dns["serverIP"]))
    if (dns.get("nodeLocalDNS") or {}).get("enabled") and dns.get("provider") not in (None, "CoreDNS"):
        problems.append(errors.forbidden("spec.kubeDNS.nodeLocalDNS", "NodeLocalDNS requires the CoreDNS provider"))
    if spec.get("cloudProvider") == "aws" and (spec.get("awsLoadBalancerController") or {}).get("enabled") and \
            not (spec.get("certManager") or {}).get("enabled"):
        problems.append(errors.forbidden("spec.awsLoadBalancerController", "the AWS Load Balancer Controller requires "
                                         "cert-manager (its webhook certificate); set spec.certManager.enabled: true"))


def _containerd_version(path, version):
    if not version:
        return []
    if not semver.is_valid(version):
        return [errors.invalid(path, version, "must be a version such as 2.1.4")]
    if semver.parse(version) < semver.parse(MINIMUM_CONTAINERD):
        return [errors.invalid(path, version, "kOps 1.37 needs containerd %s or newer" % MINIMUM_CONTAINERD)]
    return []


def _cluster_cidr_inside_nmc(spec):
    cluster_cidr = (spec.get("kubeControllerManager") or {}).get("clusterCIDR")
    nmc = _net(spec.get("nonMasqueradeCIDR")) if spec.get("nonMasqueradeCIDR") else None
    if not cluster_cidr:
        return []
    network = _net(cluster_cidr)
    if network is None:
        return [errors.invalid("spec.kubeControllerManager.clusterCIDR", cluster_cidr, "must be a CIDR such as "
                               "100.96.0.0/11")]
    if nmc is not None and nmc.version == network.version and not _contains(nmc, network):
        return [errors.invalid("spec.kubeControllerManager.clusterCIDR", cluster_cidr, "must be inside the "
                               "nonMasqueradeCIDR %s (normally equal to spec.podCIDR)" % nmc)]
    return []


def _is_ip(text):
    try:
        ipaddress.ip_address(str(text))
    except ValueError:
        return False
    return True


def _nameservers(dns):
    problems = []
    for index, server in enumerate(dns.get("upstreamNameservers") or []):
        if not _is_ip(server):
            problems.append(errors.invalid("spec.kubeDNS.upstreamNameservers[%d]" % index, server,
                                           "a nameserver must be an IP address such as 8.8.8.8"))
    for domain, servers in (dns.get("stubDomains") or {}).items():
        path = "spec.kubeDNS.stubDomains[%s]" % domain
        if not servers:
            problems.append(errors.invalid(path, domain, "list at least one nameserver IP for the stub domain"))
        for index, server in enumerate(servers or []):
            if not _is_ip(server):
                problems.append(errors.invalid("%s[%d]" % (path, index), server,
                                               "a nameserver must be an IP address such as 10.0.0.2"))
    return problems


def _packages(path, packages):
    """Package overrides need both a URL and its sha256, per architecture."""
    problems = []
    for url_field, hash_field in PACKAGE_PAIRS:
        url, digest = (packages or {}).get(url_field), (packages or {}).get(hash_field)
        if url and not digest:
            problems.append(errors.required("%s.%s" % (path, hash_field), "%s needs its sha256 in %s"
                                            % (url_field, hash_field)))
        elif digest and not url:
            problems.append(errors.required("%s.%s" % (path, url_field), "%s needs the package URL in %s"
                                            % (hash_field, url_field)))
        elif url and not str(url).startswith(("https://", "http://")):
            problems.append(errors.invalid("%s.%s" % (path, url_field), url, "must be an http(s):// URL"))
        elif digest and not re.match(r"^[0-9a-f]{64}$", str(digest)):
            problems.append(errors.invalid("%s.%s" % (path, hash_field), digest, "must be a sha256 hex digest"))
    return problems


def _check_service_account_permissions(iam, problems):
    seen = set()
    for entry in iam.get("serviceAccountExternalPermissions") or []:
        key = "%s/%s" % (entry.get("namespace") or "", entry.get("name") or "")
        path = "spec.iam.serviceAccountExternalPermissions[%s]" % key
        for field in ("namespace", "name"):
            if not entry.get(field):
                problems.append(errors.required("%s.%s" % (path, field), "the service account's %s" % field))
        if key in seen:
            problems.append(errors.duplicate(path, key, "one entry per service account"))
        seen.add(key)
        aws = entry.get("aws")
        if not aws:
            problems.append(errors.required(path + ".aws", "the AWS permissions: inlinePolicy or policyARNs"))
        elif bool(aws.get("inlinePolicy")) == bool(aws.get("policyARNs")):
            problems.append(errors.invalid(path + ".aws", "inlinePolicy and policyARNs", "set exactly one of "
                                           "inlinePolicy or policyARNs"))


def check_hooks(path, hooks):
    problems = []
    for index, hook in enumerate(hooks or []):
        item = "%s[%d]" % (path, index)
        if hook.get("disabled"):
            continue  # kops skips disabled hooks
        raw = hook.get("useRawManifest")
        if not hook.get("manifest") and not hook.get("execContainer"):
            problems.append(errors.required(item, "a hook needs manifest or execContainer"))
        elif raw and hook.get("execContainer"):
            problems.append(errors.forbidden(item, "execContainer may not be used with useRawManifest (use "
                                             "manifest instead)"))
        elif raw and not hook.get("manifest"):
            problems.append(errors.required(item, "set manifest when useRawManifest is true"))
        for field in ("before", "requires"):
            if raw and hook.get(field) is not None:
                problems.append(errors.forbidden("%s.%s" % (item, field), "%s may not be used with useRawManifest; "
                                                 "put the ordering in the raw unit" % field))
        if hook.get("execContainer") and not hook["execContainer"].get("image"):
            problems.append(errors.required(item + ".execContainer.image", "the container image to run"))
    return problems


def check_file_assets(path, assets):
    problems = []
    for index, asset in enumerate(assets or []):
        for field in ("name", "content"):
            if not asset.get(field):
                problems.append(errors.required("%s[%d].%s" % (path, index, field), "file assets need %s" % field))
    return problems


def check_sysctls(path, parameters):
    return [errors.invalid("%s[%d]" % (path, index), entry, "must be name=value, e.g. net.core.somaxconn=1024")
            for index, entry in enumerate(parameters or []) if "=" not in str(entry)]


def check_update_policy(path, policy):
    if policy is not None and policy not in UPDATE_POLICIES:
        return [errors.unsupported(path, policy, UPDATE_POLICIES)]
    return []


def _int_or_percent(value):
    """(number, is_percent) of an IntOrString, or None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value, False
    if isinstance(value, str) and INT_OR_PERCENT.match(value):
        return int(value.rstrip("%")), value.endswith("%")
    return None


def check_rolling_update(path, rolling, control_plane=False):
    problems = []
    if not rolling:
        return problems
    unavailable, surge = 1, None
    for field in ("maxUnavailable", "maxSurge"):
        if rolling.get(field) is None:
            continue
        parsed = _int_or_percent(rolling[field])
        if parsed is None:
            problems.append(errors.invalid("%s.%s" % (path, field), rolling[field], "must be a number or a "
                                           "percentage such as 1 or 20%"))
            continue
        if field == "maxUnavailable":
            unavailable = parsed[0]
        else:
            surge = parsed[0]
        if parsed[0] < 0:
            problems.append(errors.invalid("%s.%s" % (path, field), rolling[field], "cannot be negative"))
    if surge is not None:
        if control_plane and surge != 0:
            problems.append(errors.forbidden(path + ".maxSurge", "control-plane instance groups cannot surge; set "
                                             "maxSurge: 0 and use maxUnavailable"))
        elif surge == 0 and unavailable == 0:
            problems.append(errors.forbidden(path + ".maxSurge", "maxSurge and maxUnavailable cannot both be zero; "
                                             "nothing could be replaced"))
    return problems


def check_cloud_labels(path, labels):
    return [errors.forbidden("%s[%s]" % (path, key), "%s is reserved for kOps' own tags; use another key" % key)
            for key in labels or {}
            if key in RESERVED_CLOUD_LABELS or key.startswith(RESERVED_CLOUD_LABEL_PREFIXES)]


def _check_iam(spec, problems):
    iam = spec.get("iam") or {}
    _check_service_account_permissions(iam, problems)
    if iam.get("legacy"):
        problems.append(errors.forbidden("spec.iam.legacy", "legacy IAM permissions are no longer supported; set "
                                         "legacy: false"))
    for role, policy in (spec.get("additionalPolicies") or {}).items():
        path = "spec.additionalPolicies[%s]" % role
        try:
            statements = json.loads(policy)
        except (TypeError, ValueError) as exc:
            problems.append(errors.invalid(path, policy, "must be a JSON list of IAM statements (%s)" % exc))
            continue
        if not isinstance(statements, list) or any(not isinstance(s, dict) or "Effect" not in s for s in statements):
            problems.append(errors.invalid(path, policy, "must be a JSON list of statements, each with an Effect"))
    for role, arns in (spec.get("externalPolicies") or {}).items():
        for index, arn in enumerate(arns or []):
            if not str(arn).startswith("arn:"):
                problems.append(errors.invalid("spec.externalPolicies[%s][%d]" % (role, index), arn,
                                               "must be an IAM policy ARN (arn:aws:iam::...)"))


def _check_misc(spec, problems):
    problems.extend(check_sysctls("spec.sysctlParameters", spec.get("sysctlParameters")))
    problems.extend(check_file_assets("spec.fileAssets", spec.get("fileAssets")))
    problems.extend(check_hooks("spec.hooks", spec.get("hooks")))
    problems.extend(check_cloud_labels("spec.cloudLabels", spec.get("cloudLabels")))
    problems.extend(check_update_policy("spec.updatePolicy", spec.get("updatePolicy")))
    problems.extend(check_rolling_update("spec.rollingUpdate", spec.get("rollingUpdate")))
    warm = spec.get("warmPool")
    if warm:
        problems.extend(_warm_pool_sizes("spec.warmPool", warm))
    for index, addon in enumerate(spec.get("addons") or []):
        if str(addon.get("manifest", "")).startswith("file://"):
            problems.append(errors.forbidden("spec.addons[%d].manifest" % index, "file:// addon manifests are not "
                                             "supported; publish it at an https:// or s3:// URL"))
    assets = spec.get("assets") or {}
    if assets.get("containerProxy") and assets.get("containerRegistry"):
        problems.append(errors.forbidden("spec.assets.containerProxy", "containerProxy cannot be used together with "
                                         "containerRegistry"))
    repository = assets.get("fileRepository") or ""
    # A repository in a cloud's storage needs that cloud (Provider.store_scheme; Azure's, which has no package here).
    scheme_cloud = {"azureblob://": "azure"}
    scheme_cloud.update((provider_names.declared_value(c, "store_scheme", None), c) for c in provider_names.names())
    for scheme, cloud in scheme_cloud.items():
        if scheme is None:  # a cloud without storage of its own
            continue
        if repository.startswith(scheme) and spec.get("cloudProvider") != cloud:
            problems.append(errors.invalid("spec.assets.fileRepository", repository, "%s repositories need the %s "
                                           "cloud" % (scheme, cloud)))
    discovery = spec.get("serviceAccountIssuerDiscovery") or {}
    store = discovery.get("discoveryStore") or ""
    if store.startswith("s3://") and "." in store[5:].split("/")[0]:
        problems.append(errors.invalid("spec.serviceAccountIssuerDiscovery.discoveryStore", store,
                                       "S3 bucket names for discovery must not contain dots"))
    if store and discovery.get("discoveryService"):
        problems.append(errors.forbidden("spec.serviceAccountIssuerDiscovery.discoveryService", "use either "
                                         "discoveryStore or discoveryService, not both"))
    problems.extend(_service_account_permissions_rules(spec))
    if discovery.get("enableAWSOIDCProvider") and not store and not discovery.get("discoveryService"):
        problems.append(errors.forbidden("spec.serviceAccountIssuerDiscovery.enableAWSOIDCProvider",
                                         "needs a discoveryStore"))


def _service_account_permissions_rules(spec):
    """kops: what needs per-service-account IAM (Karpenter, cert-manager's Route53 zones) and cert-manager (the pod
    identity webhook's serving certificate)."""
    problems = []
    irsa = bool((spec.get("iam") or {}).get("useServiceAccountExternalPermissions"))
    fix = "set spec.iam.useServiceAccountExternalPermissions: true"
    if (spec.get("karpenter") or {}).get("enabled") and not irsa:
        problems.append(errors.forbidden("spec.karpenter.enabled", "Karpenter requires that service accounts use "
                                         "external permissions; " + fix))
    cert_manager = spec.get("certManager") or {}
    if cert_manager.get("enabled") and cert_manager.get("hostedZoneIDs") and not irsa:
        problems.append(errors.forbidden("spec.certManager", "Cert Manager requires that service accounts use external "
                                         "permissions in order to do dns-01 validation; " + fix))
    if (spec.get("podIdentityWebhook") or {}).get("enabled") and not cert_manager.get("enabled"):
        problems.append(errors.forbidden("spec.podIdentityWebhook.enabled", "EKS Pod Identity Webhook requires that cert "
                                         "manager is enabled; set spec.certManager.enabled: true"))
    return problems


# -- instance groups -------------------------------------------------------------

def validate_instance_group(ig, cluster=None, strict=False):
    problems = []
    spec = ig.get("spec") or {}
    name = objects.name_of(ig)
    if not name:
        problems.append(errors.required("metadata.name", "the instance group name"))
    elif not DNS1123_SUBDOMAIN.match(name):
        problems.append(errors.invalid("metadata.name", name, "must be a DNS-1123 subdomain (lower case letters, "
                                       "digits, '-' and '.')"))
    role = spec.get("role")
    if not role:
        problems.append(errors.required("spec.role", "one of: %s" % ", ".join(objects.IG_ROLES)))
    elif role not in objects.IG_ROLES:
        problems.append(errors.unsupported("spec.role", role, objects.IG_ROLES))
    _check_sizes(spec, role, problems, strict)
    _check_group_labels(ig, spec, name, problems)
    _check_group_volumes(spec, problems, cluster)
    _check_group_node_config(spec, role, problems)
    if strict and not spec.get("image"):
        problems.append(errors.required("spec.image", "a completed instance group has an image"))
    if cluster is not None:
        _cross_validate(ig, spec, role, cluster, problems)
    return problems


def _check_sizes(spec, role, problems, strict):
    low, high = spec.get("minSize"), spec.get("maxSize")
    for field, value in (("minSize", low), ("maxSize", high)):
        if value is not None and value < 0:
            problems.append(errors.invalid("spec.%s" % field, value, "must be zero or more"))
        elif value is None and strict and spec.get("manager") != "Karpenter":
            problems.append(errors.required("spec.%s" % field, "a completed instance group has sizes"))
    if low is not None and high is not None and high < low:
        problems.append(errors.invalid("spec.maxSize", high, "must be at least minSize (%d)" % low))
    if role == objects.ROLE_CONTROL_PLANE:
        # One message: maxSize bounds minSize, so report maxSize when it is over.
        field, value = ("maxSize", high) if (high or 0) > 1 else ("minSize", low)
        if value is not None and value > 1:
            problems.append(errors.invalid("spec.%s" % field, value, "control-plane instance groups must have "
                                           "at most 1 instance; add more InstanceGroups instead"))
    warm = spec.get("warmPool")
    if warm:
        if role not in (objects.ROLE_NODE, objects.ROLE_APISERVER):
            problems.append(errors.forbidden("spec.warmPool", "warm pools are only for Node and APIServer groups"))
        if spec.get("maxPrice") or (spec.get("mixedInstancesPolicy") or {}).get("onDemandAboveBase") not in (None, 100):
            problems.append(errors.forbidden("spec.warmPool", "warm pools cannot be used with spot instances"))
        problems.extend(_warm_pool_sizes("spec.warmPool", warm))


def _warm_pool_sizes(path, warm):
    low, high = warm.get("minSize") or 0, warm.get("maxSize")
    if low < 0:
        return [errors.invalid(path + ".minSize", low, "warm pool minSize cannot be negative")]
    if high is not None and high < 0:
        return [errors.invalid(path + ".maxSize", high, "warm pool maxSize cannot be negative")]
    if high is not None and high < low:
        return [errors.invalid(path + ".maxSize", high, "warm pool maxSize cannot be lower than minSize (%d)" % low)]
    return []


def _check_group_labels(ig, spec, name, problems):
    label = (spec.get("cloudLabels") or {}).get(objects.IG_LABEL)
    if label is not None and label != name:
        problems.append(errors.invalid("spec.cloudLabels[%s]" % objects.IG_LABEL, label,
                                       "must equal the instance group name %s" % name))
    problems.extend(check_cloud_labels("spec.cloudLabels", {k: v for k, v in (spec.get("cloudLabels") or {}).items()
                                                            if k != objects.IG_LABEL}))
    for key in spec.get("nodeLabels") or {}:
        if key.count("/") > 1:
            problems.append(errors.invalid("spec.nodeLabels[%s]" % key, key, "a label key has at most one '/'"))
    seen = set()
    for index, taint in enumerate(spec.get("taints") or []):
        path = "spec.taints[%d]" % index
        # kops parses key[=value]:effect and leaves the effect to the kubelet.
        if not re.match(r"^[^=:]+(=[^:]*)?:[^:]+$", str(taint)):
            problems.append(errors.invalid(path, taint, "must be key[=value]:effect, effect one of %s"
                                           % ", ".join(TAINT_EFFECTS)))
        elif taint in seen:
            problems.append(errors.duplicate(path, taint, "each taint once"))
        seen.add(taint)


def _check_group_volumes(spec, problems, cluster):
    cloud = ((cluster or {}).get("spec") or {}).get("cloudProvider")
    volume_type = spec.get("rootVolumeType")
    volume_types = provider_names.declared_value(cloud, "root_volume_types", None)
    if volume_types and volume_type and volume_type not in volume_types:
        problems.append(errors.unsupported("spec.rootVolumeType", volume_type, volume_types))
    for field in ("rootVolumeSize", "rootVolumeIops", "rootVolumeThroughput"):
        if spec.get(field) is not None and spec[field] <= 0:
            problems.append(errors.invalid("spec.%s" % field, spec[field], "must be greater than zero"))
    metadata = spec.get("instanceMetadata") or {}
    hop = metadata.get("httpPutResponseHopLimit")
    if hop is not None and not 1 <= hop <= 64:
        problems.append(errors.invalid("spec.instanceMetadata.httpPutResponseHopLimit", hop, "must be 1-64"))
    if metadata.get("httpTokens") not in (None, "optional", "required"):
        problems.append(errors.unsupported("spec.instanceMetadata.httpTokens", metadata["httpTokens"],
                                           ("optional", "required")))
    if cloud == "aws":
        problems.extend(validation_aws.validate_instance_group(spec))
    devices, paths = set(), set()
    for index, volume in enumerate(spec.get("volumes") or []):
        path = "spec.volumes[%d]" % index
        if not volume.get("device"):
            problems.append(errors.required(path + ".device", "the device name, e.g. /dev/xvdd"))
        elif volume["device"] in devices:
            problems.append(errors.duplicate(path + ".device", volume["device"], "each volume on its own device"))
        devices.add(volume.get("device"))
        if (volume.get("size") or 0) <= 0:
            problems.append(errors.invalid(path + ".size", volume.get("size"), "must be greater than zero (GB)"))
    for index, mount in enumerate(spec.get("volumeMounts") or []):
        path = "spec.volumeMounts[%d]" % index
        for field, what in (("device", "the device to mount"), ("filesystem", "one of: %s" % ", ".join(FILESYSTEMS)),
                            ("path", "the mount point, e.g. /data")):
            if not mount.get(field):
                problems.append(errors.required("%s.%s" % (path, field), what))
        if mount.get("filesystem") and mount["filesystem"] not in FILESYSTEMS:
            problems.append(errors.unsupported(path + ".filesystem", mount["filesystem"], FILESYSTEMS))
        if mount.get("path") and mount["path"] in paths:
            problems.append(errors.duplicate(path + ".path", mount["path"], "each mount on its own path"))
        paths.add(mount.get("path"))


def _check_group_node_config(spec, role, problems):
    """What an instance group adds to its nodes: hooks, files, sysctls, user data, containerd, updates."""
    problems.extend(check_hooks("spec.hooks", spec.get("hooks")))
    problems.extend(check_file_assets("spec.fileAssets", spec.get("fileAssets")))
    problems.extend(check_sysctls("spec.sysctlParameters", spec.get("sysctlParameters")))
    problems.extend(check_update_policy("spec.updatePolicy", spec.get("updatePolicy")))
    problems.extend(check_rolling_update("spec.rollingUpdate", spec.get("rollingUpdate"),
                                         control_plane=role == objects.ROLE_CONTROL_PLANE))
    for index, part in enumerate(spec.get("additionalUserData") or []):
        path = "spec.additionalUserData[%d]" % index
        for field in ("name", "content"):
            if not part.get(field):
                problems.append(errors.required("%s.%s" % (path, field), "each user data part needs a %s" % field))
        if part.get("type") not in USER_DATA_TYPES:
            problems.append(errors.unsupported(path + ".type", part.get("type"), USER_DATA_TYPES))
    containerd = spec.get("containerd") or {}
    if (containerd.get("gvisor") or {}).get("enabled") and role != objects.ROLE_NODE:
        problems.append(errors.forbidden("spec.containerd.gvisor", "gVisor can only be enabled on instance groups "
                                         "with role Node"))
    problems.extend(_packages("spec.containerd.packages", containerd.get("packages")))


def _cross_validate(ig, spec, role, cluster, problems):
    cluster_spec = cluster.get("spec") or {}
    subnet_names = [s.get("name") for s in cluster_spec.get("subnets") or []]
    subnets = spec.get("subnets") or []
    for index, subnet in enumerate(subnets):
        if subnet_names and subnet not in subnet_names:  # no subnets at all is reported on the cluster
            problems.append(errors.not_found("spec.subnets[%d]" % index, subnet, "the cluster's subnets are: %s"
                                             % ", ".join(subnet_names)))
    if role == objects.ROLE_CONTROL_PLANE and not subnets:
        problems.append(errors.required("spec.subnets", "a control-plane group must name its subnet"))
    cloud = cluster_spec.get("cloudProvider")
    if role == objects.ROLE_APISERVER and not provider_names.declared_value(cloud, "api_server_groups", False):
        problems.append(errors.forbidden("spec.role", "APIServer groups are supported on AWS and GCE only"))
    elif role == objects.ROLE_APISERVER and cloud == "aws" and _dns_type(cluster_spec) == "None":
        problems.append(errors.forbidden("spec.role", "APIServer groups cannot be used with topology.dns.type None; "
                                         "use a DNS zone or role Node"))
    if spec.get("manager") == "Karpenter":
        if not provider_names.declared_value(cloud, "karpenter", False) or role != objects.ROLE_NODE:
            problems.append(errors.forbidden("spec.manager", "Karpenter manages Node groups on AWS only"))
        elif spec.get("maxSize") is not None and spec["maxSize"] <= 0:
            problems.append(errors.invalid("spec.maxSize", spec["maxSize"], "a Karpenter group's maxSize must be "
                                           "greater than zero"))
    if spec.get("containerd"):
        problems.extend(_containerd_version("spec.containerd.version", spec["containerd"].get("version")))


# -- everything together -----------------------------------------------------------

def deep_validate(cluster, instance_groups, strict=False, facts=None):
    """Cluster, each instance group (paths prefixed with the group), and the rules across them."""
    problems = list(validate_cluster(cluster, strict=strict, facts=facts))
    names = set()
    for ig in instance_groups:
        name = objects.name_of(ig) or "?"
        if name in names:
            problems.append(errors.duplicate("instancegroup[%s].metadata.name" % name, name))
        names.add(name)
        for problem in validate_instance_group(ig, cluster, strict=strict):
            problem.path = "instancegroup[%s].%s" % (name, problem.path)
            problems.append(problem)
    if not problems:  # the cloud is asked about a spec that is otherwise valid
        problems.extend(validation_aws.validate_offerings(cluster, instance_groups, facts))
    roles = {objects.name_of(ig): (ig.get("spec") or {}).get("role") for ig in instance_groups}
    control_planes = sorted(n for n, r in roles.items() if r == objects.ROLE_CONTROL_PLANE)
    if not instance_groups:
        problems.append(errors.required("instancegroups", "a cluster needs instance groups (control plane and nodes)"))
    elif not control_planes:
        problems.append(errors.required("instancegroups", "must have at least one control-plane (role: Master) "
                                        "instance group"))
    elif not any(r not in (objects.ROLE_CONTROL_PLANE, None) for r in roles.values()):
        problems.append(errors.required("instancegroups", "must have at least one non-control-plane instance "
                                        "group (role: Node)"))
    if not control_planes:
        return problems  # etcd membership cannot be judged without control-plane groups
    for index, etcd in enumerate((cluster.get("spec") or {}).get("etcdClusters") or []):
        members = etcd.get("etcdMembers") or []
        groups = [m.get("instanceGroup") for m in members]
        before = len(problems)
        for m_index, group in enumerate(groups):
            path = "spec.etcdClusters[%d].etcdMembers[%d].instanceGroup" % (index, m_index)
            if group and group not in roles:
                problems.append(errors.not_found(path, group, "no instance group of that name"))
            elif group and roles.get(group) not in (None, objects.ROLE_CONTROL_PLANE):
                problems.append(errors.invalid(path, group, "etcd members must run on control-plane groups"))
            elif group and groups.index(group) != m_index:
                problems.append(errors.duplicate(path, group, "each member on its own control-plane group"))
        if len(problems) > before:
            continue  # a member is wrong; that message says it, a missing-member one would only echo it
        for name in control_planes:
            if name not in groups:
                problems.append(errors.forbidden("spec.etcdClusters[%d].etcdMembers" % index, "InstanceGroup %s with "
                                                 "role ControlPlane must have a member in etcd cluster %s"
                                                 % (name, etcd.get("name"))))
    return problems


def validate_cluster_update(old, new):
    """Changes kops refuses on an existing cluster (etcd layout is immutable), and its reserved tags."""
    problems = check_cloud_labels("spec.cloudLabels", (new.get("spec") or {}).get("cloudLabels"))
    old_etcd = {e.get("name"): e for e in (old.get("spec") or {}).get("etcdClusters") or []}
    new_etcd = {e.get("name"): e for e in (new.get("spec") or {}).get("etcdClusters") or []}
    for name, before in old_etcd.items():
        if name not in new_etcd:
            problems.append(errors.forbidden("spec.etcdClusters", "etcd cluster %s cannot be removed" % name))
            continue
        after = new_etcd[name]
        index = list(new_etcd).index(name)
        old_members = {m.get("name"): m.get("instanceGroup") for m in before.get("etcdMembers") or []}
        for m_index, member in enumerate(after.get("etcdMembers") or []):
            if member.get("name") in old_members and old_members[member["name"]] != member.get("instanceGroup"):
                problems.append(errors.forbidden("spec.etcdClusters[%d].etcdMembers[%d].instanceGroup"
                                                 % (index, m_index), "an etcd member's instance group cannot change"))
        if after.get("image") and after.get("image") != before.get("image"):
            problems.append(errors.forbidden("spec.etcdClusters[%d].image" % index,
                                             "image can only be set on a new etcd cluster"))
    return problems
