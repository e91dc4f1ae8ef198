"""The nodeup config per instance group against kops' own nodeupconfig.yaml fixtures."""

from __future__ import annotations

import copy

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.generated import asset_data
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

from tests.conformance import kops_fixtures
from tests.unit.completion.test_populate import _case, _cloud

# Keys we deliberately do not write (docs/nodeup-config.md): etcd runs from roles/protokube, not etcd-manager
# static pods, and addons are applied by roles/protokube, not by a kops-channels static pod.
NOT_WRITTEN = ("etcdManifests", "channelsManifest", "staticManifests")
# Values that come from the keystore: kops' fixtures were made with kops' test keys, ours are generated.
KEY_MATERIAL = ("CAs", "KeypairIDs")


def _completed(name):
    cluster, groups = _case(name)
    completed = populate.populate_cluster_spec(cluster, groups, _cloud(cluster))
    return completed, [populate.populate_instance_group_spec(completed, g) for g in groups]


def _keysets(completed):
    return {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}


def _expected(name, group):
    path = kops_fixtures.UPDATE_CLUSTER / name / "data" / ("aws_s3_object_nodeupconfig-%s_content" % group)
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("name, group", [
    ("minimal-aws", "master-us-test-1a"), ("minimal-aws", "nodes"),
    ("minimal_gce", "master-us-test1-a"), ("minimal_gce", "nodes"),
])
def test_matches_kops_nodeup_config(name, group):
    completed, groups = _completed(name)
    ig = next(g for g in groups if objects.name_of(g) == group)
    keysets = _keysets(completed)
    ours = config.build_config(completed, ig, keysets, completed["spec"]["configBase"])
    expected = _expected(name, group)
    kubeops = ours.pop("kubeops")
    for key in NOT_WRITTEN:
        expected.pop(key, None)
    # Workers keep the cluster CA: they bootstrap against the API server, not kops-controller's config server.
    expected_cas = set(expected["CAs"]) | ({"kubernetes-ca"} if kubeops["role"] == "Node" else set())
    assert set(ours["CAs"]) == expected_cas
    assert set(ours["KeypairIDs"]) == set(expected["KeypairIDs"])
    for key in KEY_MATERIAL:
        ours.pop(key), expected.pop(key)
    if "APIServerConfig" in expected:
        ours_keys = ours["APIServerConfig"].pop("ServiceAccountPublicKeys")
        expected["APIServerConfig"].pop("ServiceAccountPublicKeys")
        assert ours_keys.startswith("-----BEGIN RSA PUBLIC KEY-----")
    assert ours == expected
    assert kubeops["instanceGroup"] == group and kubeops["configBase"] == completed["spec"]["configBase"]


def _pem_bodies(text, label):
    import base64
    import re
    return [base64.b64decode("".join(body.split())) for body in
            re.findall(r"-----BEGIN %s-----\n(.*?)-----END %s-----" % (label, label), text, re.S)]


def test_service_account_keys_are_pkix_under_kops_label_as_kube_apiserver_reads_them():
    """kops' label, "RSA PUBLIC KEY", around a PKIX SubjectPublicKeyInfo (kops' fixture has the same); kube-apiserver's
    --service-account-key-file refused the PKCS#1 body written before (tests/realk8s/test_cluster.py found it)."""
    from cryptography.hazmat.primitives import serialization
    completed, groups = _completed("minimal-aws")
    master = next(g for g in groups if objects.name_of(g) == "master-us-test-1a")
    keysets = _keysets(completed)
    ours = config.build_config(completed, master, keysets, completed["spec"]["configBase"])
    kops = _expected("minimal-aws", "master-us-test-1a")["APIServerConfig"]["ServiceAccountPublicKeys"]
    for text in (ours["APIServerConfig"]["ServiceAccountPublicKeys"], kops):
        bodies = _pem_bodies(text, "RSA PUBLIC KEY")
        assert bodies
        for body in bodies:
            # The body IS the key's SubjectPublicKeyInfo (cryptography's loader also takes PKCS#1; Go's does not).
            key = serialization.load_der_public_key(body)
            assert body == key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    lines = ours["APIServerConfig"]["ServiceAccountPublicKeys"].splitlines()
    assert all(len(line) <= 64 for line in lines)  # PEM's 64 columns, as Go's pem.Encode


