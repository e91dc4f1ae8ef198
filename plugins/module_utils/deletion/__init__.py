# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""`kops delete cluster`, cloud-neutral: find what the cluster owns, list it, delete it in rounds.

A provider (deletion/<provider>.py) describes its object kinds as data: how
each is found by the cluster's ownership tags, how it is deleted (and, for
objects that go away slowly, how to tell it is gone), which kinds must be gone
before it, and what in the cloud holds an object that is not the cluster's.
The walker here knows no cloud: like kops' DeleteResources it deletes, per
round, every object whose prerequisite kinds are gone; an object whose delete
fails with the cloud's "not yet" (Cloud.retryable: a dependency still going
away) is retried next round ("still has dependencies, will retry"), one that
fails for another reason, or that something outside the cluster holds, is
reported and not looped on; the whole run is bounded by a deadline.

Shared objects (a BYO VPC, subnets, gateways the cluster only uses) are never
deleted: the cluster's own tags are removed from them instead.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.base import TryAgain
from ansible_collections.kubeops.kops.plugins.module_utils.providers.deletion_base import (  # noqa: F401 - re-exported
    ALREADY_GONE, BLOCKED, DELETED, FAILED, GONE, PLANNED, UNTAGGED, WAITING, Resource, each_object)
from ansible_collections.kubeops.kops.plugins.module_utils import durations, provider_names, tables, waits
from ansible_collections.kubeops.kops.plugins.module_utils.providers import deleters
from ansible_collections.kubeops.kops.plugins.module_utils.errors import ServiceError

DEFAULT_TIMEOUT = 1200
DEFAULT_INTERVAL = 10
NOTHING_TO_DELETE = "No cloud resources to delete"


class DeletionError(ServiceError):
    """The cluster's objects could not all be deleted; objects holds the report."""

    def __init__(self, message, objects=None):
        ServiceError.__init__(self, message)
        self.objects = objects or []
        self.errors = ["%s %s (%s): %s" % (o["kind"], o["id"], o["name"], o.get("reason") or o["result"])
                       for o in self.objects if o["result"] in (BLOCKED, FAILED, WAITING)]


def plan_lines(resources):
    """kops' TYPE NAME ID table of what a delete removes, or its "No cloud resources to delete"; what only loses the
    cluster's tags (shared), or what something outside the cluster holds, is said after the id."""
    if not resources:
        return [NOTHING_TO_DELETE]
    return tables.render(["TYPE", "NAME", "ID"], [(r.kind, r.name, r.id + _notes(r)) for r in resources])


def _notes(resource):
    notes = ["shared: only the cluster's tags are removed"] if resource.shared else []
    notes += ["held by %s" % "; ".join(resource.held_by)] if resource.held_by else []
    return "".join("  (%s)" % note for note in notes)


def driver_module(provider):
    """The cloud's deletion module (its package's, providers/<cloud>/); a cloud without one is refused, naming
    those that have one."""
    module = deleters.deletion_for(provider)
    if module is None:
        raise DeletionError("spec.cloudProvider: deleting a cluster's objects is built for %s, not %r"
                            % (", ".join(c for c in provider_names.names() if deleters.deletion_for(c)), provider))
    return module


