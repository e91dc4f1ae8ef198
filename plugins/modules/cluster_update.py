#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_update
short_description: Apply a kops cluster spec to its cloud, or render it as Terraform or CloudFormation
version_added: 0.1.0
description:
  - Like C(kops update cluster). Reads the cluster from the state store, completes its spec, builds the
    cloud objects kops would (named and tagged as kops names and tags them), and either reconciles them
    through the cloud's APIs (O(target=direct)) or writes C(kubernetes.tf) (O(target=terraform)) or a
    CloudFormation template (O(target=cloudformation)).
  - The whole task graph runs inside this one module, independent objects in parallel; an object whose cloud
    says "not yet" (eventual consistency) is tried again until O(timeout).
  - Objects the cluster owns (by its ownership tags) that the spec no longer asks for are deleted, as kops does
    for security-group rules, routes, lifecycle hooks, target-group attachments and removed instance groups.
    Shared objects and objects of other clusters are never touched.
  - Check mode is the dry run (kops without C(--yes)); only read calls are made and the plan lists each object
    as create, update, delete or unchanged with its field changes, deletions first.
  - The plan shows what changes on the nodes as kops shows it. Each instance group's nodeup config this run writes
    anew comes with its unified diff against the stored one, and a launch template's user data with the diff of its
    script. Secrets are masked in both (private keys, bootstrap tokens, AWS key ids, and the value of any key or
    variable named as a password, secret, token or credentials). With O(target=terraform) the changed user data
    files of C(data/) come with their diff too.
  - Besides the cloud objects it writes what the nodes read to the state store, in one all-or-nothing write
    with the completed spec. These are each instance group's nodeup config
    (C(igconfig/<role>/<group>/nodeupconfig.yaml)), the cluster's CAs when missing, and the kubelet
    bootstrap token with its RBAC addon. See the collection's docs/nodeup-config.md.
  - Clouds built are AWS and GCE (C(spec.cloudProvider)). docs/aws-model.md and docs/gce-model.md list the
    objects covered and how they compare with kops' own output.
  - On bare metal (kops' C(metal), docs/metal.md) nothing is in a cloud; the run writes the state store's files
    only, and O(target=terraform) and O(target=cloudformation) are refused.
  - On GCE the project is the spec's C(spec.project); credentials are Google's application default ones
    (E(GOOGLE_APPLICATION_CREDENTIALS) naming a service-account key file, or C(gcloud auth application-default
    login)). The AWS options then serve an C(s3://) state store only.
options:
  cluster_name:
    description: The cluster to update.
    type: str
    required: true
  target:
    description:
      - V(direct) reconciles the cloud; V(terraform) writes C(kubernetes.tf) to O(out_dir);
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
  cluster:
    description:
      - A Cluster object to plan with instead of the stored one, with O(instance_groups). Only in check mode,
        where it lets C(create_cluster.yml --check) preview a cluster that is not stored yet (pass the
        C(cluster) and C(instance_groups) the M(kubeops.kops.cluster) module returned).
    type: dict
  instance_groups:
    description: The InstanceGroup objects that go with O(cluster).
    type: list
    elements: dict
  workers:
    description: How many tasks run at once.
    type: int
    default: 8
  progress_file:
    description:
      - A file each object's outcome is appended to as the run handles it (C([  12.3s] aws_vpc k8s.example.com
        create)), so a long apply can be followed with C(tail -f) while the module runs (Ansible prints a
        module's result only when it returns). Relative to the module's working directory; the playbooks
        resolve it against the directory ansible-playbook was started in.
      - With it or without it, a real run prints each object it creates, updates or deletes on the console as it does
        so (not the unchanged ones, nor in check mode).
    type: path
  timeout:
    description:
      - The run's deadline in seconds. Objects that are not ready yet (a profile or group just created) are tried
        again until then; the run then fails naming each object that did not converge.
      - Given in seconds or in kops' form (V(40s), V(10m), V(1h30m)).
    type: raw
    default: 600
extends_documentation_fragment:
  - kubeops.kops.state_store
  - kubeops.kops.aws
attributes:
  check_mode:
    description: A dry run that makes no mutating call.
    support: full
  diff_mode:
    description:
      - O(target=direct), the plan, one line per object that changes, with the nodeup configs' and user data's diffs.
      - O(target=terraform) and O(target=cloudformation), the written file's diff, then one diff per nodeup config
        (and Terraform user data file) that changes, secrets masked.
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

- name: Apply them
  kubeops.kops.cluster_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com

- name: Write Terraform instead
  kubeops.kops.cluster_update:
    state_store: s3://my-kops-state
    cluster_name: k8s.example.com
    target: terraform
    out_dir: terraform/k8s.example.com
"""

RETURN = r"""
plan:
  description:
    - Every object, in the order the run handled it. Values longer than 120 characters (user data, policies)
      are shown as their sha256 and size unless the task runs with C(-vv) or more. There a document of several
      lines (user data, base64 in the launch template) is shown as its text, secrets masked.
  returned: target=direct
  type: list
  elements: dict
  contains:
    kind:
      description: The object's kind, named as Terraform names it.
      type: str
      sample: aws_security_group_rule
    name:
      description: The object's name (kops' name).
      type: str
    action:
      description: What the run does (or, in check mode, would do) to it.
      type: str
      choices: [create, update, delete, unchanged]
    changes:
      description: Per changed field, its C(before) and C(after) value.
      type: dict
    id:
      description: The cloud's id of the object, once known.
      type: str
      returned: when known
    shared:
      description: The cluster uses the object but does not own it (its image, a VPC or subnet given by id).
      type: bool
      returned: when true
