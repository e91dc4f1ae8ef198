"""Serial against parallel rolling update on moto and a real kube-apiserver (run by hand, not in the test suite).

    cd /work/main && PYTHONPATH=build/collections:. ANSIBLE_COLLECTIONS_PATH=build/collections \\
        ANSIBLE_CONFIG=ansible.cfg .venv/bin/python bench/rolling_parallel.py \\
        [--groups 4] [--size 5] [--budget 4] [--boot 2] [--interval 1]

Needs the real Kubernetes components built (`make k8s-binaries`, into /var/cache/kubeops-kops/k8s); without them it
stops and says so.

A cluster of `groups` node groups of `size` nodes (each group's spec.rollingUpdate: maxSurge 1, maxUnavailable 1)
on moto's server, and a real etcd + kube-apiserver + kube-controller-manager (tests/realk8s/apiserver.py
RealKubeAPIServer) serving with and trusting the cluster's kubernetes-ca, as
tests/integration/test_rolling_update.py starts it: the roll mints its admin certificate from the state store.
tests/integration/rolling_fleet.py's Fleet plays what no process runs here: the kubelets (a Node per running
instance, Ready `boot` seconds after it appears; pods reported Running, evicted pods removed once stopped), the
scheduler, the DaemonSet controller and the cloud controller.  Per group an app of 3 pods (a ReplicaSet, on that
group's nodes) behind a PodDisruptionBudget (maxUnavailable 1): kube-controller-manager makes the pods and keeps
the budget's status, so the API server refuses evictions (429) while an app misses a pod.  Each run changes the
machine type of every group and rolls the node groups with rolling_update.yml:

- serial: kops' order, the node groups one after the other (no budget);
- parallel: the same groups under budget_max_unavailable = `budget`, side by side.

It prints the API server's start time, the check-mode schedule of the parallel run, then per run the wall time of
ansible-playbook, the roll's own time (the last step of its log), the instances replaced, the roll's Kubernetes API
requests (its admin certificate's, from the API server's audit log; writes among them) and the peak unavailable:
from a watch on Nodes (rolling_fleet.NodeWatch), at every Node change, the node groups' desired size less their
Ready, schedulable Nodes (rolling_fleet.peak_unavailable), as the budget test measures it.  It fails if a run's
peak is over the budget.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

import pytest  # noqa: E402  (its MonkeyPatch points boto3 at moto as the tests' fixture does)

from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore  # noqa: E402
from tests import servers  # noqa: E402
from tests.integration import rolling_fleet  # noqa: E402
from tests.integration.conftest import BIN, ansible_env, task_results  # noqa: E402
from tests.realk8s import apiserver, binaries  # noqa: E402

PLAYBOOK = REPO / "playbooks" / "rolling_update.yml"
TASK = "Rolling update of %s" % rolling_fleet.CLUSTER
ADMIN = "admin"  # the user of the certificate the roll mints from the cluster's CA (kube/credentials.py)
REPLICAS = 3
READ_VERBS = ("get", "list", "watch")


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


def wait_settled(server, groups, seconds=180):
    """Until every app's budget counts its REPLICAS pods healthy and allows one disruption (the ReplicaSets made
    their pods, the Fleet bound and ran them on Ready Nodes, the disruption controller updated the budgets)."""
    deadline = time.monotonic() + seconds
    while True:
        statuses = {}
        for group in groups:
            try:
                budget = server.get("policy/v1", "PodDisruptionBudget", "app-%s" % group, namespace="default")
            except apiserver.ApiError as exc:
                if exc.status != 404:
                    raise
                budget = {}
            status = budget.get("status") or {}
            statuses[group] = (status.get("currentHealthy"), status.get("disruptionsAllowed"))
        if all(s == (REPLICAS, 1) for s in statuses.values()):
            return
        if time.monotonic() > deadline:
            raise SystemExit("the apps did not settle within %ds (currentHealthy, disruptionsAllowed): %s"
                             % (seconds, statuses))
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--budget", default="4")
    parser.add_argument("--boot", type=float, default=2.0, help="seconds from an instance's launch to its Node Ready")
    parser.add_argument("--interval", type=int, default=1, help="rolling_update's interval (kops' default is 15)")
    options = parser.parse_args()

    build = binaries.cached_build()
    if build is None:
        raise SystemExit("the real Kubernetes components are not built: run `make k8s-binaries` "
                         "(hack/k8s_binaries.py; Go and the Go module proxy needed)")
    environment = pytest.MonkeyPatch()
    moto = servers.MotoServer().start()
    servers.point_aws_at(moto.url, environment)
    environment.delenv("KOPS_STATE_STORE", raising=False)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="bench-rolling-"))
    store = "file://%s" % (workdir / "state")
    server = fleet = watch = None
    nodes = options.groups * options.size
    rows = []
    try:
        started = time.monotonic()
        service = rolling_fleet.make_cluster(store, options.groups, options.size,
                                             {"maxSurge": 1, "maxUnavailable": 1})
        print("cluster of %d node groups x %d nodes built on moto in %.0fs" % (
            options.groups, options.size, time.monotonic() - started), flush=True)
        ca = keystore.primary(keystore.load(service.cluster_store(rolling_fleet.CLUSTER), "kubernetes-ca"))
        server = apiserver.RealKubeAPIServer(ca=ca, build=build).start()
        print("kube-apiserver %s with the cluster's CA at %s: started in %.1fs" % (
            server.version, server.url, server.start_seconds), flush=True)
        fleet = rolling_fleet.Fleet(server, boot=options.boot, replicas=REPLICAS)
        watch = rolling_fleet.NodeWatch(server)
        watch.start()
        started = time.monotonic()
        fleet.sync()
        fleet.start()
        wait_settled(server, rolling_fleet.node_group_names(options.groups))
        print("%d Nodes Ready, %d apps of %d pods running behind their budgets in %.1fs" % (
            len(fleet.registered), options.groups, REPLICAS, time.monotonic() - started), flush=True)
        common = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % rolling_fleet.CLUSTER,
                  "-e", "api_server=%s" % server.url, "-e", "instance_group_roles=Node",
                  "-e", "interval=%d" % options.interval, "-e", "post_drain_delay=0", "-e", "validate_count=1",
                  "-e", "validate_retry_interval=1", "-e", "validate_recheck_interval=0",
                  "-e", "drain_timeout=300", "-e", "validation_timeout=300")
        budget = ("-e", "budget_max_unavailable=%s" % options.budget)
        for name, machine_type, extra in (("serial (kops' order)", "t3.large", ()),
                                          ("parallel (budget %s)" % options.budget, "t3.xlarge", budget)):
            rolling_fleet.change_machine_type(service, machine_type)
            if extra:
                check = playbook(*common, *extra, "--check")
                print("\ncheck mode, %s:" % name)
                print("\n".join(line for line in check["lines"] if line.startswith(("Schedule", "  "))))
            wait_settled(server, rolling_fleet.node_group_names(options.groups))
            log = workdir / ("%s.log" % machine_type)
            mark = server.audit_mark()
            since = time.monotonic()
            result = playbook(*common, *extra, "-e", "progress_file=%s" % log)
            until = time.monotonic()
            requests = server.requests_since(mark, users=[ADMIN])
            writes = sum(1 for verb, _uri, _code, _user in requests if verb not in READ_VERBS)
            peak = rolling_fleet.peak_unavailable(list(watch.record), nodes, since, until)
            replaced = sum(1 for s in result["steps"] if s["phase"] == "terminate")
            rows.append((name, until - since, result["steps"][-1]["elapsed"], replaced, len(requests), writes, peak))
            print("%s: %d instances replaced, %.1fs (log %s)" % (name, replaced, until - since, log), flush=True)
        changes = len(watch.record)
    finally:
        for part in (fleet, watch):
            if part is not None and part.is_alive():
                part.stop()
        if server is not None:
            server.stop()
        moto.stop()
        environment.undo()
    print("\n%d Node changes watched" % changes)
    print("\n| run | ansible-playbook wall | roll (module's log) | instances replaced | Kubernetes API requests "
          "(writes) | peak unavailable |")
    print("|---|---|---|---|---|---|")
    for name, wall, roll, replaced, requests, writes, peak in rows:
        print("| %s | %.1f s | %.1f s | %d | %d (%d) | %d of %s |" % (
            name, wall, roll, replaced, requests, writes, peak, options.budget))
    print("\nspeed-up: %.2fx wall, %.2fx roll" % (rows[0][1] / rows[1][1], rows[0][2] / rows[1][2]))
    allowed = int(options.budget) if options.budget.isdigit() else None
    if allowed is not None:
        over = [r for r in rows if r[6] > allowed]
        if over:
            raise SystemExit("peak unavailable over the budget: %s" % over)


if __name__ == "__main__":
    main()
