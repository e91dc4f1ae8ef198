"""How long `pytest -n 2` takes for a durations table, in collection order and slowest first: a simulation of
pytest-xdist 3.8's `load` scheduler (xdist/scheduler/load.py: the initial chunks, the refills, the wait after a
slow test), no test run.

Usage: bench/xdist_schedule.py COLLECTED [--table tests/durations.json] [--unknown SECONDS] [--workers 2]

COLLECTED: the output of `pytest --collect-only -q -p no:xdist --slow-first no tests` (one node id a line, in
collection order).  Tests the table lacks take --unknown seconds each (default: what makes the suite's sum equal
--total, if given, else 0.5 s).  Prints the simulated wall time and each worker's idle tail for: collection order
with xdist's default chunks (before tests/slow_first.py), and slowest first with --maxschedchunk 2 (after).
"""

from __future__ import annotations

import argparse
import heapq
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tests import slow_first  # noqa: E402 - the repository root first


def simulate(order, durations, workers=2, maxschedchunk=None):
    """(wall seconds, [finish time per worker]) of xdist's LoadScheduling over order (node ids)."""
    pending = list(range(len(order)))
    queues = [[] for _worker in range(workers)]
    chunk_limit = maxschedchunk or len(order)

    def send(node, count):
        queues[node].extend(pending[:count])
        del pending[:count]

    if len(pending) < 2 * workers:
        for index in range(len(pending)):
            send(index % workers, 1)
    else:
        per_node = len(order) // workers
        for node in range(workers):
            send(node, max(min(per_node // 4, chunk_limit), 2))
    clock = [0.0] * workers
    events = [(0.0, node) for node in range(workers)]
    heapq.heapify(events)
    finished = [0.0] * workers
    while events:
        now, node = heapq.heappop(events)
        if not queues[node]:
            finished[node] = now
            continue
        index = queues[node].pop(0)
        seconds = durations(order[index])
        clock[node] = now + seconds
        # After the test: xdist's check_schedule for this node.
        if pending:
            low = max(2, len(pending) // workers // 4)
            high = max(2, len(pending) // workers // 2)
            waiting = len(queues[node])
            if waiting < low and not (seconds >= 0.1 and waiting >= 2):
                send(node, min(high - waiting, max(2 - waiting, chunk_limit)))
        heapq.heappush(events, (clock[node], node))
    return max(finished), finished


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collected")
    parser.add_argument("--table", default=str(slow_first.TABLE))
    parser.add_argument("--unknown", type=float)
    parser.add_argument("--total", type=float, help="the suite's summed test seconds (sets --unknown)")
    parser.add_argument("--unit", type=float, help="seconds of each tests/unit test the table lacks (the rest share "
                        "what --total leaves)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    order = [line.strip() for line in pathlib.Path(args.collected).read_text().splitlines() if "::" in line]
    table = json.loads(pathlib.Path(args.table).read_text())["durations"]
    known = {n: table[n] for n in order if n in table}
    units = [n for n in order if n not in known and n.startswith("tests/unit/")] if args.unit is not None else []
    unknown = args.unknown
    if unknown is None:
        rest = len(order) - len(known) - len(units)
        left = (args.total or 0) - sum(known.values()) - len(units) * (args.unit or 0)
        unknown = max(0.0, left / rest) if args.total and rest else 0.5
    unit_set = set(units)

    def durations(nodeid):
        return known.get(nodeid, args.unit if nodeid in unit_set else unknown)

    total = sum(durations(n) for n in order)
    items = [type("Item", (), {"nodeid": n, "fixturenames": ()})() for n in order]
    fastest_first = [i.nodeid for i in slow_first.slowest_first(items, known)]
    print("%d tests, %d in the table; unknown tests %.2f s each (%d unit tests %s s); sum %.0f s, /%d = %.0f s"
          % (len(order), len(known), unknown, len(units), args.unit, total, args.workers, total / args.workers))
    for label, sequence, chunk in (("collection order, xdist default chunks", order, None),
                                   ("slowest first, --maxschedchunk 2", fastest_first, slow_first.CHUNK)):
        wall, finished = simulate(sequence, durations, args.workers, chunk)
        print("%-40s wall %6.0f s; workers finish at %s (idle tail %.0f s)"
              % (label, wall, ", ".join("%.0f" % f for f in finished), wall - min(finished)))


if __name__ == "__main__":
    main()
