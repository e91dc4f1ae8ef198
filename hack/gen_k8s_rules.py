#!/usr/bin/env python
"""Regenerate plugins/module_utils/nodeup/component_rules_data.py from Kubernetes' and containerd's sources.

The real kubelet, kube-apiserver and containerd cannot run here, so what our node side writes is held to the
rules those programs apply at start-up, read from their own source by this script (docs/data-tables.md):

- the KubeletConfiguration (kubelet.config.k8s.io/v1beta1) a kubelet decodes strictly: every struct reachable
  from it, JSON name -> type (k8s.io/kubelet config/v1beta1/types.go, with the component-base, apimachinery and
  core/v1 types it uses);
- the labels a kubelet may set on itself with --node-labels (k8s.io/kubelet pkg/apis/well_known_labels.go, the
  core/v1 label constants it names, the `kubernetes.io` / `k8s.io` test of cmd/kubelet/app/options/options.go
  ValidateKubeletFlags, and the key / value syntax of apimachinery's pkg/util/validation/validation.go);
- the keys of containerd's config.toml per config schema: the toml tags of the CRI plugins' config structs and
  of the NRI plugin, per containerd release.

The source directory (--source) holds one tree per Kubernetes minor version (`1.32/k8s.io/<module>/<path>`),
one per containerd release (`containerd/<tag>/<path>`), `kubelet-options/options.go` (the part of kubernetes'
cmd/kubelet/app/options/options.go with ValidateKubeletFlags), and SOURCES: one line per file,
`<file> <repository> <tag or ref> <commit> <path in the repository>`, which the table's header repeats.

    hack/gen_k8s_rules.py --source /work/k8s-src --write plugins/module_utils/nodeup/component_rules_data.py
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

# Files of one Kubernetes minor version, by what they are read for (paths under <version>/).
KUBELET_TYPES = "k8s.io/kubelet/config/v1beta1/types.go"
KUBELET_LABELS = "k8s.io/kubelet/pkg/apis/well_known_labels.go"
CORE_LABELS = "k8s.io/api/core/v1/well_known_labels.go"
VALIDATION = "k8s.io/apimachinery/pkg/util/validation/validation.go"
CONTENT = "k8s.io/apimachinery/pkg/api/validate/content"
# Go packages the KubeletConfiguration's types come from: import path -> file of this tree.
PACKAGES = {
    "k8s.io/kubelet/config/v1beta1": KUBELET_TYPES,
    "k8s.io/component-base/logs/api/v1": "k8s.io/component-base/logs/api/v1/types.go",
    "k8s.io/component-base/tracing/api/v1": "k8s.io/component-base/tracing/api/v1/types.go",
    "k8s.io/apimachinery/pkg/apis/meta/v1": "k8s.io/apimachinery/pkg/apis/meta/v1/types.go",
    "k8s.io/api/core/v1": "k8s.io/api/core/v1/types.go",
}
# Types whose JSON form is not their Go structure: a custom UnmarshalJSON, read from the file named, which must
# hold the text given (so a changed decoder stops the generator instead of being missed).
#   duration: a string time.ParseDuration accepts; time: an RFC 3339 string (or null);
#   quantity: a resource quantity, a string or a number; duration_or_int: a duration string or nanoseconds.
LEAVES = {
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration"): (
        "duration", "k8s.io/apimachinery/pkg/apis/meta/v1/duration.go", "time.ParseDuration(str)"),
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Time"): (
        "time", "k8s.io/apimachinery/pkg/apis/meta/v1/time.go", "time.Parse(time.RFC3339, str)"),
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): (
        "quantity", "k8s.io/apimachinery/pkg/api/resource/quantity.go", "func (q *Quantity) UnmarshalJSON"),
    ("k8s.io/apimachinery/pkg/api/resource", "QuantityValue"): (
        "quantity", "k8s.io/apimachinery/pkg/api/resource/quantity.go", "type QuantityValue struct"),
    ("k8s.io/component-base/logs/api/v1", "TimeOrMetaDuration"): (
        "duration_or_int", "k8s.io/component-base/logs/api/v1/types.go", "func (t *TimeOrMetaDuration) UnmarshalJSON"),
}
GO_KINDS = {"string": "string", "bool": "bool", "float32": "float", "float64": "float", "any": "any",
            "interface{}": "any"}
GO_KINDS.update({name: "int" for name in ("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16",
                                          "uint32", "uint64")})

# containerd: per release, config.toml's plugin tables -> the Go struct (file, struct) each is decoded into.
# The plugin IDs are `<type>.<id>` of the plugin registrations (checked against the registration file below).
CONTAINERD_PLUGINS = {
    1: {  # containerd 1.x
        "io.containerd.grpc.v1.cri": ("pkg/cri/config/config.go", "PluginConfig", "pkg/cri/cri.go", 'ID:     "cri"'),
        "io.containerd.nri.v1.nri": ("pkg/nri/config.go", "Config", "pkg/nri/config.go", "type Config struct"),
    },
    2: {  # containerd 2.x
        "io.containerd.grpc.v1.cri": ("internal/cri/config/config.go", "ServerConfig", "plugins/cri/cri.go",
                                      'ID:   "cri"'),
        "io.containerd.cri.v1.runtime": ("internal/cri/config/config.go", "RuntimeConfig",
                                         "plugins/cri/runtime/plugin.go", 'ID:     "runtime"'),
        "io.containerd.cri.v1.images": ("internal/cri/config/config.go", "ImageConfig",
                                        "plugins/cri/images/plugin.go", 'ID:     "images"'),
        "io.containerd.nri.v1.nri": ("internal/nri/config.go", "Config", "plugins/nri/plugin.go", 'ID:   "nri"'),
    },
}
# The top-level Config of containerd's config.toml (its `version`, `root`, ... and the `plugins` table).
CONTAINERD_SERVER = {1: "services/server/config/config.go", 2: "cmd/containerd/server/config/config.go"}
# Go types in containerd's config structs that are toml leaves.
CONTAINERD_LEAVES = {"tomlext.Duration": "duration", "time.Duration": "duration", "toml.Tree": "any",
                     "toml.Primitive": "any", "map[string]any": "any", "map[string]interface{}": "any"}

HEADER = '''# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The start-up rules of the kubelet and containerd, read from their source (data, not code).

Generated by hack/gen_k8s_rules.py (docs/data-tables.md) from the files listed in SOURCES; do not edit by hand.

KUBELET_CONFIGURATION: Kubernetes minor -> {struct: ((json name, type), ...)}, every struct reachable from
  KubeletConfiguration (kubelet.config.k8s.io/v1beta1), which a kubelet decodes strictly.  A type is a kind
  (string, bool, int, float, duration, time, quantity, duration_or_int, any), "[]T", "map[string]T" or
  "struct:Name".
NODE_LABELS: Kubernetes minor -> the --node-labels rule: the label namespaces whose keys count as Kubernetes'
  own, the namespaces and keys a kubelet may set on itself, and the label key / value syntax.
CONTAINERD: containerd minor -> {"release", "max_schema" (the highest config.toml `version` it starts with),
  "plugins": {plugin id: "struct:Name"}, "top": ((key, type), ...),
  "structs": {...}}: config.toml's top-level keys (the `plugins` table's type is "plugins") and the toml keys of
  each plugin's config struct, in the same type notation.
SOURCES: the files each table was read from, by Kubernetes minor or containerd release:
  (file in the source directory, repository, tag or ref, commit, path in the repository).
"""

