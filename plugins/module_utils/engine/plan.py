# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A plan as the user reads it, like `kops update cluster` without --yes.

Deletions first, one line each; creates grouped by kind; each update with its
changed fields, old -> new; the documents the nodes read that change (their
nodeup configs), as kops shows its managed files; a closing count, and kops'
hint when launch templates change.  A changed document of several lines (user
data) is shown as its unified diff, secrets masked (engine/textdiff.py); other
big values (policies, certificates) as their hash and size unless the user asks
for more (-vv), so a new cluster's preview stays a page long.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.kubeops.kops.plugins.module_utils.engine import textdiff
from ansible_collections.kubeops.kops.plugins.module_utils.engine.runner import ACTIONS, CREATE, DELETE, UNCHANGED, UPDATE

SYMBOLS = {CREATE: "+", UPDATE: "~", DELETE: "-", UNCHANGED: "="}
# A value longer than this is summarised unless verbosity >= FULL_VALUES.
LONG_VALUE = 120
FULL_VALUES = 2
NO_CHANGES = "No changes need to be applied"
RESTART_HINT = ("Changes may require instances to restart: run playbooks/rolling_update.yml "
                "(kops rolling-update cluster)")


def summarise(value, verbosity=0):
    """value as shown in a plan: itself when short (or at -vv: a document's text, secrets masked), else
    '<sha256 abcd1234, N bytes>'."""
    if verbosity >= FULL_VALUES:
        text = textdiff.as_text(value)
        return value if text is None else textdiff.masked(text)
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


def lines(entries, verbosity=0, documents=()):
    """The plan as text lines, as kops prints it: deletions first (what goes away is what the user must see), one
    line each; creates by kind, a count and the names (a new cluster's preview stays a screen; -v lists one per
    line); each update with every changed field, old -> new (a document's as its diff, other long values as their
    hash and size); what the cluster uses but does not own (its image, a VPC given by id), by kind, so no count
    stands for objects nobody named; then the documents (document_lines); then the count of cloud objects and the
    restart hint.  Nothing to create, update or delete and no document changed: kops' "No changes need to be
    applied", and the count."""
    total = counts(entries)
    if not (total[CREATE] or total[UPDATE] or total[DELETE]) and not documents:
        return [NO_CHANGES, _count_line(total)]
    out = []
    for entry in entries:
        if entry.action == DELETE:
            out.append("- %s %s%s" % (entry.kind, entry.name, " (%s)" % entry.id if entry.id else ""))
    out.extend(_grouped(CREATE, [e for e in entries if e.action == CREATE], verbosity))
    for entry in entries:
        if entry.action == UPDATE:
            out.append("~ %s %s" % (entry.kind, entry.name))
            for field, (before, after) in sorted(entry.changes.items()):
                out.extend(_change(field, before, after, verbosity))
    out.extend(_grouped(UNCHANGED, [e for e in entries if e.action == UNCHANGED and e.shared], verbosity,
                        "used, not owned"))
    out.extend(document_lines(documents, verbosity))
    out.append(_count_line(total))
    if restart_needed(entries):
        out.append(RESTART_HINT)
    return out


def _change(field, before, after, verbosity):
    """One changed field: a document (user data) as its diff, indented below the field; else old -> new."""
    old, new = textdiff.as_text(before), textdiff.as_text(after)
    if (old is not None or before is None) and (new is not None or after is None) and (old or new):
        return ["    %s:" % field] + ["      %s" % line for line in textdiff.diff(old, new, verbosity)]
    return ["    %s: %s -> %s" % (field, _shown(before, verbosity), _shown(after, verbosity))]


def document_lines(documents, verbosity=0):
    """The documents a run writes for the nodes that change ([(kind, name, stored text or None, new text)], e.g. a
    group's nodeup config), as kops shows its managed files: new ones by kind, a count and the names (-v: one per
    line); changed ones each with its unified diff, secrets masked."""
    out, created = [], {}
    for kind, name, before, _after in documents:
        if before is None:
            created.setdefault(kind, []).append(name)
    for kind, names in created.items():
        if verbosity >= 1:
            out.extend("+ %s %s" % (kind, name) for name in names)
        else:
            out.append("+ %s (%d): %s" % (kind, len(names), ", ".join(names)))
    for kind, name, before, after in documents:
        if before is not None:
            out.append("~ %s %s" % (kind, name))
            out.extend("    %s" % line for line in textdiff.diff(before, after, verbosity))
    return out


def document_diffs(documents):
    """The documents as Ansible diffs (one per document, headers naming it), secrets masked."""
    return [{"before_header": "%s %s (stored)" % (kind, name), "after_header": "%s %s (new)" % (kind, name),
             "before": textdiff.masked(before or ""), "after": textdiff.masked(after)}
            for kind, name, before, after in documents]


def documents_for_user(documents, verbosity=0):
    """The documents as a result list: kind, name, create or update, and the diff's lines (secrets masked)."""
    return [{"kind": kind, "name": name, "action": CREATE if before is None else UPDATE,
             "diff": textdiff.diff(before, after, verbosity)} for kind, name, before, after in documents]


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
    """kops' hint: launch templates of existing groups change (a new cluster's are only created): an update of a kind
    whose Task.restarts_instances is set (the cloud's task kinds say so, engine/ names none)."""
    return any(e.action == UPDATE and e.restarts for e in entries)
