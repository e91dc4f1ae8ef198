"""The Kubernetes side of an in-place roll of a metal host (rolling/in_place_node.py): after the host was
updated, wait for its Node to be Ready (through an API that may be restarting) and undo the drain's cordon, label
and taint, keeping the Node's other taints."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place_node as node_steps
from ansible_collections.kubeops.kops.plugins.module_utils.rolling.drain import EXCLUDE_LB_LABEL, Drainer

CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


class _ApiClient(object):
    @staticmethod
    def sanitize_for_serialization(value):
        return copy.deepcopy(value)


class FakeCore(object):
    """read_node answers from a script of states (an exception is raised: the API restarting)."""

    def __init__(self, states):
        self.states = list(states)
        self.api_client = _ApiClient()
        self.patches = []

    def read_node(self, name, _request_timeout=None):
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        if isinstance(state, Exception):
            raise state
        return state

    def patch_node(self, name, body, _request_timeout=None, _content_type=None):
        self.patches.append((name, body))
        return body


def _node(ready, drained=True, taints=()):
    return {"metadata": {"name": "vm1", "resourceVersion": "7",
                         "labels": {EXCLUDE_LB_LABEL: ""} if drained else {}},
            "spec": {"unschedulable": True if drained else None,
                     "taints": list(taints) + ([{"key": Drainer.TAINT, "effect": "PreferNoSchedule"}]
                                               if drained else [])},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_the_node_is_uncordoned_once_ready_through_a_restarting_api_keeping_its_other_taints():
    clock = Clock()
    core = FakeCore([ConnectionRefusedError("the API restarts"), _node(False, taints=[CONTROL_PLANE_TAINT]),
                     _node(True, taints=[CONTROL_PLANE_TAINT])])
    steps = []
    changed = node_steps.wait_ready_and_uncordon(core, "vm1", 60, lambda p, m: steps.append(p), sleep=clock.sleep,
                                                 clock=clock)
    assert changed is True and steps == ["ready", "uncordon"] and clock.now == 4.0
    [(name, body)] = core.patches
    assert name == "vm1" and body["spec"] == {"unschedulable": None, "taints": [CONTROL_PLANE_TAINT]}
    assert body["metadata"] == {"resourceVersion": "7", "labels": {EXCLUDE_LB_LABEL: None}}


def test_a_node_never_drained_is_left_as_it_is():
    core = FakeCore([_node(True, drained=False)])
    assert node_steps.wait_ready_and_uncordon(core, "vm1", 60, lambda p, m: None) is False
    assert core.patches == []


def test_a_node_not_ready_in_time_stops_the_roll_naming_the_kubelet_log():
    clock = Clock()
    core = FakeCore([_node(False)])
    with pytest.raises(node_steps.NodeNotReady, match=r"node vm1 is not Ready 10s after .*journalctl -u kubelet"):
        node_steps.wait_ready_and_uncordon(core, "vm1", 10, lambda p, m: None, sleep=clock.sleep, clock=clock)
    assert core.patches == []
