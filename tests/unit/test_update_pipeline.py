"""One update pipeline (updates.Update): whatever the target, the instance groups are completed once and the model is
built once; the target is the one step that varies (docs/architecture.md, issue 30)."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.driver import AwsDriver

MOTO_AMI = "ami-1e749f67"
CLUSTER = "pipe.example.com"


@pytest.fixture
def service(aws, tmp_path):
    service = clusters.ClusterService("file://%s/state" % tmp_path)
    service.execute(service.plan_create({"cluster_name": CLUSTER, "cloud_provider": "aws", "networking": "cni",
                                         "kubernetes_version": "v1.34.2", "zones": ["us-east-1a"], "image": MOTO_AMI}))
    return service


@pytest.fixture
def counted(monkeypatch):
    """{what: calls} of the group completion and the model during one run."""
    calls = {"completed group": 0, "model": 0}

    def count(what, function):
        def wrapper(*args, **kwargs):
            calls[what] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(populate, "populate_instance_group_spec",
                        count("completed group", populate.populate_instance_group_spec))
    monkeypatch.setattr(AwsDriver, "build_tasks", count("model", AwsDriver.build_tasks))
    return calls


TARGETS = {
    "check mode": lambda service, out: updates.apply_direct(service, CLUSTER, True),
    "direct": lambda service, out: updates.apply_direct(service, CLUSTER, False),
    "terraform": lambda service, out: updates.render_terraform(service, CLUSTER, str(out), False),
    "cloudformation": lambda service, out: updates.render_cloudformation(service, CLUSTER, str(out), False),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_target_completes_the_groups_once_and_builds_the_model_once(service, counted, target, tmp_path):
    groups = service.read(CLUSTER)[1]
    TARGETS[target](service, tmp_path)
    assert counted == {"completed group": len(groups), "model": 1}


def test_the_groups_the_stages_get_are_the_completed_ones(service):
    completed, groups = updates.load_completed(service, CLUSTER)
    stored = {g["metadata"]["name"]: g for g in service.read(CLUSTER)[1]}
    assert sorted(g["metadata"]["name"] for g in groups) == sorted(stored)
    for group in groups:
        assert group == populate.populate_instance_group_spec(completed, stored[group["metadata"]["name"]])
        assert group["spec"]["kubelet"] and group["spec"]["manager"]  # what only completion gives


def test_a_target_the_driver_does_not_render_is_refused_before_anything_is_written(service, tmp_path, monkeypatch):
    monkeypatch.setattr(AwsDriver, "targets", ("direct", "terraform"))
    before = sorted(p for p in service.store.list(""))
    with pytest.raises(updates.UpdateError, match="target=cloudformation: a AWS cluster applies directly or renders "
                                                  "as terraform"):
        updates.render_cloudformation(service, CLUSTER, str(tmp_path), False)
    assert sorted(service.store.list("")) == before and not (tmp_path / "kubernetes.json").exists()