class Walker(object):
    """Deletes a cluster's resources in rounds, each object when the kinds it waits for are gone.

    kinds: {kind name: Kind} (the provider's table); every Kind has ``after`` (kinds that must be
    gone first), ``delete(cloud, resources)`` -> {id: None (issued), ALREADY_GONE or the exception} and optionally
    ``still_there(cloud, resources)`` -> ids not gone yet (for objects that go away slowly),
    ``untag(cloud, resource)`` and ``holders(cloud, resource)`` (what holds it, re-checked on a
    dependency error).
    """

    def __init__(self, cloud, kinds, resources, deadline=DEFAULT_TIMEOUT, interval=DEFAULT_INTERVAL,
                 log=None, workers=8, sleep=time.sleep, clock=time.monotonic):
        self.cloud = cloud
        self.kinds = kinds
        self.resources = list(resources)
        self.deadline = deadline
        self.interval = interval
        self.log = log if log is not None else []
        self.workers = workers
        self.sleep = sleep
        self.clock = clock
        self.done = set()      # keys deleted, gone or untagged
        self.stuck = set()     # keys that will not go: blocked or failed
        self.waiting_for = {}  # key -> what the next round waits for (the cloud's "not yet", "being deleted")

    def _say(self, text):
        """A line of kops' output: kept for the result, and on the console as it happens."""
        self.log.append(text)
        waits.notice(text)

    def _waits_for(self, resource):
        """Objects of the kinds this one must outlive, not yet gone."""
        after = set(self.kinds[resource.kind].after)
        return [r for r in self.resources if r.kind in after and r.key not in self.done and not r.shared]

    def run(self):
        start = self.clock()
        for resource in self.resources:
            if resource.held_by:
                self._stick(resource, BLOCKED, "held by " + "; ".join(resource.held_by))
        while True:
            progressed = self._round()
            open_ = [r for r in self.resources if r.key not in self.done and r.key not in self.stuck]
            if not open_:
                break
            # Objects that wait only for stuck ones will never be ready: report them, stop.
            self._propagate_stuck()
            open_ = [r for r in self.resources if r.key not in self.done and r.key not in self.stuck]
            if not open_:
                break
            if self.clock() - start >= self.deadline:
                for r in open_:
                    self._stick(r, WAITING, "not gone after %d s (the timeout): %s" % (
                        self.deadline, r.reason or "still going away"))
                break
            left = self.deadline - (self.clock() - start)
            pause = 0 if progressed else min(self.interval, max(0, left))
            self._say("Not all resources deleted; %s (gives up in %s): %d left" % (
                "waiting %s before reattempting deletion" % durations.describe(pause) if pause
                else "reattempting deletion now", durations.describe(left), len(open_)))
            for r in sorted(open_, key=lambda r: r.key):
                why = self.waiting_for.get(r.key) or r.reason
                self._say("\t%s%s" % (r.key, "\t" + why if why else ""))
            if pause:
                self.sleep(pause)
        return [r.report() for r in self.resources]

    def _stick(self, resource, result, reason):
        resource.result = result
        resource.reason = reason
        self.stuck.add(resource.key)

    def _propagate_stuck(self):
        changed = True
        while changed:
            changed = False
            for r in self.resources:
                if r.key in self.done or r.key in self.stuck:
                    continue
                blockers = [w for w in self._waits_for(r) if w.key in self.stuck]
                if blockers:
                    self._stick(r, BLOCKED, "waits for %s" % ", ".join(sorted(b.key for b in blockers)))
                    changed = True

    def _round(self):
        """One pass: untag shared objects, delete every ready object, look again at those going away."""
        progressed = False
        ready = [r for r in self.resources if r.key not in self.done and r.key not in self.stuck
                 and (r.shared or not self._waits_for(r))]
        for resource in [r for r in ready if r.shared]:
            progressed |= self._untag(resource)
        to_delete = [r for r in ready if not r.shared and not r.pending]
        by_kind = {}
        for resource in to_delete:
            by_kind.setdefault(resource.kind, []).append(resource)
        outcomes = {}
        # Kinds run side by side; a kind deletes its objects in one call when its API allows (instances,
        # DNS records) or one by one.
        with ThreadPoolExecutor(max_workers=max(1, min(self.workers, len(by_kind) or 1))) as pool:
            futures = {kind: pool.submit(self._delete_kind, kind, items) for kind, items in by_kind.items()}
            for kind, future in futures.items():
                outcomes.update(future.result())
        for resource in to_delete:
            error = outcomes.get(resource.key)
            resource.attempts += 1
            if error is None and resource.result == GONE:
                self.done.add(resource.key)
                self._say("%s\tok (already gone)" % resource.key)
                progressed = True
            elif error is None:
                resource.pending = True
                progressed = True
            else:
                progressed |= self._failed(resource, error)
        waiting = [r for r in self.resources if r.pending and r.key not in self.done and r.key not in self.stuck]
        by_kind = {}
        for resource in waiting:
            by_kind.setdefault(resource.kind, []).append(resource)
        for kind, items in by_kind.items():
            still = self._still_there(kind, items)
            for resource in items:
                if resource.key in still:
                    resource.reason = still[resource.key]
                    continue
                if resource.result == PLANNED:
                    resource.result = DELETED
                resource.reason = ""
                self.done.add(resource.key)
                self._say("%s\tok" % resource.key)
                progressed = True
        return progressed

    def _delete_kind(self, kind, items):
        try:
            results = self.kinds[kind].delete(self.cloud, items)
        except Exception as exc:  # the whole batch failed alike; pylint: disable=broad-except
            results = {r.id: exc for r in items}
        outcome = {}
        for resource in items:
            error = results.get(resource.id)
            if error is ALREADY_GONE:
                resource.result = GONE
                error = None
            outcome[resource.key] = error
        return outcome

    def _still_there(self, kind, items):
        """{key: why} of the objects not gone yet."""
        check = getattr(self.kinds[kind], "still_there", None)
        if check is None:
            return {}
        try:
            still = check(self.cloud, items)
        except Exception as exc:  # a describe failing is retried next round; pylint: disable=broad-except
            if not self.cloud.retryable(exc):
                self._say("%s\terror checking deletion, will retry: %s" % (kind, self.cloud.failure(exc)))
            return {r.key: "being deleted" for r in items}
        return {r.key: still[r.id] for r in items if r.id in still}

    def _failed(self, resource, exc):
        """A delete failed: retry it next round if the cloud says "not yet", else find what holds it."""
        failure = self.cloud.failure(exc)
        if self.cloud.retryable(exc) or isinstance(exc, TryAgain):
            holders_of = getattr(self.kinds[resource.kind], "holders", None)
            holders = holders_of(self.cloud, resource, self.resources) if holders_of else []
            if holders:
                resource.held_by = holders
                self._stick(resource, BLOCKED, "held by " + "; ".join(holders))
                self._say("%s\theld by %s; not retried" % (resource.key, "; ".join(holders)))
                return True
            resource.reason = str(failure)
            self.waiting_for[resource.key] = self.cloud.why_not_yet(exc)
            self._say("%s\tstill has dependencies, will retry" % resource.key)
            return False
        self._stick(resource, FAILED, str(failure))
        self._say("%s\terror deleting resource: %s" % (resource.key, failure))
        return True

    def _untag(self, resource):
        try:
            self.kinds[resource.kind].untag(self.cloud, resource)
        except Exception as exc:  # pylint: disable=broad-except
            if self.cloud.retryable(exc):
                resource.reason = str(self.cloud.failure(exc))
                return False
            self._stick(resource, FAILED, "removing the cluster's tags: %s" % self.cloud.failure(exc))
            return True
        resource.result = UNTAGGED
        self.done.add(resource.key)
        self._say("%s\tcluster tags removed (shared)" % resource.key)
        return True