summary:
  description: How many objects each action covers; equal in check mode to what the real run then does.
  returned: target=direct
  type: dict
  sample: {create: 0, update: 1, delete: 1, unchanged: 27}
lines:
  description:
    - O(target=direct), the plan as kops prints it, one line per object that changes (creates by kind; user data as
      its diff), then what the cluster uses but does not own (its image, a VPC given by id; marked C(=)), then the
      nodeup configs that change (new ones by name, changed ones with their diff), then the count of cloud objects.
    - Nothing to create, update or delete and no nodeup config changed (the task is then not changed, unless the
      spec was completed) reads C(No changes need to be applied), as kops says it, then the count.
    - O(target=terraform) and O(target=cloudformation), the file written (or that would be, or unchanged), then the
      nodeup configs and Terraform user data files that change, as above.
    - Diff lines longer than 160 characters are cut unless the task runs with C(-vv) or more.
  returned: always
  type: list
  elements: str
  sample: ["~ aws_launch_template nodes-us-east-1a.k8s.example.com", "    user_data:", "      @@ -8,7 +8,7 @@",
           "      -NODEUP_CONFIG_HASH=0fdb...", "      +NODEUP_CONFIG_HASH=3ade...", "~ nodeup_config nodes-us-east-1a",
           "    @@ -57,6 +57,7 @@", "       logLevel: 2", "    +  maxPods: 42",
           "Plan: 0 to create, 2 to update, 0 to delete, 65 unchanged."]
