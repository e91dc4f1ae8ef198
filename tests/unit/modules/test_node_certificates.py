"""node_certificates: a control-plane node issues its own certificates from the store's CAs, idempotently."""

from __future__ import annotations

import os
import stat

from cryptography import x509

from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import keypair, node_certificates

OPTIONS = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}


def _cluster_with_cas(run_module, store_url, keysets=("etcd-peers-ca-main", "kubernetes-ca")):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    run_module(keypair, state_store=store_url, cluster_name="k8s.example.com", keysets=list(keysets))
    return store_url + "/k8s.example.com"


def _peer(tmp_path, **overrides):
    spec = dict(signer="etcd-peers-ca-main", common_name="etcd-a", usages=["server", "client"],
                dns_names=["etcd-a.internal.k8s.example.com"], ip_addresses=["10.0.0.5", "127.0.0.1"],
                cert_path=str(tmp_path / "pki" / "peer.crt"), key_path=str(tmp_path / "pki" / "peer.key"),
                ca_path=str(tmp_path / "pki" / "peer-ca.crt"))
    spec.update(overrides)
    return spec


def test_issues_once_then_keeps(run_module, store_url, tmp_path):
    base = _cluster_with_cas(run_module, store_url)
    spec = _peer(tmp_path)
    check = run_module(node_certificates, check_mode=True, config_base=base, certificates=[spec])
    assert check["changed"] and not os.path.exists(spec["cert_path"])
    first = run_module(node_certificates, config_base=base, certificates=[spec])
    assert sorted(first["changed_paths"]) == sorted([spec["cert_path"], spec["key_path"], spec["ca_path"]])
    assert stat.S_IMODE(os.stat(spec["key_path"]).st_mode) == 0o600
    assert "PRIVATE KEY" not in repr(first)
    certificate = x509.load_pem_x509_certificate(open(spec["cert_path"], "rb").read())
    sans = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["etcd-a.internal.k8s.example.com"]
    assert sorted(str(i) for i in sans.get_values_for_type(x509.IPAddress)) == ["10.0.0.5", "127.0.0.1"]
    ca = x509.load_pem_x509_certificate(open(spec["ca_path"], "rb").read())
    certificate.verify_directly_issued_by(ca)
    again = run_module(node_certificates, config_base=base, certificates=[spec])
    assert again["changed"] is False and again["certificates"][0]["issued"] is False


def test_changed_names_reissue_and_rotation_reissues(run_module, store_url, tmp_path):
    base = _cluster_with_cas(run_module, store_url)
    spec = _peer(tmp_path)
    serial = run_module(node_certificates, config_base=base, certificates=[spec])["certificates"][0]["serial"]
    moved = run_module(node_certificates, diff=True, config_base=base,
                       certificates=[_peer(tmp_path, ip_addresses=["10.0.0.6"])])
    assert moved["certificates"][0]["reason"] == "names changed" and moved["certificates"][0]["serial"] != serial
    assert "names changed" in moved["diff"]["after"]
    for action in ("rotate", "promote"):
        run_module(keypair, state_store=store_url, cluster_name="k8s.example.com", keysets=["etcd-peers-ca-main"],
                   action=action)
    rotated = run_module(node_certificates, config_base=base, certificates=[_peer(tmp_path, ip_addresses=["10.0.0.6"])])
    assert rotated["certificates"][0]["reason"] == "not signed by the primary etcd-peers-ca-main"
    bundle = open(spec["ca_path"], "rb").read()
    assert bundle.count(b"BEGIN CERTIFICATE") == 2  # old CA still trusted until distrusted


def test_missing_signer_names_the_fix_and_writes_nothing(run_module, store_url, tmp_path):
    base = _cluster_with_cas(run_module, store_url, keysets=("kubernetes-ca",))
    spec = _peer(tmp_path)
    result = run_module(node_certificates, config_base=base, certificates=[spec])
    assert result["failed"] and "etcd-peers-ca-main" in result["msg"] and "keypair" in result["msg"]
    assert not os.path.exists(spec["cert_path"])


def test_bad_ip_and_bad_config_base(run_module, store_url, tmp_path):
    base = _cluster_with_cas(run_module, store_url)
    bad_ip = run_module(node_certificates, config_base=base, certificates=[_peer(tmp_path, ip_addresses=["node-1"])])
    assert bad_ip["failed"] and "ip_addresses" in bad_ip["msg"] and "node-1" in bad_ip["msg"]
    bad_base = run_module(node_certificates, config_base="k8s.example.com", certificates=[_peer(tmp_path)])
    assert bad_base["failed"] and "config_base" in bad_base["msg"]


def _control_plane_config(store_url):
    """The control-plane group's nodeup config as the controller writes it to the store."""
    import yaml
    from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
    service = ClusterService(store_url)
    service.execute(service.plan_create(OPTIONS))
    cluster, groups = service.read("k8s.example.com")
    cluster_store = service.cluster_store("k8s.example.com")
    changes, _hashes = nodeup_store.node_files(cluster_store, service.validate(cluster, groups), groups)
    cluster_store.apply(changes)
    group = next(g for g in groups if g["spec"]["role"] == "Master")
    path = store_url[len("file://"):] + "/k8s.example.com/igconfig/control-plane/%s/nodeupconfig.yaml" \
        % group["metadata"]["name"]
    return yaml.safe_load(open(path).read())


