# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The Kubernetes side of a rolling update: kops' taint, cordon, exclude-from-LB label and the
kubectl drain helper it runs (Force, IgnoreAllDaemonSets, DeleteEmptyDirData, GracePeriodSeconds -1,
EvictErrorRetryDelay 5 s, Timeout --drain-timeout), through the `kubernetes` client's CoreV1Api.

A pod is evicted (policy/v1 Eviction), so PodDisruptionBudgets are honoured: while a budget allows
no disruption the API answers 429 and the eviction is tried again every 5 s until the timeout.
DaemonSet pods and mirror (static) pods stay; a pod without a controller is evicted too (kops' Force);
pods with emptyDir volumes are evicted (their data goes).  Then the drain waits until every evicted
pod is gone (deleted, or replaced by a pod of the same name with another uid).
"""

from __future__ import annotations

import time

from ansible_collections.kubeops.kops.plugins.module_utils.errors import RollingError, unreachable

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
EXCLUDE_LB_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
EVICTION_RETRY = 5.0
GONE_POLL = 1.0


class DrainFailed(RollingError):
    pass


class Drainer(object):
    """core: a kubernetes.client.CoreV1Api."""

    TAINT = "kops.k8s.io/scheduled-for-update"

    def __init__(self, core, sleep=time.sleep, clock=time.monotonic, retry=EVICTION_RETRY, poll=GONE_POLL):
        self.core = core
        self.sleep = sleep
        self.clock = clock
        self.retry = retry
        self.poll = poll

    @staticmethod
    def _status(exc):
        return getattr(exc, "status", None)

    def _api(self, what, function, *args, **kwargs):
        """Call the API; None when the object is gone (404), DrainFailed naming the call otherwise."""
        try:
            return function(*args, _request_timeout=30, **kwargs)
        except Exception as exc:  # ApiException and transport errors of the kubernetes client
            if self._status(exc) == 404:
                return None
            raise DrainFailed("%s: %s" % (what, _reason(exc)))

    def _node(self, name):
        node = self._api("reading node %s" % name, self.core.read_node, name)
        return None if node is None else self.core.api_client.sanitize_for_serialization(node)

    def taint(self, node_name):
        """Add kops.k8s.io/scheduled-for-update:PreferNoSchedule unless there; True when added."""
        node = self._node(node_name)
        if node is None:
            return False
        taints = (node.get("spec") or {}).get("taints") or []
        if any(t.get("key") == self.TAINT for t in taints):
            return False
        # A strategic merge of spec.taints replaces the list: send it whole (with the resourceVersion read,
        # so a concurrent change makes the API refuse instead of losing a taint).
        body = {"metadata": {"resourceVersion": node["metadata"].get("resourceVersion")},
                "spec": {"taints": taints + [{"key": self.TAINT, "effect": "PreferNoSchedule"}]}}
        return self._api("tainting node %s" % node_name, self.core.patch_node, node_name, body,
                         _content_type=STRATEGIC_MERGE) is not None

    def cordon_and_label(self, node_name):
        """Cordon (spec.unschedulable) and label exclude-from-external-load-balancers; False if the node is gone."""
        body = {"spec": {"unschedulable": True}, "metadata": {"labels": {EXCLUDE_LB_LABEL: ""}}}
        return self._api("cordoning node %s" % node_name, self.core.patch_node, node_name, body,
                         _content_type=STRATEGIC_MERGE) is not None

    def pods_to_evict(self, node_name):
        """The node's pods a drain removes (kubectl's filters with kops' flags), as JSON."""
        response = self._api("listing the pods of node %s" % node_name, self.core.list_pod_for_all_namespaces,
                             field_selector="spec.nodeName=%s" % node_name)
        pods = [] if response is None else self.core.api_client.sanitize_for_serialization(response).get("items") or []
        chosen = []
        for pod in pods:
            meta = pod.get("metadata") or {}
            if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
                continue  # a static pod: the kubelet owns it, the API cannot remove it
            controller = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
            if controller is not None and controller.get("kind") == "DaemonSet":
                continue  # IgnoreAllDaemonSets: its controller would put it right back
            chosen.append(pod)
        return chosen

    def drain(self, node_name, timeout, report=None):
        """Evict the node's pods, then wait for them to go; DrainFailed at the timeout.  Returns how many."""
        report = report or (lambda message: None)
        deadline = self.clock() + timeout
        pods = self.pods_to_evict(node_name)
        pending = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"].get("uid") for p in pods}
        evicted = {}
        while pending:
            refused = {}
            for (namespace, name), uid in sorted(pending.items()):
                outcome = self._evict(namespace, name)
                if outcome == "refused":
                    refused[(namespace, name)] = uid
                else:
                    evicted[(namespace, name)] = uid
                    report("evicted pod %s/%s" % (namespace, name))
            pending = refused
            if not pending:
                break
            if self.clock() + self.retry > deadline:
                raise DrainFailed("drain did not complete within %ds: a disruption budget still refuses to evict %s"
                                  % (timeout, ", ".join("%s/%s" % key for key in sorted(pending))))
            report("a disruption budget refuses to evict %s; again in %ds"
                   % (", ".join("%s/%s" % key for key in sorted(pending)), self.retry))
            self.sleep(self.retry)
        count = len(evicted)  # _wait_gone empties the dict as the pods go
        self._wait_gone(evicted, deadline, timeout, report)
        return count

    def _evict(self, namespace, name):
        """"evicted", "gone" or "refused" (429: a PodDisruptionBudget allows no disruption now)."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace},
                "deleteOptions": {}}
        try:
            self.core.create_namespaced_pod_eviction(name, namespace, body, _request_timeout=30)
        except Exception as exc:  # ApiException and transport errors of the kubernetes client
            status = self._status(exc)
            if status == 404:
                return "gone"
            if status == 429:
                return "refused"
            raise DrainFailed("evicting pod %s/%s: %s" % (namespace, name, _reason(exc)))
        return "evicted"

    def _wait_gone(self, evicted, deadline, timeout, report):
        while evicted:
            for (namespace, name), uid in list(evicted.items()):
                pod = self._api("reading pod %s/%s" % (namespace, name), self.core.read_namespaced_pod, name, namespace)
                if pod is None or pod.metadata.uid != uid:
                    del evicted[(namespace, name)]
            if not evicted:
                return
            if self.clock() + self.poll > deadline:
                raise DrainFailed("drain did not complete within %ds: still terminating: %s"
                                  % (timeout, ", ".join("%s/%s" % key for key in sorted(evicted))))
            self.sleep(self.poll)
        report("all evicted pods are gone")


def _reason(exc):
    status = getattr(exc, "status", None)
    if status is None:
        return "cannot reach the Kubernetes API: %s" % unreachable(exc)
    body = getattr(exc, "body", "") or ""
    try:
        import json
        message = json.loads(body).get("message") or body
    except (TypeError, ValueError):
        message = body
    return "HTTP %s %s %s" % (status, getattr(exc, "reason", ""), str(message)[:300])
