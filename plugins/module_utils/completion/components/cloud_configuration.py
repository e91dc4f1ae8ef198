# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Cloud configuration: storage classes (kops CloudConfigurationOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context


def build(spec, ctx):
    cloud_config = context.section(spec, "cloudConfig")
    if cloud_config.get("manageStorageClasses") is None:
        # OpenStack users decide through blockStorage.createStorageClass; everyone else gets kops' classes.
        block_storage = ((cloud_config.get("openstack") or {}).get("blockStorage") or {})
        create = block_storage.get("createStorageClass")
        cloud_config["manageStorageClasses"] = True if create is None else create
