"""Benchmarks of cluster_update on moto (run by hand, not in the test suite).

    .venv/bin/python bench/aws_update.py

(a) no-op reconcile of a 2-IG and a 22-IG cluster: wall time of the whole
    update_cluster.yml run (median of 3) and the API requests one no-op makes;
(b) target terraform render of the same two clusters (update_cluster.yml, median of 3);
(c) render of a 200-IG cluster in-process: wall time and peak Python memory.
The model covers every kind in kops' fixtures (network, firewall, IAM, etcd
volumes, load balancers, launch templates, autoscaling groups, lifecycle hooks,
NTH queue and rules); per-group objects are part of these figures.
"""

from __future__ import annotations

import collections
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates  # noqa: E402
from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import AwsCloud  # noqa: E402
from tests import servers  # noqa: E402

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
MOTO_AMI = "ami-1e749f67"  # moto ships it; it knows no Canonical image for the channel's name


def make_cluster(store, name, groups):
    service = clusters.ClusterService(store)
    service.execute(service.plan_create({
        "cluster_name": name, "cloud_provider": "aws", "zones": ZONES[:1] if groups == 2 else ZONES,
        "control_plane_zones": ZONES[:1] if groups == 2 else ZONES, "networking": "cni",
        "kubernetes_version": "v1.34.2", "image": MOTO_AMI}))
    existing = len(service.read(name)[1])
    for index in range(groups - existing):
        group = {"metadata": {"name": "extra-%03d" % index}, "spec": {"role": "Node", "machineType": "t3.medium",
                                                                      "image": MOTO_AMI}}
        service.execute(service.plan_instance_group(name, group))
    return service


def count_noop_requests(service, name):
    calls = collections.Counter()

    class Counting(AwsCloud):
        def client(self, service):
            client = AwsCloud.client(self, service)
            if not getattr(client, "_bench_counted", False):
                client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
                client._bench_counted = True
            return client

    updates.apply_direct(service, name, False, Counting)
    return sum(calls.values())


def playbook_median(args, runs=3):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"),
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
    env.pop("PYTHONPATH", None)
    times = []
    for _run in range(runs):
        started = time.monotonic()
        proc = subprocess.run([str(pathlib.Path(sys.executable).parent / "ansible-playbook"),
                               str(REPO / "playbooks" / "update_cluster.yml")] + args,
                              env=env, capture_output=True, text=True, check=False)
        times.append(time.monotonic() - started)
        if proc.returncode:
            raise SystemExit(proc.stdout + proc.stderr)
    return statistics.median(times)


def main():
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = "file://%s/state" % tmp
            for groups in (2, 22):
                name = "bench%d.example.com" % groups
                service = make_cluster(store, name, groups)
                updates.apply_direct(service, name, False, AwsCloud)  # create
                requests = count_noop_requests(service, name)
                noop = playbook_median(["-e", "state_store=" + store, "-e", "cluster_name=" + name])
                render = playbook_median(["-e", "state_store=" + store, "-e", "cluster_name=" + name,
                                          "-e", "target=terraform", "-e", "out_dir=%s/tf%d" % (tmp, groups)])
                print("%2d IGs: no-op update_cluster.yml %.2f s (median of 3), %d API requests; "
                      "terraform render %.2f s" % (groups, noop, requests, render))
            service = make_cluster(store, "bench200.example.com", 200)
            tracemalloc.start()
            started = time.monotonic()
            updates.render_terraform(service, "bench200.example.com", "%s/tf200" % tmp, dry_run=False)
            elapsed = time.monotonic() - started
            peak = tracemalloc.get_traced_memory()[1]
            print("200 IGs: terraform render in-process %.2f s, peak Python memory %.1f MiB" % (elapsed, peak / 2**20))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
