"""Benchmark: a second (no-op) nodeup run on a control-plane test host, pipelining on.

Run as root from the repo root (after `make venv` and `make test` once built the test-host image):
    .venv/bin/python bench/nodeup_noop.py --runs 5                   # roles/nodeup (goal, issue 4: under 15 s)
    .venv/bin/python bench/nodeup_noop.py --runs 5 --with-protokube  # the whole playbooks/nodeup.yml
Prints each no-op run's wall time and the median.  With protokube, each run also waits
protokube_api_wait_timeout (5 s here) for an API server that cannot run on the test hosts.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from tests.hosts import testhosts  # noqa: E402
from tests.nodes.test_nodeup_role import CLUSTER, _store, run_nodeup  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--with-protokube", action="store_true",
                        help="also run roles/protokube (etcd) as playbooks/nodeup.yml does on control-plane nodes")
    args = parser.parse_args()
    extra = [] if args.with_protokube else ["-e", "nodeup_run_protokube=false"]
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-nodeup-"))
    store, groups = _store(work)
    pool = testhosts.HostPool(prefix="kbn", count=1, binds=[store])
    try:
        host, = pool.start()
        inventory = pool.inventory_file(work / "hosts.yml", hostvars={host.name: {
            "kops_role": "Master", "kops_instance_group": groups["Master"],
            "kops_state_store": "file://%s" % store, "kops_cluster_name": CLUSTER}})
        first, elapsed = run_nodeup(inventory, *extra)
        print("first run: %.1f s (changed=%s)" % (elapsed, first))
        times = []
        for index in range(args.runs):
            changed, elapsed = run_nodeup(inventory, *extra)
            assert changed == [0], changed
            times.append(elapsed)
            print("no-op run %d: %.2f s" % (index + 1, elapsed))
        print("median no-op %s run on a control-plane host: %.2f s of %d" % (
            "playbooks/nodeup.yml (nodeup + protokube)" if args.with_protokube else "roles/nodeup",
            statistics.median(times), args.runs))
    finally:
        pool.stop()


if __name__ == "__main__":
    main()
