# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The cluster module's one call: which write of the spec its options ask for, planned, done unless a check, and
reported (module -> service, as kubernetes.core's modules call their runner and service).

Four writes, as kops' commands: create from create-cluster options (kops create cluster), replace from a
definition (kops replace -f), roll back to a revision of the spec's history, remove from the store (kops delete
cluster --unregister).  Each is a plan of clusters.ClusterService; nothing is written unless every object
validates, and check mode only plans.
"""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import revisions
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterError


class ClusterWrite(object):
    """One run of the cluster module.

    params: the cluster module's options, checked here before anything is read; check_mode: plan only; diff: add the
    plan's diff; warn: called with each warning as it arises (the definition's, a replace checked against no
    revision), so a run that fails later still shows them (the module's warn)."""

    def __init__(self, params, check_mode=False, diff=False, warn=None):
        self.service = None
        self.params = params
        self.check_mode = check_mode
        self.diff = diff
        self.warn = warn or (lambda warning: None)
        if params["history_limit"] is not None and params["history_limit"] < 1:
            raise ClusterError("history_limit: %d keeps no revision; give at least 1 (the revision the store is at)"
                               % params["history_limit"])
        self.options = dict(params["options"] or {})
        if params["name"] and self.options and self.options.get("cluster_name") not in (None, params["name"]):
            raise ClusterError("name %r and options.cluster_name %r differ; give one of them"
                               % (params["name"], self.options["cluster_name"]))
        if self.options and params["name"]:
            self.options["cluster_name"] = params["name"]

    def zone_hint(self):
        """A zone of the cluster the options create, for the cloud facts' region (KopsModule.service)."""
        return (self.options.get("zones") or [None])[0]

    def run(self, service):
        """The module's result: the plan done (unless a check), the objects after it and the report's lines.
        service: the clusters.ClusterService over the module's state store and cloud facts."""
        params = self.params
        self.service = service
        plan = self.plan()
        if not self.check_mode:
            self.service.execute(plan)
        result = dict(changed=plan.changed, changed_paths=plan.changed_paths,
                      config_base=self.service.cluster_store(plan.cluster_name).config_base())
        if self.diff:
            result["diff"] = plan.diff()
        if params["state"] == "present":
            after = plan.objects_after()
            result["cluster"] = next(o for o in after if o["kind"] == objects.CLUSTER)
            result["instance_groups"] = sorted((o for o in after if o["kind"] == objects.INSTANCE_GROUP),
                                               key=objects.name_of)
            result["completed_spec"] = plan.completed
            if plan.restores is not None:
                result["restored"] = plan.restores
            if not self.check_mode:
                result["revision"] = str(self.service.revision(plan.cluster_name))
        result["lines"] = plan.report(result["config_base"], result.get("revision"), self.check_mode)
        return result

    def plan(self):
        """The plan the options ask for (clusters.Plan); refused while the cluster is being deleted."""
        params, service, options = self.params, self.service, self.options
        if params["state"] == "absent":
            name = params["name"] or options.get("cluster_name") or self._definition_name()
            service.cluster_store(name).refuse_while_deleting("cluster state=absent")
            return service.plan_delete(name, force=params["force"], region=params["region"], profile=params["profile"])
        if not options and params["definition"] is None and params["name"] and params["revision"]:
            service.cluster_store(params["name"]).refuse_while_deleting("cluster rollback")
            return service.plan_rollback(params["name"], params["revision"])
        if options:
            plan = service.plan_create(options, overwrite=params["overwrite"])
            service.cluster_store(plan.cluster_name).refuse_while_deleting("cluster create")
            return plan
        additional = []
        documents = self._definition(additional)
        plan = service.plan_replace(documents, force=params["force"], prune=params["prune"],
                                    revision=self._read_at(documents), additional_objects=additional)
        # Planning only reads; a replace during a delete would write back a cluster being taken apart.
        service.cluster_store(plan.cluster_name).refuse_while_deleting("cluster replace")
        return plan

    def _definition(self, additional=None):
        """The definition's kops objects; with additional (a list), its other Kubernetes objects go there (kops'
        additional objects) instead of being refused."""
        definition = self.params["definition"]
        if definition is None:
            raise ClusterError("state=present needs options (create-cluster options) or definition "
                               "(Cluster/InstanceGroup YAML)")
        if isinstance(definition, str):
            text, source = definition, self.params["definition_source"] or "definition"
        else:
            text, source = objects.dump_objects(definition if isinstance(definition, list) else [definition]), "definition"
        warnings = []
        documents = objects.load_objects(text, source=source, warnings=warnings, additional=additional)
        for warning in warnings:
            self.warn(warning)
        return documents

    def _read_at(self, documents):
        """The revision the definition was read at: the revision option, the Cluster's annotation, or (a file of an
        earlier release) its comment line; a warning when there is none and the replace is not forced."""
        params = self.params
        revision = params["revision"] or revisions.of_objects(documents) or revisions.in_comment(params["definition"])
        if revision is None and not params["force"]:
            self.warn("%s names no revision it was read at (metadata.annotations %s, as get_cluster.yml writes it): "
                      "replaced without checking for changes stored since it was read"
                      % (params["definition_source"] or "the definition", revisions.ANNOTATION))
        return revision

    def _definition_name(self):
        if self.params["definition"] is None:
            raise ClusterError("state=absent needs name (the cluster to delete)")
        return objects.name_of(objects.split_objects(self._definition())[0])
