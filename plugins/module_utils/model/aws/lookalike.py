# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Look-alike cluster names: a.example.com and a-example.com (any names that differ only by "." and "-").

kops derives some AWS names from the cluster name with its dots written as dashes: the load balancers and target
groups (names.resource_name_32: api, tcp, tls, kops-controller, bastion) and the node-termination-handler queue
(names.queue_name).  Two look-alike clusters would share them, and AWS names are unique per region, so kops cannot
run both.  Here the second one gets names that cannot collide: kops' truncation, but hashed, with the hash of the
full cluster name (dots kept) as the suffix.

Who is second is decided once, at plan time, and recorded in the cluster's store (RECORD), so later runs are
stable whatever the other cluster does afterwards:

- a record says "unique": unique names (the choice stands, even after the other cluster is deleted);
- else the cloud is asked which of this cluster's kops-derived names are held, and by whom (the ownership tag of
  objects tagged as this cluster's or as a look-alike's: the Resource Groups Tagging API GetResources the run
  makes anyway, or, without tag:GetResources, each name asked of elbv2 and SQS) - by the AWS driver, before the
  model is built (providers/aws/update_facts.py: held_names); this module decides from that answer and asks nothing;
- some held by this cluster itself: kops' names (a cluster already built keeps what it has);
- else some held by a look-alike: unique names, recorded by a real run; the plan has an entry saying so;
- else kops' names, unrecorded (a kops-named cluster with no look-alike keeps kops' names and its store files).

The choice reaches the model as an annotation of the completed spec (names.UNIQUE_NAMES_ANNOTATION), set from the
record whenever the cluster is loaded for an update or a render, never from the user's spec.
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import lookalike_cluster_names
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import PlanEntry
from ansible_collections.kubeops.kops.plugins.module_utils.cloud_names.aws import (
    UNIQUE_NAMES, UNIQUE_NAMES_ANNOTATION)
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ModelError

# Beside kops' files in <store>/<cluster>/ (kops ignores it); deleted with the cluster.
RECORD = ".kubeops-aws-names"
PLAN_KIND = "kubeops_aws_names"


def read_record(store):
    """The cluster's names record ({"names": "unique", ...}) or None."""
    data = store.read(RECORD)
    if not data:
        return None
    try:
        record = json.loads(data.decode("utf-8"))
    except ValueError:
        raise ModelError("%s in the state store is not JSON" % store.path(RECORD),
                         fix="restore it (its \"names\" says whether this cluster's AWS names are kops' or unique) "
                             "or delete it to decide again")
    if not isinstance(record, dict) or record.get("names") != UNIQUE_NAMES:
        raise ModelError("%s in the state store: names must be %r, not %r" % (
            store.path(RECORD), UNIQUE_NAMES, record.get("names") if isinstance(record, dict) else record))
    return record


def apply_record(store, completed):
    """Set the unique-names annotation on the completed cluster from its record (and drop one the spec carries
    without a record: the record alone decides); returns the record or None."""
    record = read_record(store)
    _annotate(completed, record is not None)
    return record


def _annotate(completed, unique):
    metadata = completed["metadata"]
    if unique:
        metadata.setdefault("annotations", {})[UNIQUE_NAMES_ANNOTATION] = UNIQUE_NAMES
    elif UNIQUE_NAMES_ANNOTATION in (metadata.get("annotations") or {}):
        del metadata["annotations"][UNIQUE_NAMES_ANNOTATION]


def choose(store, completed, record, held, dry_run):
    """Decide this cluster's AWS names (see the module doc), annotate completed, record a new unique choice
    unless dry_run; returns the plan entries that say so (none for kops' names).

    record: apply_record's (a recorded choice stands); held: else the facts {kops-derived name of this cluster:
    KubernetesCluster tag of the object holding it} the driver gathered."""
    name = completed["metadata"]["name"]
    if record is not None:
        return [PlanEntry(PLAN_KIND, _describe(name, record), "unchanged")]
    if not held or name in held.values():
        return []
    lookalikes = set(lookalike_cluster_names(name))
    others = sorted({owner for owner in held.values() if owner in lookalikes})
    if not others:
        return []  # held by no look-alike (an untagged object): the task refuses it, naming it, as before
    record = {"names": UNIQUE_NAMES, "lookalikes": others,
              "held": sorted(n for n, owner in held.items() if owner in lookalikes)}
    _annotate(completed, True)
    if not dry_run:
        store.apply([(RECORD, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode("utf-8"))])
    return [PlanEntry(PLAN_KIND, _describe(name, record), "create")]


def _describe(name, record):
    return "%s: unique AWS names (a hash of the full cluster name): look-alike cluster %s holds kops' names %s" % (
        name, " and ".join(record.get("lookalikes") or ["?"]), ", ".join(record.get("held") or []))
