"""The collection as a user gets it: the built tarball installed into a fresh collections path, its
playbooks run by FQCN from an unrelated directory with no ansible.cfg, every path given relative.

Files must land in that directory (where ansible-playbook was started), never in the installed
collection, whose playbooks/ directory is where Ansible runs modules and lookups.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

import boto3
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.integration.conftest import BIN, REPO, ansible_env

MOTO_AMI = "ami-1e749f67"  # one of the AMIs moto ships
CLUSTER_OPTIONS = {
    "cluster_name": "front.example.com",
    "cloud_provider": "aws",
    "zones": ["us-east-1a"],
    "networking": "cni",
    "kubernetes_version": "v1.34.2",
    "image": MOTO_AMI,
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The collection root inside a fresh collections path, installed from the tarball galaxy builds."""
    work = tmp_path_factory.mktemp("galaxy")
    env = ansible_env(work / "collections")
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(work), str(REPO)],
                           capture_output=True, text=True, check=False, env=env)
    assert build.returncode == 0, build.stderr
    tarball = next(work.glob("kubeops-kops-*.tar.gz"))
    install = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--offline",
                              "-p", str(work / "collections"), str(tarball)],
                             capture_output=True, text=True, check=False, env=env)
    assert install.returncode == 0, install.stderr
    root = work / "collections" / "ansible_collections" / "kubeops" / "kops"
    assert not root.is_symlink() and (root / "playbooks" / "create_cluster.yml").is_file()
    return root


