#!/usr/bin/env python
"""Regenerate plugins/module_utils/nodeup/generated/component_rules_data.py from Kubernetes' and containerd's sources.

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

- the command-line flags of the kubelet, kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy:
  the pflag registrations reached from each component's command (FLAG_COMMANDS), per Kubernetes minor, from
  `flags/<minor>/k8s.io/<module>/<package>/` (whole Go packages; OpenShift's own flags left out).

The source directory (--source) holds one tree per Kubernetes minor version (`1.32/k8s.io/<module>/<path>`),
one per containerd release (`containerd/<tag>/<path>`), `kubelet-options/options.go` (the part of kubernetes'
cmd/kubelet/app/options/options.go with ValidateKubeletFlags), and SOURCES: one line per file,
`<file> <repository> <tag or ref> <commit> <path in the repository>`, which the table's header repeats.

    hack/gen_k8s_rules.py --source /work/k8s-src --write plugins/module_utils/nodeup/generated/component_rules_data.py
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
FLAGS: component -> {flag: the Kubernetes minors whose component registers it}, for kubelet, kube-apiserver,
  kube-controller-manager, kube-scheduler and kube-proxy (FLAG_VERSIONS); a flag a minor does not list is
  unknown to it (the component refuses to start).
DEPRECATED_FLAGS: component -> {flag: {minor: the MarkDeprecated message}}: accepted, with a warning.
SOURCES: the files (or, for flags, the Go packages) each table was read from, by Kubernetes minor, flags
  minor or containerd release: (file in the source directory, repository, tag or ref, commit, path in the
  repository).
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
    fields = list(packages[CONTAINERD_SERVER[major]].fields("Config"))
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


# --- command-line flags ------------------------------------------------------------------------------------------
# Each component's flags are the pflag registrations reached from its command: the entry calls listed below
# (checked against the command function's text), then every call inside a scanned function that is handed a
# flag set, followed to its declaration by the Go types of the receiver's fields.  A call the generator cannot
# follow stops it, unless CALLS says what it registers (and why).
K8S = "k8s.io/kubernetes"
FLAG_COMMANDS = {
    "kubelet": (K8S + "/cmd/kubelet/app", None, "NewKubeletCommand", (
        ("kubeletFlags.AddFlags(cleanFlagSet)", K8S + "/cmd/kubelet/app/options", "KubeletFlags", "AddFlags"),
        ("options.AddKubeletConfigFlags(cleanFlagSet, kubeletConfig)", K8S + "/cmd/kubelet/app/options", None,
         "AddKubeletConfigFlags"),
        ("options.AddGlobalFlags(cleanFlagSet)", K8S + "/cmd/kubelet/app/options", None, "AddGlobalFlags"),
    )),
    "kube-apiserver": (K8S + "/cmd/kube-apiserver/app", None, "NewAPIServerCommand", (
        ("s.Flags()", K8S + "/cmd/kube-apiserver/app/options", "ServerRunOptions", "Flags"),
    )),
    "kube-controller-manager": (K8S + "/cmd/kube-controller-manager/app", None, "NewControllerManagerCommand", (
        ("s.Flags(KnownControllers(), ControllersDisabledByDefault(), ControllerAliases())",
         K8S + "/cmd/kube-controller-manager/app/options", "KubeControllerManagerOptions", "Flags"),
    )),
    "kube-scheduler": (K8S + "/cmd/kube-scheduler/app", None, "NewSchedulerCommand", (
        ("opts.Flags", K8S + "/cmd/kube-scheduler/app/options", "Options", "initFlags"),
    )),
    "kube-proxy": (K8S + "/cmd/kube-proxy/app", None, "NewProxyCommand", (
        ("opts.AddFlags(fs)", K8S + "/cmd/kube-proxy/app", "Options", "AddFlags"),
    )),
}
# Calls the type walk cannot follow (an interface's method, a package variable's method, a flag copied from Go's
# flag package): call text -> the registrations it makes, each ((package, file), evidence the file must hold,
# flags).  evidence is code of that file, so a changed registration stops the generator.
FLAG_CALLS = {
    # verflag.AddFlags: `fs.AddFlag(flag.Lookup(versionFlagName))`, versionFlagName = "version"
    "verflag.AddFlags(": ("k8s.io/component-base/version/verflag", "const versionFlagName = \"version\"", ("version",), None),
    # logs.AddFlags adds klog's v / vmodule (klogflags.Init) and --log-flush-frequency, all three skipped with
    # logs.SkipLoggingConfigurationFlags() (logsapi.AddFlags registers them instead): every caller passes it.
    "logs.AddFlags(fs, logs.SkipLoggingConfigurationFlags())": (
        "k8s.io/component-base/logs", 'case "v", logsapi.LogFlushFreqFlagName: if o.skipLoggingConfigurationFlags '
        '{ return } case "vmodule": if o.skipLoggingConfigurationFlags { return }', (), None),
    # globalflag.AddGlobalFlags: logs.AddFlags(fs, opts...) (nothing, with the skip option) and --help.
    "globalflag.AddGlobalFlags(": ("k8s.io/component-base/cli/globalflag",
                                   'logs.AddFlags(fs, opts...) fs.BoolP("help", "h", false,', ("help",),
                                   "logs.SkipLoggingConfigurationFlags()"),
}
# Calls handed a flag set that register nothing: they parse, read, print or merge flags already registered.
FLAG_READERS = {"SetUsageFunc", "SetHelpFunc", "PrintFlags", "SetUsageAndHelpFunc", "Parse", "ParseFlags", "Args",
                "GetBool", "GetString", "Lookup", "VisitAll", "Visit", "Set", "Changed", "FlagUsagesWrapped",
                "AddFlagSet", "SetNormalizeFunc", "Complete", "MarkFlagFilename", "WordSepNormalizeFunc",
                "NArg", "SetGlobalNormalizationFunc"}
# Flags a component accepts that no scanned function registers: (flag, package, evidence the package must hold).
# kube-proxy parses with cobra, which adds --help itself and merges pflag.CommandLine, where verflag registers
# --version; NewProxyCommand also adds Go's flag.CommandLine, for cadvisor's --boot-id-file / --machine-id-file.
FLAG_EXTRAS = {
    "kube-proxy": (
        ("help", K8S + "/cmd/kube-proxy/app", "cmd := &cobra.Command{"),
        ("version", "k8s.io/component-base/version/verflag", "versionFlag = Version(versionFlagName, VersionFalse,"),
        ("boot-id-file", K8S + "/cmd/kube-proxy/app", "fs.AddGoFlagSet(goflag.CommandLine)"),
        ("machine-id-file", K8S + "/cmd/kube-proxy/app", "fs.AddGoFlagSet(goflag.CommandLine)"),
    ),
}
# OpenShift's own flags in the openshift/microshift copy of the Kubernetes tree (not upstream Kubernetes): found by
# comparing the flags read from it with those of an upstream tree of the same release line (docs/data-tables.md),
# and left out; each must still be registered, so a changed carry stops the generator.
OPENSHIFT_CARRIES = {
    "kubelet": ("max-housekeeping-interval",),
    "kube-apiserver": ("openshift-config",),
    "kube-controller-manager": ("openshift-config", "unsupported-kube-api-over-localhost"),
    "kube-scheduler": ("unsupported-kube-api-over-localhost",),
}
# Methods of interface-typed fields: interface type name -> (package dirs to search, concrete type).
FLAG_INTERFACES = {
    "ComponentGlobalsRegistry": (("k8s.io/component-base/featuregate", "k8s.io/component-base/compatibility",
                                  "k8s.io/apiserver/pkg/util/version"), "componentGlobalsRegistry"),
    "MutableFeatureGate": (("k8s.io/component-base/featuregate",), "featureGate"),
}
PFLAG_TYPES = ("Bool", "BoolSlice", "BytesBase64", "BytesHex", "Count", "Duration", "DurationSlice", "Float32",
               "Float32Slice", "Float64", "Float64Slice", "IP", "IPMask", "IPNet", "IPNetSlice", "IPSlice", "Int",
               "Int16", "Int32", "Int32Slice", "Int64", "Int64Slice", "Int8", "IntSlice", "String", "StringArray",
               "StringSlice", "StringToInt", "StringToInt64", "StringToString", "Uint", "Uint16", "Uint32",
               "Uint64", "Uint8", "UintSlice")
# pflag method -> index of the flag name argument
PFLAG_METHODS = {"Var": 1, "VarP": 1, "VarPF": 1}
for _t in PFLAG_TYPES:
    PFLAG_METHODS.update({_t: 0, _t + "P": 0, _t + "Var": 1, _t + "VarP": 1})
# Registrars of Go flags copied onto a pflag set: function name -> (name argument, deprecated); the name is
# normalized "_" -> "-" (cmd/kubelet/app/options/globalflags.go register / registerDeprecated, normalize).
GO_FLAG_REGISTRARS = {"register": (2, False), "registerDeprecated": (2, True), "globalflag.Register": (1, False)}
GOOS_TRUE = {"linux", "unix", "cgo", "amd64"}


def _build_ok(path, text):
    """Whether a Go file is built for linux/amd64 with the default tags (no `providerless`)."""
    name = path.name[:-3]
    for suffix in ("_test", "_windows", "_darwin", "_freebsd", "_openbsd", "_netbsd", "_solaris", "_plan9",
                   "_js", "_wasip1", "_aix", "_dragonfly", "_illumos", "_ios", "_android", "_arm64", "_arm",
                   "_386", "_ppc64le", "_s390x", "_riscv64", "_mips64", "_others", "_other", "_unsupported"):
        if name.endswith(suffix) and not (suffix in ("_others", "_other", "_unsupported")):
            return False
    match = re.search(r"^//go:build (.+)$", text, re.M)
    if not match:
        return True
    expression = re.sub(r"[\w.]+", lambda m: str(m.group(0) in GOOS_TRUE), match.group(1))
    expression = expression.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    return bool(eval(expression, {"__builtins__": {}}, {"True": True, "False": False}))  # pylint: disable=eval-used


class GoPackage:
    """The linux/amd64 files of one Go package: function bodies, struct field types, string constants, imports."""

    _FUNC = re.compile(r"^func (?:\((\w+) \*?(\w+)(?:\[[^\]]*\])?\) )?(\w+)\(", re.M)

    def __init__(self, directory, name):
        self.name = name
        self.files = []
        for path in sorted(pathlib.Path(directory).glob("*.go")):
            raw = path.read_text(encoding="utf-8")
            if _build_ok(path, raw):
                self.files.append((path, strip_comments(raw), GoFile(path)))
        if not self.files:
            raise ValueError("%s: no Go files for linux" % directory)
        self.constants = {}
        for _path, text, _go in self.files:
            for match in re.finditer(r'^\s*(?:const\s+)?(\w+)\s*(?:string\s*)?=\s*("[^"\n]*"(?:\s*\+\s*"[^"\n]*")*)\s*$',
                                     text, re.M):
                self.constants.setdefault(match.group(1), "".join(re.findall(r'"([^"]*)"', match.group(2))))

    def function(self, receiver, name):
        """(file, receiver variable, parameters text, body) of func `name` (method of `receiver` when given)."""
        for path, text, _go in self.files:
            for match in self._FUNC.finditer(text):
                if match.group(3) == name and (match.group(2) or None) == receiver:
                    _params, end = _balanced(text, match.end() - 1, "(", ")")
                    open_brace = text.index("{", end)
                    body, _end = _balanced(text, open_brace, "{", "}")
                    return path, match.group(1), text[match.end():open_brace], body
        return None

    def imports(self, path):
        return next(go.imports for file_path, _text, go in self.files if file_path == path)

    def struct_fields(self, struct):
        """[(field name or None if embedded, type, file)] of a struct of this package (unexported fields too)."""
        for path, _text, go in self.files:
            if struct in go.structs:
                out = []
                for _number, line in go.structs[struct]:
                    match = re.match(r"^\s*(\w+)\s+([^\s`]+)", line)
                    embedded = re.match(r"^\s*(\*?[\w.]+)\s*(?:`[^`]*`)?\s*$", line)
                    if embedded:
                        out.append((None, embedded.group(1).lstrip("*"), path))
                    elif match:
                        out.append((match.group(1), match.group(2).lstrip("*"), path))
                return out
        return []

    def field_type(self, struct, field):
        """The Go type of `struct`'s field (embedded fields by their type name), with the file declaring it."""
        for go_name, go_type, path in self.struct_fields(struct):
            if go_name == field or (go_name is None and go_type.split(".")[-1] == field):
                return go_type, path
        return None

    def embedded(self, struct):
        return [(go_type, path) for go_name, go_type, path in self.struct_fields(struct) if go_name is None]


