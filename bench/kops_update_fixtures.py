"""kops' AWS and GCE update_cluster fixtures, run through the modules a user runs (by hand, not in the test suite).

    .venv/bin/python bench/kops_update_fixtures.py [--only NAME[,NAME...]] [--json FILE]

KOPS_SOURCE (default /work/kops-src) is a kops checkout; its tests/integration/update_cluster/*/in-v1alpha2.yaml
are the inputs.  For each AWS or GCE fixture with a single kubernetes.tf:

  1. kubeops.kops.cluster with the fixture's objects as definition and force: true (kops replace --force),
  2. kubeops.kops.cluster_update with target: terraform (kops update cluster --target terraform),

both on an s3:// state store on moto's server (tests/moto_server.py, on 127.0.0.1), offline for everything else:
cloud_lookup false and the cloud facts of kops' own test harness (pkg/testutils/integrationtestharness.go: the
shared VPC, its three subnets and egress-only gateway, the three hosted zones).  Then it compares, per fixture:

  - a refusal (either module failed): its one-line reason;
  - the resources (type + name) of our kubernetes.tf against the fixture's: matched, missing (kops has, we
    don't), extra (we have, kops doesn't), and of the matched, how many bodies are equal (HCL parsed, quoting
    normalised);
  - the completed spec we wrote to the store (cluster-completed.spec) against the one kops writes (the fixture's
    data/*_cluster-completed.spec_content, where kops keeps one), YAML-equal or not.

It prints one table row per fixture and the totals.  --json writes the per-fixture figures (with the names of
the missing and extra resources and the differing bodies) for a before/after diff.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import pathlib
import re
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

import boto3  # noqa: E402
from ansible.module_utils.common import warnings as ansible_warnings  # noqa: E402
from ansible.module_utils.testing import patch_module_args  # noqa: E402

from tests import servers  # noqa: E402
from tests.conformance import kops_fixtures  # noqa: E402

HARNESS_FACTS, GCE_HARNESS_FACTS = kops_fixtures.HARNESS_FACTS, kops_fixtures.GCE_HARNESS_FACTS
CLOUDS = ("aws", "gce")
KEEP = os.environ.get("KOPS_FIXTURES_KEEP")  # a directory to keep each fixture's output in (out_dir/<fixture>)
BUCKET = "testingBucket"  # kops' Terraform output names its test store (memfs://) so


def fixtures(root, only=None):
    """(name, directory) of the AWS and GCE fixtures with an in-v1alpha2.yaml and one kubernetes.tf."""
    found = []
    for directory in sorted(root.iterdir()):
        spec = directory / "in-v1alpha2.yaml"
        if not spec.is_file() or not (directory / "kubernetes.tf").is_file():
            continue
        if only and directory.name not in only:
            continue
        cluster = kops_fixtures.fixture_cluster(directory)
        if (cluster.get("spec") or {}).get("cloudProvider") in CLOUDS or only:
            found.append((directory.name, directory))
    return found


def unpinned_etcd_versions(cluster):
    """The etcd versions the spec names that the collection has no sha256 for."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import etcd_assets
    pinned = set(etcd_assets.pinned_versions())
    versions = {str(e.get("version") or "").lstrip("v") for e in (cluster.get("spec") or {}).get("etcdClusters") or []}
    return sorted(v for v in versions if v and v not in pinned)


def run_module(module, **args):
    """One module run in-process through AnsibleModule, as ansible runs it: its JSON result."""
    out = io.StringIO()
    ansible_warnings._global_warnings.clear()  # ansible keeps a module's warnings in the process
    with patch_module_args(dict(args, _ansible_check_mode=False, _ansible_diff=False)):
        with contextlib.redirect_stdout(out):
            try:
                module.main()
            except SystemExit:
                pass
            except Exception as exc:  # noqa: BLE001 - a crash is a finding; it is reported, never hidden
                return {"failed": True, "msg": "CRASH %s: %s" % (type(exc).__name__, exc)}
    try:
        return json.loads(out.getvalue())
    except ValueError:
        return {"failed": True, "msg": "no JSON from the module: %r" % out.getvalue()[:200]}


