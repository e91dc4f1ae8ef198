"""The state store's own calls under faults (issue 31, "Store calls that misreport"): lost answers to the store's
DELETEs on s3:// through tests/faults.py's fault proxy, and file-system errors of a file:// store.

A lost answer: the call lands in moto, the client gets a 500, botocore retries, and the retry finds the object
gone (S3 answers a conditional DELETE of a missing key 404).  The delete asked for is done; it must not read as
"changed by another run", nor a lease released by this run as "taken over"."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import boto3
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, revisions
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import history, layout, vfs

from tests.integration.conftest import BIN, REPO, ansible_env, task_results

PLAYBOOKS = REPO / "playbooks"
NAME = "store-faults.example.com"
OPTIONS = {"cluster_name": NAME, "cloud_provider": "aws", "networking": "cni", "zones": ["us-east-1a"],
           "kubernetes_version": "v1.34.2", "image": "ami-1e749f67"}
BUCKET = "kops-state-store-faults"
CONFLICT_WORDS = ("changed by another run", "taken over")


def _bucket(faults):
    client = boto3.client("s3", region_name="us-east-1", endpoint_url=faults.plain_url)
    client.create_bucket(Bucket=BUCKET)
    return client


def _keys(client, suffix):
    return [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET).get("Contents", []) if o["Key"].endswith(suffix)]


def _lost(faults):
    return [operation for _when, operation, outcome in faults.log() if outcome == "lost"]


def test_lost_answers_to_the_journal_and_lease_deletes_are_not_conflicts(faults, playbook, tmp_path):
    client = _bucket(faults)
    store = "state_store=s3://%s/state" % BUCKET
    run = dict(cwd=tmp_path)
    journal, lease = "s3:DeleteObject:/.kubeops-journal", "s3:DeleteObject:/.kubeops-lease"

    # A first create: its journal's DELETE lands, the answer is lost.
    faults.set_rules(lose={journal: 1, lease: 1})
    code, created = playbook(PLAYBOOKS / "create_cluster.yml", "-e", store, "-e", json.dumps({"cluster_options": OPTIONS}),
                             **run)
    assert _lost(faults) == [journal, lease]
    result = task_results(created, "Write the cluster spec to the state store")
    assert code == 0 and result["changed"] is True, result
    assert not any(word in json.dumps(created) for word in CONFLICT_WORDS)
    assert _keys(client, ".kubeops-journal") == [] and _keys(client, ".kubeops-lease") == []

    # The git loop on it: each replace's journal and lease DELETE answers lost; the same file replaced twice.
    assert playbook(PLAYBOOKS / "get_cluster.yml", "-e", store, "-e", "cluster_name=" + NAME, "-e", "output=c.yaml",
                    **run)[0] == 0
    spec_file = tmp_path / "c.yaml"
    for number, cidr in ((2, "10.0.0.0/8"), (3, "10.1.0.0/16")):
        documents = list(yaml.safe_load_all(spec_file.read_text()))
        documents[0]["spec"]["sshAccess" if number == 2 else "kubernetesApiAccess"] = [cidr]
        spec_file.write_text(yaml.safe_dump_all(documents))
        faults.set_rules(lose={journal: 1, lease: 1})
        code, replaced = playbook(PLAYBOOKS / "replace_cluster.yml", "-e", store, "-e", "spec_file=c.yaml", **run)
        result = task_results(replaced, "Replace the cluster spec with c.yaml")
        assert _lost(faults) == [journal, lease]
        assert code == 0 and result["revision"] == str(number), result
        assert not any(word in json.dumps(replaced) for word in CONFLICT_WORDS), result
    assert _keys(client, ".kubeops-journal") == [] and _keys(client, ".kubeops-lease") == []


# The store's own objects a replace writes or deletes, beside the spec: each call's answer lost once.
STORE_CALLS = ["s3:PutObject:/.kubeops-lease", "s3:DeleteObject:/.kubeops-lease",
               "s3:PutObject:/.kubeops-journal", "s3:DeleteObject:/.kubeops-journal",
               "s3:PutObject:/" + history.INDEX, "s3:PutObject:/" + history.SNAPSHOT % 2,
               "s3:PutObject:/config", "s3:GetObject:/" + history.INDEX]


@pytest.mark.parametrize("call", STORE_CALLS)
def test_a_lost_answer_to_any_one_store_call_the_replace_succeeds(faults, call):
    client = _bucket(faults)
    url = "s3://%s/state" % BUCKET
    service = clusters.ClusterService(url)
    service.execute(service.plan_create(dict(OPTIONS)))
    cluster, groups = service.read(NAME)
    edited = revisions.annotate(dict(cluster, spec=dict(cluster["spec"], sshAccess=["10.0.0.0/8"])), "1")
    faults.set_rules(lose={call: 1})
    run = clusters.ClusterService(url)
    run.execute(run.plan_replace(objects.load_objects(objects.dump_objects([edited] + groups))))
    assert _lost(faults) == [call]
    assert not run.notes, run.notes
    after = clusters.ClusterService(url)
    assert after.read(NAME)[0]["spec"]["sshAccess"] == ["10.0.0.0/8"] and str(after.revision(NAME)) == "2"
    assert _keys(client, ".kubeops-journal") == [] and _keys(client, ".kubeops-lease") == []


def _namespace_command():
    """A private mount namespace for the test's own tmpfs (root: unshare --mount; else a user namespace), or None."""
    if not shutil.which("unshare"):
        return None
    command = ["unshare", "--mount", "--propagation", "private"] if os.geteuid() == 0 else \
        ["unshare", "--map-root-user", "--mount"]
    probe = subprocess.run(command + ["sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True,
                           check=False)
    return command if probe.returncode == 0 else None


def test_a_read_only_or_full_file_store_fails_in_one_line_naming_it(tmp_path):
    """A real read-only and a real full file system (a tmpfs of the test's own, in a private mount namespace, so
    nothing outlives the test): replace_cluster.yml fails in one line naming the store and the fix."""
    command = _namespace_command()
    if command is None:
        pytest.skip("no private mount namespace here (unshare --mount): the unit tests cover these errors")
    mount = tmp_path / "fs"
    mount.mkdir()
    state = mount / "state"
    spec_file = tmp_path / "c.yaml"
    env = ansible_env(REPO / "build" / "collections")
    env.update(ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_STDOUT_CALLBACK="test_json")
    playbook = "%s %%s -e state_store=file://%s" % (BIN / "ansible-playbook", state)
    script = "\n".join([
        "set -e",
        "mount -t tmpfs -o size=1m tmpfs %s" % mount,
        "%s -e '%s' > /dev/null" % (playbook % (PLAYBOOKS / "create_cluster.yml"), json.dumps({"cluster_options": OPTIONS})),
        "%s -e cluster_name=%s -e output=c.yaml > /dev/null" % (playbook % (PLAYBOOKS / "get_cluster.yml"), NAME),
        "sed -i 's/- 0.0.0.0\\/0/- 10.0.0.0\\/8/' c.yaml",
        "mount -o remount,ro %s" % mount,
        "%s -e spec_file=c.yaml > read-only.json || true" % (playbook % (PLAYBOOKS / "replace_cluster.yml")),
        "mount -o remount,rw %s" % mount,
        "dd if=/dev/zero of=%s/filler bs=4096 2> /dev/null || true" % mount,
        "%s -e spec_file=c.yaml > full.json || true" % (playbook % (PLAYBOOKS / "replace_cluster.yml")),
    ])
    done = subprocess.run(command + ["sh", "-c", script], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert spec_file.exists() and not list(mount.iterdir())  # the tmpfs is gone with the namespace
    store = "state store file://%s: writing %s/.kubeops-lease failed: " % (state, NAME)
    for name, expected in (("read-only.json", "Read-only file system; the file system holding %s is mounted "
                                              "read-only: remount it read-write or give a state_store on a writable "
                                              "file system" % state),
                           ("full.json", "No space left on device; the file system holding %s is full: free space on "
                                         "it or give a state_store elsewhere" % state)):
        result = task_results(json.loads((tmp_path / name).read_text()), "Replace the cluster spec with c.yaml")
        assert result["failed"] is True and result["msg"] == store + expected, result["msg"]


def test_file_system_errors_name_the_store_the_object_and_the_fix(tmp_path, monkeypatch):
    """The same errors injected (any machine): the temporary file's name and a bare [Errno n] never reach the user."""
    import errno
    store = vfs.open_store("file://%s" % (tmp_path / "state"))
    store.write("c/config", b"old")
    real_open = os.open

    for code, fix in ((errno.EROFS, "mounted read-only"), (errno.ENOSPC, "is full"), (errno.EACCES, "may not write"),
                      (errno.EIO, None)):
        def failing_open(path, flags, *args, code=code):
            if flags & os.O_CREAT:
                raise OSError(code, os.strerror(code), path)
            return real_open(path, flags, *args)

        monkeypatch.setattr(os, "open", failing_open)
        with pytest.raises(vfs.StoreError) as failed:
            layout.ClusterStore(vfs.open_store(store.base_url), "c").apply([("config", b"new")])
        monkeypatch.setattr(os, "open", real_open)
        message = str(failed.value)
        assert message.startswith("state store file://%s: writing c/.kubeops-lease failed: %s"
                                  % (tmp_path / "state", os.strerror(code))), message
        assert (fix is None) == (failed.value.fix is None) and (fix is None or fix in message)
        assert ".tmp-" not in message and "Errno" not in message and "\n" not in message
        assert pathlib.Path(tmp_path / "state" / "c" / "config").read_bytes() == b"old"
