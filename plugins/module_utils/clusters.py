# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster service: what the modules call.

It ties the layers together in their one direction (api -> completion ->
statestore) and returns *plans*: the objects before and after, the store
writes that would make it so, and whether anything changes.  A plan is
computed without writing anything, so check mode is simply "do not execute";
nothing is written unless every object validates.
"""

from __future__ import annotations

import copy
import datetime
import os

from ansible_collections.kubeops.kops.plugins.module_utils.api import errors, objects, validation
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels, instance_groups, new_cluster
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils import revisions
from ansible_collections.kubeops.kops.plugins.module_utils.completion.cloudfacts import StaticCloudFacts
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history, layout, vfs
from ansible_collections.kubeops.kops.plugins.module_utils import tables
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ServiceError

# Metadata the store manages itself; comparing specs ignores it.
VOLATILE_METADATA = ("creationTimestamp", "generation", "resourceVersion", "uid")


class ClusterError(ServiceError):
    """A request that cannot be honoured; the message says what to change."""


def check_name(field, name):
    """Cluster and instance group names become store paths: DNS-1123 subdomains of at most 253 characters."""
    if not isinstance(name, str) or len(name) > 253 or not validation.DNS1123_SUBDOMAIN.match(name):
        shown = name if not isinstance(name, str) or len(name) <= 60 else name[:57] + "..."
        raise ClusterError("%s: %r is not a DNS name; use at most 253 lower-case letters, digits, '-' and '.'"
                           % (field, shown))


def _check_file_store(store):
    """A file:// store under a file cannot hold anything: say so before reading or writing."""
    path = getattr(store, "root", None) if store.scheme == "file" else None
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    if path and not os.path.isdir(path):
        raise ClusterError("state_store: %s is a file, not a directory; give a directory (file://DIR) or an s3:// store"
                           % path)


def now_timestamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def comparable(obj):
    """obj without the metadata the store manages, for change detection."""
    if obj is None:
        return None
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    for key in VOLATILE_METADATA:
        meta.pop(key, None)
    return obj


class Plan(object):
    """Objects before/after and the store writes between them."""

    def __init__(self, cluster_name, before, after, completed=None, interrupted=None, operation=None):
        self.cluster_name = cluster_name
        self.before = before          # {relpath: object or None}
        self.after = after            # {relpath: object or None}
        self.completed = completed    # completed Cluster (computed, not stored)
        # An earlier run's write that was cut off: `before` already shows it done; executing finishes it.
        self.interrupted = interrupted
        # What the spec's history records the write as (history.OPERATIONS): create, replace, instance_group, ...
        self.operation = operation
        # A rollback writes a revision's bytes as they were stored: {relpath: bytes} before and after.
        self.raw_before = None
        self.raw_after = None
        self.restores = None
        # Store files written beside the spec's objects, {relpath: bytes}: kops' additional objects.
        self.files_before = {}
        self.files_after = {}

    @property
    def changed_paths(self):
        if self.raw_after is not None:
            paths = set(self.raw_before) | set(self.raw_after)
            return sorted(p for p in paths if self.raw_before.get(p) != self.raw_after.get(p))
        paths = set(self.before) | set(self.after)
        return sorted([p for p in paths if comparable(self.before.get(p)) != comparable(self.after.get(p))] +
                      [p for p, data in self.files_after.items() if self.files_before.get(p) != data])

    @property
    def changed(self):
        return bool(self.changed_paths) or bool(self.interrupted)

    def report(self, config_base, revision=None, dry_run=False):
        """What the run did to the store, as lines: one saying so (and the revision it is at now), then the changed
        objects as a table, OBJECT CHANGE (created, updated, deleted).  No ': ' in the first line: a YAML result
        format would quote and fold it."""
        at = ", now at revision %s" % revision if revision is not None else ""
        if not self.changed_paths:
            return ["No changes in %s%s" % (config_base, at)]
        before, after = ((self.raw_before, self.raw_after) if self.raw_after is not None
                         else (dict(self.before, **self.files_before), dict(self.after, **self.files_after)))
        done = "would change" if dry_run else "changed"
        changes = [(path, "created" if before.get(path) is None else "deleted" if after.get(path) is None
                    else "updated") for path in self.changed_paths]
        return (["%d object(s) %s in %s%s" % (len(changes), done, config_base, at)]
                + tables.render(["OBJECT", "CHANGE"], changes))

    def objects_after(self):
        return [self.after[p] for p in sorted(self.after) if self.after[p] is not None]

    def diff(self):
        """Ansible diff: the YAML of every object the plan touches, before and after."""
        paths = self.changed_paths
        if self.raw_after is not None:
            return {
                "before": _joined(self.raw_before, paths), "after": _joined(self.raw_after, paths),
                "before_header": "%s (state store)" % self.cluster_name,
                "after_header": "%s (revision %s)" % (self.cluster_name, self.restores),
            }
        before = [self.before[p] for p in paths if self.before.get(p) is not None]
        after = [self.after[p] for p in paths if self.after.get(p) is not None]
        files = [p for p in paths if p in self.files_after]
        return {
            "before": "---\n".join(([objects.dump_objects(before)] if before else []) +
                                   [self.files_before[p].decode("utf-8") for p in files if self.files_before.get(p)]),
            "after": "---\n".join(([objects.dump_objects(after)] if after else []) +
                                  [self.files_after[p].decode("utf-8") for p in files]),
            "before_header": "%s (state store)" % self.cluster_name,
            "after_header": "%s (planned)" % self.cluster_name,
        }