documents:
  description:
    - What the run writes for the nodes that changes, besides the cloud objects. These are the instance groups'
      nodeup configs (kind C(nodeup_config)) and, with O(target=terraform), the C(data/) text files (kind
      C(terraform_file), the launch templates' user data).
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(nodeup_config) or C(terraform_file).
      type: str
    name:
      description: The instance group, or the file's path under O(out_dir).
      type: str
    action:
      description: C(create) (nothing stored or written before) or C(update).
      type: str
    diff:
      description: The unified diff's lines, secrets masked.
      type: list
      elements: str
terraform_file:
  description: Path of the written C(kubernetes.tf).
  returned: target=terraform
  type: str
cloudformation_file:
  description: Path of the written CloudFormation template C(kubernetes.json).
  returned: target=cloudformation
  type: str
"""

from ansible_collections.kubeops.kops.plugins.module_utils.module import KopsModule, reports_errors

# target -> (the pipeline's render function, the result key of the written file)
RENDERED = {"terraform": ("render_terraform", "terraform_file"),
            "cloudformation": ("render_cloudformation", "cloudformation_file")}
RENDERED_FILES = {"terraform": "kubernetes.tf", "cloudformation": "kubernetes.json"}


def _read_text(directory, name):
    """The file a rendered target wrote last time, for the diff ("" when there is none)."""
    import os
    try:
        with open(os.path.join(directory, name)) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


@reports_errors
def run(module):
    from ansible_collections.kubeops.kops.plugins.module_utils import durations, progress, updates, watchdog
    from ansible_collections.kubeops.kops.plugins.module_utils.engine import plan as plans

    watchdog.start("cluster_update")  # a killed ansible-playbook stops the reconcile (its worker would not)
    params = module.params
    durations.in_seconds(module, "timeout")
    if params["workers"] < 1:
        module.fail_json(msg="workers: must be 1 or more, not %d" % params["workers"])
    if params["timeout"] < 1:
        module.fail_json(msg="timeout: must be 1 second or more, not %s" % params["timeout"])
    service = module.service()
    if service.store.url("").startswith("file://"):
        # Once, here: the playbooks no longer repeat it.
        module.warn("the state store %s is a directory on this machine, which no instance can read: what target %s "
                    "writes is for review only; the nodes of a cluster you mean to run need an s3:// (or gs://) store"
                    % (service.store.url(""), module.params["target"]))
    planned = None
    if params["cluster"] is not None:
        if not module.check_mode:
            module.fail_json(msg="cluster and instance_groups plan a cluster that is not stored; they are for check "
                                 "mode only. Store it first (kubeops.kops.cluster), then update without them.")
        planned = (params["cluster"], params["instance_groups"] or [])
    documents = []  # the nodeup configs (and Terraform's user data files) the run writes anew
    if params["target"] in RENDERED:
        function, key = RENDERED[params["target"]]
        before = _read_text(params["out_dir"], RENDERED_FILES[params["target"]])
        path, changed, text = getattr(updates, function)(service, params["cluster_name"], params["out_dir"],
                                                         dry_run=module.check_mode,
                                                         ssh_public_key=params["ssh_public_key"], planned=planned,
                                                         warn=module.warn, documents=documents)
        written = "unchanged" if text == before else "would be written (check mode)" if module.check_mode else "written"
        result = {"changed": changed, key: path, "documents": plans.documents_for_user(documents, module._verbosity),
                  "lines": ["%s %s" % (path, written)] + plans.document_lines(documents, module._verbosity)}
        if module._diff and changed:
            result["diff"] = [{"before_header": path, "after_header": path, "before": before or "", "after": text}
                              ] + plans.document_diffs(documents)
        module.exit_json(**result)

    try:
        log = progress.Progress(params["progress_file"])
    except OSError as exc:
        module.fail_json(msg="progress_file: cannot write %s (%s)" % (params["progress_file"], exc.strerror))

    def report(entry):
        # The console shows what a real run changes, as it changes it; the file has every object.
        log.step(entry.action, entry.name, group=entry.kind,
                 console=entry.action != "unchanged" and not module.check_mode)

    entries, _completed, spec_changed = updates.apply_direct(
        service, params["cluster_name"], module.check_mode, workers=params["workers"],
        ssh_public_key=params["ssh_public_key"], deadline=params["timeout"], planned=planned,
        progress=report, cloud_options=dict(region=params["region"], profile=params["profile"]),
        warn=module.warn, documents=documents)
    summary = plans.counts(entries)
    lines = plans.lines(entries, module._verbosity, documents)
    changed = bool(summary["create"] or summary["update"] or summary["delete"] or spec_changed)
    result = dict(changed=changed, plan=[plans.entry_for_user(e, module._verbosity) for e in entries],
                  summary=summary, lines=lines, documents=plans.documents_for_user(documents, module._verbosity))
    if module._diff:
        result["diff"] = {"before_header": "%s (cloud)" % params["cluster_name"],
                          "after_header": "%s (%s)" % (params["cluster_name"], "plan" if module.check_mode else "applied"),
                          "before": "", "after": "\n".join(lines) + "\n"}
    module.exit_json(**result)


def main():
    module = KopsModule(argument_spec=dict(
        cluster_name=dict(type="str", required=True),
        target=dict(type="str", choices=["direct", "terraform", "cloudformation"], default="direct"),
        out_dir=dict(type="path", default="out/terraform"),
        ssh_public_key=dict(type="str"),
        cluster=dict(type="dict"),
        instance_groups=dict(type="list", elements="dict"),
        workers=dict(type="int", default=8),
        timeout=dict(type="raw", default=600),
        progress_file=dict(type="path"),
    ), required_by={"instance_groups": "cluster"})
    run(module)


if __name__ == "__main__":
    main()
