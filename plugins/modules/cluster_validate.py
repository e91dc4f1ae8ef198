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
    is exceeded.
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
    description: Seconds to keep validating until the cluster passes (0, validate once).
    type: int
    default: 0
  interval:
    description: Seconds between validations while waiting.
    type: int
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
    from ansible_collections.kubeops.kops.plugins.module_utils import updates
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import client, validation
    from ansible_collections.kubeops.kops.plugins.module_utils.providers import registry as providers
    try:
        client.import_kubernetes()
    except ImportError as exc:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(exc))
    params = module.params
    for option, least in (("wait", 0), ("interval", 0), ("count", 1), ("max_unready_nodes", 0)):
        if params[option] < least:
            module.fail_json(msg="%s: must be at least %d, got %d" % (option, least, params[option]))
    name = params["cluster_name"]
    completed, groups = updates.load_completed(module.service(), name)
    reader, cloud = providers.cloud_for(completed, params["region"], params["profile"], params["hosts"])
    api = client.cluster_client(module.service(), completed, cloud, params["kubeconfig"], params["context"],
                                params["api_server"])

    deadline = time.monotonic() + params["wait"]
    attempts, passes = 0, 0
    while True:
        attempts += 1
        result = validation.validate(groups, reader.cloud_groups(cloud), api.nodes(), api.pods(), params["max_unready_nodes"])
        passes = 0 if result["failures"] else passes + 1
        if passes >= params["count"] or time.monotonic() + params["interval"] > deadline:
            break
        time.sleep(params["interval"])
    lines = validation.report(name, groups, result)
    ready = passes >= params["count"]
    outcome = dict(changed=False, ready=ready, failures=result["failures"], nodes=result["nodes"], lines=lines,
                   attempts=attempts)
    if not ready and params["fail_on_error"]:
        waited = " (wait time exceeded during validation)" if params["wait"] else ""
        module.fail_json(msg="Validation of cluster %s failed%s: %s" % (
            name, waited, "; ".join(f["message"] for f in result["failures"]) or "fewer consecutive passes than count"),
            **outcome)
    module.exit_json(**outcome)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        kubeconfig=dict(type="path"),
        context=dict(type="str"),
        api_server=dict(type="str"),
        wait=dict(type="int", default=0),
        interval=dict(type="int", default=10),
        count=dict(type="int", default=1),
        max_unready_nodes=dict(type="int", default=0),
        hosts=dict(type="dict"),
        fail_on_error=dict(type="bool", default=True),
    ))
    run(module)


if __name__ == "__main__":
    main()
