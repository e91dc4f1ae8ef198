# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The Kubernetes side of an in-place roll of a metal host (roll.py plans it, playbooks/rolling_update.yml runs it):
before the host is updated, its Node is drained as the cloud roll drains (rolling/drain.py: kops' taint, cordon,
evictions that honour PodDisruptionBudgets); after, the roll waits for the Node to be Ready and makes it schedulable
again (the cloud roll has no such step: its drained instance is terminated)."""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.rolling.drain import (
    EXCLUDE_LB_LABEL, STRATEGIC_MERGE, Drainer, DrainFailed)


class NodeNotReady(DrainFailed):
    """The Node did not come back Ready after its host was updated."""


def drain(core, node, timeout, post_drain_delay, report, sleep=time.sleep):
    """Taint, cordon and drain the Node; False when the API has no such Node (a host not joined: nothing to
    drain).  report(phase, message) says each step."""
    drainer = Drainer(core)
    if drainer.taint(node):
        report("taint", "tainted %s %s:PreferNoSchedule" % (node, Drainer.TAINT))
    if not drainer.cordon_and_label(node):
        report("drain", "no Node %s in the API: nothing to drain" % node)
        return False
    report("cordon", "cordoned %s" % node)
    evicted = drainer.drain(node, timeout, lambda message: report("drain", message))
    report("drain", "drained %s (%d pod(s) evicted)" % (node, evicted))
    if post_drain_delay:
        sleep(post_drain_delay)
    return True


def _ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((node.get("status") or {}).get("conditions") or []))


def wait_ready_and_uncordon(core, node, timeout, report, sleep=time.sleep, clock=time.monotonic, poll=2.0):
    """Wait until the Node is Ready, then undo the drain's cordon, label and taint.  True when it changed the Node."""
    drainer = Drainer(core)
    deadline = clock() + timeout
    last = "not Ready"
    while True:
        try:
            found = drainer._node(node)
        except DrainFailed as exc:  # the API restarting on the host just updated (its control plane): ask again
            found, last = None, str(exc)
        if found is not None and _ready(found):
            break
        if clock() + poll > deadline:
            raise NodeNotReady("node %s is not Ready %ds after its host was updated (last: %s): see the kubelet's "
                               "log on the host (journalctl -u kubelet)" % (node, timeout, last))
        sleep(poll)
    report("ready", "node %s is Ready" % node)
    spec = found.get("spec") or {}
    labels = (found.get("metadata") or {}).get("labels") or {}
    taints = spec.get("taints") or []
    kept = [t for t in taints if t.get("key") != Drainer.TAINT]
    if not spec.get("unschedulable") and EXCLUDE_LB_LABEL not in labels and len(kept) == len(taints):
        return False
    body = {"metadata": {"resourceVersion": found["metadata"].get("resourceVersion"),
                         "labels": {EXCLUDE_LB_LABEL: None}},
            "spec": {"unschedulable": None, "taints": kept or None}}
    drainer._api("uncordoning node %s" % node, core.patch_node, node, body, _content_type=STRATEGIC_MERGE)
    report("uncordon", "uncordoned %s" % node)
    return True