# kops' harness resolves the image to this AMI (integrationtestharness.go); we render the aws_ami data source,
# which Terraform resolves to it.  Counted equal, so that launch templates compare on everything else.
HARNESS_IMAGE = ((re.compile(r"^\$\{data\.aws_ami\.[^.]+\.id\}$"), "ami-12345678"),
                 (re.compile(r"^\$\{data\.aws_ami\.[^.]+\.root_device_name\}$"), "/dev/xvda"))


def resources(directory):
    """{type.name: body} of directory's kubernetes.tf (tests/conformance/kops_fixtures.py, the one loader)."""
    return kops_fixtures.fixture_resources(directory, HARNESS_IMAGE)


def reason(result):
    """A refusal in one line: the module's message, with its first problem when the message only leads in."""
    message = " ".join(str(result.get("msg")).split("\n", maxsplit=1)[0].split())
    problems = result.get("errors") or []
    if problems and message.endswith(":"):
        message += " " + " ".join(str(problems[0]).split())
    return message[:240]


def run_fixture(name, directory, server, s3):
    from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
    from ansible_collections.kubeops.kops.plugins.modules import cluster_update as update_module

    text = (directory / "in-v1alpha2.yaml").read_text()
    cluster = kops_fixtures.fixture_cluster(directory)
    cluster_name = cluster["metadata"]["name"]
    # The store where kops' test keeps it (its memfs:// configBase, which its Terraform output names as
    # the bucket testingBucket), so that the store objects' bucket and keys compare.
    config_base = (cluster.get("spec") or {}).get("configBase") or "memfs://clusters.example.com/" + cluster_name
    prefix = config_base.split("://", 1)[1].rstrip("/")
    prefix = prefix[:-len(cluster_name)].rstrip("/") if prefix.endswith("/" + cluster_name) else prefix
    server.reset()
    s3.create_bucket(Bucket=BUCKET)
    store = "s3://%s/%s" % (BUCKET, prefix)
    facts = dict(HARNESS_FACTS if (cluster.get("spec") or {}).get("cloudProvider") != "gce" else GCE_HARNESS_FACTS)
    unpinned = unpinned_etcd_versions(cluster)
    if unpinned:
        # The user-given path (cloud_facts.etcd_sha256) for an etcd version we do not pin (minimal-etcd's 3.6.99 is
        # no real release): placeholder digests, so that the run never reaches for github.com; said in the table.
        facts["etcd_sha256"] = {v: {"amd64": "0" * 64, "arm64": "0" * 64} for v in unpinned}
    common = dict(state_store=store, cloud_facts=facts, cloud_lookup=False)
    theirs = resources(directory)
    row = {"fixture": name, "kops": len(theirs), "refused": None, "matched": 0, "missing": sorted(theirs),
           "extra": [], "bodies_equal": 0, "bodies_differ": [], "spec_equal": None, "warnings": [],
           "kops_spec": kops_fixtures.completed_spec(directory) is not None,
           "note": "etcd %s sha256 given (placeholder)" % ", ".join(unpinned) if unpinned else ""}
    result = run_module(cluster_module, definition=text, force=True, **common)
    row["warnings"] += result.get("warnings", [])
    if result.get("failed"):
        row["refused"] = "cluster: " + reason(result)
        return row
    with tempfile.TemporaryDirectory(prefix="kops-fixture-") as scratch:
        out_dir = os.path.join(KEEP, name) if KEEP else scratch
        key = directory / "id_rsa.pub"
        extra = {"ssh_public_key": key.read_text().strip()} if key.is_file() else {}
        result = run_module(update_module, cluster_name=cluster_name, target="terraform", out_dir=out_dir,
                            **dict(common, **extra))
        row["warnings"] += result.get("warnings", [])
        if result.get("failed"):
            row["refused"] = "cluster_update: " + reason(result)
            return row
        ours = resources(pathlib.Path(out_dir))
        written = kops_fixtures.completed_spec(pathlib.Path(out_dir))  # Terraform writes it as a store object's data
    row["matched"] = len(set(ours) & set(theirs))
    row["missing"] = sorted(set(theirs) - set(ours))
    row["extra"] = sorted(set(ours) - set(theirs))
    row["bodies_differ"] = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
    row["field_diffs"] = {k: sorted(f for f in set(ours[k]) | set(theirs[k]) if ours[k].get(f) != theirs[k].get(f))
                          for k in row["bodies_differ"]}
    row["bodies_equal"] = row["matched"] - len(row["bodies_differ"])
    expected = kops_fixtures.completed_spec(directory)
    if expected is not None:
        row["spec_equal"] = written == expected
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--only", help="comma-separated fixture names")
    parser.add_argument("--json", help="write the per-fixture figures here")
    parser.add_argument("--verbose", action="store_true", help="list missing/extra resources and differing bodies")
    args = parser.parse_args()
    os.environ.setdefault("KOPS_SOURCE", "/work/kops-src")
    try:
        root = kops_fixtures.source_update_cluster(required=True)
    except RuntimeError as error:
        raise SystemExit(str(error))
    only = set(args.only.split(",")) if args.only else None
    os.environ.setdefault("KUBEOPS_BOOT_WHEELHOUSE", str(REPO / "build" / "boot-wheels"))
    # On a loaded machine moto takes longer than the test suite's 20 s to come up.
    servers.wait_for = functools.partial(servers.wait_for, timeout=180)
    server = servers.MotoServer().start()
    try:
        for key in servers.AMBIENT_AWS_ENV + ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL_S3"):
            os.environ.pop(key, None)
        os.environ.update(servers.AWS_TEST_ENV, AWS_ENDPOINT_URL=server.url, AWS_CONFIG_FILE=os.devnull,
                          AWS_SHARED_CREDENTIALS_FILE=os.devnull)
        s3 = boto3.client("s3", region_name="us-east-1")
        rows = [run_fixture(name, directory, server, s3) for name, directory in fixtures(root, only)]
    finally:
        server.stop()
    report(rows, args.verbose)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1, sort_keys=True))


