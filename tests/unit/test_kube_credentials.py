"""kubeconfigs for a server given by address: the API server's certificate names api.internal.<cluster> (and the
service IP, 127.0.0.1), not a node's own address, so a kubeconfig for https://<a control-plane node's IP> checks the
certificate against api.internal.<cluster> (tls-server-name).  A real kube-apiserver's certificate refused
https://10.x.y.z before (tests/realk8s/test_cluster.py)."""

from __future__ import annotations

from ansible_collections.kubeops.kops.plugins.module_utils.kube import credentials
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore


def _kubeconfig(server):
    keyset = keystore.new_keyset("kubernetes-ca")
    ca_pem, certificate_pem, key_pem = credentials.admin_credentials(keyset)
    return keyset, ca_pem, credentials.kubeconfig("k8s.example.com", server, ca_pem, certificate_pem, key_pem)


def test_a_server_given_by_address_is_checked_against_the_internal_name():
    _keyset, _ca, document = _kubeconfig("https://10.231.40.11")
    assert document["clusters"][0]["cluster"]["tls-server-name"] == "api.internal.k8s.example.com"
    for server in ("https://api.k8s.example.com", "https://api-k8s-example-com-0123.elb.amazonaws.com:443"):
        assert "tls-server-name" not in _kubeconfig(server)[2]["clusters"][0]["cluster"]
    assert credentials.tls_server_name("c.example.com", "https://[fd00::5]:443") == "api.internal.c.example.com"
    assert credentials.tls_server_name("c.example.com", "https://127.0.0.1:6443") is None  # the certificate has it


def test_an_exported_kubeconfig_without_the_server_name_is_written_again():
    keyset, ca_pem, document = _kubeconfig("https://10.231.40.11")
    assert credentials.still_valid(document, "k8s.example.com", "https://10.231.40.11", ca_pem, keyset)
    del document["clusters"][0]["cluster"]["tls-server-name"]
    assert not credentials.still_valid(document, "k8s.example.com", "https://10.231.40.11", ca_pem, keyset)
