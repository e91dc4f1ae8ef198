# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""An instance group's taint as kops reads it (pkg/apis/kops/util ParseTaint): key[=value][:effect]."""

from __future__ import annotations


def parse_taint(text):
    """{"key", "value", "effect"} of a taint; None when kops' parser refuses it (more than one ':' or '=')."""
    parts = text.split(":")
    if len(parts) > 2:
        return None
    effect = parts[1] if len(parts) == 2 else ""
    key_value = parts[0].split("=") if len(parts) == 2 else [parts[0]]
    if len(key_value) > 2:
        return None
    return {"key": key_value[0], "value": key_value[1] if len(key_value) == 2 else "", "effect": effect}
