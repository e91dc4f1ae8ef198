# -*- coding: utf-8 -*-
# Test-only stdout callback: the whole run as one JSON document (plays, tasks,
# per-host results, stats), like ansible.posix.json, which ansible-core lacks.

from __future__ import annotations

DOCUMENTATION = r"""
name: test_json
type: stdout
short_description: the run as one JSON document (kubeops.kops tests only)
description: Collects each task's per-host result and prints plays, tasks and stats as JSON at the end.
"""

import json

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "test_json"

    def __init__(self):
        super().__init__()
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({"play": {"name": play.get_name()}, "tasks": []})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.plays[-1]["tasks"].append({"task": {"name": task.get_name()}, "hosts": {}})

    def _record(self, result, **extra):
        data = dict(self._convert_and_filter(result._result), **extra)
        self.plays[-1]["tasks"][-1]["hosts"][result._host.get_name()] = data

    def _convert_and_filter(self, data):
        return json.loads(json.dumps(data, default=str))

    def v2_runner_on_ok(self, result):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, failed=True)

    def v2_runner_on_skipped(self, result):
        self._record(result, skipped=True)

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed.keys())
        summary = {h: stats.summarize(h) for h in hosts}
        self._display.display(json.dumps({"plays": self.plays, "stats": summary}, indent=1))
