"""A real Kubernetes API for tests: etcd, kube-apiserver and kube-controller-manager as local processes, envtest-style.

The binaries are the ones hack/k8s_binaries.py built (tests/realk8s/binaries.py finds them).  What runs:

- etcd on 127.0.0.1 (free ports, data in a temp dir, no fsync: nothing here outlives the test session);
- kube-apiserver on 127.0.0.1 (or `host`) with its own CA (or the one given: a cluster's kubernetes-ca from its
  keystore, so that what the collection writes from that keystore is what gets checked), a serving certificate
  of that CA for 127.0.0.1/localhost/the host, client-certificate authentication (`--client-ca-file`),
  `--authorization-mode=Node,RBAC`, the default admission plugins plus NodeRestriction, a service-account
  signing key, and an audit log (every request's verb, URI, user and status: `requests_since`);
- kube-controller-manager with the controllers tests need (CONTROLLERS: service accounts and their tokens,
  namespace deletion, garbage collection, PodDisruptionBudget status, Deployments and ReplicaSets, the root CA
  ConfigMap, aggregated ClusterRoles).  Not the node lifecycle controller: no kubelet heartbeats here, so every
  Node would turn Unknown and its pods be evicted.  No scheduler: pods bound by a test name their node.

`start()` waits for /readyz and for the ServiceAccount machinery (each built-in namespace's `default`
ServiceAccount and `kube-root-ca.crt`), within a deadline; a component that exits or misses it raises
StartError naming it and the tail of its log.  `stop()` kills everything (atexit too, and each process dies with
the thread that started it).  `reset()` deletes what tests made since the start and waits until it is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from tests import servers
from tests.realk8s import binaries

CONTROLLERS = ("serviceaccount-controller", "serviceaccount-token-controller", "namespace-controller",
               "garbage-collector-controller", "disruption-controller", "deployment-controller",
               "replicaset-controller", "root-ca-certificate-publisher-controller",
               "clusterrole-aggregation-controller")
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# kops' default service range on AWS: kops' manifests pin kube-dns's clusterIP 100.64.0.10 inside it.
SERVICE_CIDR = "100.64.0.0/13"
ADMIN_GROUPS = ("system:masters",)
SETUP_USER = "kubeops-test-setup"  # this module's own calls (setup, reset): requests_since leaves them out
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
START_SECONDS = 120  # each component's deadline; all three start in ~4 s here (docs/kube-api-test-server.md)
RESET_SECONDS = 60
# Events are the controllers' (they expire by themselves); nothing else is left out of reset().
RESET_SKIPS = {("", "events"), ("events.k8s.io", "events")}
# First in reset(): an admission webhook or policy whose backend does not run refuses writes, and an APIService
# whose service does not run makes discovery partial (the namespace and garbage-collector controllers then stall).
RESET_FIRST = (("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
               ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
               ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
               ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
               ("apiregistration.k8s.io", "apiservices"))
AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
AUDIT_POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived", "ResponseStarted"],
                "rules": [{"level": "None", "users": [CONTROLLER_MANAGER_USER, "system:apiserver"]},
                          {"level": "Metadata"}]}
MUTATING_VERBS = ("create", "update", "patch", "delete", "deletecollection")

_LIVE = set()
_PR_SET_PDEATHSIG = 1


class StartError(RuntimeError):
    """A component did not come up: names it and ends with the tail of its log."""


class ResetError(RuntimeError):
    """What reset() could not delete before its deadline."""


class ApiError(RuntimeError):
    def __init__(self, method, path, status, body):
        RuntimeError.__init__(self, "%s %s: HTTP %s %s" % (method, path, status, body[:500]))
        self.status = status


def free_port(host="127.0.0.1"):
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _die_with_parent():
    """In the child: SIGKILL when the thread that started it ends (the test process killed hard included)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Component(object):
    """One process, its log file in the work dir."""

    def __init__(self, name, argv, workdir):
        self.name, self.argv = name, argv
        self.log_path = os.path.join(workdir, name + ".log")
        # Only from the main thread: PDEATHSIG fires when the starting *thread* ends, so a helper thread's
        # process would die with it.
        main = threading.current_thread() is threading.main_thread()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True, preexec_fn=_die_with_parent if main else None)

    def alive(self):
        return self.process.poll() is None

    def tail(self, lines=40):
        try:
            with open(self.log_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 16384))
                return "\n".join(log.read().decode("utf-8", "replace").splitlines()[-lines:])
        except OSError as exc:
            return "(no log: %s)" % exc

    def failure(self, what):
        state = "running" if self.alive() else "exited with %s" % self.process.returncode
        return StartError("%s %s (%s); the end of its log:\n%s" % (self.name, what, state, self.tail()))

    def rss_bytes(self):
        try:
            with open("/proc/%d/status" % self.process.pid, encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def stop(self):
        """SIGKILL to its process group (anything it started, too): nothing of it is kept, so no graceful stop."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


class RealKubeAPIServer(object):
    """etcd + kube-apiserver + kube-controller-manager (see the module docstring).

    ca: (certificate, key) to serve and trust (default: a fresh CA); host: the address to listen on (a test-host
    bridge's, for a unit on a test host; the certificate names it too); version: the Kubernetes build to run;
    controllers: kube-controller-manager's --controllers."""

    def __init__(self, ca=None, host="127.0.0.1", version=binaries.NEWER, build=None, controllers=CONTROLLERS):
        self.host, self.version, self.controllers = host, version, tuple(controllers)
        self.build = build or binaries.require_build()
        self.ca_certificate, self.ca_key = ca or certs.new_ca("kubeops-realk8s-ca")
        self.workdir = None
        self.components = []
        self.url = self.etcd_url = None
        self.start_seconds = None
        self._session = None
        self._discovery = {}
        self._baseline = None
        self._namespace_metadata = {}

    # -- lifecycle
    def start(self, attempts=3):
        """Start everything; a port another process took between free_port() and the bind starts it again."""
        started = time.monotonic()
        for attempt in range(attempts):
            self.workdir = tempfile.mkdtemp(prefix="kubeops-realk8s-")
            _LIVE.add(self)
            try:
                self._write_pki()
                self._start_etcd()
                self._start_apiserver()
                self._start_controller_manager()
                self._wait_for_service_accounts()
                self._baseline, self._namespace_metadata = self._snapshot()
                break
            except StartError as exc:
                self.stop()
                if "address already in use" not in str(exc) or attempt == attempts - 1:
                    raise
            except BaseException:
                self.stop()
                raise
        self.start_seconds = time.monotonic() - started
        return self

    def stop(self):
        for component in reversed(self.components):
            component.stop()
        self.components = []
        if self._session is not None:
            self._session.close()
            self._session = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
        _LIVE.discard(self)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def rss_bytes(self):
        """{component: resident set size in bytes} of the running processes."""
        return {c.name: c.rss_bytes() for c in self.components}

    def _path(self, name):
        return os.path.join(self.workdir, name)

    def _write(self, name, data, mode=0o600):
        path = self._path(name)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb") as handle:
            handle.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path

    def _write_pki(self):
        self._write("ca.crt", self.ca_pem)
        serving, key = certs.issue(self.ca_certificate, self.ca_key, "kube-apiserver", usages=("server",),
                                   dns_names=("localhost", "kubernetes", "kubernetes.default",
                                              "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"),
                                   ip_addresses=tuple(sorted({"127.0.0.1", self.host, "100.64.0.1"})))
        self._write("serving.crt", certs.certificate_pem(serving))
        self._write("serving.key", certs.key_pem(key))
        signing = certs.new_private_key()
        self._write("sa.key", certs.key_pem(signing))
        from cryptography.hazmat.primitives import serialization
        self._write("sa.pub", signing.public_key().public_bytes(serialization.Encoding.PEM,
                                                                serialization.PublicFormat.SubjectPublicKeyInfo))
        certificate, key = self.client_credentials(SETUP_USER)
        self._write("setup.crt", certificate)
        self._write("setup.key", key)
        self._write("audit-policy.yaml", yaml.safe_dump(AUDIT_POLICY))

    def _launch(self, name, argv):
        component = Component(name, argv, self.workdir)
        self.components.append(component)
        return component

    def _wait(self, component, what, ready, seconds=START_SECONDS):
        deadline = time.monotonic() + seconds
        while True:
            if not component.alive():
                raise component.failure("exited before %s" % what)
            if ready():
                return
            if time.monotonic() > deadline:
                raise component.failure("not %s within %d s" % (what, seconds))
            time.sleep(0.1)

    def _start_etcd(self):
        import requests
        client, peer = free_port(), free_port()
        self.etcd_url = "http://127.0.0.1:%d" % client
        etcd = self._launch("etcd", [
            str(self.build.binary("etcd")), "--name=default", "--data-dir=%s" % self._path("etcd"),
            "--listen-client-urls=%s" % self.etcd_url, "--advertise-client-urls=%s" % self.etcd_url,
            "--listen-peer-urls=http://127.0.0.1:%d" % peer,
            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % peer,
            "--initial-cluster=default=http://127.0.0.1:%d" % peer, "--unsafe-no-fsync", "--log-level=warn"])

        def healthy():
            try:
                return requests.get(self.etcd_url + "/health", timeout=2).json().get("health") == "true"
            except (requests.RequestException, ValueError):
                return False
        self._wait(etcd, "healthy", healthy)

    def _start_apiserver(self):
        port = free_port(self.host)
        self.url = "https://%s:%d" % (self.host, port)
        apiserver = self._launch("kube-apiserver", [
            str(self.build.binary("kube-apiserver", self.version)),
            "--etcd-servers=%s" % self.etcd_url, "--bind-address=%s" % self.host, "--secure-port=%d" % port,
            "--advertise-address=%s" % self.host, "--cert-dir=%s" % self._path("certs"),
            "--tls-cert-file=%s" % self._path("serving.crt"), "--tls-private-key-file=%s" % self._path("serving.key"),
            "--client-ca-file=%s" % self._path("ca.crt"),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=%s" % self._path("sa.pub"),
            "--service-account-signing-key-file=%s" % self._path("sa.key"),
            "--service-cluster-ip-range=%s" % SERVICE_CIDR,
            "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
            "--allow-privileged=true",
            # The `kubernetes` Service's endpoints would be a loopback address, which Endpoints refuse.
            "--endpoint-reconciler-type=none",
            # Admission webhooks and aggregated APIs reached at their Service's endpoints (none: no pod runs here),
            # never at a cluster IP, which would leave 127.0.0.0/8.
            "--enable-aggregator-routing=true",
            "--audit-policy-file=%s" % self._path("audit-policy.yaml"), "--audit-log-path=%s" % self._path("audit.log"),
            "--audit-log-mode=blocking", "--profiling=false"])

        def ready():
            try:
                return self._rest().get(self.url + "/readyz", timeout=5).status_code == 200
            except OSError:  # requests' errors are OSErrors: refused, reset, TLS handshake before serving
                return False
        self._wait(apiserver, "ready (/readyz)", ready)

    def _start_controller_manager(self):
        self.write_kubeconfig(self._path("controller-manager.kubeconfig"), user=CONTROLLER_MANAGER_USER)
        self._launch("kube-controller-manager", [
            str(self.build.binary("kube-controller-manager", self.version)),
            "--kubeconfig=%s" % self._path("controller-manager.kubeconfig"),
            "--controllers=%s" % ",".join(self.controllers), "--leader-elect=false", "--secure-port=0",
            "--use-service-account-credentials=false",
            "--service-account-private-key-file=%s" % self._path("sa.key"),
            "--root-ca-file=%s" % self._path("ca.crt"), "--service-cluster-ip-range=%s" % SERVICE_CIDR,
            "--kube-api-qps=200", "--kube-api-burst=400"])

    def _wait_for_service_accounts(self):
        def present():
            for namespace in BUILTIN_NAMESPACES:
                for path in ("/api/v1/namespaces/%s/serviceaccounts/default" % namespace,
                             "/api/v1/namespaces/%s/configmaps/kube-root-ca.crt" % namespace):
                    if self._rest().get(self.url + path, timeout=5).status_code != 200:
                        return False
            return True
        manager = next(c for c in self.components if c.name == "kube-controller-manager")
        self._wait(manager, "making each built-in namespace's default ServiceAccount and kube-root-ca.crt", present)

    # -- credentials
    @property
    def ca_pem(self):
        return certs.certificate_pem(self.ca_certificate)

    def client_credentials(self, user="admin", groups=ADMIN_GROUPS):
        """(certificate PEM, key PEM) of a client certificate for user in groups (a node: `system:node:<name>`
        in `system:nodes`)."""
        certificate, key = certs.issue(self.ca_certificate, self.ca_key, user, organizations=tuple(groups))
        return certs.certificate_pem(certificate), certs.key_pem(key)

    def kubeconfig(self, user="admin", groups=ADMIN_GROUPS, context="test"):
        certificate, key = self.client_credentials(user, groups)
        return servers.kubeconfig_document(self.url, self.ca_pem, certificate, key, user=user, context=context)

    def write_kubeconfig(self, path, **kwargs):
        """A kubeconfig file (0600) for user/groups (default: admin in system:masters)."""
        with os.fdopen(os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
            yaml.safe_dump(self.kubeconfig(**kwargs), handle)
        return str(path)

    def api_client(self, user="admin", groups=ADMIN_GROUPS):
        """A `kubernetes` Python client ApiClient for user/groups."""
        import kubernetes
        return kubernetes.config.new_client_from_config_dict(self.kubeconfig(user=user, groups=groups))

    # -- REST, as this module's own user (system:masters)
    def _rest(self):
        if self._session is None:
            import requests
            self._session = requests.Session()
            self._session.trust_env = False  # else REQUESTS_CA_BUNDLE and proxies from the environment win
            self._session.verify = self._path("ca.crt")
            self._session.cert = (self._path("setup.crt"), self._path("setup.key"))
            self._session.headers["User-Agent"] = SETUP_USER
        return self._session

    def request(self, method, path, body=None, query=None, content_type="application/json", ok=(200, 201, 202)):
        """The API's JSON answer; ApiError (with .status) for any other status."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        response = self._rest().request(method, self.url + path, params=query, headers=headers, timeout=30,
                                        data=None if body is None else json.dumps(body))
        if response.status_code not in ok:
            raise ApiError(method, path, response.status_code, response.text)
        try:
            return response.json() if response.content else {}
        except ValueError:
            if response.status_code == 404:  # "404 page not found": a group/version no longer served
                return {}
            raise ApiError(method, path, response.status_code, "not JSON: " + response.text)

    def _resources(self, refresh=False):
        """From aggregated discovery: {"kinds": {(group, version, kind): (plural, namespaced)}, "by_plural":
        {(group, plural): (version, namespaced, verbs)} at each group's first (preferred) version}."""
        if refresh or not self._discovery:
            kinds, plurals = {}, {}
            for path in ("/api", "/apis"):
                listed = self._rest().get(self.url + path, headers={"Accept": AGGREGATED_DISCOVERY}, timeout=30)
                listed.raise_for_status()
                for group in listed.json().get("items") or []:
                    name = group["metadata"].get("name", "")
                    for version in group.get("versions") or []:
                        if version.get("freshness") == "Stale":
                            continue
                        for resource in version.get("resources") or []:
                            kind = resource["responseKind"]["kind"]
                            namespaced = resource.get("scope") == "Namespaced"
                            kinds[(name, version["version"], kind)] = (resource["resource"], namespaced)
                            plurals.setdefault((name, resource["resource"]),
                                               (version["version"], namespaced, tuple(resource.get("verbs") or ())))
            self._discovery = {"kinds": kinds, "by_plural": plurals}
        return self._discovery

    def path(self, api_version, kind, name=None, namespace=None, subresource=None):
        """The URL path of api_version/kind (a kind first looked up, then again after a discovery refresh)."""
        group, _slash, version = api_version.rpartition("/")
        found = self._resources()["kinds"].get((group, version, kind)) or \
            self._resources(refresh=True)["kinds"].get((group, version, kind))
        if found is None:
            raise ApiError("GET", "discovery", 404, "the API serves no %s %s" % (api_version, kind))
        plural, namespaced = found
        base = "/api/v1" if api_version == "v1" else "/apis/" + api_version
        if namespaced:
            base += "/namespaces/%s" % (namespace or "default")
        parts = [base, plural] + [p for p in (name, subresource) if p]
        return "/".join(urllib.parse.quote(p, safe="/") for p in parts)

    def create(self, api_version, kind, obj, namespace=None):
        obj = dict(obj, apiVersion=api_version, kind=kind)
        return self.request("POST", self.path(api_version, kind, namespace=namespace), obj)

    def get(self, api_version, kind, name, namespace=None):
        return self.request("GET", self.path(api_version, kind, name, namespace))

    def set_status(self, api_version, kind, name, status, namespace=None):
        """Replace the object's status through its status subresource (a merge patch of the whole status)."""
        return self.request("PATCH", self.path(api_version, kind, name, namespace, "status"), {"status": status},
                            content_type="application/merge-patch+json")

    def delete(self, api_version, kind, name, namespace=None, grace_seconds=None):
        body = {} if grace_seconds is None else {"gracePeriodSeconds": grace_seconds}
        return self.request("DELETE", self.path(api_version, kind, name, namespace), body)

    # -- the audit log
    def audit_mark(self):
        """A position in the audit log: requests_since(mark) lists what came after."""
        return self._flush_audit()

    def _flush_audit(self):
        """The audit log's size once a marker request of ours is in it: every request answered before is too."""
        marker = "mark-%d-%d" % (os.getpid(), time.monotonic_ns())
        self._rest().get(self.url + "/version", params={"kubeops-mark": marker}, timeout=10)
        deadline = time.monotonic() + 10
        while True:
            with open(self._path("audit.log"), "rb") as log:
                data = log.read()
            if marker.encode() in data:
                return len(data)
            if time.monotonic() > deadline:
                raise RuntimeError("the audit log never recorded the marker request %s" % marker)
            time.sleep(0.02)

    def requests_since(self, mark=0, users=None):
        """[(verb, requestURI, status code, user)] of the audit log after mark, in order: every user's but this
        module's and the controllers' (users: only theirs).  verb is Kubernetes' (get, list, create, patch...)."""
        end = self._flush_audit()
        with open(self._path("audit.log"), "rb") as log:
            log.seek(mark)
            lines = log.read(end - mark).decode("utf-8").splitlines()
        found = []
        for line in lines:
            event = json.loads(line)
            user = event["user"].get("username", "")
            if user == SETUP_USER or (users is not None and user not in users):
                continue
            found.append((event["verb"], event["requestURI"], (event.get("responseStatus") or {}).get("code"), user))
        return found

    def mutations_since(self, mark=0, users=None):
        return [r for r in self.requests_since(mark, users) if r[0] in MUTATING_VERBS]

    # -- reset
    def _list_all(self, group, plural):
        version, _namespaced, _verbs = self._resources()["by_plural"][(group, plural)]
        base = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
        items, query = [], {"limit": 500}
        while True:
            page = self.request("GET", "%s/%s" % (base, plural), query=query, ok=(200, 404))
            items.extend((base, plural, item) for item in page.get("items") or [])
            query["continue"] = (page.get("metadata") or {}).get("continue")
            if not query["continue"]:
                return items

    def _deletable(self):
        """(group, plural) of every resource that can be listed and deleted: RESET_FIRST, namespaces, namespaced
        ones, cluster-scoped ones, CRDs last."""
        plurals = self._resources(refresh=True)["by_plural"]
        last = (("apiextensions.k8s.io", "customresourcedefinitions"),)

        def order(key):  # namespaces first (Terminating: nothing new is admitted in them), then what is in them,
            # then cluster-scoped objects, custom objects before their CRD
            return (key != ("", "namespaces"), not plurals[key][1], key == last[0], key)
        rest = sorted((key for key, (_v, _n, verbs) in plurals.items()
                       if "list" in verbs and "delete" in verbs and key not in RESET_SKIPS and key not in RESET_FIRST),
                      key=order)
        return [key for key in RESET_FIRST if key in plurals] + rest

    def _snapshot(self):
        uids = set()
        for group, plural in self._deletable():
            uids.update(item["metadata"]["uid"] for _b, _p, item in self._list_all(group, plural))
        metadata = {}
        for namespace in BUILTIN_NAMESPACES:
            found = self.request("GET", "/api/v1/namespaces/%s" % namespace)["metadata"]
            metadata[namespace] = {k: dict(found.get(k) or {}) for k in ("labels", "annotations")}
        return uids, metadata

    def _object_path(self, base, plural, item):
        metadata = item["metadata"]
        if metadata.get("namespace"):
            return "%s/namespaces/%s/%s/%s" % (base, metadata["namespace"], plural, metadata["name"])
        return "%s/%s/%s" % (base, plural, metadata["name"])

    def _sweep(self, keys):
        """Delete every object of those resources not in the baseline; what was still there, as 'plural ns/name'."""
        left, terminating = [], set()
        for group, plural in keys:
            for base, _plural, item in self._list_all(group, plural):
                metadata = item["metadata"]
                if metadata["uid"] in self._baseline or (plural == "apiservices" and not item["spec"].get("service")):
                    continue  # a local APIService comes and goes with its CRD
                path = self._object_path(base, plural, item)
                left.append("%s %s" % (plural, "/".join(filter(None, (metadata.get("namespace"), metadata["name"])))))
                if metadata.get("deletionTimestamp") and plural == "namespaces":
                    terminating.add(metadata["name"])
                if metadata.get("deletionTimestamp"):
                    # Being deleted: a finalizer nothing here removes would hold it for ever (a CRD's own cleanup
                    # finalizer is the apiextensions server's, which does run).
                    if metadata.get("finalizers") and plural != "customresourcedefinitions":
                        self.request("PATCH", path, {"metadata": {"finalizers": None}},
                                     content_type="application/merge-patch+json", ok=(200, 404, 409))
                    if plural != "pods":
                        continue
                # A pod bound to a node no kubelet runs would stay Terminating for its grace period: at once.
                options = {"gracePeriodSeconds": 0} if plural == "pods" else {"propagationPolicy": "Background"}
                self.request("DELETE", path, options, ok=(200, 202, 404, 409))
        # A Terminating namespace that holds nothing more: finalized here rather than on the namespace controller's
        # next pass, which comes seconds later.
        holding = {entry.split(" ", 1)[1].split("/")[0] for entry in left if "/" in entry}
        for name in terminating - holding:
            self.request("PUT", "/api/v1/namespaces/%s/finalize" % name,
                         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                          "spec": {"finalizers": []}}, ok=(200, 404, 409))
        return left

    def _restore_namespace_metadata(self):
        for namespace, wanted in self._namespace_metadata.items():
            found = self.request("GET", "/api/v1/namespaces/%s" % namespace)["metadata"]
            patch = {}
            for key in ("labels", "annotations"):
                now = found.get(key) or {}
                change = {k: None for k in now if k not in wanted[key]}
                change.update({k: v for k, v in wanted[key].items() if now.get(k) != v})
                if change:
                    patch[key] = change
            if patch:
                self.request("PATCH", "/api/v1/namespaces/%s" % namespace, {"metadata": patch},
                             content_type="application/merge-patch+json")

    def reset(self, seconds=RESET_SECONDS):
        """Delete everything made since start() (namespaces but the built-in ones, nodes, cluster-scoped objects,
        CRDs and their objects, objects in the built-in namespaces; not events), restore the built-in namespaces'
        labels and annotations, and wait until all of it is gone.  Changes to other built-in objects stay."""
        deadline = time.monotonic() + seconds
        self._sweep([key for key in self._deletable() if key in RESET_FIRST])
        while True:
            left = self._sweep(self._deletable())
            self._restore_namespace_metadata()
            if not left:
                return
            if time.monotonic() > deadline:
                raise ResetError("reset: still there after %d s: %s" % (seconds, ", ".join(sorted(left)[:30])))
            time.sleep(0.2)


@atexit.register
def _stop_all():
    for server in list(_LIVE):
        server.stop()


if __name__ == "__main__":  # by hand: python -m tests.realk8s.apiserver (start time, RSS, a kubeconfig)
    with RealKubeAPIServer() as running:
        config = running.write_kubeconfig(os.path.join(running.workdir, "kubeconfig"))
        print("serving %s after %.1f s; RSS %s; KUBECONFIG=%s (Ctrl-C stops)" % (
            running.url, running.start_seconds,
            ", ".join("%s %d MB" % (name, size // 2 ** 20) for name, size in running.rss_bytes().items()), config),
            flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
