"""Serial against parallel rolling update on moto (run by hand, not in the test suite).

    source /work/wt/env.sh && python bench/rolling_parallel.py [--groups 4] [--size 5] [--budget 4] [--boot 2]
        [--interval 1]

A cluster of `groups` node groups of `size` nodes (each group's spec.rollingUpdate: maxSurge 1, maxUnavailable 1),
on moto's server and the Kubernetes API test server, with tests/integration/rolling_fleet.py's Fleet: a Node per
running instance, Ready `boot` seconds after it appears, and per group an app of 3 pods behind a
PodDisruptionBudget (maxUnavailable 1) that evictions honour.  Each run changes the machine type of every group and
rolls the node groups with rolling_update.yml:

- serial: kops' order, the node groups one after the other (no budget);
- parallel: the same groups under budget_max_unavailable = `budget`, side by side.

It prints the check-mode schedule of the parallel run, then per run the wall time of ansible-playbook, the roll's
own time (the last step of its log) and the peak unavailable taken from the API server's record of Node
readiness (the node groups' desired size less their Ready, schedulable Nodes, at every Node write), and fails if a
run's peak is over the budget.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore  # noqa: E402
from tests import servers  # noqa: E402
from tests.integration import rolling_fleet  # noqa: E402
from tests.integration.conftest import BIN, ansible_env, task_results  # noqa: E402
from tests.kube_api_server import KubeAPIServer  # noqa: E402

PLAYBOOK = REPO / "playbooks" / "rolling_update.yml"
TASK = "Rolling update of %s" % rolling_fleet.CLUSTER


def playbook(*args):
    env = ansible_env(REPO / "build" / "collections")
    env["ANSIBLE_CALLBACK_PLUGINS"] = str(REPO / "tests" / "integration" / "callback_plugins")
    env["ANSIBLE_STDOUT_CALLBACK"] = "test_json"
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(PLAYBOOK), *args], env=env, capture_output=True,
                          text=True, timeout=3600, check=False)
    try:
        result = task_results(json.loads(proc.stdout), TASK)
    except (ValueError, AssertionError):
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    if proc.returncode:
        raise SystemExit("rolling_update failed: %s\n%s" % (result.get("msg"), "\n".join(result.get("log") or [])))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--budget", default="4")
    parser.add_argument("--boot", type=float, default=2.0, help="seconds from an instance's launch to its Node Ready")
    parser.add_argument("--interval", type=int, default=1, help="rolling_update's interval (kops' default is 15)")
    options = parser.parse_args()

    moto = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV, AWS_ENDPOINT_URL=moto.url, AWS_CONFIG_FILE=os.devnull,
                      AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    for key in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "KOPS_STATE_STORE"):
        os.environ.pop(key, None)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bench-rolling-"))
    store = "file://%s" % (workdir / "state")
    started = time.monotonic()
    service = rolling_fleet.make_cluster(store, options.groups, options.size, {"maxSurge": 1, "maxUnavailable": 1})
    print("cluster of %d node groups x %d nodes built on moto in %.0fs" % (options.groups, options.size,
                                                                           time.monotonic() - started), flush=True)
    server = KubeAPIServer(ca=keystore.primary(keystore.load(service.cluster_store(rolling_fleet.CLUSTER),
                                                             "kubernetes-ca")), max_grace_seconds=1).start()
    fleet = rolling_fleet.Fleet(server, boot=options.boot)
    nodes = options.groups * options.size
    rows = []
    try:
        rolling_fleet.prepare(server)
        fleet.sync()
        fleet.start()
        time.sleep(options.boot + 1)  # every first node Ready, every app's pods running
        common = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % rolling_fleet.CLUSTER,
                  "-e", "api_server=%s" % server.url, "-e", "instance_group_roles=Node",
                  "-e", "interval=%d" % options.interval, "-e", "post_drain_delay=0", "-e", "validate_count=1", "-e", "validate_retry_interval=1",
                  "-e", "validate_recheck_interval=0", "-e", "drain_timeout=300", "-e", "validation_timeout=300")
        budget = ("-e", "budget_max_unavailable=%s" % options.budget)
        for name, machine_type, extra in (("serial (kops' order)", "t3.large", ()),
                                          ("parallel (budget %s)" % options.budget, "t3.xlarge", budget)):
            rolling_fleet.change_machine_type(service, machine_type)
            if extra:
                check = playbook(*common, *extra, "--check")
                print("\ncheck mode, %s:" % name)
                print("\n".join(line for line in check["lines"] if line.startswith(("Schedule", "  "))))
            since = time.monotonic()
            result = playbook(*common, *extra, "-e", "progress_file=%s" % (workdir / ("%s.log" % machine_type)))
            wall = time.monotonic() - since
            peak = rolling_fleet.peak_unavailable(server.node_availability_record(), nodes, since, time.monotonic())
            replaced = sum(1 for s in result["steps"] if s["phase"] == "terminate")
            rows.append((name, wall, result["steps"][-1]["elapsed"], replaced, peak))
            print("%s: %d instances replaced, %.1fs (log %s)" % (name, replaced, wall, workdir / ("%s.log" % machine_type)),
                  flush=True)
    finally:
        fleet.stop() if fleet.is_alive() else None
        server.stop()
        moto.stop()
    allowed = int(options.budget) if options.budget.isdigit() else None
    print("\n| run | ansible-playbook wall | roll (module's log) | instances replaced | peak unavailable |")
    print("|---|---|---|---|---|")
    for name, wall, roll, replaced, peak in rows:
        print("| %s | %.1f s | %.1f s | %d | %d of %s |" % (name, wall, roll, replaced, peak, options.budget))
    print("\nspeed-up: %.2fx wall, %.2fx roll" % (rows[0][1] / rows[1][1], rows[0][2] / rows[1][2]))
    if allowed is not None:
        over = [r for r in rows if r[4] > allowed]
        if over:
            raise SystemExit("peak unavailable over the budget: %s" % over)


if __name__ == "__main__":
    main()