class ClusterService(object):
    def __init__(self, state_store=None, facts=None):
        self.store = vfs.open_store(state_store)
        _check_file_store(self.store)
        self.facts = facts or StaticCloudFacts()

    # -- reading -------------------------------------------------------------

    def cluster_store(self, name):
        check_name("cluster_name", name)
        return layout.ClusterStore(self.store, name)

    def list_clusters(self):
        return layout.list_clusters(self.store)

    def lease(self, name, owner=None, ttl=None):
        """The cluster's lease as a context manager (layout.ClusterStore.lease): hold it around a run that writes."""
        return self.cluster_store(name).lease(owner, ttl)

    @property
    def notes(self):
        """What the store did besides the plan (an interrupted write finished, a lease taken over)."""
        return list(self.store.notes)

    def history(self, name):
        """The cluster's spec history (statestore/history.History)."""
        return history.History(self.cluster_store(name))

    def revision(self, name):
        """The history.Revision the stored spec is at, or None when the cluster is not stored."""
        return self.history(name).current()

    def read_revision(self, name, number):
        """(cluster, [instance groups]) as stored at a revision of the history (ClusterError if not kept)."""
        try:
            spec = self.history(name).spec_at(number)
        except history.HistoryError as exc:
            raise ClusterError(str(exc))
        return _spec_objects(spec, self.store.url(name))

    def read(self, name):
        """(cluster, [instance groups]) as stored, or (None, [])."""
        store = self.cluster_store(name)
        cluster = store.read_cluster()
        if cluster is None:
            return None, []
        return cluster, store.read_instance_groups()

    def _current(self, name):
        cluster, igs = self.read(name)
        current = {}
        if cluster is not None:
            current[layout.CLUSTER_CONFIG] = cluster
        for ig in igs:
            current[layout.instance_group_path(objects.name_of(ig))] = ig
        return current

    # -- planning ------------------------------------------------------------

    def plan_create(self, options, overwrite=False):
        """Plan `kops create cluster` from create-cluster options.

        An existing cluster whose stored spec equals what the options produce
        is left alone (changed=False).  One that differs is refused unless
        overwrite=True, as kops refuses to create over an existing cluster.
        """
        state_store = self.store.url("").rstrip("/")
        cluster, igs = new_cluster.new_cluster(options, state_store=state_store, facts=self.facts)
        name = objects.name_of(cluster)
        current = self._current(name)
        if current and not overwrite:
            desired = _keyed(cluster, igs)
            if any(comparable(current.get(p)) != comparable(o) for p, o in desired.items()):
                raise ClusterError(
                    "cluster %r already exists in %s with a different spec; use replace_cluster.yml "
                    "(cluster module `definition`) to change it, or overwrite: true to recreate it from options"
                    % (name, state_store))
        return self._plan_objects(name, cluster, igs, current, prune=overwrite, operation="create")

    def plan_replace(self, documents, force=False, prune=False, revision=None, additional_objects=None):
        """Plan `kops replace -f`: the Cluster and/or InstanceGroups given replace the stored ones.

        A new cluster needs force=True (kops replace --force).  With
        prune=True, stored instance groups missing from the documents are deleted.
        revision: the revision the documents were read at (their metadata.annotations kubeops.kops/revision, as
        get_cluster.yml writes it, when not given).  When the store moved on since, the replace is accepted if the
        documents hold every change made since (a three-way comparison with the spec at that revision, revisions.py)
        and refused naming the fields it would undo otherwise, unless force=True.  The writes are conditional on
        this same read, so a change landing after it is a conflict.  The annotation is never stored.
        additional_objects: kops' additional objects (api/objects.py), given with the Cluster; they replace the stored
        ones (clusteraddons/default) as ``kops create -f`` does; none given leaves the stored ones alone.
        """
        try:
            revision = revision or revisions.of_objects(documents)
        except revisions.RevisionError as exc:
            raise ClusterError(str(exc))
        cluster, igs = objects.split_objects([revisions.without_annotation(d) for d in documents])
        if additional_objects and cluster is None:
            raise ClusterError("the definition's additional objects (%s) need the Cluster object in the same definition, "
                               "as kops create -f needs it" % ", ".join(sorted({str(o.get("kind")) for o in
                                                                                additional_objects})))
        name = objects.name_of(cluster) if cluster else _cluster_of_groups(igs)
        current = self._current(name)
        if revision and not force:
            self._check_revision(name, revision, bool(current))
        if not current and not force:
            raise ClusterError("cluster %r does not exist in %s; set force: true to create it (kops replace --force)"
                               % (name, self.store.url("")))
        if cluster is None:
            cluster = current.get(layout.CLUSTER_CONFIG)
            if cluster is None:
                raise ClusterError("cluster %r does not exist; give its Cluster object too" % name)
        elif current.get(layout.CLUSTER_CONFIG) is None:
            cluster = self._assign_new_cluster(cluster)
        kept = {objects.name_of(ig): ig for ig in self._stored_groups(current)} if not prune else {}
        kept.update({objects.name_of(ig): ig for ig in igs})
        plan = self._plan_objects(name, cluster, list(kept.values()), current, prune=True,
                                  operation="create" if not current else "replace")
        if revision and not force:
            self._refuse_undoing(name, revision, plan)
        if additional_objects:
            path = objects.ADDITIONAL_OBJECTS_PATH
            plan.files_before[path] = self.cluster_store(name).read(path)
            plan.files_after[path] = objects.dump_additional_objects(additional_objects).encode("utf-8")
        return plan

    def _check_revision(self, name, revision, stored):
        """Refuse a revision that is not one of ours, or a cluster read at one that is no longer stored."""
        try:
            history.parse(revision)
        except history.HistoryError as exc:
            raise ClusterError("revision: %s" % exc)
        if not stored:
            raise ClusterError("cluster %r changed in the state store since this definition was read at revision %s "
                               "(it is at revision none now: the cluster is not stored): replacing would undo that "
                               "change. Set force: true to create it again from the definition" % (name, revision))

    def _refuse_undoing(self, name, revision, plan):
        """Refuse the plan of a definition read at revision when it would undo a change stored since (revisions.py)."""
        now = self.revision(name)
        if now.matches(revision):
            return
        refused = ("cluster %r changed in the state store since this definition was read at revision %s (it is at "
                   "revision %s now)" % (name, revision, now))
        try:
            base = revisions.base_spec(self.history(name), revision)
        except history.HistoryError as exc:
            raise ClusterError("%s and revision %s cannot be read (%s), so what changed since cannot be told. Read "
                               "it again (get_cluster.yml), redo your edit and replace, or set force: true to "
                               "overwrite it" % (refused, revision, exc))
        if base is None:
            raise ClusterError("%s and the history no longer keeps revision %s, so what changed since cannot be told. "
                               "Read it again (get_cluster.yml), redo your edit and replace, or set force: true to "
                               "overwrite it" % (refused, revision))
        undone = revisions.unseen_changes(_keyed(*_spec_objects(base, "revision %s of %s" % (revision, name))),
                                          plan.before, plan.after, comparable)
        if undone:
            raise ClusterError("%s: replacing would undo what changed since, which this definition has not seen: %s. "
                               "Read it again (get_cluster.yml), redo your edit and replace, or set force: true to "
                               "overwrite it" % (refused, revisions.describe(undone)))

    def plan_rollback(self, name, number):
        """Plan writing back the spec stored at revision number, byte for byte (the config and every instance group
        as they were; groups added since are deleted).  The write is a new revision; cluster_update applies it."""
        current = self._current(name)
        if not current:
            raise ClusterError("cluster %r does not exist in %s; a rollback needs the stored cluster"
                               % (name, self.store.url("")))
        try:
            number = int(number)
            spec = self.history(name).spec_at(number)
        except (TypeError, ValueError) as exc:
            raise ClusterError("revision: %s" % exc if isinstance(exc, history.HistoryError) else
                               "revision: %r is not a revision number; give one of get_cluster.yml -e history=true"
                               % (number,))
        cluster, igs = _spec_objects(spec, "revision %d of %s" % (number, name))
        plan = self._plan_objects(name, cluster, igs, current, prune=True, operation="rollback")
        plan.after = _keyed(cluster, igs)
        for path in current:
            plan.after.setdefault(path, None)
        plan.raw_before = self.history(name).current_spec()
        plan.raw_after = spec
        plan.restores = number
        return plan

    def plan_instance_group(self, cluster_name, group, state="present"):
        """Plan create/update/delete of one instance group (kops create/replace/delete ig)."""
        current = self._current(cluster_name)
        cluster = current.get(layout.CLUSTER_CONFIG)
        if cluster is None:
            raise ClusterError("cluster %r does not exist in %s; create it first" % (cluster_name, self.store.url("")))
        name = objects.name_of(group)
        groups = {objects.name_of(ig): ig for ig in self._stored_groups(current)}
        if state == "absent":
            groups.pop(name, None)
        else:
            group = copy.deepcopy(group)
            group.setdefault("apiVersion", objects.API_VERSION)
            group.setdefault("kind", objects.INSTANCE_GROUP)
            stored = (groups.get(name) or {}).get("spec") or {}
            # What the user leaves out keeps its stored value, else gets kops' default:
            # a second run with the same spec changes nothing.
            for field in instance_groups.DEFAULTED_FIELDS:
                if field not in group["spec"] and field in stored:
                    group["spec"][field] = copy.deepcopy(stored[field])
            channel = channels.load_channel(cluster["spec"].get("channel"))
            try:
                instance_groups.fill_new_group_defaults(cluster, group, channel, self._facts_for(cluster), sizes=True)
            except instance_groups.InstanceGroupDefaultsError as exc:
                raise ClusterError(str(exc))
            groups[name] = group
        return self._plan_objects(cluster_name, cluster, list(groups.values()), current, prune=True,
                                  operation="instance_group")

    def plan_delete(self, name, force=False, region=None, profile=None):
        """Plan removing the cluster from the store; refused while its cloud still holds objects it owns
        (they would keep running, unreachable by any later run), unless force (kops delete cluster --unregister)."""
        current = self._current(name)
        cluster = current.get(layout.CLUSTER_CONFIG)
        if cluster is not None and not force:
            from ansible_collections.kubeops.kops.plugins.module_utils.deletion import cloud_still_holds
            found = cloud_still_holds(cluster, profile=profile, region=region)
            if found is not None:
                raise ClusterError(
                    "cluster %r still owns cloud objects (e.g. %s %s %s): delete the cluster with "
                    "playbooks/delete_cluster.yml (module kubeops.kops.cluster_delete), which removes the state store "
                    "last; force: true removes only the store (kops delete cluster --unregister) and leaves them running"
                    % (name, found.kind, found.id, found.name))
        return Plan(name, current, {p: None for p in current}, interrupted=self.cluster_store(name).interrupted_write())

    # -- executing -----------------------------------------------------------

    def execute(self, plan):
        """Write the plan's changes to the store, all or nothing, under the cluster's lease.

        Each write is conditional on what the plan read: if another run changed
        the cluster meanwhile, this fails (layout.ClusterConflict) and writes nothing.
        """
        if not plan.changed:
            return
        store = self.cluster_store(plan.cluster_name)
        with store.lease():  # taking it finishes an interrupted write first
            if not any(plan.after.values()):
                store.delete_cluster()
                return
            changes = []
            for path in plan.changed_paths:
                if plan.raw_after is not None:
                    changes.append((path, plan.raw_after.get(path)))
                    continue
                if path in plan.files_after:
                    changes.append((path, plan.files_after[path]))
                    continue
                obj = plan.after.get(path)
                changes.append((path, objects.dump_object(obj).encode("utf-8") if obj is not None else None))
            store.apply(changes, operation=plan.operation, record={"restores": plan.restores})

    # -- internals -----------------------------------------------------------

    @staticmethod
    def _stored_groups(current):
        return [o for p, o in sorted(current.items()) if o is not None and o.get("kind") == objects.INSTANCE_GROUP]

    def _assign_new_cluster(self, cluster):
        """What kops create -f does to a new Cluster: configBase and PerformAssignments."""
        try:
            new_cluster.check_cluster_name(objects.name_of(cluster))
        except new_cluster.CreateClusterError as exc:
            raise ClusterError(str(exc))
        cluster = copy.deepcopy(cluster)
        spec = cluster.setdefault("spec", {})
        spec.setdefault("configBase", "%s/%s" % (self.store.url("").rstrip("/"), objects.name_of(cluster)))
        try:
            new_cluster.perform_assignments(cluster, self._facts_for(cluster))
        except new_cluster.CreateClusterError as exc:
            raise ClusterError(str(exc))
        return cluster

    def _plan_objects(self, name, cluster, igs, current, prune, operation=None):
        cluster = copy.deepcopy(cluster)
        igs = [copy.deepcopy(ig) for ig in igs]
        for ig in igs:
            check_name("instance group name", objects.name_of(ig))
            ig.setdefault("metadata", {}).setdefault("labels", {})[objects.CLUSTER_LABEL] = name
        completed = self.validate(cluster, igs)
        desired = _keyed(cluster, igs)
        _carry_metadata(desired, current)
        after = dict(desired)
        if prune:
            for path in current:
                after.setdefault(path, None)
        else:
            for path, obj in current.items():
                after.setdefault(path, obj)
        return Plan(name, current, after, completed, interrupted=self.cluster_store(name).interrupted_write(),
                    operation=operation)

    def completed_groups(self, cluster, completed_cluster, groups):
        """The instance groups as kops' update completes them, once for every stage after it (new dicts): a group
        stored without a machine type (kops replace -f stores it as given) first gets its cloud's default for its
        zones, as kops create ig would have given it; then each is completed against the completed cluster
        (PopulateInstanceGroupSpec: sizes, image, subnets, manager, its kubelet)."""
        completed, channel = [], None
        for group in groups:
            spec = group.get("spec") or {}
            if not (spec.get("machineType") or spec.get("manager") == "Karpenter"):
                group = copy.deepcopy(group)
                channel = channel or channels.load_channel(cluster["spec"].get("channel"))  # parsed once, if at all
                try:
                    instance_groups.fill_new_group_defaults(cluster, group, channel, self._facts_for(cluster),
                                                            sizes=True)
                except instance_groups.InstanceGroupDefaultsError as exc:
                    raise ClusterError(str(exc))
            completed.append(populate.populate_instance_group_spec(completed_cluster, group))
        return completed

    def _facts_for(self, cluster):
        """The cloud facts, looking up in this cluster's region when the module named none."""
        self.facts.settle_region(cluster.get("spec") or {})
        return self.facts

    def validate(self, cluster, igs):
        """Validate user spec and its completion; raise ValidationError with every problem."""
        problems = validation.deep_validate(cluster, igs, strict=False, facts=self._facts_for(cluster))
        if problems:
            raise errors.ValidationError(problems, subject="cluster %s" % objects.name_of(cluster))
        completed = populate.populate_cluster_spec(cluster, igs, self.facts)
        problems = validation.validate_cluster(completed, strict=True)
        if problems:
            raise errors.ValidationError(problems, subject="completed spec of cluster %s" % objects.name_of(cluster))
        return completed


