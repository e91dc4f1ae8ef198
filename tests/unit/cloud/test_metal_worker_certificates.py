"""A metal worker's certificates without the bootstrap token (providers/metal/worker_certificates.py): keys made on
the host, public halves signed on the controller by kubernetes-ca as kops-controller signs them, certificates written
back; nothing secret of the cluster on the host; good certificates kept; check mode writes nothing."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from ansible_collections.kubeops.kops.plugins.module_utils.providers.metal import worker_certificates as wc


@pytest.fixture
def ca():
    return certs.new_ca("kubernetes-ca")


@pytest.fixture
def places(tmp_path):
    return tuple({"name": item["name"], "cert_path": str(tmp_path / item["cert_path"].lstrip("/")),
                  "key_path": str(tmp_path / item["key_path"].lstrip("/"))} for item in wc.CERTIFICATES)


def _subject(pem):
    from cryptography.x509.oid import NameOID
    certificate = certs.load_certificate(pem.encode("ascii"))
    return (certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value,
            sorted(a.value for a in certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)))


def test_keys_on_the_host_certificates_from_the_controller(ca, places, tmp_path):
    ca_pem = certs.certificate_pem(ca[0]).decode("ascii")
    assert wc.host_keys(ca_pem, places, check_mode=True) == {"kubelet": None, "kubelet-server": None,
                                                             "kube-proxy": None}
    assert list(tmp_path.rglob("*")) == []  # check mode wrote nothing
    public = wc.host_keys(ca_pem, places)
    assert sorted(public) == ["kube-proxy", "kubelet", "kubelet-server"]
    assert all("PUBLIC KEY" in pem and "PRIVATE" not in pem for pem in public.values())
    issued = wc.issue(ca, "vm1", ["192.168.76.11"], public)
    assert _subject(issued["kubelet"]) == ("system:node:vm1", ["system:nodes"])
    assert _subject(issued["kube-proxy"]) == ("system:kube-proxy", [])
    assert _subject(issued["kubelet-server"]) == ("vm1", [])
    assert wc.write_certificates(issued, places, check_mode=True) == [p["cert_path"] for p in places]
    written = wc.write_certificates(issued, places)
    assert written == [p["cert_path"] for p in places]
    # The host holds its own keys and certificates, nothing of the CA's key.
    ca_key = certs.key_pem(ca[1])
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert path.read_bytes() != ca_key and b"BEGIN CERTIFICATE REQUEST" not in path.read_bytes()
    assert {oct(p.stat().st_mode & 0o777) for p in tmp_path.rglob("*.key")} == {"0o600"}
    # A second enroll: every certificate is good, no key is made, nothing is written.
    assert wc.host_keys(ca_pem, places) == {} and wc.write_certificates(issued, places) == []


def test_a_certificate_for_another_key_is_refused(ca, places):
    ca_pem = certs.certificate_pem(ca[0]).decode("ascii")
    first = wc.issue(ca, "vm1", [], wc.host_keys(ca_pem, places))
    for item in places:  # the certificates' keys replaced behind the controller's back
        import os
        os.unlink(item["key_path"])
    wc.host_keys(ca_pem, places)
    with pytest.raises(wc.WorkerCertificateError,
                       match=r"^the kubelet certificate is not for the key at .*: enroll again"):
        wc.write_certificates(first, places)


def test_only_what_kops_controller_signs_is_signed(ca, places):
    ca_pem = certs.certificate_pem(ca[0]).decode("ascii")
    public = wc.host_keys(ca_pem, places)
    with pytest.raises(wc.WorkerCertificateError,
                       match=r"^host vm1: certificate 'admin' is not issued by this service"):
        wc.issue(ca, "vm1", [], {"admin": public["kubelet"]})
