# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kube-scheduler flags (kops KubeSchedulerOptionsBuilder)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import context


def build(spec, ctx):
    scheduler = context.section(spec, "kubeScheduler")
    if not scheduler.get("logLevel"):
        scheduler["logLevel"] = 2
    if not scheduler.get("image"):
        scheduler["image"] = ctx.kubernetes_image(spec, "kube-scheduler")
    if scheduler.get("leaderElection") is None:
        scheduler["leaderElection"] = {"leaderElect": True}
