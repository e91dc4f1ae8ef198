# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Holds a node's files to the start-up rules of the kubelet and containerd (component_rules_data.py).

No real kubelet or containerd runs where the collection is tested, so these checks stand in for the refusals
they would make at start-up, with rules read from their own source (hack/gen_k8s_rules.py):
- --node-labels: a label in a `kubernetes.io` / `k8s.io` namespace the kubelet may not set on itself, or a key or
  value that is not a valid label (the kubelet exits: cmd/kubelet/app/options/options.go ValidateKubeletFlags);
- the KubeletConfiguration file: a field the kubelet.config.k8s.io/v1beta1 types do not have, or a value of the
  wrong JSON type (the kubelet decodes its config file strictly);
- containerd's config.toml: a key its config structs do not have, for the file's config schema;
- the command lines of the kubelet (/etc/sysconfig/kubelet) and of the static pods (kube-apiserver,
  kube-controller-manager, kube-scheduler, kube-proxy): a flag the component of that version does not register
  (pflag refuses an unknown flag: the component exits).
Each check returns one line per violation naming the flag / field / key and where the rule comes from.  A version
no table covers raises RulesUnknown, naming it: it is never checked as another version.
"""

from __future__ import annotations

import json
import re

try:
    import tomllib
except ImportError:  # Python < 3.11: the containerd check needs a TOML reader
    tomllib = None

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import component_rules_data as data
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

KUBELET_CONFIG_SOURCE = "k8s.io/kubelet config/v1beta1/types.go"
LABELS_SOURCE = "k8s.io/kubelet pkg/apis/well_known_labels.go, kubelet options.go ValidateKubeletFlags"
LABEL_SYNTAX_SOURCE = "k8s.io/apimachinery pkg/util/validation"
CONTAINERD_SOURCE = "containerd %s config structs"


class RulesUnknown(NodeError):
    """No table covers the version asked for: the check cannot be made (never falls back to another version)."""


def minor_of(version):
    """'1.32' of 'v1.32.0', '1.32.3', '1.32'."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.|$|-|\+)", str(version or ""))
    if not match:
        raise RulesUnknown("cannot read a version from %r" % (version,))
    return "%s.%s" % match.groups()


def _kubernetes(version, table, what):
    minor = minor_of(version)
    if minor not in table:
        raise RulesUnknown("no %s rules for Kubernetes %s (%s): the tables cover %s; regenerate them with "
                           "hack/gen_k8s_rules.py from that version's source" %
                           (what, minor, version, ", ".join(data.KUBERNETES_VERSIONS)))
    return table[minor]


# --- --node-labels -------------------------------------------------------------------------------------------

def _namespace(key):
    return key.split("/", 1)[0] if "/" in key else ""


def _in_namespace(namespace, allowed):
    return namespace == allowed or namespace.endswith("." + allowed)


def label_problems(key, value, version):
    """Why the kubelet of `version` refuses --node-labels key=value (empty when it accepts it)."""
    rules = _kubernetes(version, data.NODE_LABELS, "--node-labels")
    minor = minor_of(version)
    problems = []
    namespace = _namespace(key)
    if any(_in_namespace(namespace, ns) for ns in rules["kubernetes_namespaces"]) and not (
            key in rules["kubelet_labels"] or any(_in_namespace(namespace, ns) for ns in rules["kubelet_namespaces"])):
        problems.append("%r: a %s label outside the kubelet's own namespaces (%s) and its %d well-known labels: "
                        "the kubelet refuses to start [%s %s]"
                        % (key, "/".join(rules["kubernetes_namespaces"]), ", ".join(rules["kubelet_namespaces"]),
                           len(rules["kubelet_labels"]), LABELS_SOURCE, minor))
    parts = key.split("/")
    name = parts[-1]
    if len(parts) > 2:
        problems.append("%r is not a label key (at most one '/') [%s %s]" % (key, LABEL_SYNTAX_SOURCE, minor))
    elif len(parts) == 2 and (not parts[0] or len(parts[0]) > rules["prefix_max"] or
                              not re.match(rules["prefix"], parts[0])):
        problems.append("%r: its prefix %r is not a DNS subdomain [%s %s]" %
                        (key, parts[0], LABEL_SYNTAX_SOURCE, minor))
    if len(parts) <= 2 and (not name or len(name) > rules["qualified_name_max"] or
                            not re.match(rules["qualified_name"], name)):
        problems.append("%r: its name %r is not a qualified name [%s %s]" % (key, name, LABEL_SYNTAX_SOURCE, minor))
    if len(value) > rules["value_max"] or not re.match(rules["value"], value):
        problems.append("%r: value %r is not a label value [%s %s]" % (key, value, LABEL_SYNTAX_SOURCE, minor))
    return problems


