#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_delete
short_description: Delete a kops cluster's cloud objects, then the cluster from the state store
version_added: 0.1.0
description:
  - Like C(kops delete cluster). Finds every cloud object the cluster owns by its ownership tags
    (C(KubernetesCluster=<name>) and C(kubernetes.io/cluster/<name>=owned)), never by name alone, and lists them,
    one per object (kind, id, name).
  - With O(yes=true) deletes them in dependency order, in rounds, retrying an object while something of the
    cluster still uses it (autoscaling groups and their instances, launch templates, load balancers before their
    target groups, NAT gateways before their Elastic IPs, security groups after their cross-references are revoked,
    subnets, route tables, gateways, the VPC, IAM instance profiles and roles, SQS queue and EventBridge rules,
    the cluster's Route53 records), then removes the cluster from the state store.
  - Each round is printed on the console as it happens, as kops prints it (C(<kind>:<id> ok),
    C(still has dependencies, will retry)), then what is left and how long the next round waits.
  - Shared objects (C(kubernetes.io/cluster/<name>=shared), a VPC given by C(networkID)) are never deleted; only
    the cluster's tags are removed from them. Objects of another cluster and untagged objects are never touched.
  - Something outside the cluster that keeps an object from being deleted (a network interface, a VPC peering,
    a foreign subnet or security group in the VPC) is found before deleting and reported by name; the run then
    fails, after deleting everything else, instead of retrying until the timeout.
  - The state store goes last, only once the cloud holds nothing of the cluster, so a run that was interrupted
    finishes when run again. If the store is gone already, O(cluster_name), O(cloud_provider), O(region) and
    (GCE) O(project) still find the objects.
  - On GCE the cluster's objects are found by kops' C(k8s-io-cluster-name) label where GCE has labels and by kops'
    names elsewhere (firewall rules, routes, forwarding rules, target pools, health checks), as C(kops delete
    cluster) finds them; IAM bindings of the cluster's service accounts are removed from the project's policy.
options:
  cluster_name:
    description: The cluster to delete.
    type: str
    required: true
    aliases: [name]
  "yes":
    description:
      - Delete. Without it the module only lists what would be deleted and changes nothing (C(changed=false)),
        as C(kops delete cluster) without C(--yes) prints the list.
      - In check mode nothing is deleted either way; C(changed) then says whether a run with the same options
        would change anything.
    type: bool
    default: false
  timeout:
    description:
      - Seconds to keep deleting before giving up on objects that are still going away (kops' C(--wait)).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 1200
  interval:
    description:
      - Seconds to wait between rounds that made no progress (kops' C(--interval)).
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 10
  cloud_provider:
    description:
      - The cluster's cloud when it is no longer in the state store. Defaults to the stored spec's
        C(cloudProvider), else V(aws); given with a stored cluster it must agree with it.
      - One of the clouds the collection has a package for (V(aws), V(gce), or one added under
        C(plugins/module_utils/providers/)).
    type: str
  project:
    description:
      - GCE only, the cluster's project when it is no longer in the state store. Defaults to the stored spec's
        C(project), else the E(GOOGLE_CLOUD_PROJECT) (or E(CLOUDSDK_CORE_PROJECT)) environment variable, else the
        credentials' own project; given with a stored cluster it must agree with it.
    type: str
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
notes:
  - O(region) defaults to the region of the cluster's zones in the stored spec; it is required to look for cloud
    objects when the cluster is no longer in the state store. Without it such a run (a delete that finished, run
    again) succeeds with C(changed=false), saying the cluster was not found in the store.
  - A store without the cluster is read as an AWS cluster unless O(cloud_provider) says otherwise.
  - O(region) and O(profile) come from the AWS documentation fragment; on GCE O(region) is the cluster's region and
    O(profile) is not used (the credentials are google-auth's application default credentials).
attributes:
  check_mode:
    description: Lists the objects and makes no change (no mutating cloud call, no store write).
    support: full
  diff_mode:
    description: The diff lists every object before and nothing after.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: List what deleting the cluster would remove
  kubeops.kops.cluster_delete:
    cluster_name: k8s.example.com
    state_store: s3://my-kops-state

- name: Delete the cluster's cloud objects, then the cluster from the store
  kubeops.kops.cluster_delete:
    cluster_name: k8s.example.com
    state_store: s3://my-kops-state
    "yes": true

- name: Finish a delete whose state store is gone already
  kubeops.kops.cluster_delete:
    cluster_name: k8s.example.com
    state_store: s3://my-kops-state
    region: eu-west-1
    "yes": true

- name: Finish deleting a GCE cluster whose state store is gone already
  kubeops.kops.cluster_delete:
    cluster_name: gce.example.com
    state_store: gs://my-kops-state
    cloud_provider: gce
    project: my-project
    region: us-central1
    "yes": true
"""

RETURN = r"""
objects:
  description:
    - Every object found, with what happened to it. C(result) is C(delete) (listed only, without O(yes) or in check
      mode), C(untag) (shared, listed), C(deleted), C(already gone), C(untagged) (shared, the cluster's tags removed),
      C(blocked) (something outside the cluster holds it, see C(held_by)), C(failed) or C(not deleted) (timeout).
  returned: always
  type: list
  elements: dict
  sample:
    - {kind: vpc, id: vpc-0abc, name: k8s.example.com, shared: false, result: deleted}
lines:
  description:
    - The objects as C(kops delete cluster) lists them, its TYPE NAME ID table (a header, then one line each, columns
      aligned), or C(No cloud resources to delete).
  returned: always
  type: list
  elements: str
  sample: ["TYPE            NAME                    ID", "vpc             k8s.example.com         vpc-0abc"]
log:
  description: The rounds, as kops prints them (C(<kind>:<id> ok), C(still has dependencies, will retry), ...).
  returned: when something was deleted
  type: list
  elements: str
store_deleted:
  description: Whether the cluster was removed from the state store.
  returned: always
  type: bool
msg:
  description: What was done, or what to do next.
  returned: always
  type: str
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import deletion, durations, watchdog

    watchdog.start("cluster_delete")  # a killed ansible-playbook stops the deletion (its worker would not)
    params = module.params
    durations.in_seconds(module, "timeout", "interval")
    service = module.service()
    try:
        outcome = deletion.delete_cluster(
            service, params["cluster_name"], yes=params["yes"], dry_run=module.check_mode, region=params["region"],
            profile=params["profile"], timeout=params["timeout"], interval=params["interval"],
            provider=params["cloud_provider"], project=params["project"])
    except deletion.DeletionError as exc:
        module.fail_json(msg=str(exc), errors=exc.errors, objects=exc.objects)
    deleting = params["yes"]
    result = dict(objects=outcome.objects, lines=outcome.lines, store_deleted=outcome.store_deleted,
                  changed=bool(deleting and outcome.anything))
    if outcome.log:
        result["log"] = outcome.log
    for note in outcome.notes:
        module.warn(note)
    if outcome.not_found:
        result["msg"] = ("cluster %s not found in %s: nothing to delete (to look for cloud objects it may have left, "
                         "give region%s)" % (params["cluster_name"], service.store.url(""),
                                             "" if params["cloud_provider"] != "gce" else " and project"))
    elif not outcome.anything:
        result["msg"] = "No cloud objects of %s found and it is not in the state store" % params["cluster_name"]
    elif not deleting:
        result["msg"] = "%d cloud object(s) listed; set yes: true to delete them and the cluster" % len(outcome.objects)
    elif module.check_mode:
        result["msg"] = "would delete %d cloud object(s), then the cluster from the state store" % len(outcome.objects)
    else:
        result["msg"] = "Deleted cluster: %s (%d cloud object(s))" % (params["cluster_name"], len(outcome.objects))
    if module._diff:
        result["diff"] = {"before": "\n".join(outcome.lines) + "\n" if outcome.resources else "", "after": "",
                          "before_header": "%s (cloud)" % params["cluster_name"], "after_header": "deleted"}
    module.exit_json(**result)


def main():
    module = KopsModule(
        argument_spec=dict(
            cluster_name=dict(type="str", required=True, aliases=["name"]),
            yes=dict(type="bool", default=False),
            timeout=dict(type="raw", default=1200),
            interval=dict(type="raw", default=10),
            cloud_provider=dict(type="str"),
            project=dict(type="str"),
        ),
    )
    run(module)


if __name__ == "__main__":
    main()
