"""The keypair module: cluster CAs in kops' keystore layout, rotation in three idempotent steps."""

from __future__ import annotations

import base64
import os
import stat

import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import padding

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore
from ansible_collections.kubeops.kops.plugins.modules import cluster as cluster_module
from ansible_collections.kubeops.kops.plugins.modules import keypair

OPTIONS = {"cluster_name": "k8s.example.com", "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}
ALL = ["apiserver-aggregator-ca", "etcd-clients-ca", "etcd-manager-ca-events", "etcd-manager-ca-main",
       "etcd-peers-ca-events", "etcd-peers-ca-main", "kubernetes-ca", "kubernetes-front-proxy-ca", "service-account"]


def _keyset_file(store_url, name):
    return os.path.join(store_url[len("file://"):], "k8s.example.com", "pki", "private", name, "keyset.yaml")


def test_ensure_creates_every_ca_privately_and_is_idempotent(run_module, store_url):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    check = run_module(keypair, check_mode=True, state_store=store_url, cluster_name="k8s.example.com")
    assert sorted(check["changed_keysets"]) == ALL and not os.path.exists(_keyset_file(store_url, "kubernetes-ca"))
    created = run_module(keypair, state_store=store_url, cluster_name="k8s.example.com")
    assert sorted(created["changed_keysets"]) == ALL
    path = _keyset_file(store_url, "kubernetes-ca")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    document = yaml.safe_load(open(path).read())
    assert document["kind"] == "Keyset" and document["spec"]["type"] == "Keypair"
    certificate = x509.load_pem_x509_certificate(base64.b64decode(document["spec"]["keys"][0]["publicMaterial"]))
    assert certificate.subject.rfc4514_string() == "CN=kubernetes-ca"
    assert str(certificate.serial_number) == document["spec"]["primaryId"]
    assert "privateMaterial" not in repr(created) and "PRIVATE KEY" not in repr(created)
    again = run_module(keypair, state_store=store_url, cluster_name="k8s.example.com")
    assert again["changed"] is False


def test_rotation_in_three_idempotent_steps(run_module, store_url):
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    first = run_module(keypair, state_store=store_url, cluster_name="k8s.example.com", keysets=["kubernetes-ca"])
    old_id = first["keysets"][0]["primary_id"]

    def step(action):
        return run_module(keypair, state_store=store_url, cluster_name="k8s.example.com", keysets=["kubernetes-ca"],
                          action=action)

    rotated = step("rotate")
    keys = rotated["keysets"][0]["keys"]
    assert rotated["changed"] and len(keys) == 2 and rotated["keysets"][0]["primary_id"] == old_id
    assert step("rotate")["changed"] is False  # a rotation under way is not started twice
    promoted = step("promote")
    new_id = promoted["keysets"][0]["primary_id"]
    assert promoted["changed"] and new_id != old_id
    assert step("promote")["changed"] is False
    distrusted = step("distrust")
    by_id = {k["id"]: k for k in distrusted["keysets"][0]["keys"]}
    assert by_id[old_id]["distrusted"] and not by_id[new_id]["distrusted"]
    assert step("distrust")["changed"] is False


def test_issued_certificates_chain_to_the_primary_ca():
    keyset = keystore.new_keyset("kubernetes-ca")
    ca_certificate, ca_key = keystore.primary(keyset)
    leaf, _key = certs.issue(ca_certificate, ca_key, "kubernetes-master", usages=("server",),
                             dns_names=["api.internal.k8s.example.com"], ip_addresses=["100.64.0.1"])
    # raises InvalidSignature if the CA did not sign it
    ca_certificate.public_key().verify(leaf.signature, leaf.tbs_certificate_bytes, padding.PKCS1v15(),
                                       leaf.signature_hash_algorithm)
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["api.internal.k8s.example.com"]
    rotated = keystore.distrust(keystore.promote(keystore.add_keypair(keyset)))
    assert keystore.trusted_certificates_pem(rotated).count(b"BEGIN CERTIFICATE") == 1


def test_unknown_cluster_and_missing_keyset_fail_clearly(run_module, store_url):
    result = run_module(keypair, state_store=store_url, cluster_name="nope.example.com")
    assert result["failed"] and "not found" in result["msg"]
    run_module(cluster_module, state_store=store_url, options=OPTIONS)
    result = run_module(keypair, state_store=store_url, cluster_name="k8s.example.com", keysets=["kubernetes-ca"],
                        action="rotate")
    assert result["failed"] and "action=ensure first" in result["msg"]
