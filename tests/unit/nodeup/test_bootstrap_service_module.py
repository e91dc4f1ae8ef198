"""The node_bootstrap module in-process: check mode asks nothing, good certificates on disk are kept, refusals
are not retried and an unreachable service is (the role's `until`)."""

from __future__ import annotations

import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kubeops.kops.plugins.modules import node_bootstrap
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

UNREACHABLE = "https://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused


def _run(capsys, check_mode=False, **args):
    with patch_module_args(dict(args, _ansible_check_mode=check_mode)):
        with pytest.raises(SystemExit):
            node_bootstrap.main()
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def ca():
    return certs.new_ca("kubernetes-ca")


def _items(tmp_path):
    return [{"name": "kubelet", "cert_path": str(tmp_path / "kubelet.crt"), "key_path": str(tmp_path / "kubelet.key")}]


def test_check_mode_reports_missing_certificates_and_asks_nothing(capsys, tmp_path, ca):
    result = _run(capsys, check_mode=True, server=UNREACHABLE, ca_cert=certs.certificate_pem(ca[0]).decode(),
                  region="us-east-1", certificates=_items(tmp_path))
    assert result["changed"] is True and result["changed_paths"] == [] and not list(tmp_path.iterdir())


def test_good_certificates_on_disk_are_kept_without_asking(capsys, tmp_path, ca):
    cert, key = certs.issue(ca[0], ca[1], "system:node:i-0123456789abcdef0", ["system:nodes"])
    (tmp_path / "kubelet.crt").write_bytes(certs.certificate_pem(cert))
    (tmp_path / "kubelet.key").write_bytes(certs.key_pem(key))
    result = _run(capsys, server=UNREACHABLE, ca_cert=certs.certificate_pem(ca[0]).decode(), region="us-east-1",
                  certificates=_items(tmp_path))
    assert result["changed"] is False and result["node_name"] == "i-0123456789abcdef0"


def test_a_certificate_of_another_ca_is_replaced_and_an_unreachable_service_is_retryable(
        capsys, tmp_path, ca, monkeypatch):
    other = certs.new_ca("another-ca")
    cert, key = certs.issue(other[0], other[1], "system:node:i-0123456789abcdef0", ["system:nodes"])
    (tmp_path / "kubelet.crt").write_bytes(certs.certificate_pem(cert))
    (tmp_path / "kubelet.key").write_bytes(certs.key_pem(key))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    result = _run(capsys, server=UNREACHABLE, ca_cert=certs.certificate_pem(ca[0]).decode(), region="us-east-1",
                  certificates=_items(tmp_path))
    assert result["failed"] and result["retryable"] is True and "could not be reached" in result["msg"]


def test_no_credentials_fails_at_once(capsys, tmp_path, ca):
    result = _run(capsys, server=UNREACHABLE, ca_cert=certs.certificate_pem(ca[0]).decode(), region="us-east-1",
                  certificates=_items(tmp_path))
    assert result["failed"] and "no AWS credentials" in result["msg"] and not result.get("retryable")


def test_check_mode_with_the_node_config_asks_for_no_certificate_and_writes_nothing(capsys, tmp_path, ca,
                                                                                    monkeypatch):
    """Check mode asks the service for the nodeup config only (before, the missing certificates it did not ask for
    ended in a KeyError)."""
    asked = []

    def answer(server, ca_pem, credentials, sts, region, cert_names, include_node_config):
        asked.append((list(cert_names), include_node_config))
        return {}, "kubeops: {instanceGroup: nodes}\n"
    monkeypatch.setattr(node_bootstrap.worker_credentials.bootstrap_service, "request_bootstrap", answer)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    result = _run(capsys, check_mode=True, server=UNREACHABLE, ca_cert=certs.certificate_pem(ca[0]).decode(),
                  region="us-east-1", certificates=_items(tmp_path), include_node_config=True)
    assert asked == [([], True)]
    assert result["changed"] is True and result["nodeup_config"] == {"kubeops": {"instanceGroup": "nodes"}}
    assert result["changed_paths"] == [str(tmp_path / "kubelet.key"), str(tmp_path / "kubelet.crt")]
    assert not list(tmp_path.iterdir())
