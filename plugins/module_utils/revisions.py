# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The revision a YAML definition was read at, and what a replace of it would undo (the git loop).

get_cluster.yml (cluster_info's ``yaml``) writes the Cluster with the annotation ``kubeops.kops/revision``: the
revision of the spec's history (statestore/history.py) it was read at.  An annotation, not a comment: every YAML
tool (yq, yaml.safe_load/safe_dump, kustomize, an editor's formatter) keeps metadata.annotations and may drop
comments; a label could not hold ``4 (unrecorded 3f1c...)`` (label values are 63 characters of [A-Za-z0-9_.-]).
kops reads the file as it reads any annotation (ObjectMeta keeps it, nothing acts on it), so the file stays a valid
``kops replace -f`` input; the replace here takes it off before storing, so the store never holds it.

A replace of a file read at revision N is a three-way comparison, as git merges: base = the spec at N (the
history's snapshot), theirs = the spec stored now, ours = what the file would store.  Each field (a path such as
spec.kubernetesVersion; lists and scalars are compared whole) that changed from base to theirs must hold theirs
in ours: the file has seen that change (a second edit of the same file after its own replace, or the same edit
made twice).  A field where ours differs from theirs would undo a change the file has not seen: the replace is
refused naming it.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history, layout

ANNOTATION = "kubeops.kops/revision"
# The first line earlier releases of get_cluster.yml wrote; still read from a definition string without the
# annotation.
_COMMENT_RE = re.compile(r"^# kubeops\.kops revision: (.+?)\s*$", re.MULTILINE)
# How much of a field's value a refusal shows.
SHOWN_VALUE = 60
_MISSING = object()
_PRESENT = object()


class RevisionError(SpecError):
    """The revisions the objects of one definition carry disagree."""


def annotate(obj, revision):
    """A copy of obj with the revision annotation set to revision (a string)."""
    obj = copy.deepcopy(obj)
    obj.setdefault("metadata", {}).setdefault("annotations", {})[ANNOTATION] = str(revision)
    return obj


def of_objects(documents):
    """The revision the objects' annotations name, or None; RevisionError when two objects name different ones."""
    found = {str(((doc.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION))
             for doc in documents if ANNOTATION in ((doc.get("metadata") or {}).get("annotations") or {})}
    if len(found) > 1:
        raise RevisionError("the definition's objects name different revisions in metadata.annotations.%s (%s); "
                            "keep one (get_cluster.yml writes it on the Cluster)"
                            % (ANNOTATION, ", ".join(sorted(found))))
    return found.pop() if found else None


def in_comment(text):
    """The revision an earlier get_cluster.yml's first line (``# kubeops.kops revision: N``) names, or None."""
    found = _COMMENT_RE.search(text) if isinstance(text, str) else None
    return found.group(1) if found else None


def without_annotation(obj):
    """obj (a copy) without the revision annotation (an annotations mapping left empty goes too); None stays None."""
    if obj is None:
        return None
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or ANNOTATION not in annotations:
        return obj
    obj = copy.deepcopy(obj)
    del obj["metadata"]["annotations"][ANNOTATION]
    if not obj["metadata"]["annotations"]:
        del obj["metadata"]["annotations"]
    return obj


def base_spec(spec_history, text):
    """{relpath: bytes} of the spec a definition read at revision text (str(history.Revision)) was read from, or
    None when the history no longer keeps it (or never recorded that state: a change by another tool that was
    overwritten before any write here recorded it)."""
    number, sha = history.parse(text)
    for entry in spec_history.revisions():
        if entry["revision"] == number and (sha is None or entry["sha256"].startswith(sha)):
            return spec_history.spec_at(number)
    return None


def unseen_changes(base, theirs, ours, comparable):
    """The fields a replace would undo: [(object, field, base value, theirs, ours)] where theirs differs from base
    and ours from theirs.  base, theirs, ours: {relpath: object or None}; comparable(obj) drops the metadata the
    store manages itself."""
    undone = []
    for relpath in sorted(set(base) | set(theirs) | set(ours), key=lambda p: (p != layout.CLUSTER_CONFIG, p)):
        read, stored, written = (comparable(without_annotation(side.get(relpath))) for side in (base, theirs, ours))
        if (read is None) != (stored is None):  # added or removed since: the object is one value
            if written != stored:
                undone.append((_object_name(relpath), "", _presence(read), _presence(stored), _presence(written)))
            continue
        fields = [_fields(obj) for obj in (read, stored, written)]
        for field in sorted(set().union(*fields)):
            was, now, would = (side.get(field, _MISSING) for side in fields)
            if now != was and would != now:
                undone.append((_object_name(relpath), field, was, now, would))
    return undone


def describe(undone):
    """One line naming each undone field with its value at the revision read, now, and in the definition."""
    return "; ".join("%s (was %s, now %s, the definition has %s)"
                     % (field if where == "Cluster" and field else " ".join(w for w in (where, field) if w),
                        _shown(was), _shown(now), _shown(would))
                     for where, field, was, now, would in undone)


def _object_name(relpath):
    if relpath == layout.CLUSTER_CONFIG:
        return "Cluster"
    return "InstanceGroup %s" % relpath[len(layout.INSTANCE_GROUP_DIR):]


def _presence(obj):
    return _MISSING if obj is None else _PRESENT


def _fields(obj, prefix=""):
    """{dotted path: value} of obj's leaves: mappings are walked, anything else (lists included) is one value; an
    absent object has no fields (each of its fields reads as absent)."""
    if obj is None:
        return {}
    found = {}
    for key, value in obj.items():
        path = "%s.%s" % (prefix, key) if prefix else str(key)
        if isinstance(value, dict) and value:
            found.update(_fields(value, path))
        else:
            found[path] = value
    return found


def _shown(value):
    if value is _MISSING:
        return "absent"
    if value is _PRESENT:
        return "present"
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= SHOWN_VALUE else text[:SHOWN_VALUE - 3] + "..."
