# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What roles/enroll records on a metal host, computed as the roll computes it (rolling/in_place.py), so the
two agree on whether the host runs its group's current nodeup config."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.rolling import in_place as roll


def nodeup_config_digest(nodeup_config):
    """sha256:<hex> of a nodeup config (the parsed document)."""
    return roll.config_digest(nodeup_config)


def enroll_record_digest(record_text):
    """The digest a host's enroll record (its file's text) holds, or "" without one."""
    return roll.recorded_digest(record_text)


class FilterModule(object):

    def filters(self):
        return {"nodeup_config_digest": nodeup_config_digest, "enroll_record_digest": enroll_record_digest}