def check_node_labels(flag_value, version):
    """Lines for each label of a --node-labels value (key=value,...) the kubelet of `version` refuses."""
    out = []
    for item in (part for part in flag_value.split(",") if part):
        key, _sep, value = item.partition("=")
        out.extend("--node-labels: " + problem for problem in label_problems(key, value, version))
    return out


# --- KubeletConfiguration ------------------------------------------------------------------------------------

_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+$|^[-+]?0$")
_QUANTITY = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][-+]?\d+)?$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[-+]\d{2}:\d{2})$")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _leaf_ok(kind, value):
    """Whether a JSON value decodes into a Go value of `kind` (as encoding/json and the types' UnmarshalJSON)."""
    if value is None:
        return True  # JSON null leaves a Go value at its zero value
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return _is_int(value) or (isinstance(value, float) and value.is_integer())
    if kind == "float":
        return _is_int(value) or isinstance(value, float)
    if kind == "duration":
        return isinstance(value, str) and bool(_DURATION.match(value))
    if kind == "duration_or_int":
        return _is_int(value) or (isinstance(value, str) and bool(_DURATION.match(value)))
    if kind == "quantity":
        return _is_int(value) or isinstance(value, float) or (isinstance(value, str) and bool(_QUANTITY.match(value)))
    if kind == "time":
        return isinstance(value, str) and bool(_TIME.match(value))
    if kind == "any":
        return True
    raise NodeError("unknown kind %r in the rules table" % kind)


def _check_value(go_type, value, path, structs, source, out):
    if go_type.startswith("[]"):
        if value is None:
            return
        if not isinstance(value, list):
            out.append("%s: %s, not a list (%s) [%s]" % (path, type(value).__name__, go_type, source))
            return
        for index, item in enumerate(value):
            _check_value(go_type[2:], item, "%s[%d]" % (path, index), structs, source, out)
        return
    if go_type.startswith("map[string]"):
        if value is None:
            return
        if not isinstance(value, dict):
            out.append("%s: %s, not a map (%s) [%s]" % (path, type(value).__name__, go_type, source))
            return
        for key, item in value.items():
            _check_value(go_type[len("map[string]"):], item, "%s[%s]" % (path, key), structs, source, out)
        return
    if go_type.startswith("struct:"):
        if value is None:
            return
        if not isinstance(value, dict):
            out.append("%s: %s, not an object (%s) [%s]" % (path, type(value).__name__, go_type[7:], source))
            return
        fields = dict(structs[go_type[7:]])
        for key, item in value.items():
            where = "%s.%s" % (path, key) if path else key
            if key not in fields:
                out.append("%s: unknown field of %s [%s]" % (where, go_type[7:], source))
                continue
            _check_value(fields[key], item, where, structs, source, out)
        return
    if not _leaf_ok(go_type, value):
        out.append("%s: %r is not a %s [%s]" % (path, value, go_type, source))


