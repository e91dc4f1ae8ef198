"""The per-case comparison with kops' nodeup goldens, as a table.

    PYTHONPATH=build/collections:. .venv/bin/python -m tests.unit.nodeup.golden_report [-v]
"""

from __future__ import annotations

import sys

from tests.unit.nodeup import kops_golden


def main(verbose=False):
    equal = both = kops_only = 0
    for case in kops_golden.CASES:
        name = "%s:%s" % (case.directory, case.tasks[:-len(".yaml")])
        try:
            result = kops_golden.compare(case)
        except Exception as error:  # pylint: disable=broad-except  # a report: every case is shown
            print("%-55s ERROR %s: %s" % (name, type(error).__name__, str(error)[:150]))
            continue
        equal += len(result.equal)
        both += len(result.equal) + len(result.different)
        kops_only += len(result.kops_only)
        print("%-55s equal %2d differ %2d kops-only %2d  %s %s" % (
            name, len(result.equal), len(result.different), len(result.kops_only), sorted(result.different),
            result.kops_only if verbose else ""))
    print("files equal %d, written by both %d, kops-only %d" % (equal, both, kops_only))


if __name__ == "__main__":
    main("-v" in sys.argv)