class Outcome(object):
    """What cluster_delete reports: the objects (as listed, then as handled), and whether anything changed."""

    def __init__(self, cluster_name, resources, store_exists, not_found=False):
        self.cluster_name = cluster_name
        self.resources = resources
        self.store_exists = store_exists
        # Not in the store, and no region given to look for cloud objects in: nothing was looked for.
        self.not_found = not_found
        self.objects = [r.report() for r in resources]
        self.log = []
        self.notes = []
        self.store_deleted = False

    @property
    def lines(self):
        return plan_lines(self.resources)

    @property
    def anything(self):
        return bool(self.resources) or self.store_exists


def delete_cluster(service, cluster_name, yes=False, dry_run=False, region=None, profile=None,
                   timeout=DEFAULT_TIMEOUT, interval=DEFAULT_INTERVAL, cloud_factory=None, sleep=time.sleep,
                   clock=time.monotonic, provider=None, project=None):
    """`kops delete cluster`: list the cluster's objects; with yes (and not dry_run) delete them, then the store.

    The store is removed last, only once the cloud holds nothing of the cluster, so a run that is
    interrupted or stopped by an object something else holds can simply be run again.  Without the
    store (removed already) the cluster's name, its cloud provider, the region and (GCE) the project
    still find its owned objects.
    """
    store = service.cluster_store(cluster_name)
    if dry_run or not yes:
        return _delete(service, store, cluster_name, False, region, profile, timeout, interval, cloud_factory, sleep,
                       clock, provider, project)
    # The delete holds the cluster from its first call to its last, its lease marked as a delete: an update, a
    # rolling update or a replace started meanwhile is refused naming it, and so is this delete while another
    # live run holds the cluster.  A holder that died is taken over, as any lease.
    with store.lease(deleting=True, action="cluster_delete"):
        return _delete(service, store, cluster_name, True, region, profile, timeout, interval, cloud_factory, sleep,
                       clock, provider, project)