def _keyed(cluster, igs):
    keyed = {layout.CLUSTER_CONFIG: cluster}
    for ig in igs:
        keyed[layout.instance_group_path(objects.name_of(ig))] = ig
    return keyed


def _spec_objects(spec, source):
    """(cluster, [instance groups]) of a spec's {relpath: bytes}, the groups sorted by name."""
    cluster = None
    igs = []
    for relpath in sorted(spec):
        documents = objects.load_objects(spec[relpath].decode("utf-8"), source="%s: %s" % (source, relpath))
        for document in documents:
            if document.get("kind") == objects.CLUSTER:
                cluster = document
            else:
                igs.append(document)
    return cluster, sorted(igs, key=objects.name_of)


def _joined(spec, paths):
    """The texts of paths in a {relpath: bytes} spec, one YAML stream (for a diff)."""
    return "---\n".join(spec[p].decode("utf-8") for p in paths if spec.get(p) is not None)


def _carry_metadata(desired, current):
    """Keep creationTimestamp of stored objects; bump generation when a spec changes (as kops does)."""
    for path, obj in desired.items():
        meta = obj.setdefault("metadata", {})
        old = current.get(path)
        if old is None:
            meta.setdefault("creationTimestamp", now_timestamp())
            continue
        old_meta = old.get("metadata") or {}
        for key in VOLATILE_METADATA:
            if key in old_meta and key not in meta:
                meta[key] = old_meta[key]
        if comparable(old) != comparable(obj) and old.get("spec") != obj.get("spec"):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1


def _cluster_of_groups(igs):
    names = {((ig.get("metadata") or {}).get("labels") or {}).get(objects.CLUSTER_LABEL) for ig in igs}
    names.discard(None)
    if len(names) != 1:
        raise ClusterError("instance groups must carry the label %s naming one cluster (or give the Cluster object)"
                           % objects.CLUSTER_LABEL)
    return names.pop()