def test_every_default_asset_has_a_known_hash():
    completed, groups = _completed("minimal-aws")
    document = config.build_config(completed, groups[0], _keysets(completed), "file:///tmp/store/c")
    for arch in config.ARCHITECTURES:
        assert len(document["Assets"][arch]) == 6
        for asset in document["Assets"][arch]:
            digest, _sep, url = asset.partition("@")
            assert asset_data.SHA256[url] == digest


def test_file_repository_moves_urls_and_keeps_hashes():
    completed, groups = _completed("minimal-aws")
    mirrored = copy.deepcopy(completed)
    mirrored["spec"]["assets"] = {"fileRepository": "https://mirror.example.com/files/"}
    plain = config.build_config(completed, groups[0], _keysets(completed), "file:///s/c")["Assets"]["amd64"]
    moved = config.build_config(mirrored, groups[0], _keysets(completed), "file:///s/c")["Assets"]["amd64"]
    assert moved[0] == plain[0].split("@")[0] + "@https://mirror.example.com/files/release/v1.34.0/bin/linux/amd64/kubelet"
    assert [a.split("@")[0] for a in moved] == [a.split("@")[0] for a in plain]


def test_unknown_version_has_no_hash_so_the_node_fetches_it():
    completed, groups = _completed("minimal-aws")
    completed["spec"]["kubernetesVersion"] = "1.34.99"
    kubelet = config.build_config(completed, groups[0], _keysets(completed), "file:///s/c")["Assets"]["amd64"][0]
    assert kubelet == "https://dl.k8s.io/release/v1.34.99/bin/linux/amd64/kubelet"


def test_roles_get_what_they_need_and_workers_no_ca_keys():
    completed, groups = _completed("minimal-aws")
    keysets = _keysets(completed)
    master = next(g for g in groups if g["spec"]["role"] == objects.ROLE_CONTROL_PLANE)
    node = next(g for g in groups if g["spec"]["role"] == objects.ROLE_NODE)
    cp = config.build_config(completed, master, keysets, "s3://b/minimal-aws.example.com")
    worker = config.build_config(completed, node, keysets, "s3://b/minimal-aws.example.com")
    assert cp["kubeops"]["role"] == "ControlPlane" and worker["kubeops"]["role"] == "Node"
    assert [c["name"] for c in cp["kubeops"]["etcdClusters"]] == ["main", "events"]
    assert cp["kubeops"]["apiServer"] == {"host": "127.0.0.1", "port": 443}
    assert worker["kubeops"]["apiServer"] == {"host": "api.internal.minimal-aws.example.com", "port": 443}
    # Workers ask the bootstrap service (no token, no store secret); the control plane runs it.
    service = "https://kops-controller.internal.minimal-aws.example.com:3988"
    assert worker["kubeops"]["bootstrapService"] == {"server": service, "region": "us-test-1"}
    assert "kubeletBootstrap" not in worker["kubeops"]
    assert cp["kubeops"]["bootstrapService"] == {
        "server": service, "region": "us-test-1", "listen": ":3988", "clusterName": "minimal-aws.example.com",
        "configBase": completed["spec"]["configBase"], "nodeRoles": ["nodes.minimal-aws.example.com"],
        "caCert": "/srv/kubernetes/kube-controller-manager/ca.crt",
        "caKey": "/srv/kubernetes/kube-controller-manager/ca.key",
        "serverCert": "/etc/kubernetes/kubeops-bootstrap/server.crt",
        "serverKey": "/etc/kubernetes/kubeops-bootstrap/server.key"}
    assert "PRIVATE" not in yaml.safe_dump(worker) and "PRIVATE" not in yaml.safe_dump(cp)
    assert config.config_path(master) == "igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml"
    assert config.config_path(node) == "igconfig/node/nodes/nodeupconfig.yaml"


def test_missing_keyset_names_the_fix():
    completed, groups = _completed("minimal-aws")
    with pytest.raises(ValueError, match="kubernetes-ca.*keypair"):
        config.build_config(completed, groups[0], {}, "file:///s/c")