def test_control_plane_node_from_its_nodeup_config(run_module, store_url, tmp_path):
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs
    config = _control_plane_config(store_url)
    base, root = store_url + "/k8s.example.com", tmp_path / "node"
    args = dict(config_base=base, nodeup_config=config, node_name="cp-1", node_addresses=["10.0.1.10", "localhost"],
                root=str(root))
    check = run_module(node_certificates, check_mode=True, **args)
    assert check["changed"] and not root.exists()
    first = run_module(node_certificates, **args)
    srv = root / "srv" / "kubernetes"
    by_cn = {c["common_name"]: c for c in first["certificates"]}
    assert set(by_cn) == {"kubernetes-master", "kubelet-api", "aggregator", "kube-apiserver", "system:node:cp-1",
                          "kube-controller-manager", "system:kube-controller-manager", "kube-scheduler",
                          "system:kube-scheduler", "system:kube-proxy", "kops-controller", "kubecfg", "cp-1",
                          "kubeops:node-labeller"}  # the node labeller's client certificate (docs/node-labels.md)
    assert by_cn["system:node:cp-1"]["organizations"] == ["system:nodes"]
    # the kubelet's serving certificate, where its config points: CN the node name, its name and address as SANs
    kubelet_server = x509.load_pem_x509_certificate((srv / "kubelet-server.crt").read_bytes())
    sans = kubelet_server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert kubelet_server.subject.rfc4514_string() == "CN=cp-1" and sans.get_values_for_type(x509.DNSName) == ["cp-1"]
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["10.0.1.10"]
    assert oct((srv / "kubelet-server.key").stat().st_mode & 0o777) == "0o600"
    # the bootstrap service's serving certificate, under kops-controller's name
    service = x509.load_pem_x509_certificate((root / "etc/kubernetes/kubeops-bootstrap/server.crt").read_bytes())
    assert service.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["kops-controller.internal.k8s.example.com"]
    server = x509.load_pem_x509_certificate((srv / "kube-apiserver" / "server.crt").read_bytes())
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "api.internal.k8s.example.com" in sans.get_values_for_type(x509.DNSName)
    assert "100.64.0.1" in [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]
    # The controller manager signs with the cluster CA's primary keypair, copied as it is in the store.
    cluster_store = layout.ClusterStore(vfs.open_store(store_url), "k8s.example.com")
    ca_certificate, ca_key = keystore.primary(keystore.load(cluster_store, "kubernetes-ca"))
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    assert (srv / "kube-controller-manager" / "ca.key").read_bytes() == certs.key_pem(ca_key)
    server.verify_directly_issued_by(ca_certificate)
    # kops' IncludeRootCertificate: server.crt is the certificate, an empty line, then the signer's.
    leaf, chain = (srv / "kube-apiserver" / "server.crt").read_bytes().split(b"-----END CERTIFICATE-----\n", 1)
    assert chain == b"\n" + certs.certificate_pem(ca_certificate)
    for key in ("kube-controller-manager/ca.key", "kube-controller-manager/service-account.key",
                "kube-apiserver/service-account.key", "kube-apiserver/server.key"):
        assert stat.S_IMODE(os.stat(srv / key).st_mode) == 0o600, key
    assert stat.S_IMODE(os.stat(srv / "kube-controller-manager" / "ca.crt").st_mode) == 0o600
    # kops' nodetasks.KubeConfig: the client certificate, its key and the signer's certificate inline, 0400.
    import base64
    import yaml
    for name, common_name, path in (("kube-scheduler", "system:kube-scheduler", "var/lib/kube-scheduler/kubeconfig"),
                                    ("kubecfg", "kubecfg", "var/lib/kubectl/kubeconfig"),
                                    ("kube-proxy", "system:kube-proxy", "var/lib/kube-proxy/kubeconfig")):
        kubeconfig = yaml.safe_load((root / path).read_text())
        assert stat.S_IMODE(os.stat(root / path).st_mode) == 0o400, path
        assert kubeconfig["current-context"] == "service-account-context"
        assert kubeconfig["users"][0]["name"] == name
        assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://127.0.0.1"
        assert base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]) == \
            certs.certificate_pem(ca_certificate)
        client = x509.load_pem_x509_certificate(base64.b64decode(kubeconfig["users"][0]["user"]["client-certificate-data"]))
        client.verify_directly_issued_by(ca_certificate)
        assert "CN=" + common_name in client.subject.rfc4514_string().split(","), path
        assert by_cn[common_name]["cert_path"] == str(root / path)
    assert not (root / "var/lib/kube-scheduler/client.crt").exists()
    assert "PRIVATE KEY" not in repr(first)
    again = run_module(node_certificates, **args)
    assert again["changed"] is False and again["changed_paths"] == []
    # A kubeconfig whose certificate is gone or unreadable is issued again.
    (root / "var/lib/kube-scheduler/kubeconfig").write_text("users: []\n")
    third = run_module(node_certificates, **args)
    assert third["changed_paths"] == [str(root / "var/lib/kube-scheduler/kubeconfig")]


def test_worker_nodeup_config_issues_nothing(run_module, store_url, tmp_path):
    config = _control_plane_config(store_url)
    for key in ("APIServerConfig", "ControlPlaneConfig"):
        config.pop(key)
    result = run_module(node_certificates, config_base=store_url + "/k8s.example.com", nodeup_config=config,
                        root=str(tmp_path / "node"))
    assert result["changed"] is False and result["certificates"] == []