def check_kubelet_config(document, version):
    """Lines for each field of a KubeletConfiguration (a dict, or its JSON / YAML-as-JSON text) the kubelet of
    `version` would refuse decoding it strictly: unknown fields and values of the wrong type."""
    structs = _kubernetes(version, data.KUBELET_CONFIGURATION, "KubeletConfiguration")
    if isinstance(document, (str, bytes)):
        document = json.loads(document)
    source = "%s %s" % (KUBELET_CONFIG_SOURCE, minor_of(version))
    out = []
    if document.get("apiVersion") != "kubelet.config.k8s.io/v1beta1" or document.get("kind") != "KubeletConfiguration":
        out.append("apiVersion/kind: %s/%s, not kubelet.config.k8s.io/v1beta1 KubeletConfiguration [%s]" %
                   (document.get("apiVersion"), document.get("kind"), source))
    _check_value("struct:KubeletConfiguration", document, "", structs, source, out)
    return ["KubeletConfiguration " + line for line in out]


# --- containerd config.toml ----------------------------------------------------------------------------------

def containerd_runtime(containerd_version):
    """The table of `containerd_version`'s minor release (RulesUnknown when none covers it)."""
    minor = minor_of(containerd_version)
    if minor not in data.CONTAINERD:
        raise RulesUnknown("no containerd config rules for containerd %s (%s): the tables cover %s; regenerate them"
                           " with hack/gen_k8s_rules.py from that release's source" %
                           (minor, containerd_version, ", ".join(data.CONTAINERD_VERSIONS)))
    return data.CONTAINERD[minor]


def schema_table(runtime, schema):
    """The table whose keys a config.toml of `schema` uses on `runtime`: containerd 2.x migrates a version 2 file
    (containerd 1.x's plugin tables, cmd/containerd/server/config/config.go migrations) before reading it."""
    if schema == runtime["max_schema"] or 2 < schema <= runtime["max_schema"]:
        return runtime
    if schema == 2:
        for minor in reversed(data.CONTAINERD_VERSIONS):
            if data.CONTAINERD[minor]["max_schema"] == 2:
                return data.CONTAINERD[minor]
    raise RulesUnknown("no table of containerd's config keys for config version %r (tables: containerd %s)" %
                       (schema, ", ".join(data.CONTAINERD_VERSIONS)))


def check_containerd_config(text, containerd_version):
    """Lines for containerd's config.toml: a config version the release refuses, and keys (or values) its
    config structs do not have, for the file's config version."""
    if tomllib is None:
        raise RulesUnknown("the containerd check needs Python 3.11's tomllib")
    document = tomllib.loads(text)
    schema = document.get("version", 1)
    runtime = containerd_runtime(containerd_version)
    prefix = "containerd config.toml (version %s) " % schema
    if schema > runtime["max_schema"]:
        return [prefix + "version: containerd %s refuses config version %s (the highest it reads is %s) [%s]" %
                (runtime["release"], schema, runtime["max_schema"], CONTAINERD_SOURCE % runtime["release"])]
    table = schema_table(runtime, schema)
    source = CONTAINERD_SOURCE % table["release"]
    structs = table["structs"]
    out = []
    top = dict(table["top"])
    for key, value in document.items():
        if key not in top:
            out.append("%s: unknown top-level key, ignored by containerd [%s]" % (key, source))
        elif key == "plugins":
            for plugin, body in value.items():
                where = 'plugins."%s"' % plugin
                if plugin not in table["plugins"]:
                    out.append("%s: a plugin the rules have no table for (tables: %s) [%s]" %
                               (where, ", ".join(table["plugins"]), source))
                    continue
                _check_toml(table["plugins"][plugin], body, where, structs, source, out)
        else:
            _check_toml(top[key], value, key, structs, source, out)
    return [prefix + line for line in out]


