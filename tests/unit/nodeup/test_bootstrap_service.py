"""The bootstrap service's verifier and issuer against moto's STS and EC2, with signatures checked.

Every identity is real in moto: a node role, an instance, and the role's session named after the
instance (what an instance profile gives an instance).  The worker signs kops' V1 token with those
credentials; the service forwards it to moto's STS, which checks the signature (SigningMoto).
"""

from __future__ import annotations

import datetime
import json
import threading

import botocore.credentials
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import NameOID

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service as service
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

from tests.unit.nodeup import bootstrap_cloud as cloud

CLUSTER = "boot.example.com"
OTHER = "other.example.com"
GROUP = "nodes-us-test-1a"
NODEUP_CONFIG = "kubeops:\n  instanceGroup: nodes-us-test-1a\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    moto = cloud.SigningMoto().start()
    node_role = cloud.make_role(moto, "nodes.%s" % CLUSTER)
    other_role = cloud.make_role(moto, "nodes.%s" % OTHER)
    instances = {
        "node": cloud.run_instance(moto, CLUSTER, GROUP),
        "other_cluster": cloud.run_instance(moto, OTHER, "nodes"),
        "terminated": cloud.run_instance(moto, CLUSTER, GROUP, state="terminated"),
    }
    base = tmp_path_factory.mktemp("store") / CLUSTER
    (base / "igconfig" / "node" / GROUP).mkdir(parents=True)
    (base / "igconfig" / "node" / GROUP / "nodeupconfig.yaml").write_text(NODEUP_CONFIG)
    ca, ca_key = certs.new_ca("kubernetes-ca")
    world = {"moto": moto, "node_role": node_role, "other_role": other_role, "instances": instances,
             "config_base": "file://%s" % base, "ca": ca, "ca_pem": certs.certificate_pem(ca),
             "ca_key_pem": certs.key_pem(ca_key)}
    yield world
    moto.stop()


def _service(world, clock=None, node_roles=None):
    verifier = service.AwsVerifier(CLUSTER, node_roles or ["nodes.%s" % CLUSTER], cloud.ACCOUNT, world["moto"].url + "/",
                                   world["moto"].client("ec2"), clock=clock)
    return service.BootstrapService(verifier, service.Issuer(world["ca_pem"], world["ca_key_pem"]),
                                    service.NodeConfigs(world["config_base"]))


def _creds(world, instance="node", role="node_role"):
    return cloud.instance_credentials(world["moto"], world[role], world["instances"][instance]["InstanceId"])


def _request(world, credentials, certs_wanted=None, include_node_config=True):
    keys = {name: certs.new_private_key() for name in certs_wanted or ("kubelet", "kube-proxy")}
    body = service.request_body({n: service.public_key_pem(k) for n, k in keys.items()}, include_node_config)
    return body, service.sign_token(body, credentials, world["moto"].url + "/", cloud.REGION), keys


def _refusal(svc, authorization, body):
    status, answer, line = svc.handle(authorization, body)
    assert status != 200, answer
    return status, line


def test_a_node_gets_its_kubelet_and_kube_proxy_certificates_and_its_config(world):
    svc = _service(world)
    body, token, keys = _request(world, _creds(world))
    status, answer, line = svc.handle(token, body)
    assert status == 200, line
    instance = world["instances"]["node"]
    kubelet = x509.load_pem_x509_certificate(answer["Certs"]["kubelet"].encode())
    assert kubelet.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:%s" % instance["InstanceId"]
    assert kubelet.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:nodes"
    assert certs.issued_by(kubelet, world["ca"])
    assert kubelet.public_key().public_numbers() == keys["kubelet"].public_key().public_numbers()
    proxy = x509.load_pem_x509_certificate(answer["Certs"]["kube-proxy"].encode())
    assert proxy.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:kube-proxy"
    assert answer["nodeConfig"]["nodeupConfig"] == NODEUP_CONFIG
    days = (certs.not_after(kubelet) - certs.not_before(kubelet)).days
    assert 455 <= days <= 486  # kops: 455 days, skewed per node by up to 30


def test_unsigned_and_malformed_requests_are_refused(world):
    svc = _service(world)
    body, token, _keys = _request(world, _creds(world))
    assert _refusal(svc, "", body) == (403, "refused: no AWS STS token in the Authorization header (expected 'x-aws-sts')")
    assert "does not decode" in _refusal(svc, service.TOKEN_PREFIX + "%%%", body)[1]
    # the token signs another body: the service sees it before asking STS
    assert "does not cover this request body" in _refusal(svc, token, body.replace(b"true", b"false"))[1]


def test_a_forged_signature_is_refused_by_sts(world):
    svc = _service(world)
    good = _creds(world)
    forged = botocore.credentials.Credentials(good.access_key, "not-the-secret", good.token)
    body, token, _keys = _request(world, forged)
    status, line = _refusal(svc, token, body)
    assert status == 403 and "STS refused the signed request (HTTP 403)" in line and "SignatureDoesNotMatch" in line


