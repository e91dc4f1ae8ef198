"""Small clusters against kops: the three cases a user waits on, on the same moto, medians of 3 (run by hand).

    .venv/bin/python bench/small_cluster.py            # ours, with the breakdown
    KOPS_BIN=/path/to/kops .venv/bin/python bench/small_cluster.py   # and kops side by side

The cluster: 2 instance groups (one control plane, one node group, one zone), networking cni, as kops' 1.15 s /
1.93 s / 0.64 s figures of issue 18 were measured.

(a) no-op: update_cluster.yml (target direct) on a cluster that exists;  kops update cluster --yes
(b) first create: create_cluster.yml -e target=direct on an empty account;  kops create cluster --yes
(c) render: update_cluster.yml -e target=terraform (spec -> kubernetes.tf);  kops update cluster --target terraform

Each run is a fresh ansible-playbook (as a user runs it), after one warm-up run (the tarball cache, the nodes'
wheels and the collection's bytecode are then in place, as on every run but a machine's first).  The modules run in
the task's worker (plugin_utils/in_process.py); KUBEOPS_IN_PROCESS=0 in the environment times Ansible's packaged
run.  The breakdown, each in a fresh process where a run pays it: Ansible's start-up (a one-task playbook), module
packaging (AnsiballZ, the playbook's modules), the module's imports, the boto3 clients of an update, the addons'
YAML, the collection tarball (cached, as a run gets it).
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from tests import servers  # noqa: E402

BIN = pathlib.Path(sys.executable).parent
MOTO_AMI = "ami-1e749f67"  # moto ships it; it knows no Canonical image for the channel's name
NAME = "small.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "image": MOTO_AMI}
KOPS_FIGURES = {"no-op": 1.15, "first create": 1.93, "render": 0.64}  # issue 18, measured with kops on moto
RUNS = 3


def _env():
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"),
               ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
    env.pop("PYTHONPATH", None)
    # As on a user's machine: the modules run in the task's worker from the collection's files, whose bytecode
    # Python caches in __pycache__ after the first run (this development machine's shell sets the variable).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


CPU = {}  # case -> [CPU seconds of the run's processes (user + system), ...]: what a loaded machine does not inflate


def _timed(command, cwd, env=None, case=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(command, cwd=cwd, env=env or _env(), capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit("%s failed:\n%s\n%s" % (" ".join(command), proc.stdout[-3000:], proc.stderr[-2000:]))
    if case:
        CPU.setdefault(case, []).append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed


def playbook(name, *args):
    return [str(BIN / "ansible-playbook"), str(REPO / "playbooks" / name)] + list(args)


def ours(server, work):
    """{case: [seconds, ...]} of our playbooks."""
    options = work / "options.yml"
    options.write_text(json.dumps({"cluster_options": OPTIONS}))
    times = {"no-op": [], "first create": [], "render": []}
    for run in range(RUNS + 1):  # the first run warms the caches (tarball, wheels), as any earlier run would
        server.reset()
        store = "state_store=file://%s/state%d" % (work, run)
        create = _timed(playbook("create_cluster.yml", "-e", "@%s" % options, "-e", store, "-e", "target=direct"), work,
                        case="first create" if run else None)
        noop = _timed(playbook("update_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME), work,
                      case="no-op" if run else None)
        render = _timed(playbook("update_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME, "-e",
                                 "target=terraform", "-e", "out_dir=%s/tf%d" % (work, run)), work,
                        case="render" if run else None)
        if run:
            times["first create"].append(create)
            times["no-op"].append(noop)
            times["render"].append(render)
    return times


def kops(server, work, binary):
    """{case: [seconds, ...]} of kops' own commands on the same moto (KOPS_BIN)."""
    times = {"no-op": [], "first create": [], "render": []}
    env = dict(os.environ)
    for run in range(RUNS):
        server.reset()
        store = "file://%s/kops-state%d" % (work, run)
        base = [binary, "--state", store]
        times["first create"].append(_timed(base + ["create", "cluster", "--name", NAME, "--zones", "us-east-1a",
                                                    "--networking", "cni", "--kubernetes-version", "v1.34.2",
                                                    "--image", MOTO_AMI, "--yes"], work, env))
        times["no-op"].append(_timed(base + ["update", "cluster", "--name", NAME, "--yes"], work, env))
        times["render"].append(_timed(base + ["update", "cluster", "--name", NAME, "--target", "terraform",
                                              "--out", "%s/kops-tf%d" % (work, run)], work, env))
    return times


def _python(code, repeat=RUNS, compiled=True):
    """Median seconds a snippet reports (it prints its own CPU time: a loaded machine inflates wall time, not CPU
    time) in fresh interpreters; compiled=False: no bytecode cache (as a module run from Ansible's zip)."""
    env = dict(os.environ, PYTHONPATH="%s:%s" % (REPO / "build" / "collections", REPO))
    if not compiled:
        env.update(PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="bench-pycache-"), PYTHONDONTWRITEBYTECODE="1")
    values = []
    for _run in range(repeat):
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                              check=False)
        if proc.returncode:
            raise SystemExit(proc.stderr)
        values.append(float(proc.stdout.strip().splitlines()[-1]))
    return statistics.median(values)


