#!/usr/bin/env python
"""Regenerate plugins/module_utils/api/schema_data.py from a kops checkout.

Reads the Go types of pkg/apis/kops/v1alpha2 (struct fields with their JSON
names, and `type X string` aliases) and writes every struct reachable from
ClusterSpec and InstanceGroupSpec, the only ones a Cluster or InstanceGroup
spec can contain.  Pointers are dropped from the Go types (schema.py treats
a pointer and its value alike).

    hack/gen_schema_data.py --kops ../kops > plugins/module_utils/api/schema_data.py
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

import kops_go

PACKAGE = "pkg/apis/kops/v1alpha2"
ROOTS = ("ClusterSpec", "InstanceGroupSpec")
_TYPE_NAMES = re.compile(r"[A-Za-z_][\w.]*")

HEADER = '''# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kops.k8s.io/v1alpha2 field table: every struct of Cluster and InstanceGroup.

Data, not code: struct name -> {JSON field name: Go type}.  It follows kops'
Go types in pkg/apis/kops/v1alpha2 (kops %(version)s, commit %(commit)s);
schema.py interprets the Go type strings.  Regenerate it from those types
when kops adds fields.
"""

from __future__ import annotations

# pylint: disable=too-many-lines
'''


def go_type(field):
    """The Go type as the table writes it: without pointers."""
    return field.go_type.replace("*", "")


def struct_fields(name, structs):
    """JSON name -> Go type of a struct, inlined embedded structs merged in."""
    fields = {}
    for field in structs[name]:
        if field.inline:
            if field.go_type in structs:
                fields.update(struct_fields(field.go_type, structs))
            continue
        if field.json_name is None:
            continue
        fields[field.json_name] = go_type(field)
    return fields


def build(kops):
    """(STRUCTS, ALIASES) of the v1alpha2 types reachable from ROOTS."""
    structs, aliases = kops_go.parse_package(pathlib.Path(kops) / PACKAGE)
    missing = [root for root in ROOTS if root not in structs]
    if missing:
        raise ValueError("no struct %s in %s/%s" % (", ".join(missing), kops, PACKAGE))
    table, used_aliases = {}, {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in table:
            continue
        table[name] = struct_fields(name, structs)
        for type_text in table[name].values():
            for ref in _TYPE_NAMES.findall(type_text):
                if ref in structs:
                    pending.append(ref)
                elif ref in aliases:
                    used_aliases[ref] = aliases[ref]
    return table, used_aliases


def render(table, aliases, version, commit):
    lines = [HEADER % {"version": version, "commit": commit} + "STRUCTS = {"]
    for name in sorted(table):
        fields = table[name]
        if not fields:
            lines.append("    %s: {}," % json.dumps(name))
            continue
        lines.append("    %s: {" % json.dumps(name))
        for field in sorted(fields):
            lines.append("        %s: %s," % (json.dumps(field), json.dumps(fields[field])))
        lines.append("    },")
    lines.append("}")
    lines.append("")
    lines.append("ALIASES = {")
    for name in sorted(aliases):
        lines.append("    %s: %s," % (json.dumps(name), json.dumps(aliases[name])))
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(kops, commit=None):
    table, aliases = build(kops)
    return render(table, aliases, kops_go.kops_version(kops), kops_go.git_commit(kops, commit))


if __name__ == "__main__":
    sys.exit(kops_go.main(generate, __doc__.splitlines()[0]))
