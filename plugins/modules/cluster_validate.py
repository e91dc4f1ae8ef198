#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_validate
short_description: Validate a running kops cluster, like kops validate cluster
version_added: 0.1.0
description:
  - Runs kops' checks against the cloud and the Kubernetes API. Per instance group, the cloud group has as many
    instances as it wants (C(did not have enough nodes)); every instance has joined as a Node (C(has not yet joined
    cluster)); control-plane, API server and worker Nodes are Ready; pods of priority class
    C(system-cluster-critical) or C(system-node-critical) are neither pending nor not ready; every Ready
    control-plane node runs kube-apiserver, kube-controller-manager and kube-scheduler pods.
  - The cloud side reads the cluster's autoscaling groups by the cluster's tags (AWS), its managed instance groups
    (GCE); a metal cluster's machines are the inventory's hosts, O(hosts).
  - The API is reached through O(kubeconfig), or else with a short-lived admin certificate minted in memory from
    the state store's kubernetes-ca (never written anywhere) at O(api_server) or the cluster's API address.
  - With O(wait), validation repeats every O(interval) seconds until O(count) consecutive passes or the wait time
    is exceeded, whatever the failure (an API that does not answer yet, a cloud call refused; the last one is then
    reported as the validation error). Each attempt is printed as it happens, with when the next one comes and
    when the wait gives up. Without O(wait), an API that cannot be reached fails the task at once.
  - Read-only. Check mode runs the same reads.
