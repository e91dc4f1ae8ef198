"""kube-router's node credential, as kops' nodeup gives it: its DaemonSet reads /var/lib/kube-router/kubeconfig
(CN system:kube-router, which the addon's ClusterRoleBinding names). The control plane issues it for itself; a
worker gets it from the bootstrap service, which issues it only for a cluster whose CNI is kube-router."""

from __future__ import annotations

import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID

from ansible_collections.kubeops.kops.plugins.module_utils import clusters, updates
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service, credentials, files
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

import pytest

OPTIONS = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"],
           "kubernetes_version": "v1.34.2"}
WORKER_SERVER = "https://api.internal.k8s.example.com"


def _configs(tmp_path, networking, **extra):
    """{role: the nodeup config the controller writes for that role's group}."""
    service = clusters.ClusterService("file://%s" % tmp_path)
    service.execute(service.plan_create(dict(OPTIONS, networking=networking, **extra)))
    cluster, groups = service.read(OPTIONS["cluster_name"])
    changes, _hashes = nodeup_store.node_files(service.cluster_store(OPTIONS["cluster_name"]),
                                               service.validate(cluster, groups), groups)
    found = {}
    for path, data in changes:
        if path.endswith("nodeupconfig.yaml"):
            found["control-plane" if "/control-plane/" in path else "node"] = yaml.safe_load(data)
    return found


def _kubeconfig_files(config):
    return {f.path: f for f in files.static_pod_files(config, "CA", WORKER_SERVER)}


def test_a_kube_router_cluster_hands_its_workers_and_service_the_kube_router_certificate(tmp_path):
    configs = _configs(tmp_path, "kube-router")
    worker = configs["node"]["kubeops"]["bootstrapService"]
    assert [c["name"] for c in worker["certificates"]] == ["kubelet", "kubelet-server", "kube-proxy", "kube-router"]
    assert {"name": "kube-router", "cert_path": "/var/lib/kube-router/client.crt",
            "key_path": "/var/lib/kube-router/client.key"} in worker["certificates"]
    service = configs["control-plane"]["kubeops"]["bootstrapService"]
    assert service["certNames"] == ["kubelet", "kubelet-server", "kube-proxy", "kube-router"]

    requests = credentials.control_plane_requests(configs["control-plane"], "cp-1")
    assert [r for r in requests if r["common_name"] == "system:kube-router"] == [{
        "signer": "kubernetes-ca", "common_name": "system:kube-router", "cert_path": "/var/lib/kube-router/client.crt",
        "key_path": "/var/lib/kube-router/client.key", "usages": ["client"], "organizations": [], "dns_names": [],
        "ip_addresses": []}]

    for role, server in (("control-plane", "https://127.0.0.1"), ("node", WORKER_SERVER)):
        written = _kubeconfig_files(configs[role])[files.KUBE_ROUTER_KUBECONFIG]
        kubeconfig = yaml.safe_load(written.content)
        assert kubeconfig["clusters"][0]["cluster"]["server"] == server, role
        assert kubeconfig["users"][0]["user"]["client-certificate"] == "/var/lib/kube-router/client.crt", role
        assert written.mode == 0o400


def test_other_clusters_neither_ask_for_it_nor_write_it(tmp_path):
    configs = _configs(tmp_path, "cilium")
    assert "certificates" not in configs["node"]["kubeops"]["bootstrapService"]
    assert "certNames" not in configs["control-plane"]["kubeops"]["bootstrapService"]
    assert not [r for r in credentials.control_plane_requests(configs["control-plane"], "cp-1")
                if r["common_name"] == "system:kube-router"]
    for config in configs.values():
        assert files.KUBE_ROUTER_KUBECONFIG not in _kubeconfig_files(config)


def test_the_service_issues_kube_routers_certificate_only_where_its_settings_list_it():
    ca, ca_key = certs.new_ca("kubernetes-ca")
    ca_pem, ca_key_pem = certs.certificate_pem(ca), certs.key_pem(ca_key)
    key = certs.new_private_key()
    identity = {"node_name": "i-0123", "instance_id": "i-0123", "certificate_names": []}
    default = bootstrap_service.Issuer(ca_pem, ca_key_pem)
    with pytest.raises(bootstrap_service.Refused, match="'kube-router' is not issued by this service"):
        default.issue("kube-router", bootstrap_service.public_key_pem(key), identity)
    issuer = bootstrap_service.Issuer(ca_pem, ca_key_pem, ["kubelet", "kube-proxy", "kube-router"])
    issued = x509.load_pem_x509_certificate(
        issuer.issue("kube-router", bootstrap_service.public_key_pem(key), identity).encode("ascii"))
    assert issued.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:kube-router"
    assert certs.issued_by(issued, ca)


def test_kube_router_on_gce_is_warned_about(tmp_path):
    """GCE workers get no kube-router certificate (the service verifies AWS identities only): said, not dropped."""
    service = clusters.ClusterService("file://%s" % tmp_path)
    options = dict(OPTIONS, cloud_provider="gce", zones=["us-test1-a"], project="testproject",
                   networking="kube-router", image="ubuntu-os-cloud/ubuntu-2404-noble-amd64-v20250101")
    service.execute(service.plan_create(options))
    warned = []
    updates.render_terraform(service, OPTIONS["cluster_name"], str(tmp_path / "tf"), dry_run=True,
                             warn=warned.append)
    assert [w for w in warned if w.startswith("networking.kuberouter is applied, but workers on gce do not get "
                                              "/var/lib/kube-router/kubeconfig")], warned
