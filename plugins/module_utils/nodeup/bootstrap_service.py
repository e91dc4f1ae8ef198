# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node bootstrap service: kops-controller's `/bootstrap` protocol, on the control plane.

A worker proves its cloud identity and receives its kubelet (and kube-proxy) certificate and its
instance group's nodeup config, so it never reads the state store (docs/bootstrap-service.md).

Wire format is kops' (bootstrap.kops.k8s.io/v1alpha1, AWS token "x-aws-sts " V1): the request body
is JSON {apiVersion, certs: {name: PEM public key or CSR}, keypairIDs, includeNodeConfig}; the
Authorization header carries the headers of an STS GetCallerIdentity request the worker signed with
its instance role, one of them the sha256 of that body.  The service sends that request to STS
itself: STS answers only if the signature is good, and names the caller
(arn:...:assumed-role/<role>/<instance id>).  The instance is then checked in EC2.

Both sides live here: the control plane runs this file as a program (roles/protokube copies it
and pki/certs.py to the node, `python3 -m ...bootstrap_service /etc/kubernetes/kubeops-bootstrap/config.json`),
the worker calls request_bootstrap(): for its nodeup config from the boot script, before any playbook runs
(`python -m ...bootstrap_service node-config SETTINGS.json SHA256 DEST`), for its certificates from the module
node_bootstrap.  Only the standard library,
cryptography and botocore are used: the service runs on the node's own Python.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import json
import re
import ssl
import sys
import threading
import urllib.error
import urllib.request
from xml.etree import ElementTree

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

API_VERSION = "bootstrap.kops.k8s.io/v1alpha1"
TOKEN_PREFIX = "x-aws-sts "  # kops' V1 token, what kops' nodeup sends
STS_BODY = b"Action=GetCallerIdentity&Version=2011-06-15"
STS_CONTENT_TYPE = "application/x-www-form-urlencoded; charset=utf-8"
PORT = 3988  # kops' wellknownports.KopsControllerPort
# SigV4 signatures are good for 15 minutes at AWS; the service applies the same window itself
# (an emulated STS may not) and refuses a signature it has already honoured within it.
MAX_SIGNATURE_AGE = datetime.timedelta(minutes=15)
MAX_BODY = 1 << 20
CLUSTER_TAG = "KubernetesCluster"
INSTANCE_GROUP_TAG = "kops.k8s.io/instancegroup"
# kops' ValidateInstanceGroupName: a DNS label (so it is safe in a store path).
INSTANCE_GROUP_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")
LEAF_VALIDITY_HOURS = 455 * 24
VALIDITY_SKEW_HOURS = 30 * 24


class Refused(NodeError):
    """A bootstrap request that is not honoured; status is the HTTP answer."""

    def __init__(self, message, status=403):
        super().__init__(message)
        self.status = status


# ---- what the service issues: kops-controller's issueCert table (signer kubernetes-ca)
def _kubelet(identity):
    return {"common_name": "system:node:%s" % identity["node_name"], "organizations": ["system:nodes"],
            "usages": ["client"]}


def _kubelet_server(identity):
    return {"common_name": identity["node_name"], "organizations": [], "usages": ["server"],
            "names": identity["certificate_names"]}


CERTIFICATES = {
    "kubelet": _kubelet,
    "kubelet-server": _kubelet_server,
    "kube-proxy": lambda identity: {"common_name": "system:kube-proxy", "organizations": [], "usages": ["client"]},
    # kube-router's pods read a kubeconfig on the node (kops: nodeup's KuberouterBuilder, CN system:kube-router,
    # which its ClusterRoleBinding names); issued only where the service's settings list it (certNames).
    "kube-router": lambda identity: {"common_name": "system:kube-router", "organizations": [], "usages": ["client"]},
}
# kops-controller's certNames (kops' template_functions.go): the kubelet's client and serving certificates, kube-proxy's.
DEFAULT_CERT_NAMES = ("kubelet", "kubelet-server", "kube-proxy")


def _b64_sha256(data):
    """kops' X-Kops-Request-SHA: base64 (no padding) of the body's sha256."""
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii").rstrip("=")


def _header(headers, name):
    """A header of the token (Go's http.Header: {name: [values]}), case-insensitively; '' when absent."""
    for key, values in headers.items():
        if key.lower() == name.lower():
            return values[0] if isinstance(values, list) and values else (values if isinstance(values, str) else "")
    return ""


