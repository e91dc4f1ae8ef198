# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' ``--set`` / ``--unset``: change a Cluster by field path.

Paths look like ``cluster.spec.kubelet.maxPods=200`` or
``spec.addons[0].manifest=https://...``.  kops resolves them against its
internal API; where an internal path differs from the v1alpha2 one users
write in YAML, INTERNAL_TO_V1ALPHA2 maps it so both spellings work.
Values: a comma-separated list for list fields, true/false for booleans,
an integer for integer fields, else the string as given.
"""

from __future__ import annotations

import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

# Internal (pkg/apis/kops) path prefix -> v1alpha2 path prefix, longest first.
INTERNAL_TO_V1ALPHA2 = (
    ("spec.networking.networkCIDR", "spec.networkCIDR"),
    ("spec.networking.additionalNetworkCIDRs", "spec.additionalNetworkCIDRs"),
    ("spec.networking.networkID", "spec.networkID"),
    ("spec.networking.subnets", "spec.subnets"),
    ("spec.networking.topology", "spec.topology"),
    ("spec.networking.nonMasqueradeCIDR", "spec.nonMasqueradeCIDR"),
    ("spec.networking.podCIDR", "spec.podCIDR"),
    ("spec.networking.serviceClusterIPRange", "spec.serviceClusterIPRange"),
    ("spec.networking.egressProxy", "spec.egressProxy"),
    ("spec.networking.tagSubnets", "spec.tagSubnets"),
    ("spec.networking.isolateControlPlane", "spec.isolateMasters"),
    ("spec.api.access", "spec.kubernetesApiAccess"),
    ("spec.api.publicName", "spec.masterPublicName"),
    ("spec.api.additionalSANs", "spec.additionalSans"),
    ("spec.controlPlaneKubelet", "spec.masterKubelet"),
    ("spec.configStore.base", "spec.configBase"),
    ("spec.configStore.keypairs", "spec.keyStore"),
    ("spec.configStore.secrets", "spec.secretStore"),
    ("spec.externalDNS", "spec.externalDns"),
    ("spec.cloudProvider.aws.nodeTerminationHandler", "spec.nodeTerminationHandler"),
    ("spec.cloudProvider.aws.loadBalancerController", "spec.awsLoadBalancerController"),
    ("spec.cloudProvider.aws.podIdentityWebhook", "spec.podIdentityWebhook"),
    ("spec.cloudProvider.aws.warmPool", "spec.warmPool"),
    ("spec.cloudProvider.gce.project", "spec.project"),
)
# v1alpha2 Cluster fields whose value is a list of strings (a CSV value splits).
LIST_FIELDS = frozenset((
    "kubernetesApiAccess", "sshAccess", "nodePortAccess", "additionalNetworkCIDRs", "additionalSans",
    "additionalSANs", "sysctlParameters", "packages", "enableAdmissionPlugins", "disableAdmissionPlugins",
    "apiAudiences", "tlsCipherSuites", "kubeletPreferredAddressTypes", "etcdServers", "etcdServersOverrides",
    "upstreamNameservers", "additionalSecurityGroups", "serviceAccountIssuerDiscoveryAdditionalAudiences",
    "additionalAudiences", "controllers", "roles", "before", "requires",
))
_SEGMENT = re.compile(r"^([A-Za-z0-9_.\-/]+?)(?:\[(\d+)\])?$")


class FieldPathError(SpecError):
    pass


def _normalize(path):
    path = path.strip()
    if path.startswith("cluster."):
        path = path[len("cluster."):]
    if not path.startswith("spec.") and not path.startswith("metadata."):
        raise FieldPathError("sets: %r must start with cluster.spec. (e.g. cluster.spec.kubelet.maxPods=200)" % path)
    for internal, wire in INTERNAL_TO_V1ALPHA2:
        if path == internal or path.startswith(internal + ".") or path.startswith(internal + "["):
            return wire + path[len(internal):]
    return path


def _segments(path):
    result = []
    for part in path.split("."):
        match = _SEGMENT.match(part)
        if not match:
            raise FieldPathError("sets: cannot parse field path segment %r in %r" % (part, path))
        name, index = match.groups()
        result.append((name, int(index) if index is not None else None))
    return result


def _convert(field, value, current):
    if field in LIST_FIELDS or isinstance(current, list):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(current, bool) or value in ("true", "false"):
        if value not in ("true", "false"):
            raise FieldPathError("sets: %s must be true or false, got %r" % (field, value))
        return value == "true"
    if isinstance(current, int) or (re.match(r"^-?\d+$", value) and current is None and field.endswith(
            ("Size", "Count", "Port", "Pods", "Days", "Level", "Percent", "Seconds", "Iops", "Throughput"))):
        try:
            return int(value)
        except ValueError:
            raise FieldPathError("sets: %s must be an integer, got %r" % (field, value))
    return value


def set_field(obj, assignment):
    """Apply one ``path=value`` to obj (in place)."""
    if "=" not in assignment:
        raise FieldPathError("sets: %r must be of the form cluster.spec.path=value" % assignment)
    raw_path, value = assignment.split("=", 1)
    segments = _segments(_normalize(raw_path))
    node = obj
    for position, (name, index) in enumerate(segments):
        last = position == len(segments) - 1
        if index is None:
            if last:
                node[name] = _convert(name, value, node.get(name))
                return
            node = node.setdefault(name, {})
            if not isinstance(node, dict):
                raise FieldPathError("sets: %s in %r is not an object" % (name, raw_path))
            continue
        items = node.setdefault(name, [])
        if not isinstance(items, list):
            raise FieldPathError("sets: %s in %r is not a list" % (name, raw_path))
        if index > len(items):
            raise FieldPathError("sets: %s[%d] in %r: index out of range (list has %d items)"
                                 % (name, index, raw_path, len(items)))
        if index == len(items):
            items.append({} if not last else None)
        if last:
            items[index] = value
            return
        node = items[index]


def unset_field(obj, path):
    segments = _segments(_normalize(path))
    node = obj
    for name, index in segments[:-1]:
        node = node.get(name) if isinstance(node, dict) else None
        if index is not None and isinstance(node, list):
            node = node[index] if index < len(node) else None
        if node is None:
            return
    name, index = segments[-1]
    if not isinstance(node, dict) or name not in node:
        return
    if index is None:
        del node[name]
    elif isinstance(node[name], list) and index < len(node[name]):
        del node[name][index]


def set_fields(obj, assignments):
    for assignment in assignments or []:
        set_field(obj, assignment)


def unset_fields(obj, paths):
    for path in paths or []:
        unset_field(obj, path)
