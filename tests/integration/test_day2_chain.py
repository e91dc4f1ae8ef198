"""Issue 10's "tried as a user would": create -> update -> change the machine type -> rolling update -> validate ->
delete, each step a playbook of the installed collection (ansible-galaxy build + install, run by name from an
unrelated directory), on moto's server, with the Kubernetes side on a real kube-apiserver (tests/realk8s/apiserver.py)
serving with and trusting the cluster's CA.  A neighbour cluster in the same account and store is counted object by
object before and after (test_delete_cluster.inventory: plain boto3 by tags, not the code under test).

moto launches, tags and reports an autoscaling group's version of its template as AWS does through
tests/moto_server.py; it has no kubelets (test_rolling_update.Kubelets registers a Ready Node per running instance
and removes a terminated one's, as the cloud controller would).
"""

from __future__ import annotations

import time

import boto3
import pytest
import yaml

from tests.integration.conftest import task_results
from tests.integration.test_aws_update import ADMIN_KEY, MOTO_AMI
from tests.integration.test_delete_cluster import create, inventory
from tests.integration.test_installed_collection import installed, user  # noqa: F401 pylint: disable=unused-import
from tests.integration.test_rolling_update import CLUSTER, CP_ASG, NODES_ASG, Kubelets, _members

NEIGHBOUR = "neighbour.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2", "image": MOTO_AMI, "node_count": 2}


def _ok(code, run, task):
    result = task_results(run, task)
    assert code == 0, (task, result.get("msg"), result.get("log"))
    return result


def test_create_update_change_roll_validate_delete_leaves_nothing_and_the_neighbour_untouched(
        aws, user, start_real_kube_api):  # noqa: F811
    pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
    from ansible_collections.kubeops.kops.plugins.module_utils import clusters
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

    started = time.monotonic()
    cwd = user.cwd
    store = "file://%s" % (cwd / "state")
    create(store, NEIGHBOUR)
    neighbour = inventory(NEIGHBOUR)
    neighbour_files = clusters.ClusterService(store).store.list(NEIGHBOUR + "/")
    assert len(neighbour) > 20
    (cwd / "my-cluster.yml").write_text(yaml.safe_dump({"state_store": store, "cluster_options": OPTIONS}))
    (cwd / "admin.pub").write_text(ADMIN_KEY)
    run_args = ("-e", "state_store=%s" % store, "-e", "cluster_name=%s" % CLUSTER)
    steps = {}

    def step(name, playbook, *args):
        began = time.monotonic()
        code, run = user(playbook, *args)
        steps[name] = round(time.monotonic() - began, 1)
        return code, run

    # create
    code, run = step("create", "create_cluster", "-e", "@my-cluster.yml", "-e", "target=direct",
                     "-e", "ssh_public_key_file=admin.pub")
    assert _ok(code, run, "Apply the cluster (direct)")["changed"] is True
    created = inventory(CLUSTER)
    assert len(created) > 20 and len(_members(NODES_ASG)) == 2 and len(_members(CP_ASG)) == 1

    # update: nothing to do
    code, run = step("update (no-op)", "update_cluster", *run_args)
    assert _ok(code, run, "Update the cluster with target direct")["changed"] is False

    # change the machine type as a user does: export the YAML, edit it, replace, update
    code, run = step("get", "get_cluster", *run_args, "-e", "output=%s.yaml" % CLUSTER)
    assert code == 0, run
    documents = list(yaml.safe_load_all((cwd / ("%s.yaml" % CLUSTER)).read_text()))
    for document in documents:
        if document["kind"] == "InstanceGroup":
            document["spec"]["machineType"] = "t3.large"
    (cwd / ("%s.yaml" % CLUSTER)).write_text("\n---\n".join(yaml.safe_dump(d) for d in documents))
    code, run = step("replace", "replace_cluster", "-e", "state_store=%s" % store, "-e", "spec_file=%s.yaml" % CLUSTER)
    assert code == 0, run
    code, run = step("update (machine type)", "update_cluster", *run_args)
    updated = _ok(code, run, "Update the cluster with target direct")
    assert updated["changed"] is True

    # rolling update, draining through the Kubernetes API, then validate
    service = clusters.ClusterService(store)
    server = start_real_kube_api(ca=keystore.primary(keystore.load(service.cluster_store(CLUSTER), "kubernetes-ca")))
    kubelets = Kubelets(server)
    try:
        kubelets.sync()
        kubelets.start()
        old = set(_members(NODES_ASG)) | set(_members(CP_ASG))
        api = ("-e", "api_server=%s" % server.url)
        code, run = step("rolling update", "rolling_update", *run_args, *api, "-e", "interval=0",
                         "-e", "post_drain_delay=0", "-e", "validate_retry_interval=1",
                         "-e", "validate_recheck_interval=0", "-e", "drain_timeout=60", "-e", "validation_timeout=60")
        rolled = _ok(code, run, "Rolling update of %s" % CLUSTER)
        assert rolled["changed"] is True and [g["outcome"] for g in rolled["groups"]] == ["rolled", "rolled"]
        new = set(_members(NODES_ASG)) | set(_members(CP_ASG))
        assert len(new) == 3 and not new & old
        ec2 = boto3.client("ec2", region_name="us-east-1")
        types = {i["InstanceType"] for r in ec2.describe_instances(InstanceIds=sorted(new))["Reservations"]
                 for i in r["Instances"]}
        assert types == {"t3.large"}
        code, run = step("validate", "validate_cluster", *run_args, *api)
        assert code == 0, run
        assert task_results(run, "Validate cluster %s" % CLUSTER)["failures"] == []
    finally:
        if kubelets.is_alive():
            kubelets.stop()
        server.stop()  # before the delete step: the API is not needed there

    # delete: nothing of it left, the neighbour as it was
    code, run = step("delete", "delete_cluster", *run_args, "-e", "confirm_cluster_name=%s" % CLUSTER)
    assert _ok(code, run, "Delete cluster %s" % CLUSTER)["store_deleted"] is True
    assert inventory(CLUSTER) == set()
    assert inventory(NEIGHBOUR) == neighbour
    assert clusters.ClusterService(store).store.list(NEIGHBOUR + "/") == neighbour_files
    assert not (cwd / "state" / CLUSTER).exists() or not any((cwd / "state" / CLUSTER).rglob("*"))
    print("day-2 chain on moto: %d objects created and deleted, neighbour's %d untouched; seconds per step %s, "
          "%.0f s in all" % (len(created), len(neighbour), steps, time.monotonic() - started))
