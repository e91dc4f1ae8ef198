"""Benchmark of the kubeops.kops.kops inventory against amazon.aws.aws_ec2 on the same moto data (run by hand).

    python3.11 -m venv /tmp/inventory-bench-venv && /tmp/inventory-bench-venv/bin/pip install ansible boto3
    .venv/bin/python bench/inventory.py [--groups 100] [--per-group 50] [--runs 3]

The fleet is kops' shape (tests/integration/test_inventory.py _fleet): a private cluster with a bastion, one
launch template and one autoscaling group per instance group, instances tagged as kops tags them.  Each tool
runs `ansible-inventory --list` as a user would: cold (no cache) and cached (jsonfile cache, warmed once).
amazon.aws comes from the PyPI `ansible` package in its own venv (--aws-ec2-venv), never from the project's
requirements.  Prints the median of --runs runs per case and our time over aws_ec2's.
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

from tests import servers  # noqa: E402
from tests.integration.test_inventory import FLEET, _fleet  # noqa: E402

AWS_EC2_CONFIG = """plugin: amazon.aws.aws_ec2
regions: [us-east-1]
filters:
  tag:KubernetesCluster: {cluster}
  instance-state-name: running
hostnames: [private-ip-address]
compose:
  ansible_host: private_ip_address
keyed_groups:
  - key: tags['kops.k8s.io/instancegroup']
    prefix: ig
  - key: placement.availability_zone
    prefix: zone
cache: {cache}
cache_plugin: ansible.builtin.jsonfile
cache_connection: {cache_dir}
"""
KOPS_CONFIG = """plugin: kubeops.kops.kops
state_store: {store}
cluster_name: {cluster}
cache: {cache}
cache_plugin: ansible.builtin.jsonfile
cache_connection: {cache_dir}
"""


def run_inventory(binary, config, env, expected):
    started = time.monotonic()
    proc = subprocess.run([str(binary), "-i", str(config), "--list"], env=env, capture_output=True, text=True,
                          check=False)
    elapsed = time.monotonic() - started
    if proc.returncode:
        raise SystemExit("%s failed:\n%s" % (config, proc.stderr))
    hosts = len(json.loads(proc.stdout)["_meta"]["hostvars"])
    if hosts != expected:
        raise SystemExit("%s listed %d hosts, expected %d" % (config, hosts, expected))
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--per-group", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--aws-ec2-venv", default="/tmp/inventory-bench-venv")
    args = parser.parse_args()
    other_bin = pathlib.Path(args.aws_ec2_venv) / "bin" / "ansible-inventory"
    if not other_bin.exists():
        raise SystemExit("no %s: install the PyPI ansible package there (see this file's docstring)" % other_bin)
    expected = args.groups * args.per_group
    moto = servers.MotoServer().start()
    try:
        env = dict(os.environ, AWS_ENDPOINT_URL=moto.url, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                   AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                   KOPS_AWS_READ_TIMEOUT="900", ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true",
                   ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_LOCALHOST_WARNING="false")
        env.pop("PYTHONPATH", None)
        os.environ.update({k: env[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")})
        work = pathlib.Path(tempfile.mkdtemp(prefix="kops-inventory-bench-"))
        store = "file://%s" % (work / "state")
        started = time.monotonic()
        _fleet(store, groups=args.groups, per_group=args.per_group)
        print("fleet: %d instances in %d groups on moto, built in %.0f s" % (expected, args.groups,
                                                                             time.monotonic() - started), flush=True)
        (work / "aws_ec2.cfg").write_text("[defaults]\n")  # defaults only: not the project's ansible.cfg
        ours_env = dict(env, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"),
                        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
        tools = {"kubeops.kops.kops": (pathlib.Path(sys.executable).parent / "ansible-inventory", KOPS_CONFIG,
                                       "x.kops.yml", ours_env),
                 "amazon.aws.aws_ec2": (other_bin, AWS_EC2_CONFIG, "x.aws_ec2.yml", dict(env, ANSIBLE_CONFIG=str(work / "aws_ec2.cfg")))}
        medians = {}
        for tool, (binary, template, filename, tool_env) in tools.items():
            for case in ("cold", "cached"):
                folder = work / ("%s-%s" % (tool, case))
                folder.mkdir()
                config = folder / filename
                config.write_text(template.format(cluster=FLEET, store=store, cache=str(case == "cached").lower(),
                                                  cache_dir=folder / "cache"))
                if case == "cached":
                    run_inventory(binary, config, tool_env, expected)  # warm the cache
                times = [run_inventory(binary, config, tool_env, expected) for _run in range(args.runs)]
                medians[(tool, case)] = statistics.median(times)
                runs = ", ".join("%.2f" % t for t in times)
                print("%-20s %-6s median %6.2f s  (runs: %s)" % (tool, case, medians[(tool, case)], runs), flush=True)
        for case in ("cold", "cached"):
            print("%s: kubeops.kops.kops / amazon.aws.aws_ec2 = %.2f" % (
                case, medians[("kubeops.kops.kops", case)] / medians[("amazon.aws.aws_ec2", case)]))
    finally:
        moto.stop()


if __name__ == "__main__":
    main()
