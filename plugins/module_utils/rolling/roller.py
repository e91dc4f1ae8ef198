# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The rolling-update loop (kops' RollingUpdateCluster.RollingUpdate and rollingUpdateInstanceGroup).

It knows no cloud and no Kubernetes client: ``cloud`` is a provider's rolling side (providers/aws/rolling.py:
detach, terminate, deregister, wait_in_service), ``drainer`` the Kubernetes side (rolling/drain.py:
taint, cordon_and_label, drain) or None with cloud_only, ``validator`` a callable returning the
cluster's validation failures ([{"instance_group": name or None, "message"}]).
"""

from __future__ import annotations

import concurrent.futures
import time

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import budget, planner
from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError

DEFAULTS = {"force": False, "cloud_only": False, "fail_on_validate_error": True, "fail_on_drain_error": True,
            "drain_timeout": 900, "validation_timeout": 900, "post_drain_delay": 5, "interval": 15,
            "validate_count": 2, "validate_retry_interval": 30, "validate_recheck_interval": 10,
            "deregister_control_plane": True, "pending_pods_timeout": 300}


class RollError(RollingError):
    """The roll stopped; the message says where and why (the log says what was done before)."""


class ValidationTimeout(RollError):
    """kops' ValidationTimeoutError: stops the whole roll, whichever group it happened in."""


class DeregisterError(RollError):
    """kops' DeregisterError: stops the whole roll too."""


class DrainError(RollError):
    pass


class PendingPods(RollError):
    """Pending pods still needed a node's capacity at pending_pods_timeout: the roll stops before draining it."""


EXITABLE = (ValidationTimeout, DeregisterError, PendingPods)
PENDING_POLL = 5


class _Scope(object):
    """The node groups a budget rolls together, as validate and relevant see a group."""

    def __init__(self, name, names):
        self.name = name
        self.names = set(names)


