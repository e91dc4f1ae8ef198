# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kubernetes.tf, laid out as kops writes it: locals, outputs, providers, resources, terraform."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import hcl
from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

REQUIRED_VERSION = ">= 0.15.0"


def output_variables(tasks, variables=None):
    """kops' output variables, {name: value}, for the locals block and the output blocks.

    variables: what the pipeline itself writes (kops' apply_cluster: cluster_name, region, project).
    Then each task's terraform_outputs(), merged as kops' TerraformWriter merges them: a scalar is
    written once (a second one is an error), an array gathers every task's items, deduplicated and
    sorted by their written text (kops' dedupLiterals: a literal "sg-..." before a reference).
    Names are sanitized like resource names (kops' sanitizeName).
    """
    scalars = dict(variables or {})
    arrays = {}
    for task in tasks:
        for name, value, is_list in task.terraform_outputs():
            name = hcl.terraform_name(name)
            if name in scalars or (not is_list and name in arrays):
                raise TaskError("Terraform output %s: written twice (the second time by %s); kops writes a "
                                "scalar output once" % (name, task.key))
            if is_list:
                arrays.setdefault(name, {})[hcl.literal(value)] = value
            else:
                scalars[name] = value
    scalars.update((name, [items[text] for text in sorted(items)]) for name, items in arrays.items())
    return scalars


def render(tasks, providers, variables=None):
    """The text of kubernetes.tf for a list of tasks.

    providers: the driver's (provider blocks [(name, body)], required_providers {name: body}).
    variables: the pipeline's own output variables (see output_variables()); the tasks add theirs.
    """
    provider_blocks, required = providers
    blocks = []
    outputs = output_variables(tasks, variables)
    if outputs:
        blocks.append(hcl.block("locals", dict(outputs)))
        for name in sorted(outputs):
            blocks.append(hcl.block(hcl.header("output", name), {"value": outputs[name]}))
    for name, body in provider_blocks:
        blocks.append(hcl.block(hcl.header("provider", name), body))
    data = {}
    for task in tasks:
        for kind, name, body in task.terraform_data():
            data[(kind, name)] = body
    for (kind, name), body in sorted(data.items()):
        blocks.append(hcl.block(hcl.header("data", kind, name), body))
    for task in sorted(tasks, key=lambda t: (t.kind, t.terraform_name)):
        body = task.render_terraform()
        if body is not None:  # shared (BYO) objects are referred to, not managed
            blocks.append(hcl.block(hcl.header("resource", task.kind, task.terraform_name), body))
    blocks.append(hcl.block("terraform", {
        "required_version": REQUIRED_VERSION,
        "required_providers": hcl.Block(required),
    }))
    return "\n\n".join(blocks) + "\n"


def data_files(tasks):
    """[(path relative to kubernetes.tf, bytes)] the resources refer to with file() (kops' data/ directory)."""
    files = []
    for task in sorted(tasks, key=lambda t: (t.kind, t.terraform_name)):
        files.extend(task.terraform_files())
    return files
