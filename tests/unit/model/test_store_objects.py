"""State-store files as aws_s3_object resources: kops' names and keys, content in data/ files."""

from __future__ import annotations

import re

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.engine import terraform
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import store_objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.conformance import kops_fixtures
from tests.unit.model.test_aws_model import _tasks

CASES = ["minimal-aws", "ha", "existing_iam", "minimal-dns-none", "shared_vpc", "complex", "privatecalico"]
OBJECT = re.compile(r'resource "aws_s3_object" "([^"]+)" \{\n  bucket += "([^"]+)"\n  content += file\("\$\{path.module\}/'
                    r'data/aws_s3_object_([^"]+)_content"\)\n  key += "([^"]+)"')
# What this collection writes to the store; kops' addon manifests, etcd-manager manifests, its
# apiserver-healthcheck static pod and its channels manifest have no counterpart here (docs/aws-model.md).
OURS = re.compile(r"^(cluster-completed\.spec|kops-version\.txt|etcd-cluster-spec-.*|nodeupconfig-.*)$")


def _objects(case):
    completed, _tasks_list = _tasks(case)
    name = completed["metadata"]["name"]
    text = (kops_fixtures.UPDATE_CLUSTER / case / "kubernetes.tf").read_text()
    kops = {m[2]: (m[0], m[1], m[3]) for m in OBJECT.findall(text)}
    prefix = next(iter(kops.values()))[2].split("/" + name + "/")[0]
    config_base = "s3://%s/%s/%s" % (next(iter(kops.values()))[1], prefix, name)
    vfs.reset_memfs()
    cluster_store = layout.ClusterStore(vfs.open_store("memfs://%s" % case), name)
    from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
    import yaml
    directory = kops_fixtures.UPDATE_CLUSTER / case
    _cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    node_changes, _hashes = nodeup_store.node_files(cluster_store, completed, groups)
    files = [(p, d) for p, d in updates.managed_files(completed) + node_changes
             if p not in (nodeup_store.BOOTSTRAP_ADDON_PATH, node_labeller_addon.PATH)]  # our own addons
    tasks = {}
    covered = store_objects.build_store_objects(name, config_base, files, tasks)
    return kops, tasks, covered, files


@pytest.mark.parametrize("case", CASES)
def test_names_keys_and_data_files_are_kops(case):
    kops, tasks, covered, files = _objects(case)
    ours = {t.name: t for t in tasks.values()}
    assert set(ours) == {n for n in kops if OURS.match(n)}
    for name, task in ours.items():
        resource_name, bucket, key = kops[name]
        body = task.render_terraform()
        assert (task.terraform_name, body["bucket"], body["key"]) == (resource_name, bucket, key)
        assert task.data_file() == "data/aws_s3_object_%s_content" % name
    assert not any(p.startswith(("pki/", "secrets/")) for p in covered)
    data = dict(terraform.data_files(list(tasks.values())))
    assert len(data) == len(ours) and all(isinstance(v, bytes) and v for v in data.values())


def test_only_s3_stores_render_objects():
    kops, _tasks_, _covered, files = _objects("minimal-aws")
    tasks = {}
    assert store_objects.build_store_objects("minimal-aws.example.com", "file:///srv/kops/minimal-aws.example.com",
                                             files, tasks) == [] and tasks == {}


def test_secret_holding_files_are_never_objects():
    assert store_objects.object_name("c", "secrets/kubelet-bootstrap-token") is None
    assert store_objects.object_name("c", "pki/private/kubernetes-ca/keyset.yaml") is None
    assert store_objects.object_name("c", "addons/bootstrap-channel.yaml") == "c-addons-bootstrap"
    assert store_objects.object_name("c", "addons/coredns.addons.k8s.io/k8s-1.12.yaml") == \
        "c-addons-coredns.addons.k8s.io-k8s-1.12"