def _balanced(text, start, opening, closing):
    """(the text inside the bracket at `start`, the index after its closing bracket), strings skipped."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char in "\"'`":
            end = index + 1
            while text[end] != char:
                end += 2 if text[end] == "\\" and char != "`" else 1
            index = end + 1
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return text[start + 1:index], index + 1
        index += 1
    raise ValueError("unbalanced %s at %d" % (opening, start))


def _split_args(text):
    args, depth, current, index = [], 0, [], 0
    while index < len(text):
        char = text[index]
        if char in "\"'`":
            end = index + 1
            while text[end] != char:
                end += 2 if text[end] == "\\" and char != "`" else 1
            current.append(text[index:end + 1])
            index = end + 1
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        index += 1
    if "".join(current).strip():
        args.append("".join(current).strip())
    return args


class FlagReader:
    """The flags one component registers in one Kubernetes tree (`tree/<import path>/`)."""

    _CALL = re.compile(r"([A-Za-z_][\w.]*(?:\([^()]*\))?)\.(\w+)\(|(?<![\w.])([a-z]\w*)\(")

    def __init__(self, tree):
        self.tree = pathlib.Path(tree)
        self.packages = {}
        self.flags = {}       # name -> {"deprecated": message or None, "hidden": bool, "source": "module path"}
        self.visited = set()
        self.files = set()
        self.call_args = []          # the values of the arguments of the call being followed (None: not a string)
        self.command_flagsets = set()  # the command function's variables holding its flag sets
        self.entry_calls = ()        # the command function's calls FLAG_COMMANDS follows

    def package(self, import_path):
        if import_path not in self.packages:
            directory = self.tree / import_path
            if not directory.is_dir():
                raise ValueError("package %s is not in the source directory %s" % (import_path, self.tree))
            self.packages[import_path] = GoPackage(directory, import_path)
        return self.packages[import_path]

    def source_of(self, path):
        relative = str(pathlib.Path(path).relative_to(self.tree))
        self.files.add(relative)
        return relative

    def add(self, name, where, deprecated=None):
        entry = self.flags.setdefault(name, {"deprecated": None, "hidden": False, "source": where})
        if deprecated is not None:
            entry["deprecated"] = deprecated

    def command(self, component):
        import_path, receiver, name, entries = FLAG_COMMANDS[component]
        package = self.package(import_path)
        found = package.function(receiver, name)
        if found is None:
            raise ValueError("%s: no func %s" % (import_path, name))
        path, _recv, params, body = found
        self.source_of(path)
        flat = " ".join(body.split())
        for call, target_package, target_receiver, target in entries:
            if call not in flat:
                raise ValueError("%s %s no longer calls %s: re-read how %s builds its flags" %
                                 (path, name, call, component))
            self.walk(target_package, target_receiver, target, {})
        self.command_flagsets = set(re.findall(r"(\w+)\s*:?=\s*(?:%s)" % "|".join(
            re.escape(call) for call, _p, _r, _t in entries), flat))
        self.entry_calls = tuple(call for call, _p, _r, _t in entries)
        self.scan(package, path, body, params, {})
        return self.flags

    def walk(self, import_path, receiver, name, bindings):
        key = (import_path, receiver, name, tuple(self.call_args))
        if key in self.visited and not bindings:
            return
        self.visited.add(key)
        package = self.package(import_path)
        found = package.function(receiver, name)
        if found is None and receiver and package.embedded(receiver):
            # a method promoted from an embedded struct (SecureServingOptionsWithLoopback, ...)
            self.visited.discard(key)
            return self.method((import_path, receiver), name, import_path, name, embedded_only=True)
        if found is None:
            raise ValueError("%s: no func %s%s" % (import_path, receiver + "." if receiver else "", name))
        path, recv, params, body = found
        if not bindings and self.call_args:
            names = [arg.split()[0] for arg in _split_args(_balanced("(" + params.split(")")[0] + ")", 0, "(", ")")[0])
                     if arg.split()]
            bindings = {n: v for n, v in zip(names, self.call_args) if v is not None}
        self.call_args = []
        self.scan(package, path, body, params, {"recv": recv, "receiver": receiver, "bindings": bindings})

    def resolve_type(self, package, path, go_type):
        """(import path, type name) of a Go type written in `path` of `package`."""
        go_type = go_type.lstrip("*")
        if "." in go_type:
            alias, name = go_type.split(".", 1)
            imported = package.imports(path).get(alias)
            return (imported, name) if imported else None
        return package.name, go_type

    def flag_name(self, package, expression, where, bindings=None):
        bindings = bindings or {}
        expression = expression.strip()
        sprintf = re.match(r'^fmt\.Sprintf\((.*)\)$', expression, re.S)
        if sprintf:
            args = _split_args(sprintf.group(1))
            values = tuple(self.flag_name(package, arg, where, bindings) for arg in args[1:])
            return self.flag_name(package, args[0], where, bindings).replace("%%s", "%s") % values
        parts = [part.strip() for part in expression.split("+")]
        out = []
        if "(" in expression:
            raise ValueError("%s: cannot read the flag name %s" % (where, expression))
        for part in parts:
            if part in bindings:
                out.append(bindings[part])
            elif part.startswith('"'):
                out.append(part[1:-1])
            elif part.split(".")[-1] in package.constants and "." not in part:
                out.append(package.constants[part])
            elif "." in part:
                alias, const = part.split(".", 1)
                imported = None
                for _path, _text, go in package.files:
                    imported = imported or go.imports.get(alias)
                if imported is None:
                    raise ValueError("%s: cannot read the flag name %s" % (where, expression))
                other = self.package(imported)
                if const not in other.constants:
                    raise ValueError("%s: %s has no string constant %s" % (where, imported, const))
                out.append(other.constants[const])
            elif part in package.constants:
                out.append(package.constants[part])
            else:
                raise ValueError("%s: cannot read the flag name %s" % (where, expression))
        return "".join(out)

    @staticmethod
    def message(package, expression):
        """A deprecation message: its string literals joined, or the string constant it names."""
        literals = re.findall(r'"((?:[^"\\]|\\.)*)"', expression)
        if literals:
            return "".join(literals)
        return package.constants.get(expression.strip(), expression.strip())

    def scan(self, package, path, body, params, context, skip_calls=False):
        where = self.source_of(path)
        flagsets = set(re.findall(r"(\w+)\s+\*?(?:pflag\.FlagSet|cliflag\.NamedFlagSets|flagSet|\*?flag\.FlagSet)\b",
                                  params))
        flagsets.update(re.findall(r"(\w+)\s*:?=\s*(?:\w+\.FlagSet\(|pflag\.NewFlagSet\(|cmd\.Flags\(\)|"
                                   r"cliflag\.NamedFlagSets\{)", body))
        flagsets.update(re.findall(r"\((\w+) cliflag\.NamedFlagSets\)", params))
        flagsets.update(self.command_flagsets)
        flagsets.discard("")
        for match in self._CALL.finditer(body):
            args_text, _end = _balanced(body, match.end() - 1, "(", ")")
            args = _split_args(args_text)
            line = "%s:%d" % (where, body.count("\n", 0, match.start()) + 1)
            if match.group(3):  # a call of a function of this package
                function = match.group(3)
                if function in GO_FLAG_REGISTRARS:
                    index, deprecated = GO_FLAG_REGISTRARS[function]
                    self.add(self.flag_name(package, args[index], line).replace("_", "-"), where,
                             self.message(package, args[index + 1]) if deprecated else None)
                    continue
                if any(re.search(r"\b%s\b" % fs, arg) for arg in args for fs in flagsets) and not skip_calls:
                    if package.function(None, function):
                        self.walk(package.name, None, function, {})
                continue
            target, method = match.group(1), match.group(2)
            base = target.split("(")[0].split(".")[0]
            if base in flagsets or target.startswith(tuple(fs + "." for fs in flagsets)):
                if method in PFLAG_METHODS:
                    index = PFLAG_METHODS[method]
                    self.add(self.flag_name(package, args[index], line, context.get("bindings")), where)
                elif method in ("MarkDeprecated", "MarkShorthandDeprecated"):
                    name = self.flag_name(package, args[0], line)
                    self.add(name, where)
                    if method == "MarkDeprecated":
                        self.flags[name]["deprecated"] = self.message(package, args[1])
                elif method == "MarkHidden":
                    name = self.flag_name(package, args[0], line)
                    self.add(name, where)
                    self.flags[name]["hidden"] = True
                continue
            if "%s.%s" % (target, method) in GO_FLAG_REGISTRARS:
                index, deprecated = GO_FLAG_REGISTRARS["%s.%s" % (target, method)]
                self.add(self.flag_name(package, args[index], line).replace("_", "-"), where,
                         self.message(package, args[index + 1]) if deprecated else None)
                continue
            if skip_calls or not any(re.search(r"\b%s\b" % fs, arg) for arg in args for fs in flagsets):
                continue
            call = "%s.%s(%s)" % (target, method, ", ".join(args))
            if method in FLAG_READERS:
                continue
            if self.entry_calls and call.startswith(self.entry_calls):
                continue
            self.call_args = []
            for arg in args:
                try:
                    self.call_args.append(self.flag_name(package, arg, line, context.get("bindings")))
                except (ValueError, KeyError, TypeError):
                    self.call_args.append(None)
            self.follow(package, path, target, method, call, line, context)

    def follow(self, package, path, target, method, call, line, context):
        for text, rule in FLAG_CALLS.items():
            if call.startswith(text):
                module_package, evidence, names, required = rule
                if required and required not in call:
                    raise ValueError("%s: %s without %s: re-read what it registers" % (line, call, required))
                other = self.package(module_package)
                if not any(" ".join(evidence.split()) in " ".join(t.split()) for _p, t, _g in other.files):
                    raise ValueError("%s no longer holds %r: re-read %s" % (module_package, evidence, text))
                for _p, _t, _g in other.files:
                    self.source_of(_p)
                for name in names:
                    self.add(name, module_package)
                return
        parts = target.split(".")
        imports = package.imports(path)
        if parts[0] in imports and len(parts) == 1:  # pkg.Func(fs)
            if "." not in imports[parts[0]].split("/")[0] and imports[parts[0]] != "flag":
                return None  # the standard library (fmt, strings, ...) registers no flags
            return self.walk(imports[parts[0]], None, method, {})
        if parts[0] == context.get("recv") and context.get("receiver"):
            owner = (package.name, context["receiver"])
            for field in parts[1:]:
                owner_package = self.package(owner[0])
                found = owner_package.field_type(owner[1], field)
                if found is None:
                    raise ValueError("%s: %s has no field %s (%s)" % (line, owner[1], field, call))
                owner = self.resolve_type(owner_package, found[1], found[0])
                if owner is None or owner[0] is None:
                    raise ValueError("%s: cannot resolve the type of %s (%s)" % (line, field, call))
            return self.method(owner, method, line, call)
        raise ValueError("%s: cannot follow %s: say what it registers in FLAG_CALLS" % (line, call))

    def method(self, owner, method, line, call, embedded_only=False):
        import_path, type_name = owner
        package = self.package(import_path)
        if not embedded_only and package.function(type_name, method):
            return self.walk(import_path, type_name, method, {})
        if type_name in FLAG_INTERFACES:
            directories, concrete = FLAG_INTERFACES[type_name]
            for directory in directories:
                if (self.tree / directory).is_dir() and self.package(directory).function(concrete, method):
                    return self.walk(directory, concrete, method, {})
        for embedded, path in package.embedded(type_name):
            resolved = self.resolve_type(package, path, embedded)
            if resolved and resolved[0]:
                try:
                    return self.method(resolved, method, line, call)
                except ValueError:
                    continue
        raise ValueError("%s: no method %s of %s.%s (%s)" % (line, method, import_path, type_name, call))


def component_flags(tree):
    """{component: {flag: deprecation message or ""}} of one Kubernetes tree (flags/<minor>/)."""
    out = {}
    for component in FLAG_COMMANDS:
        reader = FlagReader(tree)
        flags = reader.command(component)
        for name, import_path, evidence in FLAG_EXTRAS.get(component, ()):
            if not any(" ".join(evidence.split()) in " ".join(text.split())
                       for _path, text, _go in reader.package(import_path).files):
                raise ValueError("%s no longer holds %r (the reason %s accepts --%s)" %
                                 (import_path, evidence, component, name))
            reader.add(name, import_path)
        for name in OPENSHIFT_CARRIES.get(component, ()):
            if name not in flags:
                raise ValueError("%s: OpenShift's --%s is no longer registered: re-check OPENSHIFT_CARRIES" %
                                 (component, name))
            del flags[name]
        out[component] = {name: entry["deprecated"] or "" for name, entry in sorted(flags.items())}
    return out


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
    if isinstance(value, str) and indent + len(repr(value)) > 120:
        # a long message: adjacent string literals, one a line (Python joins them)
        chunks = [value[start:start + 90] for start in range(0, len(value), 90)]
        return "(\n%s%s)" % ("".join("%s%r\n" % (inner, chunk) for chunk in chunks), pad)
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
    flag_versions = sorted((p.name for p in (root / "flags").iterdir()), key=lambda v: int(v[2:]))
    per_version = {version: component_flags(root / "flags" / version) for version in flag_versions}
    flags, deprecated = {}, {}
    for component in FLAG_COMMANDS:
        names = sorted({name for version in flag_versions for name in per_version[version][component]})
        flags[component] = {name: tuple(v for v in flag_versions if name in per_version[v][component]) for name in names}
        deprecated[component] = {}
        for name in names:
            messages = {v: per_version[v][component][name] for v in flag_versions
                        if per_version[v][component].get(name)}
            if messages:
                deprecated[component][name] = messages
    used = {}
    for path, repository, ref, commit, repo_path in sources:
        key = path.split("/", 1)[0] if not path.startswith(("containerd/", "flags/")) else " ".join(path.split("/")[:2])
        used.setdefault(key, []).append((path, repository, ref, commit, repo_path))
    out = [HEADER]
    out.append("KUBERNETES_VERSIONS = %s\n" % repr(tuple(versions)))
    out.append("CONTAINERD_VERSIONS = %s\n" % repr(tuple(runtimes)))
    out.append("FLAG_VERSIONS = %s\n\n" % repr(tuple(flag_versions)))
    out.append("SOURCES = {\n")
    for key, rows in used.items():
        out.append("    %r: (\n" % key)
        out.extend("        (%r, %r, %r, %r,\n         %r),\n" % row for row in rows)
        out.append("    ),\n")
    out.append("}\n\n")
    for name, value in (("KUBELET_CONFIGURATION", kubelet), ("NODE_LABELS", labels), ("CONTAINERD", runtimes),
                        ("FLAGS", flags), ("DEPRECATED_FLAGS", deprecated)):
        out.append("%s = %s\n\n" % (name, python_literal(value, 0)))
    return "".join(out).rstrip("\n") + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
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