def test_another_clusters_instance_is_refused(world):
    # its own cluster's node role: not one of ours
    body, token, _keys = _request(world, _creds(world, "other_cluster", "other_role"))
    assert "is not a node role of %s" % CLUSTER in _refusal(_service(world), token, body)[1]
    # even when its role were accepted, the instance's cluster tag is another cluster's
    svc = _service(world, node_roles=["nodes.%s" % CLUSTER, "nodes.%s" % OTHER])
    body, token, _keys = _request(world, _creds(world, "other_cluster", "other_role"))
    assert "is not in cluster %s" % CLUSTER in _refusal(svc, token, body)[1]


def test_a_terminated_instance_is_refused(world):
    body, token, _keys = _request(world, _creds(world, "terminated"))
    assert "is terminated" in _refusal(_service(world), token, body)[1]


def test_a_replayed_or_expired_signature_is_refused(world):
    svc = _service(world)
    body, token, _keys = _request(world, _creds(world))
    assert svc.handle(token, body)[0] == 200
    assert "already used (replayed request)" in _refusal(svc, token, body)[1]
    # moto's STS does not check a signature's age (measured: it answered this one); the service's window does.
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=16)
    body, token, _keys = _request(world, _creds(world))
    assert "outside the 15-minute window" in _refusal(_service(world, clock=lambda: later), token, body)[1]


def _csr(key, common_name, organizations=()):
    subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    subject.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.CertificateSigningRequestBuilder().subject_name(x509.Name(subject)).sign(key, hashes.SHA256()).public_bytes(
        certs.serialization.Encoding.PEM).decode()


def test_a_csr_for_another_node_name_is_refused_and_one_for_its_own_is_signed(world):
    svc = _service(world)
    credentials = _creds(world)
    instance_id = world["instances"]["node"]["InstanceId"]
    key = certs.new_private_key()
    answers = []
    for name in ("system:node:i-0123456789abcdef0", "system:node:%s" % instance_id):
        body = service.request_body({"kubelet": _csr(key, name, ["system:nodes"])}, False)
        answers.append(svc.handle(service.sign_token(body, credentials, world["moto"].url + "/", cloud.REGION), body))
    assert answers[0][0] == 403 and "CSR asks for CN=system:node:i-0123456789abcdef0" in answers[0][1], answers[0]
    assert answers[1][0] == 200, answers[1]
    signed = x509.load_pem_x509_certificate(answers[1][1]["Certs"]["kubelet"].encode())
    assert signed.public_key().public_numbers() == key.public_key().public_numbers()
    # a certificate the service does not issue (kops' list: kubelet, kubelet-server, kube-proxy, ...)
    body = service.request_body({"kube-apiserver": service.public_key_pem(key)}, False)
    status, answer, _line = svc.handle(service.sign_token(body, credentials, world["moto"].url + "/", cloud.REGION), body)
    assert status == 400 and "is not issued by this service" in answer


