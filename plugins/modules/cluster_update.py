#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_update
short_description: Apply a kops cluster spec to AWS, or render it as Terraform
version_added: 0.1.0
description:
  - Like C(kops update cluster). Reads the cluster from the state store, completes its spec, builds the
    cloud objects kops would (named and tagged as kops names and tags them), and either reconciles them
    through the AWS APIs (O(target=direct)) or writes C(kubernetes.tf) (O(target=terraform)).
  - The whole task graph runs inside this one module, independent objects in parallel.
  - Check mode is the dry run; only describe calls are made and the plan lists each object as
    create, update or unchanged with its field changes.
  - Besides the cloud objects it writes what the nodes read to the state store, in one all-or-nothing write
    with the completed spec. These are each instance group's nodeup config
    (C(igconfig/<role>/<group>/nodeupconfig.yaml)), the cluster's CAs when missing, and the kubelet
    bootstrap token with its RBAC addon. See the collection's docs/nodeup-config.md.
  - docs/aws-model.md lists the AWS objects covered and how they compare with kops' own output.
options:
  cluster_name:
    description: The cluster to update.
    type: str
    required: true
  target:
    description:
      - V(direct) reconciles AWS; V(terraform) writes C(kubernetes.tf) to O(out_dir);
        V(cloudformation) writes the template C(kubernetes.json) to O(out_dir).
    type: str
    choices: [direct, terraform, cloudformation]
    default: direct
  out_dir:
    description: Where O(target=terraform) and O(target=cloudformation) write their file.
    type: path
    default: out/terraform
  ssh_public_key:
    description:
      - An OpenSSH public key for the cluster's EC2 key pair (C(kops create sshpublickey)); it is kept in the
        state store (C(pki/ssh/public/admin/)) and replaces the key stored before.
      - Without it the stored key is used; with none stored, no key pair is made. C(spec.sshKeyName) overrides both.
    type: str
  workers:
    description: How many tasks run at once.
    type: int
    default: 8
extends_documentation_fragment:
  - kubeops.kops.state_store
attributes:
  check_mode:
    description: A dry run that makes no mutating call.
    support: full
  diff_mode:
    description: The plan, object by object, with field changes.
    support: full
author:
  - kubeops maintainers (@kubeops)
"""

EXAMPLES = r"""
- name: Preview the changes (kops update cluster without --yes)
  kubeops.kops.cluster_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
  check_mode: true
  diff: true

- name: Write Terraform instead
  kubeops.kops.cluster_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    target: terraform
    out_dir: terraform/k8s.example.com
"""

RETURN = r"""
plan:
  description: Every object, with C(kind), C(name), C(action) (create, update, unchanged) and C(changes).
  returned: target=direct
  type: list
  elements: dict
summary:
  description: How many objects each action covers.
  returned: target=direct
  type: dict
  sample: {create: 0, update: 1, unchanged: 27}
terraform_file:
  description: Path of the written C(kubernetes.tf) (or C(kubernetes.json) for CloudFormation).
  returned: target=terraform or target=cloudformation
  type: str
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import updates
    from ansible_collections.kubeops.kops.plugins.module_utils.api import validation_aws
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud
    from ansible_collections.kubeops.kops.plugins.module_utils.model.aws.network import region_of

    params = module.params
    service = module.service()
    if params["target"] in ("terraform", "cloudformation"):
        render = updates.render_terraform if params["target"] == "terraform" else updates.render_cloudformation
        path, changed, text = render(service, params["cluster_name"], params["out_dir"],
                                     dry_run=module.check_mode, ssh_public_key=params["ssh_public_key"])
        result = dict(changed=changed, terraform_file=path)
        if module._diff and changed:
            result["diff"] = {"after_header": path, "after": text}
        module.exit_json(**result)

    if params["region"]:
        # Before anything is written: a region other than the zones' would plan a second cluster there.
        completed, _groups = updates.load_completed(service, params["cluster_name"])
        validation_aws.check_region(params["region"], region_of(completed["spec"]))

    def cloud_factory(cluster_name, region):
        return AwsCloud(cluster_name, params["region"] or region, profile=params["profile"])

    plan, _completed, spec_changed = updates.apply_direct(service, params["cluster_name"], module.check_mode,
                                                          cloud_factory, workers=params["workers"],
                                                          ssh_public_key=params["ssh_public_key"])
    entries = [entry.as_dict() for entry in plan]
    summary = {action: sum(1 for e in entries if e["action"] == action) for action in ("create", "update", "unchanged")}
    changed = bool(summary["create"] or summary["update"] or spec_changed)
    result = dict(changed=changed, plan=entries, summary=summary)
    if module._diff:
        shown = [e for e in entries if e["action"] != "unchanged"]
        result["diff"] = {"before": "", "after": "\n".join(
            "%s %s/%s%s" % (e["action"], e["kind"], e["name"],
                            "".join("\n    %s: %s -> %s" % (f, c["before"], c["after"]) for f, c in e["changes"].items()))
            for e in shown)}
    module.exit_json(**result)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        target=dict(type="str", choices=["direct", "terraform", "cloudformation"], default="direct"),
        out_dir=dict(type="path", default="out/terraform"),
        ssh_public_key=dict(type="str"),
        workers=dict(type="int", default=8),
    ))
    run(module)


if __name__ == "__main__":
    main()