options:
  cluster_name:
    description: The cluster.
    type: str
    required: true
  kubeconfig:
    description: A kubeconfig file to reach the API with. Without it, admin credentials come from the state store.
    type: path
  context:
    description: The kubeconfig context to use (default, the kubeconfig's current context).
    type: str
  api_server:
    description:
      - The API's URL or host, for the credentials from the state store. Default, the API load balancer's DNS name
        (clusters without DNS) or C(api.<cluster>).
    type: str
  wait:
    description:
      - Seconds to keep validating until the cluster passes (0, validate once).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 0
  interval:
    description:
      - Seconds between validations while waiting.
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 10
  count:
    description: Consecutive passes needed while waiting.
    type: int
    default: 1
  max_unready_nodes:
    description: Not-ready worker nodes to tolerate (kops' C(--max-unready-nodes)).
    type: int
    default: 0
  hosts:
    description:
      - The machines of a metal cluster, a mapping of instance group name to the list of its inventory hosts (the
        hosts carrying C(kops_instance_group); validate_cluster.yml passes the inventory's). A host's Node is the
        one of its name, lowercased.
      - Ignored for clouds whose machines are read from the cloud (AWS, GCE).
    type: dict
  fail_on_error:
    description: Fail the task when validation fails (the result carries the tables either way).
    type: bool
    default: true
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
requirements:
  - kubernetes (the Python client)
attributes:
  check_mode:
    description: Validation is read-only; check mode runs it the same way.
    support: full
  diff_mode:
    description: Nothing changes, so there is no diff.
    support: none
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Validate, waiting up to 10 minutes for two consecutive passes
  kubeops.kops.cluster_validate:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    wait: 600
    count: 2
"""

RETURN = r"""
ready:
  description: Whether the cluster passed.
  returned: always
  type: bool
failures:
  description: kops' validation errors, each with C(type) (InstanceGroup, Machine, Node, Pod), C(name), C(message)
    and C(instance_group).
  returned: always
  type: list
  elements: dict
nodes:
  description: The cluster's nodes with C(name), C(role), C(status) (the Ready condition), C(zone), C(hostname) and
    C(instance_group).
  returned: always
  type: list
  elements: dict
lines:
  description: kops' table output (INSTANCE GROUPS, NODE STATUS, VALIDATION ERRORS and the verdict), one line each.
  returned: always
  type: list
  elements: str
attempts:
  description: Validations run.
  returned: always
  type: int
"""

import time

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, updates
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import client, validation
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
    try:
        client.import_kubernetes()
    except ImportError as exc:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(exc))
    params = module.params
    durations.in_seconds(module, "wait", "interval")
    for option, least in (("count", 1), ("max_unready_nodes", 0)):
        if params[option] < least:
            module.fail_json(msg="%s: must be at least %d, got %d" % (option, least, params[option]))
    name = params["cluster_name"]
    completed, groups = updates.load_completed(module.service(), name)
    reader, cloud = providers.cloud_for(completed, params["region"], params["profile"], params["hosts"])
    attempt = Attempt(module, completed, groups, reader, cloud)
    if not params["wait"]:
        result = attempt.once()  # no wait: an error is the answer, at once
        attempts, ready = 1, (0 if result["failures"] else 1) >= params["count"]
    else:
        result, attempts, ready = wait_until_ready(attempt, params)
    lines = validation.report(name, groups, result)
    outcome = dict(changed=False, ready=ready, failures=result["failures"], nodes=result["nodes"], lines=lines,
                   attempts=attempts)
    if not ready and params["fail_on_error"]:
        waited = " (wait time exceeded during validation)" if params["wait"] else ""
        module.fail_json(msg="Validation of cluster %s failed%s: %s" % (
            name, waited, "; ".join(f["message"] for f in result["failures"]) or "fewer consecutive passes than count"),
            **outcome)
    module.exit_json(**outcome)


class Attempt(object):
    """One validation: the cloud's groups, the API's nodes and pods (the API client made on first use, so that an
    API address not known yet is looked up again on the next attempt)."""

    def __init__(self, module, completed, groups, reader, cloud):
        self.module = module
        self.completed = completed
        self.groups = groups
        self.reader = reader
        self.cloud = cloud
        self.api = None

    def once(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.kube import client, validation
        params = self.module.params
        if self.api is None:
            self.api = client.cluster_client(self.module.service(), self.completed, self.cloud, params["kubeconfig"],
                                             params["context"], params["api_server"])
        return validation.validate(self.groups, self.reader.cloud_groups(self.cloud), self.api.nodes(),
                                   self.api.pods(), params["max_unready_nodes"])


def wait_until_ready(attempt, params, clock=time.monotonic, sleep=time.sleep):
    """kops validate cluster --wait: validate every interval until count consecutive passes or the deadline, whatever
    the failure (an API not up yet, a cloud call refused: the last one is then the validation error); each attempt
    is said on the console as it happens.  Returns (last result, attempts, ready)."""
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, waits
    deadline = clock() + params["wait"]
    attempts, passes = 0, 0
    while True:
        attempts += 1
        try:
            result, error = attempt.once(), None
        except ValueError as exc:  # every KopsError too: the API or the cloud not answering yet
            error = str(exc)
            result = {"nodes": [], "failures": [{"type": "error", "name": attempt.completed["metadata"]["name"],
                                                 "message": error, "instance_group": None}]}
        passes = 0 if error or result["failures"] else passes + 1
        left = deadline - clock()
        if passes >= params["count"]:
            waits.notice("validation %d passed: the cluster is ready" % attempts)
            return result, attempts, True
        if left <= 0:
            waits.notice("validation %d: %s; the wait of %s is over" % (
                attempts, _verdict(passes, params["count"], result, error), durations.describe(params["wait"])))
            return result, attempts, False
        pause = min(params["interval"], left)
        waits.notice("validation %d: %s; again in %s (gives up in %s)" % (
            attempts, _verdict(passes, params["count"], result, error), durations.describe(pause),
            durations.describe(left)))
        sleep(pause)


def _verdict(passes, count, result, error):
    if error:
        return "failed: %s" % error
    if passes:
        return "passed (%d of %d consecutive passes)" % (passes, count)
    messages = [f["message"] for f in result["failures"]]
    return "did not pass: %s%s" % ("; ".join(messages[:3]), " and %d more" % (len(messages) - 3) if len(messages) > 3 else "")


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str"),
        wait=dict(type="raw", default=0),
        interval=dict(type="raw", default=10),
        count=dict(type="int", default=1),
        max_unready_nodes=dict(type="int", default=0),
        hosts=dict(type="dict"),
        fail_on_error=dict(type="bool", default=True),
    ))
    run(module)


if __name__ == "__main__":
    main()