@pytest.fixture
def user(installed, tmp_path):
    """run(playbook, *args, json_output=True) from an unrelated working directory, as a user would."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    no_config = tmp_path / "empty.cfg"  # outside cwd: no project ansible.cfg, Ansible's own defaults
    no_config.write_text("")

    def run(name, *args, json_output=True):
        env = ansible_env(installed.parents[2])
        env["ANSIBLE_CONFIG"] = str(no_config)
        # Python's bytecode caches are not the collection writing files; keep them out of the comparison.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if json_output:
            env["ANSIBLE_CALLBACK_PLUGINS"] = str(REPO / "tests" / "integration" / "callback_plugins")
            env["ANSIBLE_STDOUT_CALLBACK"] = "test_json"
        proc = subprocess.run([str(BIN / "ansible-playbook"), "kubeops.kops." + name, *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        if not json_output:
            return proc.returncode, proc.stdout + proc.stderr
        try:
            return proc.returncode, json.loads(proc.stdout)
        except ValueError:
            raise AssertionError("ansible-playbook printed no JSON:\n%s\n%s" % (proc.stdout, proc.stderr))

    run.cwd = cwd
    return run


def _files(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _result(run, task_name):
    for play in run["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == task_name:
                return task["hosts"]["localhost"]
    raise AssertionError("no task %r in run" % task_name)


def _ssh_public_key():
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode() + " admin\n"


def test_create_get_replace_update_from_another_directory(aws, installed, user):
    cwd = user.cwd
    (cwd / "my-cluster.yml").write_text(yaml.safe_dump({"state_store": "file://state",
                                                        "cluster_options": CLUSTER_OPTIONS}))
    (cwd / "admin.pub").write_text(_ssh_public_key())
    collection_before = _files(installed)

    code, run = user("create_cluster", "-e", "@my-cluster.yml", "-e", "target=terraform", "-e", "out_dir=tf-create",
                     "-e", "ssh_public_key_file=admin.pub")
    assert code == 0, run
    assert (cwd / "state" / "front.example.com" / "config").is_file()
    assert (cwd / "state" / "front.example.com" / "pki" / "ssh" / "public" / "admin").is_dir()
    assert 'resource "aws_vpc" "front-example-com"' in (cwd / "tf-create" / "kubernetes.tf").read_text()
    warnings = [w for play in run["plays"] for task in play["tasks"] for host in task["hosts"].values()
                for w in host.get("warnings", []) if "no instance can read" in w]
    assert len(warnings) == 1, warnings  # said once, by cluster_update, naming the store
    assert "file://%s" % (cwd / "state") in warnings[0]

    code, run = user("get_cluster", "-e", "state_store=file://state", "-e", "cluster_name=front.example.com",
                     "-e", "output=front.yaml")
    assert code == 0, run
    documents = list(yaml.safe_load_all((cwd / "front.yaml").read_text()))
    assert [d["kind"] for d in documents] == ["Cluster", "InstanceGroup", "InstanceGroup"]

    for document in documents:
        if document["metadata"]["name"] == "nodes-us-east-1a":
            document["spec"]["maxSize"] = 3
    (cwd / "front.yaml").write_text(yaml.safe_dump_all(documents))
    code, run = user("replace_cluster", "-e", "state_store=file://state", "-e", "spec_file=front.yaml")
    assert code == 0, run
    assert _result(run, "Replace the cluster spec with front.yaml")["changed_paths"] == ["instancegroup/nodes-us-east-1a"]

    update = ["-e", "state_store=file://state", "-e", "cluster_name=front.example.com"]
    code, run = user("update_cluster", *update, "-e", "target=terraform", "-e", "out_dir=tf")
    assert code == 0, run
    assert "max_size              = 3" in (cwd / "tf" / "kubernetes.tf").read_text()

    code, run = user("update_cluster", *update, "--check", "--diff")
    assert code == 0, run
    preview = _result(run, "Update the cluster with target direct")
    assert preview["changed"] is True and preview["summary"]["create"] > 20, preview["summary"]
    ec2 = boto3.client("ec2", region_name="us-east-1")
    owned = [{"Name": "tag:KubernetesCluster", "Values": ["front.example.com"]}]
    assert ec2.describe_vpcs(Filters=owned)["Vpcs"] == []

    code, run = user("update_cluster", *update)
    assert code == 0, run
    applied = _result(run, "Update the cluster with target direct")
    # The preview's count is what the apply then did.
    assert applied["summary"] == preview["summary"]
    assert applied["lines"][-1] == preview["lines"][-1]
    assert len(ec2.describe_vpcs(Filters=owned)["Vpcs"]) == 1

    assert _files(installed) == collection_before
    written = sorted(p.name for p in cwd.iterdir())
    assert written == ["admin.pub", "front.yaml", "my-cluster.yml", "state", "tf", "tf-create"]


def test_get_cluster_prints_readable_yaml_without_a_config(user):
    (user.cwd / "c.yml").write_text(yaml.safe_dump({"state_store": "file://state", "cluster_options": CLUSTER_OPTIONS}))
    assert user("create_cluster", "-e", "@c.yml")[0] == 0
    code, text = user("get_cluster", "-e", "state_store=file://state", "-e", "cluster_name=front.example.com",
                      "-e", "format=yaml", json_output=False)
    assert code == 0, text
    assert "\nkind: InstanceGroup\n" in text and "\n  role: Node\n" in text, text
    code, text = user("get_cluster", "-e", "state_store=file://state", "-e", "cluster_name=front.example.com",
                      json_output=False)
    assert code == 0, text
    assert "\nInstance Groups\nNAME                            ROLE            MACHINETYPE     MIN     MAX     ZONES\n" \
        "control-plane-us-east-1a        ControlPlane    t3.medium       1       1       us-east-1a\n" in text, text


def test_typo_in_cluster_options_fails_with_the_closest_name(user):
    (user.cwd / "c.yml").write_text(yaml.safe_dump({"state_store": "file://state", "cluster_options": dict(
        CLUSTER_OPTIONS, node_counts=3)}))
    code, text = user("create_cluster", "-e", "@c.yml", json_output=False)
    assert code != 0
    assert "did you mean node_count" in text, text
    assert "Traceback" not in text
    assert not (user.cwd / "state").exists()


@pytest.mark.parametrize("args, message", [
    (["-e", "state_store=mystate"], "use s3://mystate for an S3 bucket"),
    (["-e", "state_store=file://state", "-e", "cluster_name=front.example.com", "-e", "zones=us-east-1a"],
     "move cluster_name, zones under it"),
    (["-e", "state_store=file://state", "-e", "target=terraform", "-e", "out_dir=c.yml"], "is a file"),
])
def test_bad_run_variables_fail_with_one_line(user, args, message):
    (user.cwd / "c.yml").write_text(yaml.safe_dump({"cluster_options": CLUSTER_OPTIONS}))
    options = [] if "cluster_name=front.example.com" in args else ["-e", "@c.yml"]
    code, text = user("create_cluster", *options, *args, json_output=False)
    assert code != 0
    assert message in text, text
    assert "Traceback" not in text
    assert sorted(p.name for p in user.cwd.iterdir()) == ["c.yml"]


def test_check_mode_previews_a_new_cluster_and_its_cloud(aws, user):
    """create_cluster.yml --check with target direct: the store and the cloud planned in memory, nothing written."""
    cwd = user.cwd
    (cwd / "my-cluster.yml").write_text(yaml.safe_dump({"state_store": "file://state",
                                                        "cluster_options": CLUSTER_OPTIONS}))
    code, run = user("create_cluster", "-e", "@my-cluster.yml", "-e", "target=direct", "--check", "--diff")
    assert code == 0, run
    report = _result(run, "Report")["msg"]
    assert "would be written (check mode)" in report
    preview = _result(run, "Apply the cluster (direct)")
    assert preview["summary"]["create"] > 20 and preview["summary"]["delete"] == 0
    assert "+ aws_vpc (1): front.example.com" in preview["lines"]
    assert preview["lines"][-1].startswith("Plan: %d to create" % preview["summary"]["create"])
    # Printed once: with --diff the plan is the diff, and the report of it is skipped.
    assert preview["diff"]["after"] == "\n".join(preview["lines"]) + "\n"
    assert _result(run, "Report the update").get("skipped") is True
    assert len(preview["lines"]) < 40  # a new cluster's preview fits a screen: creates counted by kind
    assert not (cwd / "state").exists()
    ec2 = boto3.client("ec2", region_name="us-east-1")
    assert ec2.describe_vpcs(Filters=[{"Name": "tag:KubernetesCluster", "Values": ["front.example.com"]}])["Vpcs"] == []
