"""What update writes for the nodes: keysets when missing, one nodeup config per group, and a bootstrap token
only where the bootstrap service cannot verify workers (GCE)."""

from __future__ import annotations

import hashlib

import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

from tests.unit.nodeconfig.test_config import _case, _cloud
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate


def _setup(tmp_path, case="minimal-aws"):
    cluster, groups = _case(case)
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    store = layout.ClusterStore(vfs.open_store("file://%s" % tmp_path), completed["metadata"]["name"])
    return store, completed, groups


def test_first_update_creates_everything_second_changes_nothing(tmp_path):
    store, completed, groups = _setup(tmp_path)
    changes, hashes = nodeup_store.node_files(store, completed, groups)
    paths = [p for p, _data in changes]
    assert "pki/private/kubernetes-ca/keyset.yaml" in paths
    assert "igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml" in paths
    assert "igconfig/node/nodes/nodeupconfig.yaml" in paths
    written = dict(changes)
    assert hashes["nodes"] == hashlib.sha256(written["igconfig/node/nodes/nodeupconfig.yaml"]).hexdigest()
    store.apply(changes)
    again, again_hashes = nodeup_store.node_files(store, completed, groups)
    assert [p for p, data in again if store.read(p) != data] == []
    assert again_hashes == hashes


def test_aws_workers_have_no_token_and_no_store_secret(tmp_path):
    store, completed, groups = _setup(tmp_path)
    changes, _hashes = nodeup_store.node_files(store, completed, groups)
    written = dict(changes)
    # the only addon: the node labeller's RBAC (every AWS and GCE cluster), no token nor its addon
    assert [p for p in written if p.startswith("secrets/") or p.startswith("addons/")] == [node_labeller_addon.PATH]
    worker = yaml.safe_load(written["igconfig/node/nodes/nodeupconfig.yaml"])
    assert "kubeletBootstrap" not in worker["kubeops"] and worker["kubeops"]["bootstrapService"]["server"]
    master = yaml.safe_load(written["igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml"])
    assert "enableBootstrapTokenAuth" not in master["APIServerConfig"]["KubeAPIServer"]  # as kops


def test_gce_token_is_a_kubernetes_bootstrap_token_bound_to_this_cluster_only(tmp_path):
    store, completed, groups = _setup(tmp_path, "minimal_gce")
    changes, _hashes = nodeup_store.node_files(store, completed, groups)
    written = dict(changes)
    name = completed["metadata"]["name"]
    token = nodeup_store.secret_value(written["secrets/kubelet-bootstrap-token"])
    token_id, _sep, secret = token.partition(".")
    assert len(token_id) == 6 and len(secret) == 16 and token.replace(".", "").isalnum()
    documents = list(yaml.safe_load_all(written[nodeup_store.BOOTSTRAP_ADDON_PATH]))
    # The API server's BootstrapGroupPattern has no dots: the cluster name's are dashes, else every kubelet that
    # presents the token is refused ("invalid bearer token", seen on real hosts by tests/realk8s/test_metal.py).
    group = "system:bootstrappers:kubeops:%s" % name.replace(".", "-")
    assert "." in name and nodeup_config.BOOTSTRAP_GROUP_PATTERN.match(group)
    assert documents[0]["stringData"]["auth-extra-groups"] == group
    approve = next(d for d in documents if d["metadata"]["name"] == "kubeops:node-autoapprove-bootstrap")
    assert approve["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]
    worker_path = next(p for p in written if p.startswith("igconfig/node/"))
    worker = yaml.safe_load(written[worker_path])
    assert token not in written[worker_path].decode()  # the node reads the secret
    assert worker["kubeops"]["kubeletBootstrap"] == {"tokenSecret": "kubelet-bootstrap-token", "group": group}
    master_path = next(p for p in written if p.startswith("igconfig/control-plane/"))
    master = yaml.safe_load(written[master_path])
    assert master["APIServerConfig"]["KubeAPIServer"]["enableBootstrapTokenAuth"] is True


def test_a_rotated_ca_changes_the_config_hash(tmp_path):
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    store, completed, groups = _setup(tmp_path)
    changes, hashes = nodeup_store.node_files(store, completed, groups)
    store.apply(changes)
    rotated = keystore.add_keypair(keystore.load(store, "kubernetes-ca"))
    store.apply([(keystore.path("kubernetes-ca"), keystore.dump(rotated))])
    _changes, after = nodeup_store.node_files(store, completed, groups)
    assert after["nodes"] != hashes["nodes"]


def test_the_bootstrap_group_is_one_the_api_server_accepts():
    for name, group in (("k8s.example.com", "system:bootstrappers:kubeops:k8s-example-com"),
                        ("Metal.K8s.Local", "system:bootstrappers:kubeops:metal-k8s-local"),
                        ("simple", "system:bootstrappers:kubeops:simple")):
        assert nodeup_config.bootstrap_group(name) == group
        assert nodeup_config.BOOTSTRAP_GROUP_PATTERN.match(group)