def _delete(service, store, cluster_name, deleting, region, profile, timeout, interval, cloud_factory, sleep, clock,
            provider, project):
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

    cluster = store.read_cluster()
    spec = (cluster or {}).get("spec")
    ours = (store.path(layout.LEASE), store.path(layout.JOURNAL))  # this run's own lease is not the cluster
    stored = [p for p in service.store.list(cluster_name + "/") if p not in ours]
    if cluster is None and not stored and not region:
        # Neither the store nor the user names a region to look in: a delete that finished (or a name never
        # created in this store).  Said so, rather than asking for a region.
        return Outcome(cluster_name, [], False, not_found=True)
    provider, cloud_spec = _cloud_of(spec, provider, project)
    module = driver_module(provider)
    region = region or (region_of(spec) if spec else None)
    cloud = cloud_factory(cluster_name, region) if cloud_factory else module.cloud(cluster_name, region, profile,
                                                                                   cloud_spec)
    outcome = Outcome(cluster_name, module.discover(cloud, spec), cluster is not None or bool(stored))
    # What deleting leaves where the cloud's module says so (metal: the hosts, until they are reset), never silently.
    outcome.notes = list(getattr(module, "left_behind", lambda _spec: [])(spec))
    if not deleting:
        return outcome
    start = clock()
    handled = {}
    resources = outcome.resources
    # A pass deletes what discovery found; the next discovery catches what appeared meanwhile
    # (a node an autoscaler started, a record a controller wrote) until nothing owned is left.  A provider
    # that knows which kinds can have appeared looks for those only (rediscover).
    rediscover = getattr(module, "rediscover", None)
    for pass_number in range(3):
        waits.notice("deleting %d cloud object(s) of %s%s (gives up after %s)" % (
            len(resources), cluster_name, " that appeared meanwhile" if pass_number else "",
            durations.describe(max(0, timeout - (clock() - start)))))
        walker = Walker(cloud, module.KINDS_BY_NAME, resources, deadline=max(0, timeout - (clock() - start)),
                        interval=interval, log=outcome.log, sleep=sleep, clock=clock)
        reports = walker.run()
        for entry in reports:
            handled["%s:%s" % (entry["kind"], entry["id"])] = entry
        if walker.stuck:
            break
        found = rediscover(cloud, spec, reports) if rediscover else module.discover(cloud, spec)
        resources = [r for r in found if not r.shared]
        if not resources:
            break
    outcome.objects = sorted(handled.values(), key=lambda o: (o["kind"], o["name"], o["id"]))
    left = [o for o in outcome.objects if o["result"] in (BLOCKED, FAILED, WAITING)]
    if left or resources:
        raise DeletionError(
            "%d of the cluster's objects were not deleted; the state store is kept so that a later run can finish "
            "once they are free: %s" % (len(left) or len(resources), "; ".join(
                "%s %s (%s): %s" % (o["kind"], o["id"], o["name"], o.get("reason") or o["result"]) for o in left)
                or ", ".join(r.key for r in resources)), outcome.objects)
    if outcome.store_exists:
        # kops' DeleteCluster: the service-account issuer's discovery documents go before the cluster's files.
        from ansible_collections.kubeops.kops.plugins.module_utils.statestore import discovery as discovery_store
        for url in discovery_store.unpublish(spec):
            outcome.log.append("removed the service-account issuer's discovery document %s" % url)
            waits.notice(outcome.log[-1])
        waits.notice("removing %s from the state store" % cluster_name)
        store.delete_cluster()
        outcome.store_deleted = True
    return outcome


def _cloud_of(spec, provider=None, project=None):
    """(cloudProvider, the spec the provider's cloud() reads) from the stored spec, else from what the user gave;
    what the user gave must agree with a stored spec (deleting in another cloud or project would find nothing)."""
    stored = {"cloudProvider": (spec or {}).get("cloudProvider"), "project": (spec or {}).get("project")}
    for option, field, given in (("cloud_provider", "cloudProvider", provider), ("project", "project", project)):
        if given and stored[field] and given != stored[field]:
            raise DeletionError("%s: the stored cluster is in %s %r, not %r; leave %s out (the stored spec names it)"
                                % (option, field, stored[field], given, option))
    if spec:
        return stored["cloudProvider"] or "aws", spec
    return provider or "aws", ({"project": project} if project else None)


def cloud_still_holds(cluster, profile=None, region=None, cloud_factory=None):
    """The first cloud object the stored cluster still owns (one cheap tagged lookup), or None."""
    from ansible_collections.kubeops.kops.plugins.module_utils.zones import region_of

    name = cluster["metadata"]["name"]
    spec = cluster.get("spec") or {}
    module = driver_module(spec.get("cloudProvider") or "aws")
    region = region or region_of(spec)
    cloud = cloud_factory(name, region) if cloud_factory else module.cloud(name, region, profile, spec)
    try:
        return module.any_owned(cloud)
    except Exception as exc:  # credentials, endpoint, permissions: say so instead of a traceback
        if isinstance(exc, ValueError):
            raise
        raise DeletionError("cannot check whether the cloud still holds objects of cluster %s (%s); fix the "
                            "credentials or region, or set force: true to remove only the state store"
                            % (name, cloud.failure(exc)))
