# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops' `channels apply channel` (channels/pkg/channels): an addons channel applied to a cluster.

A channel (`kind: Addons`, kops' bootstrap-channel.yaml) lists addons: name, id, manifest (relative
to the channel), manifestHash, namespace, needsRollingUpdate, prune.  What was applied is recorded
as kops records it: on the addon's namespace (kube-system by default) an annotation
`addons.k8s.io/<name>` whose value is Go's JSON of {"channel", "id", "manifestHash",
"systemGeneration"}.  An addon is applied when it was never applied, or its id or manifestHash
differ, or the recorded systemGeneration is older; then: server-side apply of every object (forced,
as kops forces), prune of the objects of the prune kinds the manifest no longer has, the
needs-update annotation on the nodes an updated addon names, and the record.

Layers: ApiService (HTTP calls over the `kubernetes` client's ApiClient, discovery), ChannelRunner
(plan, then apply), the module (plugins/modules/channel_apply.py) only parses options and reports.
"""

from __future__ import annotations

import hashlib
import json
import posixpath

from ansible_collections.kubeops.kops.plugins.module_utils import waits
from ansible_collections.kubeops.kops.plugins.module_utils.errors import KubeError, unreachable

ANNOTATION_PREFIX = "addons.k8s.io/"
SYSTEM_GENERATION = 1  # kops' CurrentSystemGeneration: 1 since prune exists
DEFAULT_NAMESPACE = "kube-system"
FIELD_MANAGER = "kubeops-channels"  # kops' is "kops"; ours names this collection's channel applier
NEEDS_UPDATE_ANNOTATION = "kops.k8s.io/needs-update"  # read by rolling updates (validation.py, kops' AdjustNeedUpdate)
# needsRollingUpdate -> the nodes annotated.  kops selects control-plane nodes by the old
# node-role.kubernetes.io/master label, which nodes no longer carry (populate.py ROLE_NODE_LABELS):
# ours selects them by the control-plane label they do carry.
ROLLING_UPDATE_SELECTORS = {"control-plane": "node-role.kubernetes.io/control-plane=",
                            "workers": "node-role.kubernetes.io/node=",
                            "all": ""}
# Applied first, in this order: what the rest of a manifest may live in or be an instance of.
FIRST_KINDS = (("", "Namespace"), ("apiextensions.k8s.io", "CustomResourceDefinition"))
# needsPKI (kops' installPKI): a CA of the addon's own in this Secret, and a cert-manager CA Issuer over it,
# both named after the addon, in kube-system.
PKI_NAMESPACE = "kube-system"
ISSUER_API = "cert-manager.io/v1"
CRD_WAIT_SECONDS = 30  # how long a kind a CRD of this run defines may take to be served
ADDON_FIELDS = {"name", "namespace", "selector", "manifest", "manifestHash", "kubernetesVersion", "id",
                "needsRollingUpdate", "needsPKI", "version", "prune"}
PRUNE_KIND_FIELDS = {"group", "kind", "namespaces", "labelSelector", "fieldSelector"}


class ChannelError(KubeError):
    pass


class ApiCallError(ChannelError):
    def __init__(self, message, status=None):
        ChannelError.__init__(self, message)
        self.status = status


# -- reading the channel and its manifests -------------------------------------------------------------
def resolve(channel_location, manifest):
    """A manifest's location: absolute as given, else relative to the channel's directory (kops'
    ResolveReference), for URLs of any scheme and for paths."""
    if "://" in manifest or manifest.startswith("/"):
        return manifest
    base = channel_location.rsplit("/", 1)[0] if "/" in channel_location else "."
    scheme, sep, path = base.partition("://")
    if not sep:
        return posixpath.normpath(posixpath.join(base, manifest))
    host, _slash, rest = path.partition("/")
    return "%s://%s%s" % (scheme, host, posixpath.normpath(posixpath.join("/" + rest, manifest)))


class LocationReader(object):
    """Bytes at a state-store URL (s3://, gs://, file://, memfs://), an http(s) URL or a path on this host; one
    store client per directory, so a channel's manifests share their channel's."""

    def __init__(self, endpoint=None):
        self.endpoint = endpoint
        self._stores = {}

    def __call__(self, location):
        if location.startswith(("http://", "https://")):
            return self._http(location)
        from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
        directory, _sep, name = location.rstrip("/").rpartition("/")
        if not name or not directory or directory.endswith(":/"):
            raise ChannelError("%s: expected the location of a file (a URL or path ending in its name)" % location)
        try:
            if directory not in self._stores:
                self._stores[directory] = vfs.open_store(directory, endpoint=self.endpoint)
            return self._stores[directory].read(name)
        except vfs.StoreError as exc:
            raise ChannelError("cannot read %s: %s" % (location, exc))

    @staticmethod
    def _http(location):
        import requests  # pylint: disable=import-outside-toplevel
        try:
            response = requests.get(location, timeout=30)
        except requests.RequestException as exc:
            raise ChannelError("cannot read %s: %s" % (location, exc))
        if response.status_code != 200:
            raise ChannelError("cannot read %s: HTTP %s" % (location, response.status_code))
        return response.content


def _yaml():
    import yaml  # pylint: disable=import-outside-toplevel
    return yaml


def _hash(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_channel(data, location):
    """[addon]: each {name, namespace, id, manifest (resolved), manifestHash, kubernetesVersion,
    needsRollingUpdate, prune}; a later entry of the same name wins, as in kops' menu.

    A document that is not `kind: Addons` is one addon of its own, as kops treats a plain manifest
    channel: named manifest-<12 hex of sha256(location)>, manifestHash the sha256 of its text."""
    yaml = _yaml()
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        documents = [d for d in yaml.safe_load_all(text.strip()) if d]
    except yaml.YAMLError as exc:
        raise ChannelError("channel %s is not YAML: %s" % (location, exc))
    if not documents:
        return []
    first = documents[0]
    if not (isinstance(first, dict) and first.get("kind") == "Addons" and not first.get("apiVersion")):
        name = "manifest-" + _hash(location)[:12]
        return [{"name": name, "namespace": DEFAULT_NAMESPACE, "id": "", "manifest": location,
                 "manifestHash": _hash(text.strip()), "kubernetesVersion": "", "needsRollingUpdate": "",
                 "prune": None, "needsPKI": False}]
    default_name = (first.get("metadata") or {}).get("name") or ""
    addons = {}
    for index, spec in enumerate((first.get("spec") or {}).get("addons") or []):
        where = "channel %s: spec.addons[%d]" % (location, index)
        if not isinstance(spec, dict):
            raise ChannelError("%s is not a mapping" % where)
        unknown = sorted(set(spec) - ADDON_FIELDS)
        if unknown:
            raise ChannelError("%s: unknown field(s) %s (kops' AddonSpec has %s)"
                               % (where, ", ".join(unknown), ", ".join(sorted(ADDON_FIELDS))))
        rolling = spec.get("needsRollingUpdate") or ""
        if rolling not in ROLLING_UPDATE_SELECTORS and rolling != "":
            raise ChannelError("%s: needsRollingUpdate %r is none of %s"
                               % (where, rolling, ", ".join(ROLLING_UPDATE_SELECTORS)))
        if not spec.get("manifest"):
            raise ChannelError("%s: manifest is required" % where)
        for kind_index, kind in enumerate((spec.get("prune") or {}).get("kinds") or []):
            unknown = sorted(set(kind) - PRUNE_KIND_FIELDS)
            if unknown or not kind.get("kind"):
                raise ChannelError("%s.prune.kinds[%d]: needs kind, may have %s (unknown: %s)" % (
                    where, kind_index, ", ".join(sorted(PRUNE_KIND_FIELDS)), ", ".join(unknown) or "none"))
        name = spec.get("name") or default_name
        addons[name] = {"name": name, "namespace": spec.get("namespace") or DEFAULT_NAMESPACE,
                        "id": spec.get("id") or "", "manifest": resolve(location, spec["manifest"]),
                        "manifestHash": spec.get("manifestHash") or "",
                        "kubernetesVersion": spec.get("kubernetesVersion") or "",
                        "needsRollingUpdate": rolling, "prune": spec.get("prune"),
                        "needsPKI": bool(spec.get("needsPKI"))}
    return list(addons.values())


def parse_manifest(data, location):
    """The objects of a manifest, in order; each must name its apiVersion, kind and metadata.name."""
    yaml = _yaml()
    try:
        documents = [d for d in yaml.safe_load_all(data) if d]
    except yaml.YAMLError as exc:
        raise ChannelError("manifest %s is not YAML: %s" % (location, exc))
    for index, obj in enumerate(documents):
        if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind") or \
                not (obj.get("metadata") or {}).get("name"):
            raise ChannelError("manifest %s, document %d: an object needs apiVersion, kind and metadata.name"
                               % (location, index + 1))
    return documents


def group_of(api_version):
    return api_version.rpartition("/")[0]


def describe(obj):
    metadata = obj["metadata"]
    where = "%s/%s" % (metadata["namespace"], metadata["name"]) if metadata.get("namespace") else metadata["name"]
    return "%s %s" % (obj["kind"], where)


def _defines(objects, group, kind):
    """Whether a CustomResourceDefinition among objects defines group/kind."""
    return any(o["kind"] == "CustomResourceDefinition" and (o.get("spec") or {}).get("group") == group and
               ((o.get("spec") or {}).get("names") or {}).get("kind") == kind for o in objects)


# -- what is recorded --------------------------------------------------------------------------------------
def channel_version(addon, channel_name):
    """kops' ChannelVersion for this addon: omitempty drops an empty id and manifestHash, never channel."""
    version = {"channel": channel_name}
    if addon["id"]:
        version["id"] = addon["id"]
    if addon["manifestHash"]:
        version["manifestHash"] = addon["manifestHash"]
    version["systemGeneration"] = SYSTEM_GENERATION
    return version


def encode(version):
    """Go's json.Marshal of the version: fields in struct order, compact, <, > and & escaped."""
    ordered = {k: version[k] for k in ("channel", "id", "manifestHash", "systemGeneration") if k in version}
    text = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replaces(new, existing):
    """kops' ChannelVersion.replaces: a different id or manifestHash, or an older system generation."""
    if (new.get("id") or "") != (existing.get("id") or ""):
        return True
    if (new.get("manifestHash") or "") != (existing.get("manifestHash") or ""):
        return True
    return int(existing.get("systemGeneration") or 0) < int(new.get("systemGeneration") or 0)


def installed_versions(namespaces):
    """({"<namespace>:<addon>": version}, warnings) from the namespaces' addons.k8s.io/ annotations;
    an annotation that is not JSON is skipped with a warning, as kops does."""
    found, warnings = {}, []
    for namespace in namespaces:
        for key, value in ((namespace.get("metadata") or {}).get("annotations") or {}).items():
            if not key.startswith(ANNOTATION_PREFIX):
                continue
            try:
                version = json.loads(value)
                if not isinstance(version, dict):
                    raise KubeError(value)
            except ValueError:
                warnings.append("namespace %s: annotation %s=%r is not an addon version; ignored"
                                % (namespace["metadata"]["name"], key, value))
                continue
            found["%s:%s" % (namespace["metadata"]["name"], key[len(ANNOTATION_PREFIX):])] = version
    return found, warnings


def server_version(git_version):
    """v1.34.2-eks-1 -> 1.34.2 (kops drops the pre-release before matching kubernetesVersion ranges)."""
    return git_version.lstrip("v").split("-", 1)[0].split("+", 1)[0]


# -- the API ------------------------------------------------------------------------------------------------
class Resource(object):
    def __init__(self, api_version, kind, plural, namespaced):
        self.api_version, self.kind, self.plural, self.namespaced = api_version, kind, plural, namespaced

    def path(self, namespace=None, name=None):
        base = "/api/v1" if self.api_version == "v1" else "/apis/" + self.api_version
        if self.namespaced and namespace:
            base += "/namespaces/" + namespace
        base += "/" + self.plural
        return base + "/" + name if name else base


class ApiService(object):
    """The Kubernetes API calls a channel needs, over requests (a runtime dependency, so a control-plane node
    needs nothing more), with discovery of group/version/kind -> resource.  mutations counts the writes."""

    def __init__(self, host, session, cleanup=None, sleep=None):
        import time  # pylint: disable=import-outside-toplevel
        self.host, self.session, self._cleanup = host.rstrip("/"), session, cleanup
        self.sleep = sleep or time.sleep
        self._versions = {}  # group/version -> {kind: Resource} (None: not served)
        self._preferred = None  # group -> preferred group/version
        self.mutations = 0

    @classmethod
    def from_credentials(cls, server, ca_pem, certificate_pem, key_pem):
        """A client certificate held in memory: TLS needs it in files, so they live 0600 in a 0700 directory of
        this run only (close() removes them)."""
        import os  # pylint: disable=import-outside-toplevel
        import shutil  # pylint: disable=import-outside-toplevel
        import tempfile  # pylint: disable=import-outside-toplevel
        import requests  # pylint: disable=import-outside-toplevel
        directory = tempfile.mkdtemp(prefix="kubeops-channels-")
        paths = {}
        for name, data in (("ca.crt", ca_pem), ("client.crt", certificate_pem), ("client.key", key_pem)):
            paths[name] = os.path.join(directory, name)
            with os.fdopen(os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
                handle.write(data)
        session = requests.Session()
        session.verify, session.cert = paths["ca.crt"], (paths["client.crt"], paths["client.key"])
        return cls(server, session, cleanup=lambda: shutil.rmtree(directory, ignore_errors=True))

    @classmethod
    def from_kubeconfig(cls, path=None, context=None):
        """A kubeconfig file, read by the `kubernetes` client (contexts, exec plugins, tokens, its own temp
        files for inline certificates); the calls still go through requests."""
        from ansible_collections.kubeops.kops.plugins.module_utils.kube.client import KubeClient
        import requests  # pylint: disable=import-outside-toplevel
        configuration = KubeClient.from_kubeconfig(path, context).api_client.configuration
        session = requests.Session()
        session.verify = (configuration.ssl_ca_cert or True) if configuration.verify_ssl else False
        if configuration.cert_file:
            session.cert = (configuration.cert_file, configuration.key_file)
        token = configuration.api_key.get("authorization") or configuration.api_key.get("BearerToken")
        if token:
            session.headers["Authorization"] = token if " " in token else "Bearer " + token
        return cls(configuration.host, session)

    def close(self):
        self.session.close()
        if self._cleanup:
            self._cleanup()

    def call(self, method, path, query=None, body=None, content_type=None):
        import requests  # pylint: disable=import-outside-toplevel
        headers = {"Accept": "application/json", "User-Agent": "kubeops-channels"}
        if content_type:
            headers["Content-Type"] = content_type
        if method != "GET":
            self.mutations += 1
        try:
            # verify given per request: requests lets REQUESTS_CA_BUNDLE override the session's own
            response = self.session.request(method, self.host + path, params=query, headers=headers, timeout=30,
                                            data=None if body is None else json.dumps(body),
                                            verify=self.session.verify)
        except (requests.RequestException, OSError) as exc:
            raise ApiCallError("cannot reach the Kubernetes API at %s (%s %s): %s"
                               % (self.host, method, path, unreachable(exc)))
        if not 200 <= response.status_code < 300:
            try:
                message = response.json().get("message") or response.reason
            except ValueError:
                message = response.text[:200] or response.reason
            raise ApiCallError("%s %s: HTTP %s %s" % (method, path, response.status_code, message),
                               response.status_code)
        return response.json() if response.content else {}

    # discovery
    def _kinds(self, group_version):
        if group_version not in self._versions:
            path = "/api/v1" if group_version == "v1" else "/apis/" + group_version
            try:
                listed = self.call("GET", path)
            except ApiCallError as exc:
                if exc.status != 404:
                    raise
                listed = None
            self._versions[group_version] = None if listed is None else {
                r["kind"]: Resource(group_version, r["kind"], r["name"], r.get("namespaced", False))
                for r in listed.get("resources") or [] if "/" not in r["name"]}
        return self._versions[group_version]

    def forget_discovery(self):
        self._versions, self._preferred = {}, None

    def resource(self, api_version, kind):
        """The Resource serving api_version/kind, or None."""
        return (self._kinds(api_version) or {}).get(kind)

    def resource_of_group_kind(self, group, kind):
        """The Resource of group/kind at the group's preferred version (kops' RESTMapping), or None."""
        if not group:
            return self.resource("v1", kind)
        if self._preferred is None:
            self._preferred = {g["name"]: (g.get("preferredVersion") or g["versions"][0])["groupVersion"]
                               for g in self.call("GET", "/apis").get("groups") or []}
        version = self._preferred.get(group)
        return self.resource(version, kind) if version else None

    def wait_for_resource(self, api_version, kind, seconds):
        """The Resource, polling discovery for up to seconds (a CRD applied this run becomes served)."""
        for _attempt in range(int(seconds)):
            self.forget_discovery()
            found = self.resource(api_version, kind)
            if found:
                return found
            self.sleep(1)
        return None

    # objects
    def version(self):
        return self.call("GET", "/version")

    def list(self, resource, namespace=None, label_selector="", field_selector=""):
        query, items = {"limit": 500}, []
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        while True:
            page = self.call("GET", resource.path(namespace), query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def apply(self, resource, obj):
        metadata = obj["metadata"]
        return self.call("PATCH", resource.path(metadata.get("namespace"), metadata["name"]),
                         {"fieldManager": FIELD_MANAGER, "force": "true"}, obj, "application/apply-patch+yaml")

    def delete(self, resource, namespace, name):
        return self.call("DELETE", resource.path(namespace, name))

    def exists(self, resource, namespace, name):
        try:
            self.call("GET", resource.path(namespace, name))
        except ApiCallError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def create(self, resource, obj):
        """POST; an object that exists already (a concurrent run made it) is left as it is."""
        try:
            return self.call("POST", resource.path(obj["metadata"].get("namespace")), body=obj)
        except ApiCallError as exc:
            if exc.status != 409:
                raise
            return None

    def annotate(self, resource, name, annotations):
        """kops' strategic-merge patch of metadata.annotations."""
        return self.call("PATCH", resource.path(None, name), body={"metadata": {"annotations": annotations}},
                         content_type="application/strategic-merge-patch+json")


# -- plan and apply ---------------------------------------------------------------------------------------
class ChannelRunner(object):
    """Plan (reads only), then apply what the plan found to do, as kops' applyMenu + EnsureUpdated."""

    def __init__(self, api, channel_location, read=None, channel_name=None):
        self.api = api
        self.location = channel_location
        self.channel_name = channel_name or channel_location  # kops records the channel argument as given
        self.read = read or LocationReader()
        self.warnings = []

    def _namespaced(self, resource, obj):
        """obj with its namespace set as the API will store it (default for a namespaced kind without one)."""
        obj = dict(obj, metadata=dict(obj["metadata"]))
        if resource.namespaced:
            obj["metadata"].setdefault("namespace", "default")
        else:
            obj["metadata"].pop("namespace", None)
        return obj

    def addons(self):
        addons = parse_channel(self.read(self.location), self.location)
        if any(a["kubernetesVersion"] for a in addons):
            from ansible_collections.kubeops.kops.plugins.module_utils import semver
            running = server_version(self.api.version().get("gitVersion") or "")
            kept = []
            for addon in addons:
                try:
                    if not addon["kubernetesVersion"] or semver.in_range(running, addon["kubernetesVersion"]):
                        kept.append(addon)
                except ValueError as exc:  # kops skips an unparsable range with a warning
                    self.warnings.append("addon %s: kubernetesVersion %r: %s; skipped"
                                         % (addon["name"], addon["kubernetesVersion"], exc))
            addons = kept
        return addons

    def plan(self):
        """[update]: per addon {name, namespace, action: install|update|unchanged, current, wanted, manifest,
        objects: [...], needs_rolling_update}; objects only for addons to apply."""
        installed, warnings = installed_versions(self.api.list(self.api.resource("v1", "Namespace")))
        self.warnings += warnings
        updates = []
        for addon in self.addons():
            wanted = channel_version(addon, self.channel_name)
            current = installed.get("%s:%s" % (addon["namespace"], addon["name"]))
            action = "install" if current is None else "update" if replaces(wanted, current) else "unchanged"
            # kops installs a missing PKI even when the addon's version is unchanged.
            install_pki = addon["needsPKI"] and not self.pki_installed(addon)
            if install_pki and action == "unchanged":
                action = "pki"
            update = {"name": addon["name"], "namespace": addon["namespace"], "action": action,
                      "current": current, "wanted": wanted, "manifest": addon["manifest"], "addon": addon,
                      "install_pki": install_pki, "objects": []}
            if action in ("install", "update"):
                update["objects"] = parse_manifest(self.read(addon["manifest"]), addon["manifest"])
            updates.append(update)
        return updates

    def _issuer_resource(self):
        return self.api.resource(ISSUER_API, "Issuer")

    def pki_installed(self, addon):
        """kops' IsPKIInstalled: the addon's CA Secret and its Issuer both exist."""
        issuers = self._issuer_resource()
        if issuers is None:
            return False
        secrets = self.api.resource("v1", "Secret")
        return all(self.api.exists(resource, PKI_NAMESPACE, name)
                   for resource, name in ((secrets, addon["name"] + "-ca"), (issuers, addon["name"])))

    def install_pki(self, addon):
        """kops' installPKI: a self-signed CA (CN: the addon's name) in Secret <name>-ca, and a CA Issuer <name>
        over it; an existing Secret is kept (its CA may have signed certificates already)."""
        from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
        issuers = self._issuer_resource()
        if issuers is None:
            raise ChannelError("needsPKI: the API does not serve %s Issuer; install cert-manager (spec.certManager."
                               "enabled: true) before this addon" % ISSUER_API)
        name = addon["name"]
        secrets = self.api.resource("v1", "Secret")
        if not self.api.exists(secrets, PKI_NAMESPACE, name + "-ca"):
            certificate, key = certs.new_ca(name)
            self.api.create(secrets, {
                "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": name + "-ca", "namespace": PKI_NAMESPACE},
                "stringData": {"tls.crt": certs.certificate_pem(certificate).decode("ascii"),
                               "tls.key": certs.key_pem(key).decode("ascii")}})
        if not self.api.exists(issuers, PKI_NAMESPACE, name):
            self.api.create(issuers, {"apiVersion": ISSUER_API, "kind": "Issuer",
                                      "metadata": {"name": name, "namespace": PKI_NAMESPACE},
                                      "spec": {"ca": {"secretName": name + "-ca"}}})
        return self._pki_names(name)

    @staticmethod
    def _pki_names(name):
        return ["Secret %s/%s-ca" % (PKI_NAMESPACE, name), "Issuer %s/%s" % (PKI_NAMESPACE, name)]

    def _order(self, objects):
        def rank(obj):
            key = (group_of(obj["apiVersion"]), obj["kind"])
            return FIRST_KINDS.index(key) if key in FIRST_KINDS else len(FIRST_KINDS)
        return sorted(objects, key=rank)  # stable: the manifest's order otherwise

    def _resource_for(self, obj, crds_applied):
        resource = self.api.resource(obj["apiVersion"], obj["kind"])
        if resource is None and crds_applied:
            resource = self.api.wait_for_resource(obj["apiVersion"], obj["kind"], CRD_WAIT_SECONDS)
        if resource is None:
            raise ChannelError("%s: the API serves no %s %s (a CRD missing from the manifest, or a kind this "
                               "Kubernetes version dropped)" % (describe(obj), obj["apiVersion"], obj["kind"]))
        return resource

    def _where(self, obj):
        """obj as the API stores it when its kind is served (the namespace defaulted), else as written."""
        resource = self.api.resource(obj["apiVersion"], obj["kind"])
        return self._namespaced(resource, obj) if resource else obj

    def prune_candidates(self, addon, objects):
        """[(Resource, namespace, name)] of the prune kinds' objects (by their selectors) that the manifest no
        longer has, kops' Pruner (kept by namespace/name as the API stores them)."""
        spec = addon.get("prune") or {}
        keep = {}
        for obj in map(self._where, objects):
            key = (group_of(obj["apiVersion"]), obj["kind"])
            keep.setdefault(key, set()).add((obj["metadata"].get("namespace") or "", obj["metadata"]["name"]))
        doomed = []
        for kind in spec.get("kinds") or []:
            group = kind.get("group") or ""
            resource = self.api.resource_of_group_kind(group, kind["kind"])
            if resource is None and _defines(objects, group, kind["kind"]):
                continue  # the manifest's own CRD, not served yet (check mode before the first apply): none exist
            if resource is None:
                raise ChannelError("addon %s: prune kind %s%s is not served by the API"
                                   % (addon["name"], kind["kind"], "." + group if group else ""))
            for namespace in kind.get("namespaces") or [None]:
                for found in self.api.list(resource, namespace, kind.get("labelSelector") or "",
                                           kind.get("fieldSelector") or ""):
                    metadata = found["metadata"]
                    if (metadata.get("namespace") or "", metadata["name"]) not in keep.get((group, kind["kind"]), ()):
                        doomed.append((resource, metadata.get("namespace"), metadata["name"]))
        return doomed

    def nodes_to_annotate(self, update):
        """Names of the nodes an updated addon's needsRollingUpdate marks (kops: only on update, not install)."""
        rolling = update["addon"]["needsRollingUpdate"]
        if not rolling or update["action"] != "update":
            return []
        nodes = self.api.list(self.api.resource("v1", "Node"), label_selector=ROLLING_UPDATE_SELECTORS[rolling])
        return [n["metadata"]["name"] for n in nodes
                if NEEDS_UPDATE_ANNOTATION not in (n["metadata"].get("annotations") or {})]

    def preview(self, update):
        """What applying would do, from reads only (check mode)."""
        if update["action"] == "pki":
            return {"applied": [], "pruned": [], "nodes_annotated": [], "pki": self._pki_names(update["name"])}
        objects = [describe(self._where(o)) for o in self._order(update["objects"])]
        doomed = self.prune_candidates(update["addon"], update["objects"])
        pki = self._pki_names(update["name"])
        return {"applied": objects, "pruned": ["%s %s" % (r.kind, "%s/%s" % (ns, n) if ns else n)
                                               for r, ns, n in doomed],
                "nodes_annotated": self.nodes_to_annotate(update), "pki": pki if update["install_pki"] else []}

    def ensure(self, update):
        """Install the PKI, apply, prune, annotate nodes, record: kops' EnsureUpdated.  Returns what was done."""
        pki = self.install_pki(update["addon"]) if update["install_pki"] else []
        if update["action"] == "pki":
            return {"applied": [], "pruned": [], "nodes_annotated": [], "pki": pki}
        applied, crds_applied = [], False
        for obj in self._order(update["objects"]):
            resource = self._resource_for(obj, crds_applied)
            obj = self._namespaced(resource, obj)
            self.api.apply(resource, obj)
            applied.append(describe(obj))
            crds_applied = crds_applied or obj["kind"] == "CustomResourceDefinition"
        pruned = []
        for resource, namespace, name in self.prune_candidates(update["addon"], update["objects"]):
            try:
                self.api.delete(resource, namespace, name)
            except ApiCallError as exc:
                if exc.status != 404:  # gone already (deleted with its namespace or owner): pruned
                    raise
            pruned.append("%s %s" % (resource.kind, "%s/%s" % (namespace, name) if namespace else name))
        nodes = self.nodes_to_annotate(update)
        node_resource = self.api.resource("v1", "Node")
        for node in nodes:
            self.api.annotate(node_resource, node, {NEEDS_UPDATE_ANNOTATION: ""})
        self.api.annotate(self.api.resource("v1", "Namespace"), update["namespace"],
                          {ANNOTATION_PREFIX + update["name"]: encode(update["wanted"])})
        return {"applied": applied, "pruned": pruned, "nodes_annotated": nodes, "pki": pki}

    def run(self, check_mode=False):
        """{changed, addons: [...], errors: [...]}: every addon planned; those to apply applied (unless
        check_mode), one addon's failure reported without stopping the others, as kops goes on."""
        reports, errors = [], []
        for update in self.plan():
            report = {k: update[k] for k in ("name", "namespace", "action", "current", "wanted", "manifest")}
            if update["action"] != "unchanged":
                if not check_mode:  # a step on the console as it happens (module_utils/waits.py)
                    addon_id = (update["wanted"] or {}).get("id")
                    version = ", id %s" % addon_id if addon_id else ""
                    waits.notice("addon %s: %s%s" % (update["name"], update["action"], version))
                try:
                    report.update(self.preview(update) if check_mode else self.ensure(update))
                except ChannelError as exc:
                    report["error"] = str(exc)
                    errors.append("addon %s: %s" % (update["name"], exc))
                if not check_mode:
                    done = "failed: %s" % report["error"] if "error" in report else \
                        "applied %d object(s), pruned %d" % (len(report["applied"]), len(report["pruned"]))
                    waits.notice("addon %s: %s" % (update["name"], done))
            reports.append(report)
        return {"changed": any(r["action"] != "unchanged" for r in reports), "addons": reports, "errors": errors,
                "warnings": self.warnings}


def diff(reports):
    """Ansible's diff: the recorded versions before and after, and per addon the objects applied and pruned."""
    yaml = _yaml()
    changing = [r for r in reports if r["action"] != "unchanged"]
    before = {r["name"]: r["current"] for r in changing}
    after = {r["name"]: dict(r["wanted"], applied=r.get("applied", []), pruned=r.get("pruned", []),
                             nodes_annotated=r.get("nodes_annotated", [])) for r in changing}
    return {"before": yaml.safe_dump(before, default_flow_style=False) if before else "",
            "after": yaml.safe_dump(after, default_flow_style=False) if after else "",
            "before_header": "addons recorded", "after_header": "addons applied"}
