# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Field-level checks of kops objects against the v1alpha2 field table.

kops decodes YAML strictly: an unknown field, or a value of the wrong type,
is an error naming the field path.  check_fields() does the same and, for a
misspelt field, suggests the known name it is closest to.
"""

from __future__ import annotations

import difflib
import re

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, quantity
from ansible_collections.kubeops.kops.plugins.module_utils.api.generated.schema_data import ALIASES, STRUCTS

# Types from outside kops' API package, described the same way.
EXTERNAL_STRUCTS = {
    "ObjectMeta": {
        "name": "string", "generateName": "string", "namespace": "string", "selfLink": "string",
        "uid": "string", "resourceVersion": "string", "generation": "int64",
        "creationTimestamp": "metav1.Time", "deletionTimestamp": "metav1.Time",
        "deletionGracePeriodSeconds": "int64", "labels": "map[string]string",
        "annotations": "map[string]string", "ownerReferences": "[]any", "finalizers": "[]string",
        "managedFields": "[]any",
    },
    "corev1.EnvVar": {"name": "string", "value": "string", "valueFrom": "any"},
    # Only the top level of corev1.Affinity is checked; the terms below it are
    # Kubernetes' own types, which kops hands on without reading them.
    "corev1.Affinity": {"nodeAffinity": "any", "podAffinity": "any", "podAntiAffinity": "any"},
    "corev1.Toleration": {"key": "string", "operator": "string", "value": "string", "effect": "string",
                          "tolerationSeconds": "int64"},
}
# Go scalar type -> the name of the check its YAML value must pass (CHECKS).
SCALARS = {
    "string": "string", "bool": "bool",
    "int": "int64", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint32": "uint32", "uint64": "uint64",
    "float32": "number", "float64": "number",
    "resource.Quantity": "quantity", "intstr.IntOrString": "int-or-string", "metav1.Duration": "duration",
    "metav1.Time": "time", "any": "any",
}
ROOTS = {"Cluster": "ClusterSpec", "InstanceGroup": "InstanceGroupSpec"}
# Fields kops' types no longer have but that specs in the wild (kops' own
# update_cluster/complex fixture among them) still carry.  They load and are
# kept as written so nothing is lost on a round trip; nothing reads them.
RETIRED_FIELDS = {
    "ClusterSpec": {"serviceOIDCProvider": "any"},
}
# Fields kops.k8s.io/v1alpha3 spells differently (struct -> {v1alpha3 name:
# v1alpha2 name}), from kops' two type packages: specs copied from v1alpha3
# get pointed at the v1alpha2 name.
V1ALPHA3_NAMES = {
    "AmazonVPCNetworkingSpec": {"image": "imageName", "initImage": "initImageName"},
    "AzureSpec": {"subscriptionID": "subscriptionId", "tenantID": "tenantId"},
    "BastionSpec": {"publicName": "bastionPublicName"},
    "CiliumNetworkingSpec": {"toFQDNsDNSRejectResponseCode": "toFqdnsDnsRejectResponseCode",
                             "toFQDNsEnablePoller": "toFqdnsEnablePoller"},
    "ClusterSpec": {"controlPlaneKubelet": "masterKubelet", "externalDNS": "externalDns"},
    "EtcdMemberSpec": {"volumeIOPS": "volumeIops", "kmsKeyID": "kmsKeyId"},
    "InstanceGroupSpec": {"associatePublicIP": "associatePublicIp"},
    "KubeAPIServerConfig": {"authorizationWebhookCacheAuthorizedTTL": "authorizationWebhookCacheAuthorizedTtl",
                            "authorizationWebhookCacheUnauthorizedTTL": "authorizationWebhookCacheUnauthorizedTtl"},
    "KubeControllerManagerConfig": {"concurrentRCSyncs": "concurrentRcSyncs"},
    "KubeProxyConfig": {"ipvsExcludeCIDRs": "ipvsExcludeCidrs"},
    "KubeletConfigSpec": {"authenticationTokenWebhookCacheTTL": "authenticationTokenWebhookCacheTtl"},
    "LoadBalancerAccessSpec": {"useForInternalAPI": "useForInternalApi"},
    "LoadBalancerSpec": {"targetGroupARN": "targetGroupArn"},
    "LoadBalancerSubnetSpec": {"allocationID": "allocationId"},
    "NetworkingSpec": {"kubeRouter": "kuberouter", "amazonVPC": "amazonvpc", "gcp": "gce"},
}
TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec")
_MAP = re.compile(r"^map\[string\](.+)$")


def _struct(name):
    fields = STRUCTS.get(name) if name in STRUCTS else EXTERNAL_STRUCTS.get(name)
    if fields is not None and name in RETIRED_FIELDS:
        fields = dict(fields, **RETIRED_FIELDS[name])
    return fields


def _resolve(go_type):
    while go_type in ALIASES:
        go_type = ALIASES[go_type]
    return go_type


def check_fields(obj):
    """Every unknown field and wrongly typed value in a Cluster or InstanceGroup dict."""
    problems = []
    for key in obj:
        if key not in TOP_LEVEL:
            problems.append(_unknown(str(key), key, TOP_LEVEL))
    if "metadata" in obj:
        _check(obj["metadata"], "ObjectMeta", "metadata", problems)
    root = ROOTS.get(obj.get("kind"))
    if root and "spec" in obj:
        _check(obj["spec"], root, "spec", problems)
    return problems


def field_type(kind, path):
    """The Go type of a dotted v1alpha2 field path (e.g. "spec.kubelet.maxPods"), or None."""
    go_type = ROOTS.get(kind)
    for part in path.split(".")[1:]:
        part = re.sub(r"\[\d+\]$", "", part)
        go_type = _resolve(go_type)
        if go_type.startswith("[]"):
            go_type = _resolve(go_type[2:])
        fields = _struct(go_type)
        if fields is None or part not in fields:
            return None
        go_type = fields[part]
    return _resolve(go_type)


def canonical_values(obj):
    """obj (a Cluster or InstanceGroup dict) with its values as kops writes them back, in place: every
    resource.Quantity canonical (3.14 -> 3140m: api/quantity.py), the keys of map[string] fields strings (YAML's
    100: is Go's "100").  Values that are not quantities are left to check_fields."""
    root = ROOTS.get(obj.get("kind"))
    if root and isinstance(obj.get("spec"), dict):
        obj["spec"] = _canonical(obj["spec"], root)
    return obj


def _map_key(key):
    """A YAML mapping key as Go's YAML-to-JSON decoding makes it a map[string] key."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


def _canonical(value, go_type):
    go_type = _resolve(go_type)
    if value is None:
        return value
    if go_type.startswith("[]"):
        return [_canonical(item, go_type[2:]) for item in value] if isinstance(value, list) else value
    match = _MAP.match(go_type)
    if match:
        return {_map_key(k): _canonical(v, match.group(1)) for k, v in value.items()} if isinstance(value, dict) \
            else value
    fields = _struct(go_type)
    if fields is not None:
        return {k: _canonical(v, fields[k]) if k in fields else v for k, v in value.items()} \
            if isinstance(value, dict) else value
    if SCALARS.get(go_type) == "quantity" and CHECKS["quantity"][0](value):
        return quantity.canonical(value)
    return value


def _unknown(path, key, known, renamed=None):
    if renamed and key in renamed:
        return errors.unknown_field(path, 'unknown field "%s"; v1alpha2 calls it "%s"' % (key, renamed[key]))
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.75)
    hint = '; did you mean "%s"?' % close[0] if close else ""
    return errors.unknown_field(path, 'unknown field "%s"%s' % (key, hint))


def _check(value, go_type, path, problems):
    go_type = _resolve(go_type)
    if value is None:
        return  # an explicit null is "not set", as in Go
    if go_type.startswith("[]"):
        if not isinstance(value, list):
            problems.append(errors.invalid(path, value, "must be a list"))
            return
        for index, item in enumerate(value):
            _check(item, go_type[2:], "%s[%d]" % (path, index), problems)
        return
    match = _MAP.match(go_type)
    if match:
        if not isinstance(value, dict):
            problems.append(errors.invalid(path, value, "must be a mapping"))
            return
        for key, item in value.items():
            _check(item, match.group(1), "%s[%s]" % (path, key), problems)
        return
    fields = _struct(go_type)
    if fields is not None:
        if not isinstance(value, dict):
            problems.append(errors.invalid(path, value, "must be a mapping"))
            return
        for key, item in value.items():
            child = "%s.%s" % (path, key)
            if key not in fields:
                problems.append(_unknown(child, key, fields, V1ALPHA3_NAMES.get(go_type)))
            else:
                _check(item, fields[key], child, problems)
        return
    _check_scalar(value, SCALARS[go_type], path, problems)


def _check_scalar(value, check, path, problems):
    test, wanted = CHECKS[check]
    if not test(value):
        problems.append(errors.invalid(path, value, "must be %s" % wanted))


def _is_int(value):
    # A YAML float with no fraction (110.0) reaches Go's decoder as 110.
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _int_in(low, high):
    return lambda value: _is_int(value) and low <= value <= high


# resource.ParseQuantity's grammar: a signed decimal, then a binary-SI,
# decimal-SI or exponent suffix.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$")
# Go's time.ParseDuration: "0", or one or more number+unit pairs.
_DURATION = re.compile(r"^[+-]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$")
# metav1.Time decodes RFC 3339 only.
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# check name -> (test, what the value must be).  Ranges are Go's integer
# widths: kops' JSON decoding rejects a number that does not fit.
CHECKS = {
    "string": (lambda v: isinstance(v, str), "a string (quote it)"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "int16": (_int_in(-2 ** 15, 2 ** 15 - 1), "an integer from -32768 to 32767"),
    "int32": (_int_in(-2 ** 31, 2 ** 31 - 1), "an integer that fits in 32 bits"),
    "int64": (_int_in(-2 ** 63, 2 ** 63 - 1), "an integer"),
    "uint8": (_int_in(0, 2 ** 8 - 1), "an integer from 0 to 255"),
    "uint32": (_int_in(0, 2 ** 32 - 1), "an integer from 0 to 4294967295"),
    "uint64": (_int_in(0, 2 ** 64 - 1), "a non-negative integer"),
    "number": (_is_number, "a number"),
    "quantity": (lambda v: _is_number(v) or (isinstance(v, str) and bool(_QUANTITY.match(v.strip()))),
                 "a quantity such as 100m, 0.5 or 1Gi"),
    "int-or-string": (lambda v: isinstance(v, str) or _int_in(-2 ** 31, 2 ** 31 - 1)(v),
                      "an integer or a string such as 25%"),
    "duration": (lambda v: isinstance(v, str) and bool(_DURATION.match(v)), "a duration such as 90s, 5m or 1h30m"),
    "time": (lambda v: isinstance(v, str) and bool(_TIME.match(v)), "an RFC 3339 time such as 2024-01-02T15:04:05Z"),
    "any": (lambda v: True, "anything"),
}
