# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' tables (util/pkg/tables), as lines: every table kops prints (get clusters, get instancegroups, the
rolling update, delete cluster, validate, upgrade) goes through one Render, so every one here goes through
render().

Render writes a header row, then the rows sorted column by column as strings, through Go's tabwriter with
minwidth 0, tabwidth 8, padding 1 and a tab as the pad character: a column ends at the first tab stop (a
multiple of 8) past its widest cell plus one.  The lines here carry spaces where kops' carry tabs, so they
stay aligned wherever they are printed (a job log, a YAML result) and say the same on any terminal.
"""

from __future__ import annotations

TAB_WIDTH = 8
PADDING = 1


def render(columns, rows, sort=True):
    """columns (the header) over rows (sequences of values, each shown as str), as aligned lines.

    sort=False keeps the rows' order: for a table that is not kops' (the spec's history, oldest first)."""
    cells = [[_text(value) for value in row] for row in rows]
    if sort:
        cells.sort()
    table = [[str(c) for c in columns]] + cells
    stops = [_stop(max(len(row[i]) for row in table)) for i in range(len(columns) - 1)]
    return [("".join(cell.ljust(stop) for cell, stop in zip(row, stops)) + row[-1]).rstrip() for row in table]


def _stop(width):
    """The tab stop a column of this width ends at."""
    return -(-(width + PADDING) // TAB_WIDTH) * TAB_WIDTH


def _text(value):
    """A cell as kops prints it: None (an unset *int32, as `kops get ig` shows MIN/MAX) as '-'."""
    return "-" if value is None else str(value)