# ---- worker side
def sign_token(body, credentials, sts_url, region):
    """The Authorization value for body: kops' V1 token, signed with credentials (botocore Credentials)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    request = AWSRequest(method="POST", url=sts_url, data=STS_BODY,
                         headers={"Content-Type": STS_CONTENT_TYPE, "X-Kops-Request-Sha": _b64_sha256(body)})
    SigV4Auth(credentials, "sts", region).add_auth(request)
    headers = {key: [value] for key, value in request.headers.items()}
    return TOKEN_PREFIX + base64.b64encode(json.dumps(headers).encode("utf-8")).decode("ascii")


def public_key_pem(key):
    """kops' request format for a certificate's key: PKIX DER under the PEM type 'RSA PUBLIC KEY'."""
    from cryptography.hazmat.primitives import serialization
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    lines = [base64.b64encode(der[i:i + 48]).decode("ascii") for i in range(0, len(der), 48)]
    return "-----BEGIN RSA PUBLIC KEY-----\n%s\n-----END RSA PUBLIC KEY-----\n" % "\n".join(lines)


def request_body(public_keys, include_node_config=True, keypair_ids=None):
    return json.dumps({"apiVersion": API_VERSION, "certs": public_keys, "keypairIDs": keypair_ids or {},
                       "includeNodeConfig": include_node_config}).encode("utf-8")


def post(server_url, ca_pem, body, authorization, timeout=30):
    """(status, parsed JSON or text) of a POST to the service's /bootstrap, trusting only the cluster CA."""
    context = ssl.create_default_context(cadata=ca_pem.decode("ascii") if isinstance(ca_pem, bytes) else ca_pem)
    request = urllib.request.Request(server_url.rstrip("/") + "/bootstrap", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": authorization})
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:  # noqa: S310
            return response.status, json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def request_bootstrap(server_url, ca_pem, credentials, sts_url, region, cert_names=DEFAULT_CERT_NAMES,
                      include_node_config=True):
    """({name: (certificate PEM, private key PEM)}, nodeup config text or None) from the service.

    Keys are made here and never leave the node; only their public halves are sent."""
    keys = {name: certs.new_private_key() for name in cert_names}
    body = request_body({name: public_key_pem(key) for name, key in keys.items()}, include_node_config)
    status, answer = post(server_url, ca_pem, body, sign_token(body, credentials, sts_url, region))
    if status != 200:
        raise Refused("the bootstrap service at %s answered %s: %s" % (server_url, status, answer), status)
    issued = {}
    for name, key in keys.items():
        pem = (answer.get("Certs") or {}).get(name)
        if not pem:
            raise Refused("the bootstrap service issued no %s certificate" % name, 502)
        issued[name] = (pem.encode("ascii"), certs.key_pem(key))
    config = (answer.get("nodeConfig") or {}).get("nodeupConfig")
    return issued, config


# ---- control-plane side
class AwsVerifier(object):
    """kops' awsVerifier.VerifyToken for V1 tokens, plus the instance's state and cluster tag, a freshness
    window and a replay check.  Returns the identity {instance_id, node_name, instance_group,
    certificate_names} or raises Refused with the reason."""

    def __init__(self, cluster_name, node_roles, account_id, sts_url, ec2, partition="aws",
                 use_ip_based_node_names=False, region="", clock=None, sts_context=None,
                 max_age=MAX_SIGNATURE_AGE):
        self.cluster_name = cluster_name
        self.node_roles = set(node_roles)
        self.account_id = account_id
        self.sts_url = sts_url
        self.ec2 = ec2
        self.partition = partition
        self.use_ip_based_node_names = use_ip_based_node_names
        self.region = region
        self.clock = clock or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self.sts_context = sts_context
        self.max_age = max_age
        self._seen = {}
        self._lock = threading.Lock()

    def verify(self, authorization, body):
        headers = self._decode(authorization)
        if _header(headers, "X-Kops-Request-Sha") != _b64_sha256(body):
            raise Refused("the signature does not cover this request body (X-Kops-Request-SHA)")
        signature = self._check_authorization(_header(headers, "Authorization"))
        self._check_fresh(_header(headers, "X-Amz-Date"))
        with self._lock:
            self._forget_old()
            if signature in self._seen:
                raise Refused("this signature was already used (replayed request)")
        arn, account = self._caller_identity(headers)
        with self._lock:
            if signature in self._seen:
                raise Refused("this signature was already used (replayed request)")
            self._seen[signature] = self.clock()
        return self._instance_identity(arn, account)

    @staticmethod
    def _decode(authorization):
        if not authorization or not authorization.startswith(TOKEN_PREFIX):
            raise Refused("no AWS STS token in the Authorization header (expected %r)" % TOKEN_PREFIX.strip())
        try:
            headers = json.loads(base64.b64decode(authorization[len(TOKEN_PREFIX):], validate=True))
        except (ValueError, TypeError) as exc:
            raise Refused("the authorization token does not decode: %s" % exc) from None
        if not isinstance(headers, dict):
            raise Refused("the authorization token is not a header map")
        return headers

    @staticmethod
    def _check_authorization(value):
        if not value.startswith("AWS4-HMAC-SHA256 "):
            raise Refused("the STS request is not signed with AWS4-HMAC-SHA256")
        fields = {}
        for part in value[len("AWS4-HMAC-SHA256 "):].split(","):
            key, sep, field = part.strip().partition("=")
            if not sep:
                raise Refused("the STS request's Authorization is malformed")
            fields[key] = field
        signed = set(fields.get("SignedHeaders", "").split(";"))
        if not {"x-kops-request-sha", "x-amz-date", "host"} <= signed:
            raise Refused("the STS signature does not cover host, x-amz-date and x-kops-request-sha")
        if not fields.get("Signature") or not fields.get("Credential"):
            raise Refused("the STS request has no signature or credential")
        return fields["Signature"]

    def _check_fresh(self, amz_date):
        try:
            signed_at = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            raise Refused("the STS request has no valid X-Amz-Date") from None
        age = self.clock() - signed_at
        if abs(age) > self.max_age:
            raise Refused("the STS request was signed at %s, outside the %d-minute window"
                          % (amz_date, self.max_age.total_seconds() // 60))

    def _forget_old(self):
        now = self.clock()
        for signature in [s for s, seen in self._seen.items() if now - seen > 2 * self.max_age]:
            del self._seen[signature]

    def _caller_identity(self, headers):
        """(arn, account) STS names for the signed request; Refused when STS rejects it."""
        forwarded = {key: _header(headers, key) for key in headers if key.lower() not in ("host", "content-length")}
        request = urllib.request.Request(self.sts_url, data=STS_BODY, method="POST", headers=forwarded)
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.sts_context) as response:  # noqa: S310
                text = response.read()
        except urllib.error.HTTPError as exc:
            raise Refused("STS refused the signed request (HTTP %s): %s" % (exc.code, _sts_error(exc.read()))) from None
        except OSError as exc:
            raise Refused("STS at %s did not answer: %s" % (self.sts_url, exc), status=503) from None
        try:
            root = ElementTree.fromstring(text)
        except ElementTree.ParseError:
            raise Refused("STS answered something that is not XML", status=502) from None
        values = {element.tag.rsplit("}", 1)[-1]: (element.text or "") for element in root.iter()}
        if not values.get("Arn"):
            raise Refused("STS named no caller", status=502)
        return values["Arn"], values.get("Account", "")

    def _instance_identity(self, arn, account):
        if account != self.account_id:
            raise Refused("caller account %s is not this cluster's %s" % (account, self.account_id))
        parts = arn.split(":")
        if len(parts) != 6 or parts[0] != "arn" or parts[1] != self.partition or parts[2] not in ("iam", "sts"):
            raise Refused("caller %s is not an ARN of this partition" % arn)
        resource = parts[5].split("/")
        if resource[0] != "assumed-role" or len(resource) < 3:
            raise Refused("caller %s is not an assumed role (an instance profile's session)" % arn)
        if resource[1] not in self.node_roles:
            raise Refused("caller role %s is not a node role of %s" % (resource[1], self.cluster_name))
        instance_id = resource[2]
        if not INSTANCE_ID.match(instance_id):
            raise Refused("the role session %s is not an instance id" % instance_id)
        reservations = self.ec2.describe_instances(InstanceIds=[instance_id]).get("Reservations") or []
        instances = [i for r in reservations for i in r.get("Instances") or []]
        if len(instances) != 1:
            raise Refused("instance %s: %d instances found" % (instance_id, len(instances)))
        instance = instances[0]
        state = (instance.get("State") or {}).get("Name")
        if state not in ("pending", "running"):
            raise Refused("instance %s is %s" % (instance_id, state))
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags") or []}
        if tags.get(CLUSTER_TAG) != self.cluster_name:
            raise Refused("instance %s is not in cluster %s (%s=%r)"
                          % (instance_id, self.cluster_name, CLUSTER_TAG, tags.get(CLUSTER_TAG)))
        group = tags.get(INSTANCE_GROUP_TAG, "")
        if not INSTANCE_GROUP_NAME.match(group):
            raise Refused("instance %s has no valid %s tag (%r)" % (instance_id, INSTANCE_GROUP_TAG, group))
        names = [instance_id] + [n for n in (instance.get("PrivateDnsName"), instance.get("PrivateIpAddress")) if n]
        node_name = instance_id
        if self.use_ip_based_node_names:
            if not instance.get("PrivateDnsName"):
                raise Refused("instance %s has no private DNS name" % instance_id)
            node_name = instance["PrivateDnsName"]
        return {"instance_id": instance_id, "node_name": node_name, "instance_group": group,
                "certificate_names": names}


def _sts_error(text):
    try:
        root = ElementTree.fromstring(text)
        return " ".join((e.text or "").strip() for e in root.iter() if e.tag.rsplit("}", 1)[-1] in ("Code", "Message"))
    except ElementTree.ParseError:
        return text[:200].decode("utf-8", "replace")


class Issuer(object):
    """Signs what CERTIFICATES allows for a verified identity with the cluster CA (kubernetes-ca)."""

    def __init__(self, ca_pem, ca_key_pem, cert_names=DEFAULT_CERT_NAMES):
        self.ca = certs.load_certificate(ca_pem)
        self.ca_key = certs.load_key(ca_key_pem)
        self.keypair_id = certs.key_id(self.ca)
        self.cert_names = set(cert_names)

    def issue(self, name, request_pem, identity, keypair_ids=None):
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        if name not in self.cert_names or name not in CERTIFICATES:
            raise Refused("certificate %r is not issued by this service (%s)" % (name, ", ".join(sorted(self.cert_names))),
                          status=400)
        if keypair_ids and keypair_ids.get("kubernetes-ca", self.keypair_id) != self.keypair_id:
            raise Refused("the request's kubernetes-ca keypair %s is not the service's %s"
                          % (keypair_ids["kubernetes-ca"], self.keypair_id), status=400)
        wanted = CERTIFICATES[name](identity)
        text = request_pem.encode("ascii") if isinstance(request_pem, str) else request_pem
        if b"CERTIFICATE REQUEST" in text:
            csr = x509.load_pem_x509_csr(text)
            if not csr.is_signature_valid:
                raise Refused("the %s CSR's signature is not valid" % name, status=400)
            asked = csr.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
            asked_cn = asked[0].value if asked else ""
            asked_orgs = sorted(a.value for a in csr.subject.get_attributes_for_oid(x509.oid.NameOID.ORGANIZATION_NAME))
            if asked_cn != wanted["common_name"] or asked_orgs != sorted(wanted["organizations"]):
                raise Refused("the %s CSR asks for CN=%s O=%s; instance %s may only have CN=%s O=%s"
                              % (name, asked_cn, asked_orgs, identity["instance_id"], wanted["common_name"],
                                 wanted["organizations"]))
            public_key = csr.public_key()
        else:
            body = b"".join(line for line in text.strip().splitlines() if not line.startswith(b"-----"))
            try:
                public_key = serialization.load_der_public_key(base64.b64decode(body))
            except ValueError:
                raise Refused("the %s public key does not parse" % name, status=400) from None
        names = wanted.get("names") or []
        dns_names = [n for n in names if not re.match(r"^[0-9.:]+$", n)]
        ips = [n for n in names if re.match(r"^[0-9.:]+$", n)]
        # kops skews each node's validity by up to 30 days, from the node's name, so a fleet made at once
        # does not expire at once.
        skew = int(hashlib.sha256(identity["node_name"].encode("utf-8")).hexdigest(), 16) % VALIDITY_SKEW_HOURS
        certificate, _key = certs.issue(self.ca, self.ca_key, wanted["common_name"], wanted["organizations"],
                                        wanted["usages"], dns_names, ips, key=_PublicOnly(public_key),
                                        validity=datetime.timedelta(hours=LEAF_VALIDITY_HOURS + skew))
        return certs.certificate_pem(certificate).decode("ascii")


class _PublicOnly(object):
    """certs.issue takes a key pair; the service holds only the node's public key."""

    def __init__(self, public_key):
        self._public = public_key

    def public_key(self):
        return self._public


class NodeConfigs(object):
    """igconfig/node/<group>/nodeupconfig.yaml from the store (kops-controller's getNodeConfig): file:// or s3://."""

    def __init__(self, config_base, s3=None):
        self.config_base = config_base.rstrip("/")
        self.s3 = s3

    def read(self, group):
        if not INSTANCE_GROUP_NAME.match(group):
            raise Refused("invalid instance group name %r" % group, status=400)
        relpath = "igconfig/node/%s/nodeupconfig.yaml" % group
        scheme, _sep, rest = self.config_base.partition("://")
        try:
            if scheme == "file":
                with open("/%s/%s" % (rest.lstrip("/"), relpath), "rb") as handle:
                    return handle.read().decode("utf-8")
            if scheme == "s3":
                bucket, _sep, key = rest.partition("/")
                answer = self.s3.get_object(Bucket=bucket, Key="/".join(p for p in (key.strip("/"), relpath) if p))
                return answer["Body"].read().decode("utf-8")
        except (OSError, KeyError) as exc:
            raise Refused("no nodeup config for instance group %s: %s" % (group, exc), status=400) from None
        except Exception as exc:  # botocore's ClientError (NoSuchKey, AccessDenied) without importing botocore here
            if type(exc).__name__ == "ClientError":
                raise Refused("no nodeup config for instance group %s: %s" % (group, exc), status=400) from None
            raise
        raise NodeError("config_base %s: the bootstrap service reads file:// and s3:// stores" % self.config_base)


class BootstrapService(object):
    """One request in, one answer out: (status, JSON-able body or text, log line)."""

    def __init__(self, verifier, issuer, node_configs):
        self.verifier = verifier
        self.issuer = issuer
        self.node_configs = node_configs

    def handle(self, authorization, body):
        try:
            identity = self.verifier.verify(authorization, body)
        except Refused as exc:
            # kops answers no detail to the caller; the reason goes to the service's log.
            return exc.status, "failed to verify token", "refused: %s" % exc
        try:
            request = json.loads(body.decode("utf-8"))
            if not isinstance(request, dict) or request.get("apiVersion") != API_VERSION:
                raise Refused("unexpected apiVersion (want %s)" % API_VERSION, status=400)
            answer = {"Certs": {}}
            if request.get("includeNodeConfig"):
                answer["nodeConfig"] = {"nodeupConfig": self.node_configs.read(identity["instance_group"]),
                                        "nodeSecrets": {}}
            for name, pem in sorted((request.get("certs") or {}).items()):
                answer["Certs"][name] = self.issuer.issue(name, pem, identity, request.get("keypairIDs"))
        except Refused as exc:
            return exc.status, str(exc), "refused %s: %s" % (identity["instance_id"], exc)
        except ValueError as exc:
            return 400, "failed to decode: %s" % exc, "bad request from %s: %s" % (identity["instance_id"], exc)
        return 200, answer, "bootstrapped %s (%s, group %s): %s%s" % (
            identity["instance_id"], identity["node_name"], identity["instance_group"],
            ", ".join(sorted(answer["Certs"])), ", nodeup config" if "nodeConfig" in answer else "")


def _handler(service, log):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - the base class's signature
            return  # one line per request is written by _answer

        def _answer(self, status, body, line):
            log("%s %s %s %d %s" % (self.client_address[0], self.command, self.path, status, line))
            data = (json.dumps(body) if isinstance(body, dict) else body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if isinstance(body, dict) else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/healthz":
                return self._answer(200, "ok", "health")
            return self._answer(404, "not found", "")

        def do_POST(self):
            if self.path != "/bootstrap":
                return self._answer(404, "not found", "")
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                return self._answer(400, "a bootstrap request needs a body of at most %d bytes" % MAX_BODY, "no body")
            body = self.rfile.read(length)
            return self._answer(*service.handle(self.headers.get("Authorization", ""), body))
    return Handler


def serve(service, listen, cert_file, key_file, log=None):
    """An HTTPS server for service (not started): server.serve_forever() runs it."""
    host, _sep, port = listen.rpartition(":")
    server = http.server.ThreadingHTTPServer((host.strip("[]") or "0.0.0.0", int(port)),
                                             _handler(service, log or _stderr))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def _stderr(line):
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def from_config(config):
    """A BootstrapService from its config file: the control plane's kubeops.bootstrapService section of the
    nodeup config (nodeconfig/credentials.bootstrap_settings), plus endpoint overrides (stsEndpoint, ec2Endpoint, s3Endpoint)."""
    import botocore.session
    session = botocore.session.get_session()
    region = config["region"]

    def client(name):
        return session.create_client(name, region_name=region, endpoint_url=config.get("%sEndpoint" % name) or None)
    sts_url = config.get("stsEndpoint") or "https://sts.%s.amazonaws.com/" % region
    account = config.get("accountId") or client("sts").get_caller_identity()["Account"]
    with open(config["caCert"], "rb") as handle:
        ca_pem = handle.read()
    with open(config["caKey"], "rb") as handle:
        ca_key_pem = handle.read()
    verifier = AwsVerifier(config["clusterName"], config["nodeRoles"], account, sts_url, client("ec2"),
                           partition=config.get("partition") or "aws",
                           use_ip_based_node_names=bool(config.get("useIPBasedNodeNames")), region=region)
    s3 = client("s3") if config["configBase"].startswith("s3://") else None
    return BootstrapService(verifier, Issuer(ca_pem, ca_key_pem, config.get("certNames") or DEFAULT_CERT_NAMES),
                            NodeConfigs(config["configBase"], s3))


# fetch_node_config's exit codes: the boot script retries a service that is not there yet, never a refusal.
EXIT_RETRY, EXIT_REFUSED = 1, 3


def fetch_node_config(settings, sha256, dest, credentials=None):
    """A booting worker's nodeup config from the service (kops' nodeup with a ConfigServer): asked with the
    instance's identity, refused unless its sha256 is the one the launch template pins (kops' NodeupConfigHash).

    settings: the boot script's {server, region, caCert, stsEndpoint?}.  Returns an exit code (0, EXIT_RETRY,
    EXIT_REFUSED) and writes dest (0600) only when the config is the pinned one."""
    if credentials is None:
        import botocore.session
        found = botocore.session.get_session().get_credentials()
        if found is None:
            _stderr("no AWS credentials (the instance profile's): cannot prove this node's identity")
            return EXIT_RETRY  # the instance profile's credentials may not be there yet
        credentials = found.get_frozen_credentials()
    region = settings["region"]
    sts = settings.get("stsEndpoint") or "https://sts.%s.amazonaws.com/" % region
    try:
        _issued, text = request_bootstrap(settings["server"], settings["caCert"], credentials, sts, region,
                                          cert_names=(), include_node_config=True)
    except Refused as exc:
        _stderr(str(exc))
        return EXIT_RETRY if exc.status >= 500 else EXIT_REFUSED
    except OSError as exc:
        _stderr("the bootstrap service at %s could not be reached: %s" % (settings["server"], exc))
        return EXIT_RETRY
    data = (text or "").encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        _stderr("the nodeup config the bootstrap service answered has sha256 %s, not the pinned %s: refused"
                % (digest, sha256))
        return EXIT_REFUSED
    atomic_write(dest, 0o600, data)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 4 and argv[0] == "node-config":
        with open(argv[1]) as handle:
            return fetch_node_config(json.load(handle), argv[2], argv[3])
    if len(argv) != 1:
        _stderr("usage: python3 -m ...nodeup.bootstrap_service CONFIG.json  (the service)\n"
                "       python3 -m ...nodeup.bootstrap_service node-config SETTINGS.json SHA256 DEST  (a worker)")
        return 2
    with open(argv[0]) as handle:
        config = json.load(handle)
    listen = config.get("listen") or ":%d" % PORT
    server = serve(from_config(config), listen, config["serverCert"], config["serverKey"])
    _stderr("kubeops bootstrap service for %s listening on %s" % (config["clusterName"], listen))
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
