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

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors
from ansible_collections.kubeops.kops.plugins.module_utils.api.schema_data import ALIASES, STRUCTS

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
    "corev1.Toleration": {"key": "string", "operator": "string", "value": "string", "effect": "string",
                          "tolerationSeconds": "int64"},
}
# Go scalar type -> the check its YAML value must pass.
SCALARS = {
    "string": "string", "bool": "bool",
    "int": "int", "int16": "int", "int32": "int", "int64": "int", "uint8": "int", "uint32": "int", "uint64": "int",
    "float32": "number", "float64": "number",
    "resource.Quantity": "quantity", "intstr.IntOrString": "int-or-string", "metav1.Duration": "string",
    "metav1.Time": "string", "corev1.Affinity": "any", "any": "any",
}
ROOTS = {"Cluster": "ClusterSpec", "InstanceGroup": "InstanceGroupSpec"}
# Fields kops' types no longer have but that specs in the wild (kops' own
# update_cluster/complex fixture among them) still carry.  They load and are
# kept as written so nothing is lost on a round trip; nothing reads them.
RETIRED_FIELDS = {
    "ClusterSpec": {"serviceOIDCProvider": "any"},
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


def _unknown(path, key, known):
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
                problems.append(_unknown(child, key, fields))
            else:
                _check(item, fields[key], child, problems)
        return
    _check_scalar(value, SCALARS.get(go_type, "any"), path, problems)


def _check_scalar(value, kind, path, problems):
    is_bool = isinstance(value, bool)
    is_int = isinstance(value, int) and not is_bool
    ok = {
        "string": isinstance(value, str),
        "bool": is_bool,
        "int": is_int,
        "number": is_int or (isinstance(value, float)),
        "quantity": isinstance(value, str) or is_int or isinstance(value, float),
        "int-or-string": isinstance(value, str) or is_int,
        "any": True,
    }[kind]
    if not ok:
        wanted = {"string": "a string (quote it)", "bool": "true or false", "int": "an integer",
                  "number": "a number", "quantity": "a quantity such as 100m or 1Gi",
                  "int-or-string": "an integer or a percentage string such as 25%"}[kind]
        problems.append(errors.invalid(path, value, "must be %s" % wanted))