from __future__ import annotations

'''


def strip_comments(text):
    """Go text without its // and /* */ comments, read in one pass so a `/*` inside a // comment or a string
    literal (a path glob in a doc comment) does not start a block comment."""
    out = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if text.startswith("//", index):
            end = text.find("\n", index)
            index = length if end < 0 else end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            if end < 0:
                raise ValueError("an unterminated /* comment")
            out.append("\n" * text.count("\n", index, end))  # keep the line numbers
            index = end + 2
        elif char in "\"'`":
            end = index + 1
            while end < length and text[end] != char:
                end += 2 if text[end] == "\\" and char != "`" else 1
            out.append(text[index:end + 1])
            index = end + 1
        else:
            out.append(char)
            index += 1
    return "\n".join(line.rstrip() for line in "".join(out).split("\n"))


class GoFile:
    """The type declarations of one Go file: imports, struct bodies (parsed when asked for) and other types."""

    _IMPORT = re.compile(r'^\s*(?:([\w.]+)\s+)?"([^"]+)"\s*$')
    _TYPE = re.compile(r"^type\s+(\w+)\s+(.+?)\s*$")
    _FIELD = re.compile(r"^\s*([A-Z]\w*)\s+([^\s`]+)\s*(?:`([^`]*)`)?\s*$")
    _EMBEDDED = re.compile(r"^\s*(\*?[\w.]+)\s*(?:`([^`]*)`)?\s*$")
    _TAG = re.compile(r'([\w-]+):"([^"]*)"')

    def __init__(self, path):
        self.path = path
        text = strip_comments(pathlib.Path(path).read_text(encoding="utf-8"))
        self.imports, self.structs, self.types = {}, {}, {}
        lines = text.splitlines()
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if line.startswith("import ("):
                while not lines[index].startswith(")"):
                    match = self._IMPORT.match(lines[index])
                    if match:
                        self.imports[match.group(1) or match.group(2).split("/")[-1]] = match.group(2)
                    index += 1
                continue
            if line.startswith("import "):
                match = self._IMPORT.match(line[len("import "):])
                if match:
                    self.imports[match.group(1) or match.group(2).split("/")[-1]] = match.group(2)
                continue
            match = self._TYPE.match(line)
            if not match:
                continue
            name, rest = match.groups()
            if rest == "struct {":
                body = []
                depth = 1
                while depth:
                    body_line = lines[index]
                    index += 1
                    depth += body_line.count("{") - body_line.count("}")
                    if depth:
                        body.append((index, body_line))
                self.structs[name] = body
            elif rest == "struct{}":
                self.structs[name] = []
            else:
                self.types[name] = rest

    def fields(self, name):
        """[(go name or None if embedded, go type, tags)] of struct `name`, in declaration order."""
        out = []
        for number, line in self.structs[name]:
            if not line.strip():
                continue
            match = self._FIELD.match(line)
            if match and not match.group(2).startswith(("struct", "func", "interface", "chan")):
                out.append((match.group(1), match.group(2), dict(self._TAG.findall(match.group(3) or ""))))
                continue
            match = self._EMBEDDED.match(line)
            if match:
                out.append((None, match.group(1), dict(self._TAG.findall(match.group(2) or ""))))
                continue
            raise ValueError("%s:%d: cannot read this line of struct %s: %r" % (self.path, number, name, line))
        return out


class Resolver:
    """Resolves Go types to the table's notation, collecting every struct reached.

    packages: Go import path -> GoFile; leaves: (import path, name) -> kind; tag: "json" or "toml";
    opaque_outside: a type of a package not in `packages` is "any" instead of an error.
    """

    def __init__(self, packages, leaves, tag, opaque_outside=False):
        self.packages, self.leaves, self.tag = packages, leaves, tag
        self.opaque_outside = opaque_outside
        self.structs = {}
        self.origin = {}

    def go_type(self, go_type, package):
        go_type = go_type.lstrip("*")
        if go_type in GO_KINDS:
            return GO_KINDS[go_type]
        if go_type.startswith("[]"):
            return "[]" + self.go_type(go_type[2:], package)
        if go_type.startswith("map["):
            key, value = _split_map(go_type)
            if self.go_type(key, package) != "string":
                raise ValueError("%s: a map keyed by %s, not a string" % (self.packages[package].path, key))
            return "map[string]" + self.go_type(value, package)
        if "." in go_type:
            alias, name = go_type.split(".", 1)
            imported = self.packages[package].imports.get(alias)
            if imported is None:
                raise ValueError("%s: type %s of an unknown import %s" % (self.packages[package].path, go_type, alias))
            return self.named(imported, name)
        return self.named(package, go_type)

    def named(self, package, name):
        if (package, name) in self.leaves:
            return self.leaves[(package, name)]
        source = self.packages.get(package)
        if source is None and self.opaque_outside:
            return "any"  # a type of another repository's package: its key is known, its body is not checked
        if source is None:
            raise ValueError("type %s.%s: package %s is not in the source directory" % (package, name, package))
        if name in source.structs:
            self.struct(package, name)
            return "struct:" + name
        if name in source.types:
            return self.go_type(source.types[name], package)
        raise ValueError("%s: no type %s" % (source.path, name))

    def struct(self, package, name):
        """Records struct `name` (fields of inlined embedded structs merged in) under its bare name."""
        if name in self.structs:
            if self.origin[name] != package:
                raise ValueError("two structs named %s (%s, %s)" % (name, self.origin[name], package))
            return self.structs[name]
        self.structs[name] = None  # a placeholder while its fields are resolved (recursive types)
        self.origin[name] = package
        self.structs[name] = tuple(self.fields(package, name))
        return self.structs[name]

    def fields(self, package, name):
        out = []
        for go_name, go_type, tags in self.packages[package].fields(name):
            tag = tags.get(self.tag)
            key = (tag or "").split(",")[0]
            if tag == "-" or key == "-":
                continue
            if go_name is None and not key:
                # An embedded struct without a name of its own: its fields are the parent's.
                base = go_type.lstrip("*")
                embedded_package, embedded = package, base
                if "." in base:
                    alias, embedded = base.split(".", 1)
                    embedded_package = self.packages[package].imports[alias]
                if (embedded_package, embedded) in self.leaves:
                    raise ValueError("%s: %s embeds %s, a leaf" % (self.packages[package].path, name, base))
                out.extend(self.fields(embedded_package, embedded))
                continue
            out.append((key or go_name or go_type.split(".")[-1], self.go_type(go_type, package)))
        return out


def _split_map(go_type):
    """('K', 'V') of a Go map type `map[K]V`."""
    depth = 0
    for index, char in enumerate(go_type[3:], 3):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0:
            return go_type[4:index], go_type[index + 1:]
    raise ValueError("cannot read the map type %r" % go_type)


def _require(path, text):
    """Stops unless the file holds `text` (runs of white space compared as one space: gofmt aligns them)."""
    if " ".join(text.split()) not in " ".join(pathlib.Path(path).read_text(encoding="utf-8").split()):
        raise ValueError("%s no longer holds %r: re-read how that type decodes before regenerating" % (path, text))


def kubelet_configuration(tree):
    packages = {package: GoFile(tree / path) for package, path in PACKAGES.items()}
    leaves = {}
    for (package, name), (kind, path, evidence) in LEAVES.items():
        _require(tree / path, evidence)
        leaves[(package, name)] = kind
    resolver = Resolver(packages, leaves, "json")
    resolver.struct("k8s.io/kubelet/config/v1beta1", "KubeletConfiguration")
    return dict(sorted(resolver.structs.items()))


def _go_constants(path):
    """{name: value} of a Go file's string constants (`Name = "value"` and `Name = OtherName`)."""
    constants, pending = {}, {}
    for line in strip_comments(pathlib.Path(path).read_text(encoding="utf-8")).splitlines():
        match = re.match(r'^\s*(\w+)\s*(?:string\s*)?=\s*"([^"]*)"\s*$', line)
        if match:
            constants[match.group(1)] = match.group(2)
            continue
        match = re.match(r"^\s*(\w+)\s*=\s*(\w+)\s*$", line)
        if match:
            pending[match.group(1)] = match.group(2)
    for name, other in pending.items():
        if other in constants:
            constants[name] = constants[other]
    return constants


def _string_set(path, variable, constants):
    """The values of `var <variable> = sets.NewString(...)` in a Go file."""
    text = strip_comments(pathlib.Path(path).read_text(encoding="utf-8"))
    match = re.search(r"var %s = sets\.New(?:String|\[string\])\((.*?)\)" % variable, text, re.S)
    if not match:
        raise ValueError("%s: no `var %s = sets.NewString(...)`" % (path, variable))
    values = []
    for item in (part.strip() for part in match.group(1).split(",")):
        if not item:
            continue
        if item.startswith('"'):
            values.append(item.strip('"'))
            continue
        name = item.split(".")[-1]
        if name not in constants:
            raise ValueError("%s: %s names %s, which is not a known string constant" % (path, variable, item))
        values.append(constants[name])
    return tuple(sorted(values))


def node_labels(tree, options_go):
    constants = _go_constants(tree / CORE_LABELS)
    constants.update(_go_constants(tree / KUBELET_LABELS))
    text = strip_comments(pathlib.Path(options_go).read_text(encoding="utf-8"))
    match = re.search(r"func isKubernetesLabel\(key string\) bool \{(.*?)\n\}", text, re.S)
    if not match:
        raise ValueError("%s: no func isKubernetesLabel" % options_go)
    kubernetes = []
    for exact, suffix in re.findall(r'namespace == "([^"]+)" \|\| strings\.HasSuffix\(namespace, "\.([^"]+)"\)',
                                    match.group(1)):
        if exact != suffix:
            raise ValueError("%s: isKubernetesLabel tests %s and .%s: not one namespace" % (options_go, exact, suffix))
        kubernetes.append(exact)
    if not kubernetes or "ValidateKubeletFlags" not in text or "kubeletapis.IsKubeletLabel(k)" not in text:
        raise ValueError("%s: ValidateKubeletFlags no longer reads as expected" % options_go)
    # From Kubernetes 1.35 validation.go takes the constants from pkg/api/validate/content (`content.Name`).
    validation = "\n".join(path.read_text(encoding="utf-8") for path in
                           [tree / VALIDATION] + sorted((tree / CONTENT).glob("*.go")))

    def const(*names):
        """The Go expression of the first of `names` declared (1.35 renamed qualifiedName* to labelKey*)."""
        for name in names:
            for found in re.finditer(r"\bconst %s\s*(?:int\s*)?(?:string\s*)?=\s*(.+)" % name, validation):
                value = found.group(1).strip()
                if value != "content." + name:  # validation.go's alias of the content package's constant
                    return value
        raise ValueError("%s (or %s): no %s" % (tree / VALIDATION, tree / CONTENT, " / ".join(names)))

    def go_string(expression):
        """A Go string expression of literals and the constants already read, joined with +."""
        parts = []
        for part in (piece.strip() for piece in expression.split("+")):
            if part.startswith('"'):
                # An interpreted Go string literal: its escapes (`\\.`) are the regular expression's.
                parts.append(part[1:-1].encode("ascii").decode("unicode_escape"))
            else:
                parts.append(go_string(const(part)))
        return "".join(parts)

    return {
        "kubernetes_namespaces": tuple(kubernetes),
        "kubelet_namespaces": _string_set(tree / KUBELET_LABELS, "kubeletLabelNamespaces", constants),
        "kubelet_labels": _string_set(tree / KUBELET_LABELS, "kubeletLabels", constants),
        "qualified_name": "^(" + go_string(const("qualifiedNameFmt", "labelKeyFmt")) + ")$",
        "qualified_name_max": int(const("qualifiedNameMaxLength", "labelKeyMaxLength")),
        "prefix": "^" + go_string(const("dns1123SubdomainFmt")) + "$",
        "prefix_max": int(const("DNS1123SubdomainMaxLength")),
        "value": "^" + go_string(const("labelValueFmt")) + "$",
        "value_max": int(const("LabelValueMaxLength")),
    }


def containerd(tree):
    major = 1 if (tree / "pkg/cri/config/config.go").exists() else 2
    packages, plugins = {}, {}
    for plugin_id, (path, struct, registration, evidence) in sorted(CONTAINERD_PLUGINS[major].items()):
        _require(tree / registration, evidence)
        packages.setdefault(path, GoFile(tree / path))
        plugins[plugin_id] = (path, struct)
    packages[CONTAINERD_SERVER[major]] = GoFile(tree / CONTAINERD_SERVER[major])
    # Each file is its own package here; imports of other containerd packages are leaves when listed.
    leaves = {}
    for go_file in packages.values():
        for alias, imported in go_file.imports.items():
            for leaf, kind in CONTAINERD_LEAVES.items():
                if leaf.startswith(alias + "."):
                    leaves[(imported, leaf.split(".", 1)[1])] = kind
    # containerd's structs name packages of other repositories (NRI's validator, ...): those values are "any".
    resolver = Resolver(packages, leaves, "toml", opaque_outside=True)
    table = {"plugins": {}}
    for plugin_id, (path, struct) in sorted(plugins.items()):
        resolver.struct(path, struct)
        table["plugins"][plugin_id] = "struct:" + struct
    fields = [field for field in packages[CONTAINERD_SERVER[major]].fields("Config")]
    top = []
    for go_name, go_type, tags in fields:
        key = tags.get("toml", "").split(",")[0]
        if not key or key == "-":
            continue
        if key == "plugins":
            top.append((key, "plugins"))
            continue
        try:
            top.append((key, resolver.go_type(go_type, CONTAINERD_SERVER[major])))
        except (KeyError, ValueError):
            top.append((key, "any"))  # a top-level section we do not write: its key is known, its body unchecked
    table["top"] = tuple(top)
    table["max_schema"] = max_schema(tree, major)
    table["structs"] = dict(sorted(resolver.structs.items()))
    return table


def max_schema(tree, major):
    """The highest config.toml `version` a containerd release starts with (a higher one is refused)."""
    if major == 1:
        path = tree / CONTAINERD_SERVER[1]
        match = re.search(r"if version > (\d+) \{\s*[^}]*is not supported", path.read_text(encoding="utf-8"))
    else:
        path = tree / "version/version.go"
        match = re.search(r"^const ConfigVersion = (\d+)$", path.read_text(encoding="utf-8"), re.M)
    if not match:
        raise ValueError("%s: cannot find the highest config version containerd accepts" % path)
    return int(match.group(1))


def python_literal(value, indent):
    """`value` (dicts, tuples, strings, numbers) as Python source, one item a line, in pep8's hanging indents."""
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ("%s%r: %s,\n" % (inner, key, python_literal(item, indent + 4)) for key, item in value.items())
        return "{\n%s%s}" % ("".join(items), pad)
    if isinstance(value, (tuple, list)):
        flat = repr(tuple(value))
        if all(not isinstance(item, (dict, tuple, list)) for item in value) and indent + len(flat) <= 110:
            return flat
        return "(\n%s%s)" % ("".join("%s%s,\n" % (inner, python_literal(item, indent + 4)) for item in value), pad)
    return repr(value)


def read_sources(root):
    rows = []
    for line in (root / "SOURCES").read_text(encoding="utf-8").splitlines():
        if line.strip():
            path, repository, ref, commit, repo_path = line.split()
            rows.append((path, repository, ref, commit[:12], repo_path))
    return rows


def generate(root):
    root = pathlib.Path(root)
    sources = read_sources(root)
    versions = sorted((p.name for p in root.iterdir() if re.match(r"^1\.\d+$", p.name)), key=lambda v: int(v[2:]))
    releases = sorted((p.name for p in (root / "containerd").iterdir()),
                      key=lambda tag: tuple(int(x) for x in tag.lstrip("v").split(".")))
    if not versions or not releases:
        raise ValueError("%s holds no <minor>/ or containerd/<tag>/ trees" % root)
    options_go = root / "kubelet-options" / "options.go"
    kubelet = {version: kubelet_configuration(root / version) for version in versions}
    labels = {version: node_labels(root / version, options_go) for version in versions}
    runtimes = {}
    for tag in releases:
        minor = ".".join(tag.lstrip("v").split(".")[:2])
        runtimes[minor] = dict(release=tag.lstrip("v"), **containerd(root / "containerd" / tag))
    used = {}
    for path, repository, ref, commit, repo_path in sources:
        key = path.split("/", 1)[0] if not path.startswith("containerd/") else "containerd " + path.split("/")[1]
        used.setdefault(key, []).append((path, repository, ref, commit, repo_path))
    out = [HEADER]
    out.append("KUBERNETES_VERSIONS = %s\n" % repr(tuple(versions)))
    out.append("CONTAINERD_VERSIONS = %s\n\n" % repr(tuple(runtimes)))
    out.append("SOURCES = {\n")
    for key, rows in used.items():
        out.append("    %r: (\n" % key)
        out.extend("        (%r, %r, %r, %r,\n         %r),\n" % row for row in rows)
        out.append("    ),\n")
    out.append("}\n\n")
    for name, value in (("KUBELET_CONFIGURATION", kubelet), ("NODE_LABELS", labels), ("CONTAINERD", runtimes)):
        out.append("%s = %s\n\n" % (name, python_literal(value, 0)))
    return "".join(out).rstrip("\n") + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="the directory of assembled sources (see the docstring)")
    parser.add_argument("--write", metavar="FILE", help="write the table to FILE instead of stdout")
    args = parser.parse_args()
    try:
        text = generate(args.source)
    except (OSError, ValueError, KeyError) as err:
        print("error: %s" % err, file=sys.stderr)
        return 1
    if args.write:
        pathlib.Path(args.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
