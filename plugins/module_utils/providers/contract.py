# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Whether a cloud's package answers the contract (providers/base.py), part by part.  Apart from registry.py so
that no module ships every cloud's deletion, options and node parts for it: the tests and a cloud's author call it
(tests/unit/cloud/test_provider_contract.py, tests/integration/test_third_cloud.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils import provider_names
from ansible_collections.kubeops.kops.plugins.module_utils.providers import (
    base, deleters, module_options, node, registry)

# What cluster_update's target may be (Driver.targets).
TARGETS = ("direct", "terraform", "cloudformation")


def unanswered_contract(name):
    """What cloud name's package leaves out of the contract (providers/base.py): ["<part>.<method>"], [] when
    it answers all.  Builds no client and makes no call (the rolling side is built over no cloud)."""
    cloud = registry.provider(name)
    gaps = ["Provider.%s" % n for n in base.unanswered(cloud, base.Provider)]
    if not isinstance(cloud, base.Provider) or cloud.name != name:
        gaps.append("Provider.name (%r, a providers.base.Provider)" % getattr(cloud, "name", None))
    if gaps:
        return gaps
    driver = cloud.driver()
    gaps += ["Driver.%s" % n for n in base.unanswered(driver, base.Driver)]
    if not isinstance(driver, base.Driver) or driver.provider != name or not set(driver.targets) <= set(TARGETS):
        gaps.append("Driver.provider/targets (%r, %r)" % (driver.provider, driver.targets))
    gaps += ["ReaderPart.%s" % n for n in base.unanswered(cloud.reader(), base.ReaderPart)]
    deletion = deleters.deletion_for(name)
    if deletion is None or not isinstance(getattr(deletion, "KINDS_BY_NAME", None), dict):
        gaps.append("DeletionPart (providers/%s/deletion.py with KINDS_BY_NAME)" % name)
    else:
        gaps += ["DeletionPart.%s" % n for n in base.unanswered(deletion, base.DeletionPart)]
    if type(cloud).rolling is not base.Provider.rolling:
        gaps += ["RollingSide.%s" % n for n in base.unanswered(cloud.rolling(None), base.RollingSide)]
    options = provider_names.part(name, "options", module_options.BUILT_IN)
    if options is not None:
        gaps += ["OptionsPart.%s" % n for n in base.unanswered(options, base.OptionsPart)]
    node_part = provider_names.part(name, "node", node.BUILT_IN)
    if cloud.node_functions:
        gaps += ["NodePart.%s" % n for n in base.unanswered(node_part, base.NodePart)]
    return gaps
