# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The toy cloud's two kinds: a network and a machine pool per instance group (rendered only: no API)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.engine.task import Field, Task


class ToyNetwork(Task):
    kind = "toy_network"
    FIELDS = (Field("name"), Field("cidr"), Field("labels"))


class ToyMachinePool(Task):
    kind = "toy_machine_pool"
    FIELDS = (Field("name"), Field("network_id"), Field("zones"), Field("min_size"), Field("max_size"),
              Field("machine_type"), Field("image"), Field("role"), Field("user_data"), Field("labels"))
