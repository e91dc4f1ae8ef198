#!/usr/bin/env python
"""Refresh tests/durations.json, the table tests/slow_first.py orders the test run by (slowest first).

Usage: hack/test_durations.py REPORT [REPORT...]

A REPORT is a junit XML file (`make test` writes build/test-report.xml; or `pytest --junitxml=FILE`) or a saved
pytest output with a durations section (`pytest --durations=0`, or CI's log with --durations=25: only the tests
it lists are then known).  A test's figure is its setup + call + teardown seconds, averaged over the reports that
have it; tests under MIN_SECONDS are left out (unknown tests run after the known ones, in collection order).
"""

from __future__ import annotations

import collections
import json
import pathlib
import re
import sys
from xml.etree import ElementTree

REPO = pathlib.Path(__file__).resolve().parents[1]
TABLE = REPO / "tests" / "durations.json"
MIN_SECONDS = 0.5
DURATION_LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+::\S.*?)\s*$")


def _nodeid(classname, name):
    """tests.unit.x.test_y[.TestClass] + name -> tests/unit/x/test_y.py[::TestClass]::name (the file is the longest
    dotted prefix that exists in the checkout)."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (REPO / path).is_file():
            return "::".join([path] + parts[cut:] + [name])
    return "::".join(["/".join(parts) + ".py", name])


def from_junit(path):
    found = collections.Counter()
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            continue
        found[_nodeid(case.get("classname", ""), case.get("name", ""))] += float(case.get("time") or 0)
    return found


def from_durations_output(path):
    found = collections.Counter()
    for line in pathlib.Path(path).read_text(errors="replace").splitlines():
        match = DURATION_LINE.match(line)
        if match:
            found[match.group(3)] += float(match.group(1))
    return found


def read_report(path):
    text = pathlib.Path(path).read_text(errors="replace")
    return from_junit(path) if text.lstrip().startswith("<?xml") or text.lstrip().startswith("<testsuite") \
        else from_durations_output(path)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    figures = collections.defaultdict(list)
    for report in argv:
        found = read_report(report)
        if not found:
            sys.exit("%s: no test durations in it (a junit XML file, or pytest output with --durations)" % report)
        for nodeid, seconds in found.items():
            figures[nodeid].append(seconds)
    durations = {nodeid: round(sum(values) / len(values), 1) for nodeid, values in sorted(figures.items())}
    durations = {nodeid: seconds for nodeid, seconds in durations.items() if seconds >= MIN_SECONDS}
    TABLE.write_text(json.dumps({"comment": "written by hack/test_durations.py; read by tests/slow_first.py",
                                 "durations": durations}, indent=1, sort_keys=True) + "\n")
    print("%s: %d tests, %.0f s in all" % (TABLE, len(durations), sum(durations.values())))


if __name__ == "__main__":
    main(sys.argv[1:])
