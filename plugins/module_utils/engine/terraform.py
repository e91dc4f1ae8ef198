# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kubernetes.tf, laid out as kops writes it: locals, outputs, providers, resources, terraform."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import hcl

REQUIRED_VERSION = ">= 0.15.0"


def render(tasks, providers, outputs=None):
    """The text of kubernetes.tf for a list of tasks.

    providers: the driver's (provider blocks [(name, body)], required_providers {name: body}).
    """
    provider_blocks, required = providers
    blocks = []
    outputs = outputs or {}
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
