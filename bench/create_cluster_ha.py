"""Wall time of playbooks/create_cluster.yml for kops' `ha` create_cluster fixture.

    .venv/bin/python bench/create_cluster_ha.py [--runs 5] [--case ha]

Each run writes the spec to a fresh file:// store (a real create, not a
no-op).  Prints every run's wall time, the median, and the median of a second
(no-op) run against the same store.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from tests.conformance import kops_fixtures  # noqa: E402


def run_playbook(extra_vars_file, store):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"),
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOCALHOST_WARNING="false")
    started = time.monotonic()
    proc = subprocess.run([str(pathlib.Path(sys.executable).parent / "ansible-playbook"),
                           str(REPO / "playbooks" / "create_cluster.yml"), "-e", "@%s" % extra_vars_file,
                           "-e", "state_store=file://%s" % store], env=env, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    if proc.returncode:
        raise SystemExit(proc.stdout + proc.stderr)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--case", default="ha")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        extra = pathlib.Path(tmp) / "options.json"
        extra.write_text(json.dumps({"cluster_options": kops_fixtures.load_create_options(args.case)}))
        creates, noops = [], []
        for index in range(args.runs):
            store = pathlib.Path(tmp) / ("store-%d" % index)
            creates.append(run_playbook(extra, store))
            noops.append(run_playbook(extra, store))
    print("create_cluster.yml (%s fixture), %d runs" % (args.case, args.runs))
    print("  create: %s s  median %.2f s" % (", ".join("%.2f" % t for t in creates), statistics.median(creates)))
    print("  no-op:  %s s  median %.2f s" % (", ".join("%.2f" % t for t in noops), statistics.median(noops)))


if __name__ == "__main__":
    main()