def _check_toml(go_type, value, path, structs, source, out):
    """Unknown keys and wrong value types of a decoded TOML value.

    containerd decodes config.toml with unknown keys allowed but logged ("Ignoring unknown key in TOML"): the
    setting silently has no effect.  A value of the wrong type is a decode error: containerd does not start.
    """
    if go_type.startswith("struct:") and isinstance(value, dict):
        fields = dict(structs[go_type[7:]])
        for key, item in value.items():
            if key not in fields:
                out.append("%s.%s: unknown key of %s, ignored by containerd [%s]" % (path, key, go_type[7:], source))
                continue
            _check_toml(fields[key], item, "%s.%s" % (path, key), structs, source, out)
    elif go_type.startswith("map[string]") and isinstance(value, dict):
        for key, item in value.items():
            _check_toml(go_type[len("map[string]"):], item, "%s.%s" % (path, key), structs, source, out)
    elif go_type.startswith("[]") and isinstance(value, list):
        for index, item in enumerate(value):
            _check_toml(go_type[2:], item, "%s[%d]" % (path, index), structs, source, out)
    elif go_type.startswith(("struct:", "map[string]", "[]")):
        out.append("%s: %r where the structs have %s [%s]" % (path, value, go_type, source))
    elif go_type == "duration":
        if not (_is_int(value) or isinstance(value, str)):
            out.append("%s: %r is not a duration [%s]" % (path, value, source))
    elif go_type not in ("plugins",) and not _leaf_ok(go_type, value):
        out.append("%s: %r is not a %s [%s]" % (path, value, go_type, source))


# --- command-line flags -------------------------------------------------------------------------------------