def breakdown(work):
    parts = {}
    trivial = work / "trivial.yml"
    trivial.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: {msg: hi}\n")
    parts["Ansible start-up (a one-task playbook), wall"] = statistics.median(
        _timed([str(BIN / "ansible-playbook"), str(trivial)], work, case="start-up") for _run in range(RUNS))
    parts["Ansible start-up (a one-task playbook), CPU"] = statistics.median(CPU.pop("start-up"))
    parts["module packaging (AnsiballZ of create's two modules; paid only when a module runs the normal way), CPU"] = _python("""
        import sys, time
        from ansible.plugins.loader import init_plugin_loader, module_loader
        init_plugin_loader()
        from ansible.executor.module_common import modify_module
        from ansible.template import Templar
        started = time.process_time()
        for name in ("kubeops.kops.cluster", "kubeops.kops.cluster_update"):
            path = module_loader.find_plugin(name)
            modify_module(module_name=name, module_path=path, module_args={}, templar=Templar(loader=None),
                          task_vars={"ansible_python_interpreter": sys.executable})
        print(time.process_time() - started)
    """)
    parts["imports (cluster_update's layers, bytecode cached: a module run in the worker), CPU"] = _python("""
        import time
        started = time.process_time()
        from ansible_collections.kubeops.kops.plugins.modules import cluster_update  # noqa
        from ansible_collections.kubeops.kops.plugins.module_utils import updates, clusters  # noqa
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws  # noqa
        print(time.process_time() - started)
    """)
    parts["imports (cluster_update's layers, nothing byte-compiled: an upper bound of a run from Ansible's zip), CPU"] = _python("""
        import time
        started = time.process_time()
        from ansible_collections.kubeops.kops.plugins.modules import cluster_update  # noqa
        from ansible_collections.kubeops.kops.plugins.module_utils import updates, clusters  # noqa
        from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws import driver as aws  # noqa
        print(time.process_time() - started)
    """, compiled=False)
    parts["boto3 clients (an update's 8, a session each, one botocore loader, models from the user cache: aws_models.py), CPU"] = _python("""
        import os, time
        os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y")
        from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
        aws.require_boto3()
        started = time.process_time()
        for service in ("ec2", "iam", "autoscaling", "elbv2", "route53", "sqs", "events", "s3"):
            aws.session("us-east-1").client(service)
        print(time.process_time() - started)
    """)
    parts["the same, a botocore loader per session (before), CPU"] = _python("""
        import time, boto3
        started = time.process_time()
        for service in ("ec2", "iam", "autoscaling", "elbv2", "route53", "sqs", "events", "s3"):
            boto3.session.Session(region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y").client(service)
        print(time.process_time() - started)
    """)
    parts["addons' YAML (the bootstrap channel: imports and render), CPU"] = _python("""
        import time
        from ansible_collections.kubeops.kops.plugins.module_utils import clusters
        service = clusters.ClusterService("memfs://bench")
        service.execute(service.plan_create(%r))
        cluster, groups = service.read(%r)
        completed = service.validate(cluster, groups)
        started = time.process_time()
        from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
        channel.render(completed, groups, account_id="123456789012")
        print(time.process_time() - started)
    """ % (OPTIONS, NAME))
    parts["collection tarball (cached: a run's cost), CPU"] = _python("""
        import time
        started = time.process_time()
        from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts
        boot_artifacts.collection_tarball(%r)
        print(time.process_time() - started)
    """ % str(REPO))
    return {k: v for k, v in parts.items() if v is not None}


def main():
    if sys.argv[1:] == ["--breakdown"]:
        work = pathlib.Path(tempfile.mkdtemp(prefix="bench-small-"))
        try:
            for part, seconds in breakdown(work).items():
                print("- %s: %.2f s" % (part, seconds))
        finally:
            shutil.rmtree(str(work), ignore_errors=True)
        return
    server = servers.MotoServer().start()
    os.environ.update(servers.AWS_TEST_ENV)
    os.environ["AWS_ENDPOINT_URL"] = server.url
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-small-"))
    try:
        measured = ours(server, work)
        theirs = kops(server, work, os.environ["KOPS_BIN"]) if os.environ.get("KOPS_BIN") else None
        _table(measured, theirs)
        parts = breakdown(work)
    finally:
        try:
            server.stop()
        except subprocess.TimeoutExpired:  # a loaded machine: moto is killed by servers' own clean-up
            server.process.kill()
        shutil.rmtree(str(work), ignore_errors=True)
    print()
    print("Breakdown (medians of %d, each in a fresh process):" % RUNS)
    for part, seconds in parts.items():
        print("- %s: %.2f s" % (part, seconds))


def _table(measured, theirs):
    print("| case (2 groups) | kops | ours, wall (median of %d) | ratio | ours, CPU of the run |" % RUNS)
    print("|---|---|---|---|---|")
    for case, values in measured.items():
        mine = statistics.median(values)
        reference = statistics.median(theirs[case]) if theirs else KOPS_FIGURES[case]
        source = "" if theirs else " (issue 18)"
        print("| %s | %.2f s%s | %.2f s (%s) | %.1fx | %.2f s |" % (
            case, reference, source, mine, ", ".join("%.2f" % v for v in values), mine / reference,
            statistics.median(CPU[case])))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
