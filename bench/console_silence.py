"""The longest console silence of a create, a roll and a delete of a many-group cluster on moto (issue 31's goal:
10 s at most; run by hand, not in the test suite).  14 node groups by default: moto's DescribeLaunchTemplates
answers at most 15 of the templates it is asked for by id (AWS answers all), so a roll of more groups fails on moto
naming a template it did not return.

    cd /work/main && PYTHONPATH=build/collections:. ANSIBLE_COLLECTIONS_PATH=build/collections \\
        ANSIBLE_CONFIG=ansible.cfg .venv/bin/python bench/console_silence.py [--groups 14] [--interval 15s]

update_cluster.yml creates the cluster (a stored spec: one control plane, `groups` node groups of one node each),
rolling_update.yml replaces every instance after a machine-type change (cloud_only: moto runs no kubelets; kops'
default interval of 15 s after each termination, longer than the 10 s a silence may last), delete_cluster.yml
deletes it: each from a temporary directory as a user runs them, with the default stdout callback, each line of its
stdout timed on arrival (tests/integration/test_console_progress.py).  Per playbook: the task's time, its live
lines, the longest gap between two lines while the task ran, and the lines around it.
"""

from __future__ import annotations

import argparse
import copy
import tempfile

import pytest

from tests import servers
from tests.integration.test_aws_update import ADMIN_KEY, _service
from tests.integration.test_console_progress import longest_silence, streamed, task_window

CLUSTER = "k8s.example.com"


def report(name, window, prefix):
    gaps = [(later[0] - earlier[0], earlier, later) for earlier, later in zip(window, window[1:])]
    gap, before, after = max(gaps)
    live = sum(1 for _at, line in window if line.startswith(prefix))
    print("%-18s %6.1f s, %4d live lines, longest silence %4.1f s" % (name, window[-1][0] - window[0][0], live, gap))
    print("    %6.1f %s\n    %6.1f %s" % (before[0], before[1][:150], after[0], after[1][:150]))
    return longest_silence(window)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=14)
    parser.add_argument("--interval", default="15s")
    options = parser.parse_args()
    moto = servers.MotoServer().start()
    patch = pytest.MonkeyPatch()
    try:
        servers.point_aws_at(moto.url, patch)
        with tempfile.TemporaryDirectory() as work:
            store = "file://%s/state" % work
            service = _service(store)
            cluster, groups = service.read(CLUSTER)
            nodes = next(g for g in groups if g["spec"]["role"] == "Node")
            nodes["spec"]["minSize"] = nodes["spec"]["maxSize"] = 1
            for number in range(1, options.groups):
                extra = copy.deepcopy(nodes)
                extra["metadata"]["name"] = "nodes-%02d" % number
                groups.append(extra)
            service.execute(service.plan_replace([cluster] + groups))
            with open("%s/admin.pub" % work, "w", encoding="utf-8") as stream:
                stream.write(ADMIN_KEY)
            names = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER)
            silences = {}
            code, lines = streamed("update_cluster.yml", *names, "-e", "ssh_public_key_file=admin.pub", cwd=work)
            assert code == 0, "\n".join(line for _at, line in lines)
            silences["create"] = report("create", task_window(lines, "Update the cluster with target direct"),
                                        "cluster_update: ")
            cluster, groups = service.read(CLUSTER)
            for group in groups:
                group["spec"]["machineType"] = "t3.large"
            service.execute(service.plan_replace([cluster] + groups))
            code, lines = streamed("update_cluster.yml", *names, cwd=work)
            assert code == 0, "\n".join(line for _at, line in lines)
            code, lines = streamed("rolling_update.yml", *names, "-e", "cloud_only=true",
                                   "-e", "interval=%s" % options.interval, cwd=work)
            assert code == 0, "\n".join(line for _at, line in lines)
            silences["roll"] = report("roll (%d groups)" % (options.groups + 1),
                                      task_window(lines, "Rolling update of %s" % CLUSTER), "rolling_update: ")
            code, lines = streamed("delete_cluster.yml", *names, "-e", "confirm_cluster_name=%s" % CLUSTER, cwd=work)
            assert code == 0, "\n".join(line for _at, line in lines)
            silences["delete"] = report("delete", task_window(lines, "Delete cluster %s" % CLUSTER),
                                        "cluster_delete: ")
            print("longest silences: %s" % ", ".join("%s %.1f s" % item for item in silences.items()))
    finally:
        patch.undo()
        moto.stop()


if __name__ == "__main__":
    main()