def test_the_service_over_https_with_the_worker_client(world, tmp_path):
    """request_bootstrap() against the HTTPS server, trusting only the cluster CA."""
    ca, ca_key = certs.load_certificate(world["ca_pem"]), certs.load_key(world["ca_key_pem"])
    cert, key = certs.issue(ca, ca_key, "kops-controller", usages=("server",), dns_names=("localhost",))
    (tmp_path / "server.crt").write_bytes(certs.certificate_pem(cert))
    (tmp_path / "server.key").write_bytes(certs.key_pem(key))
    lines = []
    server = service.serve(_service(world), "127.0.0.1:0", str(tmp_path / "server.crt"), str(tmp_path / "server.key"),
                           log=lines.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = "https://localhost:%d" % server.server_address[1]
        issued, config = service.request_bootstrap(url, world["ca_pem"], _creds(world), world["moto"].url + "/",
                                                   cloud.REGION)
        assert sorted(issued) == ["kube-proxy", "kubelet", "kubelet-server"] and config == NODEUP_CONFIG
        kubelet = certs.load_certificate(issued["kubelet"][0])
        assert certs.issued_by(kubelet, ca)
        # the kubelet's serving certificate: CN the node name, the instance's names as SANs, server usage
        serving = certs.load_certificate(issued["kubelet-server"][0])
        assert certs.issued_by(serving, ca) and serving.subject.rfc4514_string().startswith("CN=i-")
        usages = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert list(usages) == [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]
        sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert serving.subject.rfc4514_string()[3:] in sans.get_values_for_type(x509.DNSName)
        # the key that came back with it is the certificate's
        assert certs.load_key(issued["kubelet"][1]).public_key().public_numbers() == kubelet.public_key().public_numbers()
        with pytest.raises(service.Refused, match="answered 403: failed to verify token"):
            service.request_bootstrap(url, world["ca_pem"], _creds(world, "terminated"), world["moto"].url + "/",
                                      cloud.REGION)
        assert any(" 403 refused: instance " in line and "is terminated" in line for line in lines), lines
        # another CA's server is not trusted
        other_ca, _other_key = certs.new_ca("someone-else")
        with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED"):
            service.post(url, certs.certificate_pem(other_ca), b"{}", "x")
    finally:
        server.shutdown()
        server.server_close()


def test_a_booting_worker_gets_only_the_pinned_nodeup_config(world, tmp_path):
    """The boot script's `node-config` (fetch_node_config): the config the service answers is written only when its
    sha256 is the one the launch template pins; a refusal and a different config are final (exit 3), an unreachable
    service is asked again (exit 1)."""
    import hashlib
    ca, ca_key = certs.load_certificate(world["ca_pem"]), certs.load_key(world["ca_key_pem"])
    cert, key = certs.issue(ca, ca_key, "kops-controller", usages=("server",), dns_names=("localhost",))
    (tmp_path / "server.crt").write_bytes(certs.certificate_pem(cert))
    (tmp_path / "server.key").write_bytes(certs.key_pem(key))
    server = service.serve(_service(world), "127.0.0.1:0", str(tmp_path / "server.crt"), str(tmp_path / "server.key"),
                           log=lambda line: None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pinned = hashlib.sha256(NODEUP_CONFIG.encode()).hexdigest()
    dest = tmp_path / "nodeupconfig.yaml"
    try:
        settings = {"server": "https://localhost:%d" % server.server_address[1], "region": cloud.REGION,
                    "caCert": world["ca_pem"].decode(), "stsEndpoint": world["moto"].url + "/"}
        json.dumps(settings)  # the boot script carries it as JSON
        assert service.fetch_node_config(settings, "0" * 64, str(dest), _creds(world)) == service.EXIT_REFUSED
        assert not dest.exists()
        assert service.fetch_node_config(settings, pinned, str(dest), _creds(world, "terminated")) == service.EXIT_REFUSED
        assert not dest.exists()
        assert service.fetch_node_config(settings, pinned, str(dest), _creds(world)) == 0
        assert dest.read_text() == NODEUP_CONFIG and (dest.stat().st_mode & 0o777) == 0o600
        gone = dict(settings, server="https://127.0.0.1:9")
        assert service.fetch_node_config(gone, pinned, str(tmp_path / "x"), _creds(world)) == service.EXIT_RETRY
    finally:
        server.shutdown()
        server.server_close()


def test_the_config_file_builds_the_service(world, tmp_path, monkeypatch):
    """from_config: the service's own account from STS, clients on the configured endpoints."""
    keys = world["moto"].admin.get_credentials()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", keys.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", keys.secret_key)
    (tmp_path / "ca.crt").write_bytes(world["ca_pem"])
    (tmp_path / "ca.key").write_bytes(world["ca_key_pem"])
    config = {"clusterName": CLUSTER, "region": cloud.REGION, "nodeRoles": ["nodes.%s" % CLUSTER],
              "configBase": world["config_base"], "caCert": str(tmp_path / "ca.crt"), "caKey": str(tmp_path / "ca.key"),
              "stsEndpoint": world["moto"].url + "/", "ec2Endpoint": world["moto"].url}
    svc = service.from_config(config)
    assert svc.verifier.account_id == cloud.ACCOUNT
    body, token, _keys = _request(world, _creds(world))
    assert svc.handle(token, body)[0] == 200
    json.dumps(config)


def test_the_node_role_policy_denies_secrets_and_private_keys_in_an_s3_store(world):
    """The nodes' inline policy as the IAM model builds it, evaluated by moto's S3 for the node's own session:
    the pinned boot artefacts are readable; its group's nodeup config (the bootstrap service answers it), secrets/
    and pki/private/ are not; the control plane's reads all."""
    from tests.unit.model.test_iam_store_access import _policies
    policies = _policies("s3://kops-state/minimal-aws.example.com")
    s3 = world["moto"].client("s3")
    s3.create_bucket(Bucket="kops-state")
    paths = ("igconfig/node/nodes/nodeupconfig.yaml", "secrets/kubelet-bootstrap-token", "secrets/admin",
             "pki/private/kubernetes-ca/keyset.yaml", "boot/sha256/%s/collection.tar.gz" % ("0" * 64))
    for path in paths:
        s3.put_object(Bucket="kops-state", Key="minimal-aws.example.com/" + path, Body=b"x")
    readable = {}
    for role in ("nodes", "masters"):
        name = "%s.minimal-aws.example.com" % role
        arn = cloud.make_role(world["moto"], name, policies[name])
        session = cloud.session_of(cloud.instance_credentials(world["moto"], arn, "i-0123456789abcdef0"))
        for path in paths:
            try:
                world["moto"].client("s3", session).get_object(Bucket="kops-state", Key="minimal-aws.example.com/" + path)
                readable[role, path] = True
            except s3.exceptions.ClientError as exc:
                assert exc.response["Error"]["Code"] == "AccessDenied", exc
                readable[role, path] = False
    assert readable == {("nodes", paths[0]): False, ("nodes", paths[1]): False, ("nodes", paths[2]): False,
                        ("nodes", paths[3]): False, ("nodes", paths[4]): True,
                        ("masters", paths[0]): True, ("masters", paths[1]): True, ("masters", paths[2]): True,
                        ("masters", paths[3]): True, ("masters", paths[4]): True}
