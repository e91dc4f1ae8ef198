# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""toy: a third cloud, as one package (tests/integration/test_third_cloud.py copies it to providers/toy/ of a copy
of the collection).  Its objects are two kinds of its own (tasks.py) that render as Terraform resources of a
made-up provider; it has no API, so it renders (target terraform) and deletes (nothing in a cloud: the state
store), and says so for the other verbs (Provider's defaults)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.providers.base import Provider


class ToyProvider(Provider):
    name = "toy"
    zone_pattern = (r"^(toy-\d+)[a-z]$", "toy-1a")

    def driver(self):
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.toy import driver
        return driver.DRIVER


PROVIDER = ToyProvider()
