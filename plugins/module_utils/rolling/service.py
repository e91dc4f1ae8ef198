# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops rolling-update cluster as one call: the rolling_update module builds a RollingUpdate from its options and
runs it (module -> service, as kubernetes.core's modules call their runner and service).

It reads the completed cluster and its groups from the state store, the cloud's groups through the provider's
rolling side, the nodes through the Kubernetes API (unless cloud_only), prints kops' table and plan, and rolls
unless it is a check.  The result is the module's; a roll that stops raises RollStopped, whose result() carries
what was done before the stop.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import progress, updates, waits
from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError, RollingError
from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
from ansible_collections.kubeops.kops.plugins.module_utils.rolling import budget, planner, roller

# The module options the roll loop reads (roller.DEFAULTS holds their defaults).
ROLL_OPTIONS = ("force", "cloud_only", "fail_on_validate_error", "fail_on_drain_error", "drain_timeout",
                "validation_timeout", "validate_count", "validate_retry_interval", "validate_recheck_interval",
                "post_drain_delay", "interval", "max_surge", "max_unavailable", "pending_pods_timeout")
# The options given as durations (durations.in_seconds turns them into seconds before the service sees them).
DURATIONS = ("drain_timeout", "validation_timeout", "validate_retry_interval", "validate_recheck_interval",
             "post_drain_delay", "interval", "pending_pods_timeout")
NOTHING_TO_DO = "nothing to do"


class RollStopped(RollingError):
    """The roll stopped part way; the module fails with what was done until then (its table, log and groups)."""

    def __init__(self, message, partial):
        RollingError.__init__(self, message)
        self.partial = partial

    def result(self):
        return dict(RollingError.result(self), changed=True, **self.partial)


def _given(value):
    return value not in (None, "")


class RollingUpdate(object):
    """One rolling update of one cluster.

    params: the rolling_update module's options (durations already in seconds), checked here before anything is
    read; check_mode: print the table and the plan, read only; diff: add the plan as the diff's after text."""

    def __init__(self, params, check_mode=False, diff=False):
        self.service = None
        self.params = params
        self.check_mode = check_mode
        self.diff = diff
        self.name = params["cluster_name"]
        if params["validate_count"] < 0:
            raise RollingError("validate_count: must be 0 or more, got %d" % params["validate_count"])
        if _given(params["budget_max_surge"]) and not _given(params["budget_max_unavailable"]):
            raise RollingError("budget_max_surge: needs budget_max_unavailable (the budget), e.g. "
                               "budget_max_unavailable: 1")

    def run(self, service):
        """The module's result: the groups as found, kops' lines, the log and steps (and the schedule under a
        budget); changed when a roll ran.  service: the clusters.ClusterService over the module's state store."""
        params = self.params
        self.service = service
        # A roll takes no lease (it may run for hours beside updates), but it never runs beside a delete.
        self.service.cluster_store(self.name).refuse_while_deleting("rolling_update")
        completed, instance_groups = updates.load_completed(self.service, self.name)
        selected = planner.select(instance_groups, params["instance_groups"], params["roles"])
        _reader, cloud = providers.cloud_for(completed, params["region"], params["profile"])
        rolling = providers.provider_for(completed["spec"], "rolling update").rolling(cloud)
        api = None if params["cloud_only"] else self._kubernetes(completed, cloud)
        nodes = self._nodes(api) if api is not None else []

        cloud_groups = rolling.cloud_groups()
        groups = planner.statuses(selected, cloud_groups, nodes)
        lines = planner.table(groups, params["cloud_only"])
        options = dict((k, params[k]) for k in ROLL_OPTIONS)
        options["deregister_control_plane"] = _api_minimum(instance_groups) > 1
        plans = roller.plans_for(completed, groups, options)
        node_schedule = self._node_schedule(plans, instance_groups, cloud_groups, rolling.provider)
        outcome = dict((g.name, NOTHING_TO_DO) for g in groups)
        found = [g.as_result() for g in groups]  # as found, before the roll changes the instances' status
        needs_roll = planner.needs_roll(groups, params["force"])
        # The progress file is made only for a roll.
        log = progress.Progress(params["progress_file"] if needs_roll and not self.check_mode else None)
        result = {"changed": False}

        if not needs_roll:
            lines += ["", "No rolling-update required."]
        else:
            lines += [""] + [planner.describe(p) for phase, phase_plans in plans for p in phase_plans
                             if node_schedule is None or phase != "node"]
            if node_schedule is not None:
                lines += budget.describe(node_schedule)
                result["schedule"] = budget.as_result(node_schedule)
            if not self.check_mode:
                result["changed"] = True
                runner = self._roller(rolling, instance_groups, api, options, log)
                for line in lines:  # kops prints the table and the plan, then each step as it happens
                    waits.notice(line)
                try:
                    runner.run(plans, node_schedule)
                except ValueError as exc:
                    outcome.update(runner.outcome)
                    partial = dict(lines=lines, log=log.lines, steps=log.steps, groups=_groups(found, outcome))
                    partial.update((k, result[k]) for k in ("schedule",) if k in result)
                    raise RollStopped("rolling update of %s stopped: %s" % (self.name, exc), partial)
                outcome.update(runner.outcome)
        result.update(groups=_groups(found, outcome), lines=lines, log=log.lines, steps=log.steps)
        if self.diff:
            result["diff"] = {"before_header": "%s (cloud)" % self.name, "after_header": "%s (rolling update)" % self.name,
                              "before": "", "after": "\n".join(lines) + "\n"}
        return result

    def _kubernetes(self, completed, cloud):
        """The cluster's API client (kube/client.py), from the kubeconfig given or admin credentials from the store."""
        from ansible_collections.kubeops.kops.plugins.module_utils.kube import client
        try:
            client.import_kubernetes()
        except ImportError:
            from ansible.module_utils.basic import missing_required_lib
            raise KubeError(missing_required_lib("kubernetes") + " (or set cloud_only: true)")
        return client.cluster_client(self.service, completed, cloud, self.params["kubeconfig"], self.params["context"],
                                     self.params["api_server"])

    @staticmethod
    def _nodes(api):
        try:
            return api.nodes()
        except ValueError as exc:
            raise KubeError("Unable to reach the Kubernetes API: %s. Set cloud_only: true to roll without it "
                            "(no drain, no validation: downtime)." % exc)

    def _node_schedule(self, plans, instance_groups, cloud_groups, provider):
        """Under budget_max_unavailable, the node groups' waves (rolling/budget.py); None otherwise."""
        params = self.params
        if not _given(params["budget_max_unavailable"]):
            return None
        limits = budget.parse(params["budget_max_unavailable"], params["budget_max_surge"],
                              budget.node_group_count(instance_groups, cloud_groups))
        node_plans = dict(plans).get("node") or []
        return budget.schedule(node_plans, limits, planner.surges_by_default(provider)) if node_plans else None

    @staticmethod
    def _roller(rolling, instance_groups, api, options, log):
        """The roll loop (rolling/roller.py) over the provider's rolling side and, unless cloud_only, the API's drain,
        validation and capacity."""
        validator = drainer = capacity = None
        if api is not None:
            from ansible_collections.kubeops.kops.plugins.module_utils.kube import validation
            from ansible_collections.kubeops.kops.plugins.module_utils.rolling.drain import Drainer
            drainer = Drainer(api.core)

            def validator():
                return validation.validate(instance_groups, rolling.cloud_groups(), api.nodes(), api.pods())["failures"]

            def capacity():
                return api.nodes(), api.pods()
        return roller.Roller(rolling, log, options, drainer=drainer, validator=validator, capacity=capacity)


def _api_minimum(instance_groups):
    """The control plane's and API servers' instances in all: kops' DeregisterControlPlaneNodes is off at 1."""
    return sum((g["spec"].get("minSize", 1) if g["spec"].get("minSize") is not None else 1)
               for g in instance_groups if planner.phase_of(g) in ("control-plane", "apiserver"))


def _groups(groups, outcome):
    return [dict(g, outcome=outcome.get(g["name"], NOTHING_TO_DO)) for g in groups]