FLAG_COMPONENTS = ("kubelet", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")


def flag_source(version):
    """Where the flag table of a Kubernetes minor was read from (the release and the Kubernetes tree's origin)."""
    minor = minor_of(version)
    rows = data.SOURCES.get("flags " + minor, ())
    tree = next((row for row in rows if "/k8s.io/kubernetes/" in row[0]), None)
    if tree is None:
        return "flags %s" % minor
    release = tree[2].split(":")[-1]
    return "Kubernetes %s flag registrations (%s %s)" % (release, tree[1], tree[2].split(":")[0])


def _flag_table(component, version):
    if component not in data.FLAGS:
        raise RulesUnknown("no flag table for %r (tables: %s)" % (component, ", ".join(data.FLAGS)))
    minor = minor_of(version)
    if minor not in data.FLAG_VERSIONS:
        raise RulesUnknown("no %s flag table for Kubernetes %s (%s): the tables cover %s; regenerate them with "
                           "hack/gen_k8s_rules.py from that version's source" %
                           (component, minor, version, ", ".join(data.FLAG_VERSIONS)))
    return data.FLAGS[component], minor


def flag_name(argument):
    """The registered name of a command-line argument '--name=value' / '-name' ("_" reads as "-", as
    component-base's WordSepNormalizeFunc makes it), or None for a value."""
    if not argument.startswith("-") or argument in ("-", "--"):
        return None
    return argument.lstrip("-").split("=", 1)[0].replace("_", "-")


def check_flags(component, arguments, version):
    """Lines for each flag in `arguments` (command-line words) that `component` of `version` does not register,
    naming the flag, the component, the version, when it was registered if ever, and the source."""
    table, minor = _flag_table(component, version)
    out = []
    for argument in arguments:
        name = flag_name(argument)
        if name is None or minor in table.get(name, ()):
            continue
        if name in table:
            known = table[name]
            later = [v for v in data.FLAG_VERSIONS if _minor_key(v) > _minor_key(known[-1])]
            if _minor_key(known[-1]) < _minor_key(minor):
                when = "removed in %s (registered in %s)" % (later[0], ", ".join(known))
            elif _minor_key(known[0]) > _minor_key(minor):
                when = "added in %s" % known[0]
            else:
                when = "registered in %s only" % ", ".join(known)
        else:
            when = "not a flag of %s in any of %s" % (component, ", ".join(data.FLAG_VERSIONS))
        out.append("%s --%s: unknown to %s %s, which refuses to start: %s [%s]"
                   % (component, name, component, minor, when, flag_source(minor)))
    return out


def deprecated_flags(component, arguments, version):
    """Lines for the flags in `arguments` that `component` of `version` accepts but marks deprecated."""
    _table, minor = _flag_table(component, version)
    out = []
    for argument in arguments:
        name = flag_name(argument)
        message = data.DEPRECATED_FLAGS[component].get(name, {}).get(minor) if name else None
        if message:
            out.append("%s --%s: deprecated in %s: %s [%s]" % (component, name, minor, message, flag_source(minor)))
    return out


def _minor_key(minor):
    return tuple(int(part) for part in minor.split("."))


def static_pod_command(manifest):
    """(component, its command-line words) of a static pod manifest (a dict), or None: the first container
    whose command or args run one of FLAG_COMPONENTS' binaries (directly or under /go-runner)."""
    for container in (manifest.get("spec") or {}).get("containers") or ():
        words = [str(word) for word in (container.get("command") or []) + (container.get("args") or [])]
        for index, word in enumerate(words):
            binary = word.rsplit("/", 1)[-1]
            if binary in FLAG_COMPONENTS:
                return binary, words[index + 1:]
    return None


# --- a node's files ------------------------------------------------------------------------------------------

KUBELET_ENV = "/etc/sysconfig/kubelet"
CONTAINERD_CONFIG = "/etc/containerd/config.toml"


MANIFESTS = "/etc/kubernetes/manifests/"


def kubelet_words(sysconfig):
    """The kubelet's command-line words in /etc/sysconfig/kubelet (NAME="--flag=value ..." lines)."""
    words = []
    for line in sysconfig.splitlines():
        match = re.match(r'^\s*\w+="(.*)"\s*$', line)
        if match:
            words.extend(match.group(1).split())
    return words


def kubelet_args(sysconfig):
    """{flag: value} of the kubelet's arguments in /etc/sysconfig/kubelet (NAME="--flag=value ..." lines)."""
    args = {}
    for line in sysconfig.splitlines():
        match = re.match(r'^\s*\w+="(.*)"\s*$', line)
        if not match:
            continue
        for word in match.group(1).split():
            if word.startswith("--"):
                flag, _sep, value = word[2:].partition("=")
                args[flag] = value
    return args


def check_node_files(files, kubernetes_version, containerd_version=None):
    """Violations in a node's files ({path: text}): the kubelet's flags, --node-labels and --config file, the
    static pods' flags, and containerd's config.toml.  One line each, prefixed with the file's path."""
    out = []
    sysconfig = files.get(KUBELET_ENV)
    if sysconfig is not None:
        out.extend("%s: %s" % (KUBELET_ENV, line) for line in
                   check_flags("kubelet", kubelet_words(sysconfig), kubernetes_version))
        args = kubelet_args(sysconfig)
        if "node-labels" in args:
            out.extend("%s: %s" % (KUBELET_ENV, line) for line in
                       check_node_labels(args["node-labels"], kubernetes_version))
        config_path = args.get("config")
        if config_path:
            if config_path not in files:
                out.append("%s: --config=%s, a file the node does not write" % (KUBELET_ENV, config_path))
            else:
                out.extend("%s: %s" % (config_path, line) for line in
                           check_kubelet_config(_yaml_or_json(files[config_path]), kubernetes_version))
    for path in sorted(files):
        if path.startswith(MANIFESTS) and path.endswith((".manifest", ".yaml")):
            # only the static pods need a YAML reader
            import yaml  # pylint: disable=import-outside-toplevel
            found = static_pod_command(yaml.safe_load(files[path]) or {})
            if found:
                out.extend("%s: %s" % (path, line) for line in check_flags(found[0], found[1], kubernetes_version))
    if CONTAINERD_CONFIG in files:
        out.extend("%s: %s" % (CONTAINERD_CONFIG, line) for line in
                   check_containerd_config(files[CONTAINERD_CONFIG], containerd_version))
    return out


def _yaml_or_json(text):
    """A KubeletConfiguration file's document: JSON, or YAML (the kubelet reads both)."""
    try:
        return json.loads(text)
    except ValueError:
        # only a YAML file needs a YAML reader
        import yaml  # pylint: disable=import-outside-toplevel
        return yaml.safe_load(text)
