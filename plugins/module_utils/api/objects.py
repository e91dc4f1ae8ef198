# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops API objects (Cluster, InstanceGroup) in the kops.k8s.io/v1alpha2 wire format.

Objects are plain dicts shaped exactly like the YAML a kops user keeps in git
(``apiVersion``, ``kind``, ``metadata``, ``spec``).  Every layer downstream
works on these dicts; nothing converts them to another internal shape, so a
load followed by a dump gives back the same data.  One field is filled in on load and left out again on dump:
spec.cloudProvider of a cloud kops names by a label (ALPHA_CLOUD_LABEL), so that every layer keys on
spec.cloudProvider alone.
"""

from __future__ import annotations

import copy
import re

try:
    import yaml
except ImportError:  # reported by require_yaml(), so the module can say what to install
    yaml = None

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, goyaml_emitter

API_VERSION = "kops.k8s.io/v1alpha2"
CLUSTER = "Cluster"
INSTANCE_GROUP = "InstanceGroup"
KINDS = (CLUSTER, INSTANCE_GROUP)
CLUSTER_LABEL = "kops.k8s.io/cluster"
IG_LABEL = "kops.k8s.io/instancegroup"

# InstanceGroup roles as v1alpha2 spells them.
ROLE_CONTROL_PLANE = "Master"
ROLE_NODE = "Node"
ROLE_BASTION = "Bastion"
ROLE_APISERVER = "APIServer"
IG_ROLES = (ROLE_CONTROL_PLANE, ROLE_NODE, ROLE_BASTION, ROLE_APISERVER)
# The directory names kops uses for a role under igconfig/.
ROLE_DIRS = {
    ROLE_CONTROL_PLANE: "control-plane",
    ROLE_NODE: "node",
    ROLE_BASTION: "bastion",
    ROLE_APISERVER: "apiserver",
}


def require_yaml():
    if yaml is None:
        raise ImportError("PyYAML is required by kubeops.kops (pip install PyYAML)")


_YAML_CLASSES = {}
# Tags PyYAML resolves a plain scalar to that are still strings to go-yaml
# (PyYAML's own "!"/"&"/"*" and "=" pseudo-types): these are not
# double-quoted, so "*" comes out '*' as kops writes it.
_PLAIN_STRING_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:yaml", "tag:yaml.org,2002:value")
# YAML 1.1 bools PyYAML reads as strings but go-yaml double-quotes (isOldBool).
_GO_YAML_OLD_BOOLS = frozenset(("y", "Y", "n", "N"))
# go-yaml reads a plain scalar as a float when it matches this, where YAML 1.1 (PyYAML) reads a string: 1e3,
# 099720109477 (no octal int, so YAML 1.1 has no number for it).  go-yaml quotes such a string.
_GO_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


def _yaml_classes(pure=False):
    """(Loader, Dumper), built on first use so importing this file never needs PyYAML.

    The Loader is a SafeLoader that keeps timestamps as the strings the user
    wrote (kops treats creationTimestamp and friends as opaque; datetime
    objects would change them on the way back out).  The Dumper writes like
    sigs.k8s.io/yaml: sorted keys, block style, indentless lists, and strings
    that would read back as another type double-quoted.

    They parse and emit with libyaml (PyYAML's C classes) where PyYAML was built
    with it, as PyPI's wheels and Debian's python3-yaml are: a cluster's
    manifests and nodeup configs are written several times a run, and PyYAML's
    pure-Python emitter took a third of a small cluster's update.  go-yaml's
    emitter is a port of libyaml's, so the C emitter is also the closer one;
    pure=True (or a PyYAML without libyaml) gives PyYAML's Python classes,
    which write the same bytes for what kops writes
    (tests/unit/api/test_yaml_emitters.py).
    """
    key = "pure" if pure or not getattr(yaml, "__with_libyaml__", False) else "libyaml"
    if key not in _YAML_CLASSES:
        require_yaml()
        safe_loader, safe_dumper = ((yaml.SafeLoader, yaml.SafeDumper) if key == "pure"
                                    else (yaml.CSafeLoader, yaml.CSafeDumper))

        class Loader(safe_loader):  # pylint: disable=too-many-ancestors
            pass

        Loader.yaml_implicit_resolvers = {
            first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }

        class Dumper(safe_dumper):  # pylint: disable=too-many-ancestors
            def ignore_aliases(self, data):
                return True

        def represent_str(dumper, data):
            style = None
            if "\n" in data:
                style = "|"
            elif data in _GO_YAML_OLD_BOOLS or _GO_YAML_FLOAT.match(data) or (
                    dumper.resolve(yaml.ScalarNode, data, (True, False)) not in _PLAIN_STRING_TAGS):
                style = '"'
            # Otherwise the emitter picks plain, or single quotes where plain
            # cannot be read back (e.g. "*"), as go-yaml's emitter does.
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

        Dumper.add_representer(str, represent_str)
        _YAML_CLASSES[key] = (Loader, Dumper)
    return _YAML_CLASSES[key]


def yaml_width(dumper, width=None):
    """The width option for dumper: width columns, or None for lines of any length (libyaml takes -1 for that,
    PyYAML's Python emitter anything wider than the text)."""
    if width is not None:
        return width
    return -1 if is_libyaml(dumper) else float("inf")


def is_libyaml(dumper):
    """Whether dumper emits with libyaml (one of _yaml_classes' C classes)."""
    return "libyaml" in _YAML_CLASSES and dumper is _YAML_CLASSES["libyaml"][1]


def load_yaml(text):
    """One YAML document as the collection reads it (timestamps kept as written)."""
    return yaml.load(text, Loader=_yaml_classes()[0])


def _yaml_error(exc):
    """PyYAML's error on one line: where (line and column, 1-based), then what, without its quote of the text."""
    mark = getattr(exc, "problem_mark", None)
    what = "; ".join(str(p) for p in (getattr(exc, "context", None), getattr(exc, "problem", None)) if p)
    if mark is None or not what:
        return str(exc)
    return "line %d, column %d: %s" % (mark.line + 1, mark.column + 1, what)


def load_yaml_documents(text, source="<input>"):
    """Parse a multi-document YAML text into a list of dicts (empty documents dropped)."""
    try:
        docs = list(yaml.load_all(text, Loader=_yaml_classes()[0]))
    except yaml.YAMLError:
        # PyYAML's own parser names the place and the problem more exactly than libyaml's ("line 6, column 9:
        # expected the node content, but found '<stream end>'" where libyaml says line 7, column 1).
        try:
            docs = list(yaml.load_all(text, Loader=_yaml_classes(pure=True)[0]))
        except yaml.YAMLError as exc:
            raise errors.ValidationError([errors.invalid(source, None, "not valid YAML: %s" % _yaml_error(exc))],
                                         subject=source)
    return [d for d in docs if d is not None]


# Fields kops' v1alpha2 decoder reads without complaint and drops (not in its v1alpha2 types, or tagged
# json:"-"), found in its own fixtures (minimal_gce_plb*): (kind, path pattern, why).  Dropped with a
# warning naming each, rather than refused: kops runs these specs.
IGNORED_ON_READ = (
    (CLUSTER, r"^spec\.etcdClusters\[\d+\]\.(volumeIops|volumeSize|volumeThroughput|volumeType|type)$",
     "volume settings belong to each etcd member (etcdMembers[].volumeIops, volumeSize, volumeThroughput, "
     "volumeType)"),
    (INSTANCE_GROUP, r"^spec\.rootVolume$",
     "v1alpha2 takes rootVolumeSize, rootVolumeType, rootVolumeIops, rootVolumeThroughput, rootVolumeEncryption"),
)


def _drop_ignored_fields(obj, where, warnings):
    """Remove the IGNORED_ON_READ fields of obj, each named in a warning (kops drops them silently)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    candidates = [("spec.%s" % key, spec, key) for key in list(spec)]
    for index, etcd in enumerate(spec.get("etcdClusters") or [] if obj.get("kind") == CLUSTER else []):
        if isinstance(etcd, dict):
            candidates += [("spec.etcdClusters[%d].%s" % (index, key), etcd, key) for key in list(etcd)]
    for path, parent, key in candidates:
        for kind, pattern, why in IGNORED_ON_READ:
            if obj.get("kind") == kind and re.match(pattern, path):
                del parent[key]
                if warnings is not None:
                    warnings.append("%s: %s is not a kops v1alpha2 field; kops ignores it and so does kubeops.kops "
                                    "(%s)" % (where, path, why))


def load_objects(text, source="<input>", warnings=None, additional=None):
    """Load kops objects from YAML, rejecting anything kops would reject on read.

    Checks apiVersion/kind and, through the schema, every field path (an
    unknown field is an error naming its path, as kops' strict decoding does),
    except the fields kops reads and drops (IGNORED_ON_READ): those are removed,
    and named in `warnings` (a list) when given.

    additional (a list): objects of other API groups (kops' additional objects, ``kops create -f``) are moved
    there, checked as kops checks them (additional_object_problems), instead of refused.
    """
    from ansible_collections.kubeops.kops.plugins.module_utils.api import schema

    objs = load_yaml_documents(text, source)
    if additional is not None:
        others = [(i, o) for i, o in enumerate(objs) if _is_additional_object(o)]
        problems = additional_object_problems([o for _i, o in others], source)
        if problems:
            raise errors.ValidationError(problems, subject=source)
        additional.extend(o for _i, o in others)
        objs = [o for o in objs if not _is_additional_object(o)]
    for obj in objs:
        with_cloud_from_label(obj)
        refuse_unbuilt_cloud(obj)
    for index, obj in enumerate(objs):
        if isinstance(obj, dict) and obj.get("apiVersion") == API_VERSION:
            _drop_ignored_fields(obj, "%s[%d]" % (source, index) if len(objs) > 1 else source, warnings)
    problems = []
    for index, obj in enumerate(objs):
        where = "%s[%d]" % (source, index) if len(objs) > 1 else source
        if not isinstance(obj, dict):
            problems.append(errors.invalid(where, obj, "each YAML document must be a kops object (a mapping)"))
            continue
        if obj.get("apiVersion") != API_VERSION:
            problems.append(errors.unsupported("%s.apiVersion" % where, obj.get("apiVersion"), [API_VERSION]))
            continue
        if obj.get("kind") not in KINDS:
            problems.append(errors.unsupported("%s.kind" % where, obj.get("kind"), KINDS))
            continue
        problems.extend(schema.check_fields(obj))
    if problems:
        raise errors.ValidationError(problems, subject=source)
    return objs


# kops' additional objects: the Kubernetes objects of a definition besides its Cluster and InstanceGroups, stored
# as one YAML stream at <cluster>/clusteraddons/default (vfsclientset/addons.go).  The kube-scheduler reads a
# KubeSchedulerConfiguration from it (nodes' /var/lib/kube-scheduler/config.yaml); kops applies the others to the
# cluster as its cluster-addons.kops.k8s.io addon.
ADDITIONAL_OBJECTS_PATH = "clusteraddons/default"
KUBE_SCHEDULER_CONFIGURATION = ("kubescheduler.config.k8s.io", "KubeSchedulerConfiguration")
ADDITIONAL_OBJECTS_SEPARATOR = "\n---\n\n"  # kubemanifest.ObjectList.ToYAML


def _is_additional_object(obj):
    """A Kubernetes object of another API group than kops' (a Cluster or InstanceGroup of any apiVersion is kops')."""
    return isinstance(obj, dict) and isinstance(obj.get("apiVersion"), str) and obj.get("kind") not in KINDS \
        and group_kind(obj)[0] != API_VERSION.split("/", maxsplit=1)[0]


def group_kind(obj):
    """(API group, kind) of an object: apiVersion's group ("" for the core group), kind."""
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rsplit("/", 1)[0] if "/" in api_version else "", obj.get("kind"))


def additional_object_problems(objs, source="<input>"):
    """What kops refuses in additional objects: an object without kind, a KubeSchedulerConfiguration that sets
    clientConnection.kubeconfig (kops controls it), more than one KubeSchedulerConfiguration."""
    problems, schedulers = [], []
    for obj in objs:
        where = "%s: %s %s" % (source, obj.get("apiVersion"), obj.get("kind") or "")
        if not isinstance(obj.get("kind"), str) or not obj["kind"]:
            problems.append(errors.required("%s.kind" % where.rstrip()))
            continue
        if group_kind(obj) == KUBE_SCHEDULER_CONFIGURATION:
            schedulers.append(obj)
            kubeconfig = (obj.get("clientConnection") or {}).get("kubeconfig") \
                if isinstance(obj.get("clientConnection"), dict) else None
            if kubeconfig:
                problems.append(errors.invalid("%s.clientConnection.kubeconfig" % where, kubeconfig,
                                               "value is controlled by kOps and should not be set; remove it"))
    if len(schedulers) > 1:
        problems.append(errors.invalid("%s: KubeSchedulerConfiguration" % source, len(schedulers),
                                       "give at most one KubeSchedulerConfiguration (kops' kube-scheduler reads one)"))
    return problems


def dump_additional_objects(objs):
    """The objects as kops stores them (clusteraddons/default): each as sorted-key YAML, joined by kops' separator."""
    return ADDITIONAL_OBJECTS_SEPARATOR.join(dump_object(obj) for obj in objs if obj)


def load_additional_objects(text, source="<input>"):
    """The objects of a stored clusteraddons/default."""
    return [o for o in load_yaml_documents(text, source) if isinstance(o, dict) and o]


# kops' cloudProvider values (v1alpha2 and v1alpha3); the clouds this collection builds are the packages under
# providers/ (provider_names.names()).
KOPS_CLOUDS = ("aws", "gce", "azure", "digitalocean", "hetzner", "openstack", "scaleway", "metal")


class UnbuiltCloudError(errors.ValidationError):
    """A Cluster for a cloud kops runs and this collection does not build: one line naming it."""

    def message(self):
        return str(self.errors[0])


def cloud_of(obj):
    """spec.cloudProvider of a Cluster object: v1alpha2's string, or v1alpha3's one-key mapping (azure: {...})."""
    cloud = ((obj.get("spec") or {}) if isinstance(obj.get("spec"), dict) else {}).get("cloudProvider")
    if isinstance(cloud, dict) and len(cloud) == 1:
        return next(iter(cloud))
    return cloud if isinstance(cloud, str) else None


def refuse_unbuilt_cloud(obj):
    """Before any other check (a v1alpha3 Azure spec would otherwise fail on its apiVersion, or worse)."""
    if not isinstance(obj, dict) or obj.get("kind") != CLUSTER:
        return
    cloud = cloud_of(obj)
    built = provider_names.names()
    if cloud in KOPS_CLOUDS and cloud not in built:
        raise UnbuiltCloudError([errors.unsupported(
            "spec.cloudProvider", cloud, built,
            "kops runs %s clusters; kubeops.kops builds only %s ones, so use kops itself for this one"
            % (cloud, " and ".join(c.upper() for c in built)))], subject="cluster")


# kops' Cluster.GetCloudProvider: a cloud kops runs behind a feature flag (metal) is named by this label and has no
# spec.cloudProvider (v1alpha2 has no value for it: kops refuses spec.cloudProvider: metal on read).  Which clouds
# are named so, their packages declare (Provider.named_by_label).
ALPHA_CLOUD_LABEL = "alpha.kops.k8s.io/cloud"


def _named_by_label(cloud):
    # aws and gce are named by spec.cloudProvider, and their packages are not asked: this runs on nodes too
    # (channel_apply, node_certificates), whose module zip holds no cloud package.
    return isinstance(cloud, str) and bool(cloud) and cloud not in provider_names.BUILT_IN and \
        provider_names.declared_value(cloud, "named_by_label", False)


def with_cloud_from_label(obj):
    """A Cluster as the layers read it (in place): spec.cloudProvider from kops' label, and the label from a
    spec.cloudProvider kops names by it (a user's definition may say cloudProvider: metal)."""
    if not isinstance(obj, dict) or obj.get("kind") != CLUSTER or not isinstance(obj.get("spec"), dict):
        return obj
    metadata = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata"), dict) else {}
    labels = metadata.get("labels") if isinstance(metadata.get("labels"), dict) else {}
    labelled, given = labels.get(ALPHA_CLOUD_LABEL), obj["spec"].get("cloudProvider")
    labelled = labelled if _named_by_label(labelled) else None
    if labelled and given not in (None, "", labelled):
        raise errors.ValidationError([errors.forbidden(
            "spec.cloudProvider", "the label %s: %s names the cluster's cloud; remove spec.cloudProvider %r"
            % (ALPHA_CLOUD_LABEL, labelled, given))], subject="cluster")
    if labelled:
        obj["spec"]["cloudProvider"] = labelled
    elif _named_by_label(given):
        metadata.setdefault("labels", {})[ALPHA_CLOUD_LABEL] = given
    return obj


def as_stored(obj):
    """obj as kops stores it: a Cluster of a labelled cloud without spec.cloudProvider (a copy; obj is kept)."""
    if not isinstance(obj, dict) or obj.get("kind") != CLUSTER or not isinstance(obj.get("spec"), dict) \
            or not _named_by_label(obj["spec"].get("cloudProvider")):
        return obj
    stored = copy.deepcopy(obj)
    cloud = stored["spec"].pop("cloudProvider")
    stored.setdefault("metadata", {}).setdefault("labels", {})[ALPHA_CLOUD_LABEL] = cloud
    return stored


def dump_objects(objs):
    """Dump objects the way kops writes them: sorted keys, ``---`` between documents."""
    return "\n---\n\n".join(dump_object(o) for o in objs)


def dump_object(obj, pure=False):
    dumper = _yaml_classes(pure)[1]
    text = yaml.dump(as_stored(obj), Dumper=dumper, default_flow_style=False, sort_keys=True, allow_unicode=True,
                     width=yaml_width(dumper))
    return goyaml_emitter.without_document_end(text)


def split_objects(objs):
    """Return (cluster, [instance groups]) from a list of loaded objects."""
    clusters = [o for o in objs if o.get("kind") == CLUSTER]
    igs = [o for o in objs if o.get("kind") == INSTANCE_GROUP]
    if len(clusters) > 1:
        raise errors.ValidationError(
            [errors.invalid("kind", CLUSTER, "found %d Cluster objects; give one cluster per file" % len(clusters))])
    return (clusters[0] if clusters else None), igs


def new_cluster(name):
    return {"apiVersion": API_VERSION, "kind": CLUSTER, "metadata": {"name": name}, "spec": {}}


def new_instance_group(cluster_name, name):
    return {
        "apiVersion": API_VERSION,
        "kind": INSTANCE_GROUP,
        "metadata": {"name": name, "labels": {CLUSTER_LABEL: cluster_name}},
        "spec": {},
    }


def name_of(obj):
    return (obj.get("metadata") or {}).get("name")


def spec_of(obj):
    return obj.setdefault("spec", {})


def deepcopy(obj):
    return copy.deepcopy(obj)