class Roller(object):
    def __init__(self, cloud, progress, options, drainer=None, validator=None, sleep=time.sleep, clock=time.monotonic,
                 capacity=None):
        self.cloud = cloud
        self.progress = progress
        self.options = dict(DEFAULTS, **{k: v for k, v in options.items() if v is not None})
        self.drainer = drainer
        self.validator = validator
        self.capacity = capacity  # () -> (nodes, pods) as JSON, for the pending-pods wait under a budget
        self.sleep = sleep
        self.clock = clock
        self.control_plane_groups = set()
        self.outcome = {}
        if not self.options["cloud_only"] and (drainer is None or validator is None):
            raise RollError("a rolling update needs the Kubernetes API to drain and validate; set cloud_only: true to "
                            "roll without it (nodes are not drained: downtime)")

    def log(self, phase, message, group="-", instance="-"):
        return self.progress.step(phase, message, group, instance)

    # -- the cluster -------------------------------------------------------------------------------
    def run(self, plans, node_schedule=None):
        """plans: [(phase, [group plan])] in kops' order (planner.ordered, planner.group_plan).  node_schedule
        (budget.schedule of the node phase's plans): the node groups roll side by side in its waves instead."""
        self.control_plane_groups = {p["group"].name for phase, phase_plans in plans for p in phase_plans
                                     if phase == "control-plane"}
        by_phase = dict(plans)
        bastions = by_phase.get("bastion") or []
        if bastions:
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(bastions)) as pool:
                futures = {pool.submit(self.roll_group, p): p["group"].name for p in bastions}
                errors, failures = [], []
                for future in concurrent.futures.as_completed(futures):
                    if future.exception() is not None:
                        failures.append(future.exception())
                        errors.append("%s: %s" % (futures[future], future.exception()))
                        self.outcome[futures[future]] = "failed: %s" % future.exception()
                    else:
                        self.outcome[futures[future]] = "rolled"
            if errors:
                raise RollError("%s, stopping rolling-update: %s"
                                % (_stopped_by("bastion", failures), "; ".join(errors)))
        for plan in by_phase.get("control-plane") or []:
            try:
                self.roll_group(plan)
            except Exception as exc:
                self.outcome[plan["group"].name] = "failed: %s" % exc
                raise RollError("%s, stopping rolling-update: %s" % (_stopped_by("control-plane", [exc]), exc))
            self.outcome[plan["group"].name] = "rolled"
        errors = []
        for phase in ("apiserver", "node") if node_schedule is None else ("apiserver",):
            for plan in by_phase.get(phase) or []:
                try:
                    self.roll_group(plan)
                    self.outcome[plan["group"].name] = "rolled"
                except EXITABLE as exc:
                    self.outcome[plan["group"].name] = "failed: %s" % exc
                    raise
                except ValueError as exc:  # kops goes on with the next group and reports all at the end
                    self.outcome[plan["group"].name] = "failed: %s" % exc
                    self.log("error", str(exc), plan["group"].name)
                    errors.append("%s: %s" % (plan["group"].name, exc))
        if errors:
            raise RollError("; ".join(errors))
        if node_schedule is not None:
            self.roll_in_waves(node_schedule)
        names = sorted(p["group"].name for _phase, phase_plans in plans for p in phase_plans)
        self.log("done", "completed rolling update of instance groups %s" % ", ".join(names))

    # -- one group ---------------------------------------------------------------------------------
    def roll_group(self, plan):
        group, cloud_group = plan["group"], plan["group"].cloud
        bastion = group.phase == "bastion"
        interval = self.options["interval"]
        none_ready = plan["none_ready"]
        self.log("start", "%d to replace, max surge %d, max unavailable %d, %d at a time"
                 % (len(plan["update"]), plan["max_surge"], plan["max_unavailable"], plan["concurrency"]), group.name)
        if not bastion:
            self.validate("", 1, group)
        if not self.options["cloud_only"]:
            self.taint_all(group, plan["update"])
        for instance in plan["warm"]:
            self.log("terminate", "warm pool instance", group.name, instance["id"])
            self.cloud.terminate(cloud_group, instance)

        for index, instance in enumerate(plan["detach"]):
            self.log("detach", "detaching (surge: the group launches a replacement)", group.name, instance["id"])
            try:
                self.cloud.detach(cloud_group, instance)
            except ValueError as exc:  # kops goes on with fewer surged instances
                self.log("error", "failed to detach: %s" % exc, group.name, instance["id"])
                continue
            if index == len(plan["detach"]) - 1 or none_ready:
                self.log("wait", "%ds after detaching" % interval, group.name)
                self.sleep(interval)
                self.validate(" after detaching instance", self.options["validate_count"], group)
                none_ready = False

        if not plan["drain_and_terminate"]:
            self.log("skip", "rolling updates for this group are disabled (drainAndTerminate: false)", group.name)
            return

        concurrency = plan["concurrency"]
        with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
            pending = set()

            def collect(futures):
                for future in futures:
                    pending.discard(future)
                    if future.exception() is not None:
                        concurrent.futures.wait(pending)
                        raise future.exception()

            for index, instance in enumerate(plan["update"]):
                pending.add(pool.submit(self.drain_terminate_and_wait, group, instance))
                if len(pending) < concurrency and (not none_ready or index > 0):
                    continue
                done, _running = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                collect([next(iter(done))])
                try:
                    self.validate(" after terminating instance", self.options["validate_count"], group)
                except RollError:
                    concurrent.futures.wait(pending)
                    raise
                collect([f for f in list(pending) if f.done()])
            if pending:
                concurrent.futures.wait(pending)
                collect(list(pending))
                self.validate(" after terminating instance", self.options["validate_count"], group)
        self.log("done", "group rolled", group.name)

    # -- the node groups under a budget --------------------------------------------------------------
    def roll_in_waves(self, node_schedule):
        """budget.schedule's pre-scale then waves.  Any failure stops the roll once the wave's instances in flight
        are done: no new wave starts, so the budget holds whatever fails."""
        plans = node_schedule["plans"]
        scope = _Scope("node-groups", [p["group"].name for p in plans])
        limits = node_schedule["budget"]
        self.log("start", "%d group(s) side by side, %d wave(s); budget: max unavailable %d, max surge %s, of %d "
                 "node(s)" % (len(plans), len(node_schedule["waves"]), limits["max_unavailable"],
                              "each group's own" if limits["max_surge"] is None else limits["max_surge"],
                              limits["nodes"]), scope.name)
        for note in node_schedule["notes"]:
            self.log("plan", note, scope.name)
        try:
            self.validate("", 1, scope)
            for plan in plans:
                if not self.options["cloud_only"]:
                    self.taint_all(plan["group"], plan["update"])
                for instance in plan["warm"]:
                    self.log("terminate", "warm pool instance", plan["group"].name, instance["id"])
                    self.cloud.terminate(plan["group"].cloud, instance)
            self.prescale(node_schedule, scope)
        except ValueError as exc:  # nothing was drained yet: every group stopped before its first wave
            for plan in plans:
                self.outcome[plan["group"].name] = "failed: %s" % exc
            raise
        for plan in plans:
            if not plan["drain_and_terminate"]:
                self.log("skip", "rolling updates for this group are disabled (drainAndTerminate: false)",
                         plan["group"].name)
                self.outcome[plan["group"].name] = "rolled"
        left = {p["group"].name: sum(len(i) for w in node_schedule["waves"] for q, i in w["groups"]
                                     if q["group"].name == p["group"].name) for p in plans}
        try:
            self._waves(node_schedule, scope, left)
        except ValueError as exc:  # the groups not done: stopped with the rest (their own failure, if any, is kept)
            for plan in plans:
                self.outcome.setdefault(plan["group"].name, "stopped: %s" % exc)
            raise

    def _waves(self, node_schedule, scope, left):
        limits = node_schedule["budget"]
        total = len(node_schedule["waves"])
        for number, wave in enumerate(node_schedule["waves"], 1):
            self.log("wave", "wave %d/%d: %s (unavailable %d of %d)" % (
                number, total, budget.wave_text(wave), wave["unavailable"], limits["max_unavailable"]), scope.name)
            jobs = [(plan, instance) for plan, instances in wave["groups"] for instance in instances]
            failures = []
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                futures = {pool.submit(self.replace_under_budget, plan["group"], instance): (plan, instance)
                           for plan, instance in jobs}
                for future in concurrent.futures.as_completed(futures):
                    plan, instance = futures[future]
                    if future.exception() is not None:
                        failures.append((plan["group"].name, instance["id"], future.exception()))
                        self.outcome[plan["group"].name] = "failed: %s" % future.exception()
            if failures:
                message = "; ".join("%s %s: %s" % failure for failure in sorted(failures, key=str))
                self.log("error", "wave %d/%d failed, no further wave starts: %s" % (number, total, message), scope.name)
                exitable = next((f[2] for f in failures if isinstance(f[2], EXITABLE)), None)
                kind = type(exitable) if exitable is not None else RollError  # a validation timeout stays one
                raise kind("wave %d/%d: %s" % (number, total, message))
            try:
                self.validate(" after wave %d/%d" % (number, total), self.options["validate_count"], scope,
                              must_pass=True)
            except RollError as exc:
                for plan, _instances in wave["groups"]:
                    self.outcome[plan["group"].name] = "failed: %s" % exc
                raise
            for plan, instances in wave["groups"]:
                left[plan["group"].name] -= len(instances)
                if not left[plan["group"].name]:
                    self.outcome[plan["group"].name] = "rolled"
                    self.log("done", "group rolled", plan["group"].name)
            self.log("wave", "wave %d/%d done" % (number, total), scope.name)

    def prescale(self, node_schedule, scope):
        """Surge in every group before the first drain; a failed detach stops the roll (the waves count on it)."""
        if not node_schedule["surge"]:
            return
        for plan, instances in node_schedule["surge"]:
            for instance in instances:
                self.log("detach", "detaching (surge: the group launches a replacement)", plan["group"].name,
                         instance["id"])
                try:
                    self.cloud.detach(plan["group"].cloud, instance)
                except ValueError as exc:
                    raise RollError("pre-scaling: failed to detach %s from %s: %s; nothing was drained"
                                    % (instance["id"], plan["group"].name, exc))
        self.log("wait", "%ds after detaching" % self.options["interval"], scope.name)
        self.sleep(self.options["interval"])
        for plan, _instances in node_schedule["surge"]:
            in_service = self.cloud.wait_in_service(plan["group"].cloud, self.options["validation_timeout"])
            self.log("wait", "group has %d instance(s) InService" % len(in_service), plan["group"].name)
        self.validate(" after pre-scaling", self.options["validate_count"], scope, must_pass=True)

    def replace_under_budget(self, group, instance):
        node_name = ((instance.get("node") or {}).get("metadata") or {}).get("name")
        if node_name and self.capacity is not None and not self.options["cloud_only"]:
            self.wait_for_pending_pods(group, instance, node_name)
        self.drain_terminate_and_wait(group, instance)

    def wait_for_pending_pods(self, group, instance, node_name):
        """Before draining: while Pending pods may need this node's capacity (budget.waiting_for_capacity), wait,
        up to pending_pods_timeout, then stop."""
        timeout = self.options["pending_pods_timeout"]
        deadline = self.clock() + timeout
        while True:
            nodes, pods = self.capacity()
            waiting = budget.waiting_for_capacity(nodes, pods, node_name)
            if not waiting:
                return
            shown = ", ".join(waiting[:5]) + (" and %d more" % (len(waiting) - 5) if len(waiting) > 5 else "")
            if self.clock() >= deadline:
                raise PendingPods("not draining node %s: %d Pending pod(s) still need capacity after %ds (%s); "
                                  "add capacity or raise pending_pods_timeout" % (node_name, len(waiting), timeout, shown))
            self.log("wait", "%d Pending pod(s) may need node %s's capacity (%s); again in %ds"
                     % (len(waiting), node_name, shown, PENDING_POLL), group.name, instance["id"])
            self.sleep(PENDING_POLL)

    def taint_all(self, group, update):
        """kops' taintAllNeedUpdate: PreferNoSchedule on every node to be replaced, so pods drained from one
        do not land on the next."""
        for instance in update:
            node = instance.get("node")
            if node is None or (node.get("spec") or {}).get("unschedulable"):
                continue
            try:
                if self.drainer.taint(node["metadata"]["name"]):
                    self.log("taint", "%s=:PreferNoSchedule" % self.drainer.TAINT, group.name, instance["id"])
            except ValueError as exc:
                if self.options["fail_on_drain_error"]:
                    raise DrainError("failed to taint node %s: %s" % (node["metadata"]["name"], exc))
                self.log("error", "ignoring error tainting node: %s" % exc, group.name, instance["id"])

    def drain_terminate_and_wait(self, group, instance):
        node = instance.get("node")
        node_name = (node or {}).get("metadata", {}).get("name")
        if group.phase == "bastion":
            pass
        elif self.options["cloud_only"]:
            self.log("drain", "not draining (cloud_only)", group.name, instance["id"])
        elif node_name is None:
            self.log("drain", "skipped: the instance is not registered in Kubernetes", group.name, instance["id"])
        else:
            try:
                self.drain(group, instance, node_name)
            except EXITABLE:
                raise
            except ValueError as exc:
                if self.options["fail_on_drain_error"]:
                    raise DrainError("failed to drain node %s: %s" % (node_name, exc))
                self.log("error", "ignoring error draining node %s: %s" % (node_name, exc), group.name, instance["id"])
        self.log("terminate", "terminating%s" % (" node %s" % node_name if node_name else ""), group.name, instance["id"])
        self.cloud.terminate(group.cloud, instance)
        self.log("wait", "for the group's instances to be InService (gives up after %ds)"
                 % self.options["validation_timeout"], group.name, instance["id"])
        in_service = self.cloud.wait_in_service(group.cloud, self.options["validation_timeout"])
        self.log("wait", "group has %d instance(s) InService; waiting %ds" % (len(in_service), self.options["interval"]),
                 group.name, instance["id"])
        self.sleep(self.options["interval"])

    def drain(self, group, instance, node_name):
        started = self.clock()
        self.log("cordon", "cordoning node %s and excluding it from external load balancers" % node_name,
                 group.name, instance["id"])
        if not self.drainer.cordon_and_label(node_name):
            return  # the node is gone: nothing to drain (kops: NotFound is success)
        control_plane = group.phase in ("control-plane", "apiserver")
        if control_plane and not self.options["deregister_control_plane"]:
            self.log("deregister", "skipped: the only API server stays in its load balancer", group.name, instance["id"])
        else:
            self.log("deregister", "from the group's load balancers and target groups", group.name, instance["id"])
            try:
                self.cloud.deregister(group.cloud, instance)
            except ValueError as exc:
                raise DeregisterError("error deregistering instance %s, node %s: %s" % (instance["id"], node_name, exc))
        self.log("drain", "evicting pods from node %s" % node_name, group.name, instance["id"])
        evicted = self.drainer.drain(node_name, self.options["drain_timeout"],
                                     report=lambda message: self.log("drain", message, group.name, instance["id"]))
        self.log("drain", "node %s drained (%d pod(s)) in %.1fs" % (node_name, evicted, self.clock() - started),
                 group.name, instance["id"])
        if self.options["post_drain_delay"] > 0:
            self.sleep(self.options["post_drain_delay"])

    # -- validation --------------------------------------------------------------------------------
    def relevant(self, failures, group):
        """kops' hasFailureRelevantToGroup: failures of no group, of a control-plane group or of this one (or,
        under a budget, of any group rolled side by side)."""
        names = getattr(group, "names", {group.name})
        return [f for f in failures if f.get("instance_group") is None or f.get("instance_group") in names
                or f.get("instance_group") in self.control_plane_groups]

    def validate(self, operation, count, group, must_pass=False):
        """must_pass: stop at the timeout even with fail_on_validate_error false (under a budget the next wave would
        add its unavailable nodes to those that did not come back)."""
        if self.options["cloud_only"]:
            self.log("validate", "not validating (cloud_only)", group.name)
            return
        if count == 0:
            self.log("validate", "skipped (validate_count is 0)", group.name)
            return
        deadline = self.clock() + self.options["validation_timeout"]
        self.log("validate", "validating the cluster%s: %d consecutive pass(es) needed, gives up after %ds"
                 % (operation, count, self.options["validation_timeout"]), group.name)
        successes = 0
        while True:
            try:
                failures, error = self.relevant(self.validator(), group), None
            except ValueError as exc:
                failures, error = [], str(exc)
            if error is None and not failures:
                successes += 1
                if successes >= count:
                    self.log("validate", "cluster validated%s" % operation, group.name)
                    return
                self.log("validate", "cluster validated; again in %ds to make sure it does not flap"
                         % self.options["validate_recheck_interval"], group.name)
                self.sleep(self.options["validate_recheck_interval"])
                continue
            why = error or ", ".join(f["message"] for f in failures)
            if self.clock() >= deadline:
                break
            self.log("validate", "did not pass, again in %ds (gives up in %ds): %s" % (
                self.options["validate_retry_interval"], max(0, deadline - self.clock()), why), group.name)
            successes = 0
            self.sleep(self.options["validate_retry_interval"])
        message = "error validating cluster%s: cluster did not validate within %ds: %s" % (
            operation, self.options["validation_timeout"], why)
        if self.options["fail_on_validate_error"] or must_pass:
            self.log("validate", message, group.name)
            raise ValidationTimeout(message)
        self.log("validate", "%s; going on since fail_on_validate_error is false" % message, group.name)


def _stopped_by(phase, failures):
    """What stopped the roll in a bastion or control-plane group, as kops says it when the nodes did not come back
    healthy (a validation that timed out), and as what it was otherwise: a terminate, a drain or a deregistration
    that failed is not a node that is not healthy."""
    if all(isinstance(exc, ValidationTimeout) for exc in failures):
        return "%s node not healthy after update" % phase
    return "%s group failed" % phase


def plans_for(cluster, groups, options):
    """[(phase, [group plan])] for the groups that have something to roll, in kops' order."""
    return [(phase, [p for p in (planner.group_plan(cluster, g, options.get("force", False),
                                                    options.get("cloud_only", False), options.get("max_surge"),
                                                    options.get("max_unavailable"))
                                 for g in phase_groups) if p is not None])
            for phase, phase_groups in planner.ordered(groups)]
