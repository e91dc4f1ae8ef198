# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A plan as the user reads it, like `kops update cluster` without --yes.

Deletions first, one line each; creates grouped by kind; each update with its
changed fields, old -> new; a closing count, and kops' hint when launch
templates change.  Big values
(user data, policies, certificates) are shown as their hash and size unless
the user asks for more (-vv), so a new cluster's preview stays a page long.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import ACTIONS, CREATE, DELETE, UNCHANGED, UPDATE

SYMBOLS = {CREATE: "+", UPDATE: "~", DELETE: "-", UNCHANGED: "="}
# A value longer than this is summarised unless verbosity >= FULL_VALUES.
LONG_VALUE = 120
FULL_VALUES = 2
# Kinds whose change means instances must be replaced to pick it up (kops prints the hint for these).
RESTART_KINDS = ("aws_launch_template", "google_compute_instance_template")
NO_CHANGES = "No changes need to be applied"
RESTART_HINT = ("Changes may require instances to restart: run playbooks/rolling_update.yml "
                "(kops rolling-update cluster)")


def summarise(value, verbosity=0):
    """value as shown in a plan: itself when short (or at -vv), else '<sha256 abcd1234, N bytes>'."""
    if verbosity >= FULL_VALUES:
        return value
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if len(text) <= LONG_VALUE:
        return value
    data = text.encode("utf-8")
    return "<sha256 %s, %d bytes>" % (hashlib.sha256(data).hexdigest()[:12], len(data))


def entry_for_user(entry, verbosity=0):
    """A PlanEntry as a result dict, with long values summarised."""
    shown = entry.as_dict()
    shown["changes"] = {field: {"before": summarise(c["before"], verbosity), "after": summarise(c["after"], verbosity)}
                        for field, c in shown["changes"].items()}
    return shown


def counts(entries):
    return {action: sum(1 for e in entries if e.action == action) for action in ACTIONS}


def lines(entries, verbosity=0):
    """The plan as text lines, as kops prints it: deletions first (what goes away is what the user must see), one
    line each; creates by kind, a count and the names (a new cluster's preview stays a screen; -v lists one per
    line); each update with every changed field, old -> new (long values as their hash and size); what the cluster
    uses but does not own (its image, a VPC given by id), by kind, so no count stands for objects nobody named;
    then the count and the restart hint.  Nothing to create, update or delete: kops' "No changes need to be
    applied", and the count."""
    total = counts(entries)
    if not (total[CREATE] or total[UPDATE] or total[DELETE]):
        return [NO_CHANGES, _count_line(total)]
    out = []
    for entry in entries:
        if entry.action == DELETE:
            out.append("- %s %s%s" % (entry.kind, entry.name, " (%s)" % entry.id if entry.id else ""))
    out.extend(_grouped(CREATE, [e for e in entries if e.action == CREATE], verbosity))
    for entry in entries:
        if entry.action == UPDATE:
            out.append("~ %s %s" % (entry.kind, entry.name))
            out.extend("    %s: %s -> %s" % (field, _shown(before, verbosity), _shown(after, verbosity))
                       for field, (before, after) in sorted(entry.changes.items()))
    out.extend(_grouped(UNCHANGED, [e for e in entries if e.action == UNCHANGED and e.shared], verbosity,
                        "used, not owned"))
    out.append(_count_line(total))
    if restart_needed(entries):
        out.append(RESTART_HINT)
    return out


def _count_line(total):
    return "Plan: %d to create, %d to update, %d to delete, %d unchanged." % (
        total[CREATE], total[UPDATE], total[DELETE], total[UNCHANGED])


def _grouped(action, entries, verbosity, note=None):
    """One line per kind, its count (and note) and names, marked with the action's symbol (-v: one line per
    object, the note after it)."""
    by_kind = {}
    for entry in entries:
        by_kind.setdefault(entry.kind, []).append(entry.name)
    symbol = SYMBOLS[action]
    if verbosity >= 1:
        after = " (%s)" % note if note else ""
        return ["%s %s %s%s" % (symbol, kind, name, after) for kind, names in by_kind.items() for name in names]
    return ["%s %s (%s): %s" % (symbol, kind, ", ".join([str(len(names))] + [note] * bool(note)), ", ".join(names))
            for kind, names in by_kind.items()]


def _shown(value, verbosity):
    """A value on one plan line: strings as they are (summarised when long), the rest as compact JSON."""
    value = summarise(value, verbosity)
    if value is None:
        return "(none)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def restart_needed(entries):
    """kops' hint: launch templates of existing groups change (a new cluster's are only created)."""
    return any(e.action == UPDATE and e.kind in RESTART_KINDS for e in entries)
