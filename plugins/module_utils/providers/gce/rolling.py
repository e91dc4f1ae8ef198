# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The GCE side of a rolling update (kops' gce GetCloudGroups, DeleteInstance, DetachInstance,
DeregisterInstance in upup/pkg/fi/cloudup/gce/instancegroups.go).

kops on GCE does not surge: its DetachInstance fails ("gce cloud provider does not support
surging") and the planner's default maxSurge is 0 outside AWS.  An instance is replaced through
its managed instance group: recreateInstances keeps the group's target size and remakes the
instance, same name, from the manager's current template (kops' recreateCloudInstance).
DeregisterInstance is a no-op in kops on GCE: the target pool follows the group's instances.
"""

from __future__ import annotations

import time

import ansible_collections.kubeops.kops.plugins.module_utils.providers.gce.groups as gce_groups

from ansible_collections.kubeops.kops.plugins.module_utils.errors import CloudError

# A manager's instance is settled when the manager has nothing left to do to it.
SETTLED_ACTION = "NONE"


class GceRolling(object):
    """One cluster's managed instance groups, for a roll; cloud is a cloud.gce.GceCloud."""

    provider = "gce"

    def __init__(self, cloud, poll=5.0, sleep=time.sleep, clock=time.monotonic):
        self.cloud = cloud
        self.poll = poll
        self.sleep = sleep
        self.clock = clock

    def cloud_groups(self):
        """gce_groups.cloud_groups: per instance group its managers and instances (needs_update set)."""
        return gce_groups.cloud_groups(self.cloud)

    def _manager_path(self, instance):
        return "projects/%s/zones/%s/instanceGroupManagers/%s" % (self.cloud.project, instance["zone"], instance["manager"])

    def detach(self, group, instance):
        """kops' DetachInstance on GCE: not possible (the roller logs it and goes on without the surge)."""
        raise CloudError("GCE managed instance groups cannot surge (kops neither)",
                         fix="set maxSurge to 0 for %s" % group["name"])

    def deregister(self, group, instance):
        """kops' DeregisterInstance on GCE does nothing: the API target pool is the group's, kept by the manager."""

    def terminate(self, group, instance):
        """Recreate the instance through its manager (target size kept; kops' recreateCloudInstance).  An
        instance already gone counts as done, as in kops."""
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceError

        body = {"instances": ["zones/%s/instances/%s" % (instance["zone"], instance["name"])]}
        try:
            self.cloud.call("compute", "POST", self._manager_path(instance) + "/recreateInstances", body=body)
        except GceError as exc:
            if exc.status == 404:
                return
            raise CloudError("recreating instance %s in %s: %s" % (instance["name"], instance["manager"], exc))
        instance["recreated"] = True

    def wait_in_service(self, group, timeout):
        """Until every manager of the group has its target size of RUNNING instances with nothing left to
        do (the recreated one back on the current template), or a ValueError naming what is missing at the
        deadline.  Returns the names of the running members."""
        deadline = self.clock() + timeout
        while True:
            running, waiting = [], []
            for manager in group["managers"]:
                answer = self.cloud.get("compute", "projects/%s/zones/%s/instanceGroupManagers/%s"
                                        % (self.cloud.project, manager["zone"], manager["name"]))
                if answer is None:
                    raise CloudError("managed instance group %s in %s is gone" % (manager["name"], manager["zone"]))
                members = gce_groups.managed_instances(self.cloud, manager["zone"], manager["name"])
                settled = [gce_groups.last_component(m.get("instance")) for m in members
                           if m.get("currentAction", SETTLED_ACTION) == SETTLED_ACTION and m.get("instanceStatus") == "RUNNING"]
                running += settled
                if len(settled) < int(answer.get("targetSize") or 0):
                    waiting.append("%s has %d of %d instances running" % (manager["name"], len(settled),
                                                                          int(answer.get("targetSize") or 0)))
            if not waiting:
                return running
            if self.clock() >= deadline:
                raise CloudError("after %d s: %s" % (timeout, "; ".join(waiting)),
                                 fix="see gcloud compute instance-groups managed list-instances")
            self.sleep(self.poll)