def report(rows, verbose):
    print("%-44s %5s %7s %7s %5s %6s %5s  %s" % ("fixture", "kops", "matched", "missing", "extra", "bodies", "spec",
                                                 "refusal"))
    for row in rows:
        spec = {None: "-", True: "equal", False: "differ"}[row["spec_equal"]]
        print("%-44s %5d %7d %7d %5d %6d %5s  %s" % (row["fixture"], row["kops"], row["matched"], len(row["missing"]),
                                                     len(row["extra"]), row["bodies_equal"], spec,
                                                     row["refused"] or row["note"]))
        if verbose:
            for label in ("missing", "extra", "bodies_differ"):
                for item in row[label]:
                    fields = row.get("field_diffs", {}).get(item)
                    print("    %-13s %s%s" % (label, item, " (%s)" % ", ".join(fields) if fields else ""))
    refused = [r for r in rows if r["refused"]]
    specs = [r for r in rows if r["spec_equal"] is not None]
    print()
    print("fixtures %d, refused %d" % (len(rows), len(refused)))
    print("kops resources %d: matched %d, missing %d; extra %d; bodies equal %d of %d matched"
          % (sum(r["kops"] for r in rows), sum(r["matched"] for r in rows), sum(len(r["missing"]) for r in rows),
             sum(len(r["extra"]) for r in rows), sum(r["bodies_equal"] for r in rows),
             sum(r["matched"] for r in rows)))
    print("completed spec YAML-equal: %d of %d compared (kops keeps one in %d fixtures; the runs of the others "
          "were refused)"
          % (sum(1 for r in specs if r["spec_equal"]), len(specs), sum(1 for r in rows if r["kops_spec"])))


if __name__ == "__main__":
    main()
