"""A Kubernetes API test server: what a kube-apiserver does for the flows the collection drives.

No kube-apiserver, kubelet or envtest can be installed on these machines, so the tests drive
the real clients (the `kubernetes` Python client, kubectl 1.34) against this server on
127.0.0.1.  It reproduces the behaviours measured on a real kube-apiserver 1.28 and listed in
docs/kube-api-test-server.md (which also says what it does not do):

- TLS with client-certificate authentication (no certificate: 401); authorization: O=system:masters may do
  anything, a node's credential (CN=system:node:<name>, O=system:nodes) may use Nodes, anyone else what the
  stored ClusterRoles/Roles bound to it allow (RBAC), else 403; the NodeRestriction admission plugin's rules
  on Nodes for a node's credential (its own Node only, no labels outside the kubelet's set);
- discovery (/api, /apis, /api/v1, /apis/<g>/<v>, /version, /readyz) in the legacy format;
- any registered group/version/kind stored generically (create, get, list with label/field
  selectors and limit/continue paging, update, patch: strategic-merge, merge, json, apply);
- Pods: 403 without the namespace's ServiceAccount; graceful deletion (Terminating until the
  grace period, capped by `max_grace_seconds`, has passed); evictions honouring PDBs (429);
- status subresources (Nodes keep the status they are created with, Pods start Pending, the
  rest start without status); server-side apply with managedFields and 409 conflicts.

Use it from the `kube_api` fixture (tests/conftest.py) or directly:

    with KubeAPIServer() as server:
        server.write_kubeconfig(path)          # admin, O=system:masters
        server.create("v1", "Node", node)      # direct state access for test setup
"""

from __future__ import annotations

import base64
import copy
import datetime
import http.server
import json
import os
import re
import ssl
import tempfile
import threading
import time
import urllib.parse
import uuid

import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
from tests import servers

# (apiVersion, kind, plural, namespaced, has a status subresource, short names)
BUILTIN_RESOURCES = [
    ("v1", "Namespace", "namespaces", False, True, ["ns"]),
    ("v1", "Node", "nodes", False, True, ["no"]),
    ("v1", "Pod", "pods", True, True, ["po"]),
    ("v1", "ServiceAccount", "serviceaccounts", True, False, ["sa"]),
    ("v1", "ConfigMap", "configmaps", True, False, ["cm"]),
    ("v1", "Secret", "secrets", True, False, []),
    ("v1", "Service", "services", True, True, ["svc"]),
    ("apps/v1", "Deployment", "deployments", True, True, ["deploy"]),
    ("apps/v1", "DaemonSet", "daemonsets", True, True, ["ds"]),
    ("apps/v1", "ReplicaSet", "replicasets", True, True, ["rs"]),
    ("apps/v1", "StatefulSet", "statefulsets", True, True, ["sts"]),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, True, ["pdb"]),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False, False, []),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False, False, []),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True, False, []),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True, False, []),
    ("coordination.k8s.io/v1", "Lease", "leases", True, False, []),
    # What addon manifests hold and kops' prune specs name (channel_apply).
    ("v1", "LimitRange", "limitranges", True, False, ["limits"]),
    ("v1", "Endpoints", "endpoints", True, False, ["ep"]),
    ("batch/v1", "Job", "jobs", True, True, []),
    ("storage.k8s.io/v1", "StorageClass", "storageclasses", False, False, ["sc"]),
    ("storage.k8s.io/v1", "CSIDriver", "csidrivers", False, False, []),
    ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, False, ["pc"]),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False,
     False, []),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False,
     False, []),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False, True, ["crd"]),
]
# What a fresh kube-apiserver creates itself (kube-controller-manager, which would add the
# `default` ServiceAccounts, is not running: that is the measured 403).
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.0-kubeops-test", "gitCommit": "", "gitTreeState": "clean",
           "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}
# strategic-merge-patch: lists merged by key instead of replaced (patchMergeKey in the Kubernetes types).
MERGE_KEYS = {"conditions": "type", "addresses": "type", "containers": "name", "initContainers": "name",
              "env": "name", "volumes": "name", "volumeMounts": "mountPath", "ownerReferences": "uid",
              "imagePullSecrets": "name", "tolerations": "key"}
# Not part of any manager's fields (managedFields).
SERVER_FIELDS = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace"), ("metadata", "uid"),
                 ("metadata", "resourceVersion"), ("metadata", "creationTimestamp"), ("metadata", "generation"),
                 ("metadata", "managedFields"), ("metadata", "deletionTimestamp"),
                 ("metadata", "deletionGracePeriodSeconds"), ("metadata", "selfLink")}
DEFAULT_GRACE_SECONDS = 30


def _fold_string_data(resource, obj):
    """The API folds a Secret's stringData into data (base64) on every write and never stores stringData itself."""
    if resource.kind == "Secret" and "stringData" in obj:
        obj.setdefault("data", {}).update({k: base64.b64encode(v.encode("utf-8")).decode("ascii")
                                           for k, v in (obj.pop("stringData") or {}).items()})


class ApiError(Exception):
    """An API answer other than success, rendered as a metav1.Status."""

    def __init__(self, code, reason, message, details=None):
        Exception.__init__(self, message)
        self.code, self.reason, self.message, self.details = code, reason, message, details or {}

    def status(self):
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": self.message,
                "reason": self.reason, "details": self.details, "code": self.code}


def _not_found(resource, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (resource.qualified, name),
                    {"name": name, "group": resource.group, "kind": resource.plural})


class Resource(object):
    def __init__(self, api_version, kind, plural, namespaced=True, status=False, short_names=()):
        self.api_version, self.kind, self.plural = api_version, kind, plural
        self.group, self.version = api_version.rpartition("/")[::2]
        self.namespaced, self.status, self.short_names = namespaced, status, list(short_names)

    @property
    def qualified(self):
        return "%s.%s" % (self.plural, self.group) if self.group else self.plural

    def discovery(self):
        verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update"]
        entries = [{"name": self.plural, "singularName": self.kind.lower(), "namespaced": self.namespaced,
                    "kind": self.kind, "verbs": verbs, "shortNames": self.short_names}]
        if self.status:
            entries.append({"name": self.plural + "/status", "singularName": "", "namespaced": self.namespaced,
                            "kind": self.kind, "verbs": ["get", "patch", "update"]})
        if self.kind == "Pod":  # kubectl drain finds the eviction API's version here (CheckEvictionSupport)
            entries.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                            "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        return entries


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _stamp(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _get(obj, path):
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _delete_path(obj, path):
    parent = _get(obj, path[:-1]) if len(path) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def _leaves(obj, prefix=()):
    """Field path -> value for every leaf (scalars, lists and empty maps are leaves; lists are atomic here)."""
    found = {}
    for key, value in (obj or {}).items():
        path = prefix + (key,)
        if path in SERVER_FIELDS:
            continue
        if isinstance(value, dict) and value:
            found.update(_leaves(value, path))
        else:
            found[path] = value
    return found


def _fields_v1(paths):
    tree = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault("f:" + part, {})
    return tree


def _paths_of(fields, prefix=()):
    paths = set()
    for key, value in fields.items():
        path = prefix + (key[2:],)
        if value:
            paths |= _paths_of(value, path)
        else:
            paths.add(path)
    return paths


# -- selectors ------------------------------------------------------------------------------------------
_TERM = re.compile(r"^\s*(!?)([\w./-]+)\s*(?:(==|=|!=)\s*([\w./-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def _split_terms(text):
    terms, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [t for t in terms + [current] if t.strip()]


def label_selector_matches(selector, labels):
    for term in _split_terms(selector or ""):
        match = _TERM.match(term)
        if not match:
            raise ApiError(400, "BadRequest", "unable to parse requirement: %r" % term)
        negated, key, op, value, set_op, values = match.groups()
        present = key in labels
        if negated:
            ok = not present
        elif op in ("=", "=="):
            ok = labels.get(key) == value
        elif op == "!=":
            ok = labels.get(key) != value
        elif set_op:
            members = {v.strip() for v in values.split(",")}
            ok = (present and labels[key] in members) if set_op == "in" else (not present or labels[key] not in members)
        else:
            ok = present
        if not ok:
            return False
    return True


def field_selector_matches(selector, obj):
    for term in _split_terms(selector or ""):
        match = re.match(r"^\s*([\w.]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not match:
            raise ApiError(400, "BadRequest", "invalid field selector: %r" % term)
        field, op, value = match.groups()
        actual = _get(obj, field.split("."))
        actual = "" if actual is None else str(actual).lower() if isinstance(actual, bool) else str(actual)
        if (actual == value) != (op != "!="):
            return False
    return True


def _selector_matches(selector, labels):
    """A metav1.LabelSelector (matchLabels/matchExpressions) against labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, op, values = expression["key"], expression["operator"], expression.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


# -- authorization and admission ------------------------------------------------------------------------
# The NodeRestriction admission plugin's rules on Node objects, for a node's own credential, as Kubernetes has
# them: kubernetes/kubernetes plugin/pkg/admission/noderestriction/admission.go (admitNode, getModifiedLabels,
# getForbiddenLabels, isKubernetesLabel; commit aab56e9b70b7d80f2a5a5f2907e172de257662b5) and
# staging/src/k8s.io/kubelet/pkg/apis/well_known_labels.go (kubeletLabels, kubeletLabelNamespaces,
# IsKubeletLabel; commit 1c7b3d91802c4ada3e6401b1ace80e2d0e8b2a1b), with k8s.io/api/core/v1's label constants.
KUBELET_LABELS = frozenset((
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch"))
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io"
NODE_USER_PREFIX, NODES_GROUP = "system:node:", "system:nodes"
# The Node authorizer's (and the system:node ClusterRole's) verbs on nodes for a node's credential.
NODE_VERBS = frozenset(("get", "list", "watch", "create", "update", "patch", "delete"))


def _label_namespace(key):
    return key.split("/", 1)[0] if "/" in key else ""


def _in_domain(namespace, domain):
    return namespace == domain or namespace.endswith("." + domain)


def is_kubelet_label(key):
    namespace = _label_namespace(key)
    return key in KUBELET_LABELS or any(_in_domain(namespace, allowed) for allowed in KUBELET_LABEL_NAMESPACES)


def modified_labels(new, old):
    """getModifiedLabels: keys added, removed or changed between two label maps."""
    new, old = new or {}, old or {}
    return {k for k in set(new) | set(old) if new.get(k) != old.get(k) or (k in new) != (k in old)}


def forbidden_node_labels(keys):
    """getForbiddenLabels: node-restriction.kubernetes.io/ labels, and kubernetes.io / k8s.io labels that are not
    the kubelet's."""
    forbidden = set()
    for key in keys:
        namespace = _label_namespace(key)
        if _in_domain(namespace, NODE_RESTRICTION_NAMESPACE):
            forbidden.add(key)
        if (_in_domain(namespace, "kubernetes.io") or _in_domain(namespace, "k8s.io")) and not is_kubelet_label(key):
            forbidden.add(key)
    return sorted(forbidden)


def node_identity(user):
    """(is a node, node name): the user system:node:<name> in the group system:nodes (NodeIdentity)."""
    if not user or not user["name"].startswith(NODE_USER_PREFIX) or NODES_GROUP not in user["groups"]:
        return False, ""
    return True, user["name"][len(NODE_USER_PREFIX):]


def admit_node(node_name, operation, name, old, new):
    """admitNode: raise 403 where the plugin refuses a node's write to a Node (old None on create)."""
    def forbidden(message):
        raise ApiError(403, "Forbidden", 'nodes "%s" is forbidden: %s' % (name, message), {"name": name, "kind": "nodes"})
    if not node_name:
        forbidden("could not determine node from user")
    if name != node_name:
        forbidden('node "%s" is not allowed to modify node "%s"' % (node_name, name))
    if operation == "create":
        if (new.get("spec") or {}).get("configSource") is not None:
            forbidden('node "%s" is not allowed to create pods with a non-nil configSource' % node_name)
        refused = forbidden_node_labels(modified_labels(new["metadata"].get("labels"), None))
        if refused:
            forbidden('node "%s" is not allowed to set the following labels: %s' % (node_name, ", ".join(refused)))
    elif operation == "update":
        source = (new.get("spec") or {}).get("configSource")
        if source is not None and source != (old.get("spec") or {}).get("configSource"):
            forbidden('node "%s" is not allowed to update configSource to a new non-nil configSource' % node_name)
        if (new.get("spec") or {}).get("taints") != (old.get("spec") or {}).get("taints"):
            forbidden('node "%s" is not allowed to modify taints' % node_name)
        refused = forbidden_node_labels(modified_labels(new["metadata"].get("labels"), old["metadata"].get("labels")))
        if refused:
            forbidden("is not allowed to modify labels: %s" % ", ".join(refused))


def _rule_allows(rule, verb, group, resource, name):
    def has(values, value):
        return "*" in (values or []) or value in (values or [])
    return (has(rule.get("verbs"), verb) and has(rule.get("apiGroups"), group) and has(rule.get("resources"), resource)
            and (not rule.get("resourceNames") or name in rule["resourceNames"]))


def _subject_matches(subject, user):
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user["name"]
    if kind == "Group":
        return subject.get("name") in set(user["groups"]) | {"system:authenticated"}
    return False


# -- patches --------------------------------------------------------------------------------------------
def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target, patch):
    """Merge patch, plus merge-by-key for the lists in MERGE_KEYS and the `$patch: delete` directive."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):  # $setElementOrder/..., $retainKeys: ordering hints
            continue
        if value is None:
            result.pop(key, None)
        elif key in MERGE_KEYS and isinstance(value, list) and isinstance(result.get(key), list):
            merge_key, items = MERGE_KEYS[key], list(result[key])
            for item in value:
                position = next((i for i, old in enumerate(items) if old.get(merge_key) == item.get(merge_key)), None)
                if item.get("$patch") == "delete":
                    if position is not None:
                        items.pop(position)
                elif position is None:
                    items.append(item)
                else:
                    items[position] = strategic_merge_patch(items[position], item)
            result[key] = items
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    return result


def _pointer(path):
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def json_patch(target, operations):
    """RFC 6902 JSON patch."""
    document = copy.deepcopy(target)

    def parent_of(parts):
        node = document
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    for operation in operations:
        op, parts = operation["op"], _pointer(operation["path"])
        try:
            if op == "test":
                node = parent_of(parts)
                current = node[int(parts[-1])] if isinstance(node, list) else node[parts[-1]]
                if current != operation["value"]:
                    raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
                continue
            if op in ("move", "copy"):
                source = _pointer(operation["from"])
                node = parent_of(source)
                value = node[int(source[-1])] if isinstance(node, list) else node[source[-1]]
                if op == "move":
                    del node[int(source[-1]) if isinstance(node, list) else source[-1]]
                op, operation = "add", {"value": copy.deepcopy(value)}
            node = parent_of(parts)
            if isinstance(node, list):
                index = len(node) if parts[-1] == "-" else int(parts[-1])
                if op == "add":
                    node.insert(index, operation["value"])
                elif op == "remove":
                    del node[index]
                else:
                    node[index] = operation["value"]
            elif op == "remove" or (op == "replace" and parts[-1] not in node):
                if parts[-1] not in node:
                    raise ApiError(422, "Invalid", "the server rejected our request: path %s not found" % operation["path"])
                if op == "remove":
                    del node[parts[-1]]
                else:
                    node[parts[-1]] = operation["value"]
            else:
                node[parts[-1]] = operation["value"]
        except (KeyError, IndexError, ValueError, TypeError):
            raise ApiError(422, "Invalid", "the server rejected our request: cannot apply %s at %s" % (op, operation.get("path")))
    return document


# -- the store ------------------------------------------------------------------------------------------
class KubeState(object):
    """Every object, by resource and (namespace, name); all access under one lock."""

    def __init__(self, max_grace_seconds=None):
        self.lock = threading.RLock()
        self.max_grace_seconds = max_grace_seconds
        self.requester = threading.local()  # .user: who makes the request this thread serves (None: test setup)
        self.reset()

    def register(self, api_version, kind, plural, namespaced=True, status=False, short_names=()):
        """Make a group/version/kind known (addons add their CRDs this way)."""
        with self.lock:
            self.resources[(api_version, plural)] = Resource(api_version, kind, plural, namespaced, status, short_names)

    def reset(self):
        with self.lock:
            self.resources = {}  # kinds that CRDs or tests registered go too
            for row in BUILTIN_RESOURCES:
                self.register(*row)
            self.objects = {}
            self.removals = {}  # (api_version, plural, ns, name) -> monotonic time a Terminating pod goes away
            self.revision = 1
            # Every Node write as (monotonic time, node, labels, available: Ready and schedulable, None once
            # deleted): what a test measures a roll's unavailability from (node_availability_record).
            self.node_record = []
            for name in INITIAL_NAMESPACES:
                self.create(self.resource("v1", "namespaces"), None, {"metadata": {"name": name}}, "kube-apiserver")

    def _serve_definition(self, crd):
        """A CustomResourceDefinition's served versions become kinds at once, and it is Established (the real
        server's apiextensions controllers do this within a second or so)."""
        spec, names = crd.get("spec") or {}, (crd.get("spec") or {}).get("names") or {}
        for version in spec.get("versions") or []:
            if version.get("served", True):
                self.register("%s/%s" % (spec["group"], version["name"]), names["kind"], names["plural"],
                              spec.get("scope", "Namespaced") == "Namespaced",
                              bool((version.get("subresources") or {}).get("status") is not None),
                              names.get("shortNames") or ())
        crd["status"] = {"acceptedNames": names, "storedVersions": [v["name"] for v in spec.get("versions") or []
                                                                    if v.get("storage")],
                         "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                                        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}]}

    def _forget_definition(self, crd):
        """A deleted CustomResourceDefinition takes its kind and every object of it along."""
        spec = crd.get("spec") or {}
        for version in spec.get("versions") or []:
            key = ("%s/%s" % (spec["group"], version["name"]), spec["names"]["plural"])
            self.resources.pop(key, None)
            self.objects.pop(key, None)

    def resource(self, api_version, plural):
        found = self.resources.get((api_version, plural))
        if found is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return found

    def resource_of_kind(self, api_version, kind):
        return next(r for r in self.resources.values() if r.api_version == api_version and r.kind == kind)

    def _bucket(self, resource):
        return self.objects.setdefault((resource.api_version, resource.plural), {})

    def _next_revision(self):
        self.revision += 1
        return str(self.revision)

    def expire(self):
        """Remove Terminating pods whose grace period is over (the kubelet's part)."""
        now = time.monotonic()
        for key, when in list(self.removals.items()):
            if when <= now:
                del self.removals[key]
                self.objects.get(key[:2], {}).pop(key[2:], None)

    # -- reads
    def get(self, resource, namespace, name):
        with self.lock:
            self.expire()
            found = self._bucket(resource).get((namespace, name))
            if found is None:
                raise _not_found(resource, name)
            return copy.deepcopy(found)

    def list(self, resource, namespace=None, label_selector="", field_selector="", limit=0, cont=""):
        with self.lock:
            self.expire()
            keys = sorted(k for k in self._bucket(resource) if namespace is None or k[0] == namespace)
            if cont:
                try:
                    start = tuple(json.loads(base64.urlsafe_b64decode(cont.encode())))
                except ValueError:
                    raise ApiError(400, "BadRequest", "continue key is not valid")
                keys = [k for k in keys if k > start]
            items = []
            for key in keys:
                obj = self._bucket(resource)[key]
                if label_selector_matches(label_selector, obj["metadata"].get("labels") or {}) and \
                        field_selector_matches(field_selector, obj):
                    items.append(copy.deepcopy(obj))
            metadata = {"resourceVersion": str(self.revision)}
            if limit and len(items) > limit:
                last = items[limit - 1]["metadata"]
                metadata["continue"] = base64.urlsafe_b64encode(
                    json.dumps([last.get("namespace"), last["name"]]).encode()).decode()
                metadata["remainingItemCount"] = len(items) - limit
                items = items[:limit]
            return {"kind": resource.kind + "List", "apiVersion": resource.api_version, "metadata": metadata,
                    "items": items}

    # -- writes
    def _managed(self, obj):
        return {(e["manager"], e["operation"], e.get("subresource", "")): _paths_of(e.get("fieldsV1") or {})
                for e in obj["metadata"].get("managedFields") or []}

    def _set_managed(self, obj, owners, api_version):
        stamp = _stamp(_now())
        obj["metadata"]["managedFields"] = [
            dict({"manager": m, "operation": op, "apiVersion": api_version, "time": stamp, "fieldsType": "FieldsV1",
                  "fieldsV1": _fields_v1(paths)}, **({"subresource": sub} if sub else {}))
            for (m, op, sub), paths in sorted(owners.items()) if paths]

    def _record_update(self, resource, old, new, manager, subresource=""):
        """An Update operation owns the fields it changed, taking them from other managers."""
        before, after = _leaves(old or {}), _leaves(new)
        changed = {p for p, v in after.items() if before.get(p, object()) != v}
        owners = self._managed(old) if old else {}
        for key in owners:
            owners[key] = {p for p in owners[key] - changed if p in after}
        key = (manager or "unknown", "Update", subresource)
        owners[key] = (owners.get(key, set()) & set(after)) | changed
        self._set_managed(new, owners, resource.api_version)

    def _admit(self, resource, namespace, obj):
        if resource.namespaced:
            if (None, namespace) not in self._bucket(self.resource("v1", "namespaces")):
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % namespace,
                               {"name": namespace, "kind": "namespaces"})
        if resource.kind == "Pod":
            spec = obj.setdefault("spec", {})
            account = spec.setdefault("serviceAccountName", "default")
            spec.setdefault("serviceAccount", account)
            spec.setdefault("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
            spec.setdefault("restartPolicy", "Always")
            if (namespace, account) not in self._bucket(self.resource("v1", "serviceaccounts")):
                raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: error looking up service account %s/%s: '
                               'serviceaccount "%s" not found' % (obj["metadata"].get("name"), namespace, account, account),
                               {"name": obj["metadata"].get("name"), "kind": "pods"})

    def create(self, resource, namespace, obj, manager, dry_run=False):
        with self.lock:
            self.expire()
            obj = copy.deepcopy(obj)
            metadata = obj.setdefault("metadata", {})
            if not metadata.get("name") and metadata.get("generateName"):
                metadata["name"] = metadata["generateName"] + uuid.uuid4().hex[:5]
            name = metadata.get("name")
            if not name:
                raise ApiError(422, "Invalid", "%s is invalid: metadata.name: Required value: name or generateName "
                               "is required" % resource.kind)
            namespace = (namespace or metadata.get("namespace") or "default") if resource.namespaced else None
            if resource.namespaced and metadata.get("namespace") not in (None, namespace):
                raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace "
                               "sent on the request")
            self._admit(resource, namespace, obj)
            self._admit_node("create", resource, name, None, obj)
            key = (namespace, name)
            if key in self._bucket(resource):
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (resource.qualified, name),
                               {"name": name, "group": resource.group, "kind": resource.plural})
            obj["apiVersion"], obj["kind"] = resource.api_version, resource.kind
            if resource.namespaced:
                metadata["namespace"] = namespace
            metadata.update(uid=str(uuid.uuid4()), creationTimestamp=_stamp(_now()), generation=1)
            metadata.pop("managedFields", None)
            _fold_string_data(resource, obj)
            if resource.kind == "Pod":
                obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            elif resource.kind == "Namespace":
                obj["status"] = {"phase": "Active"}
            elif resource.status and resource.kind != "Node":  # Nodes register with their status (kubelet)
                obj.pop("status", None)
            self._record_update(resource, None, obj, manager)
            if not dry_run:
                metadata["resourceVersion"] = self._next_revision()
                self._bucket(resource)[key] = obj
                self._record_node(resource, name, obj)
                if resource.kind == "CustomResourceDefinition":
                    self._serve_definition(obj)
            return copy.deepcopy(obj)

    def _record_node(self, resource, name, obj):
        if resource.kind != "Node":
            return
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in ((obj or {}).get("status") or {}).get("conditions") or [])
        available = None if obj is None else ready and not (obj.get("spec") or {}).get("unschedulable")
        labels = dict(((obj or {}).get("metadata") or {}).get("labels") or {})
        self.node_record.append((time.monotonic(), name, labels, available))

    def _admit_node(self, operation, resource, name, old, new):
        """NodeRestriction: a node's credential writing a Node (admit_node); everyone else passes."""
        if resource.kind != "Node":
            return
        is_node, node_name = node_identity(getattr(self.requester, "user", None))
        if is_node:
            admit_node(node_name, operation, name, old, new)

    def _store(self, resource, old, new, dry_run):
        self._admit_node("update", resource, new["metadata"]["name"], old, new)

        def spec(obj):
            return {k: v for k, v in obj.items() if k not in ("metadata", "status")}

        def timeless(obj):  # the object without managedFields' timestamps
            obj = copy.deepcopy(obj)
            for entry in obj["metadata"].get("managedFields") or []:
                entry.pop("time", None)
            return obj
        if timeless(old) == timeless(new):  # a no-op write: nothing stored, resourceVersion kept (as the real one)
            return copy.deepcopy(old)
        if spec(old) != spec(new):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if not dry_run:
            new["metadata"]["resourceVersion"] = self._next_revision()
            self._bucket(resource)[(new["metadata"].get("namespace"), new["metadata"]["name"])] = new
            self._record_node(resource, new["metadata"]["name"], new)
            if resource.kind == "CustomResourceDefinition":
                self._serve_definition(new)
        return copy.deepcopy(new)

    def _merge_server_fields(self, resource, old, new, subresource):
        """Keep what the caller may not change: identity, and status or everything but status."""
        new = copy.deepcopy(new)
        new["apiVersion"], new["kind"] = resource.api_version, resource.kind
        metadata = new.setdefault("metadata", {})
        for field in ("name", "namespace", "uid", "creationTimestamp", "generation", "deletionTimestamp",
                      "deletionGracePeriodSeconds"):
            if field in old["metadata"]:
                metadata[field] = old["metadata"][field]
            else:
                metadata.pop(field, None)
        metadata["managedFields"] = old["metadata"].get("managedFields") or []
        if subresource == "status":
            result = copy.deepcopy(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            return result
        if resource.status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        _fold_string_data(resource, new)
        return new

    def update(self, resource, namespace, name, obj, manager, subresource="", dry_run=False):
        with self.lock:
            old = self.get(resource, namespace, name)
            wanted = obj.get("metadata", {}).get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been '
                               'modified; please apply your changes to the latest version and try again'
                               % (resource.qualified, name), {"name": name, "kind": resource.plural})
            new = self._merge_server_fields(resource, old, obj, subresource)
            self._record_update(resource, old, new, manager, subresource)
            return self._store(resource, old, new, dry_run)

    def patch(self, resource, namespace, name, content_type, body, manager, subresource="", force=False,
              dry_run=False):
        with self.lock:
            if content_type == "application/apply-patch+yaml":
                return self.apply(resource, namespace, name, body, manager, subresource, force, dry_run)
            old = self.get(resource, namespace, name)
            patch = json.loads(body)
            if content_type == "application/json-patch+json":
                patched = json_patch(old, patch)
            elif content_type == "application/merge-patch+json":
                patched = merge_patch(old, patch)
            elif content_type == "application/strategic-merge-patch+json":
                patched = strategic_merge_patch(old, patch)
            else:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                               "accepted media types include: application/json-patch+json, application/merge-patch+json, "
                               "application/apply-patch+yaml, application/strategic-merge-patch+json")
            new = self._merge_server_fields(resource, old, patched, subresource)
            self._record_update(resource, old, new, manager, subresource)
            return self._store(resource, old, new, dry_run)

    def apply(self, resource, namespace, name, body, manager, subresource="", force=False, dry_run=False):
        """Server-side apply: create (201) or merge the manager's fields (200); 409 on another manager's field."""
        if not manager:
            raise ApiError(400, "BadRequest", "PATCH with apply requires fieldManager to be set")
        config = yaml.safe_load(body) or {}
        config.setdefault("metadata", {}).setdefault("name", name)
        if resource.status and subresource != "status":
            config.pop("status", None)
        applied = _leaves(config)
        operation_key = (manager, "Apply", subresource)
        with self.lock:
            try:
                old = self.get(resource, namespace, name)
            except ApiError as exc:
                if exc.code != 404:
                    raise
                created = self.create(resource, namespace, config, manager, dry_run)
                if not dry_run:
                    stored = self._bucket(resource)[(created["metadata"].get("namespace"), name)]
                    self._set_managed(stored, {operation_key: set(_leaves(stored)) & set(applied)}, resource.api_version)
                    created = copy.deepcopy(stored)
                return created, 201
            owners = self._managed(old)
            current = _leaves(old)
            conflicts = []
            for path, value in applied.items():
                if path in current and current[path] != value:
                    for key, paths in owners.items():
                        if key[0] != manager and any(p[:len(path)] == path for p in paths):
                            conflicts.append((key[0], path))
            if conflicts and not force:
                causes = [{"type": "FieldManagerConflict", "message": 'conflict with "%s"' % m,
                           "field": "." + ".".join(p)} for m, p in conflicts]
                text = "; ".join('conflict with "%s": .%s' % (m, ".".join(p)) for m, p in conflicts)
                raise ApiError(409, "Conflict", "Apply failed with %d conflict%s: %s" % (
                    len(conflicts), "" if len(conflicts) == 1 else "s", text), {"causes": causes})
            new = copy.deepcopy(old)
            others = set().union(*[p for k, p in owners.items() if k[0] != manager]) if owners else set()
            for path in owners.get(operation_key, set()) - set(applied) - others:
                _delete_path(new, path)
            new = merge_patch(new, {k: v for k, v in config.items() if k not in ("apiVersion", "kind")})
            new = self._merge_server_fields(resource, old, new, subresource)
            taken = {p for _m, p in conflicts}
            for key in owners:
                owners[key] = {p for p in owners[key] if not any(p[:len(t)] == t for t in taken)}
            owners[operation_key] = set(applied)
            self._set_managed(new, owners, resource.api_version)
            return self._store(resource, old, new, dry_run), 200

    def delete(self, resource, namespace, name, options=None, dry_run=False):
        with self.lock:
            obj = self.get(resource, namespace, name)
            self._admit_node("delete", resource, name, obj, None)
            options = options or {}
            key = (namespace, name)
            grace = options.get("gracePeriodSeconds")
            if resource.kind == "Pod":
                if grace is None:
                    grace = obj["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
                if not obj["spec"].get("nodeName") or obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                    grace = 0  # never ran, or done: nothing for a kubelet to stop
            else:
                grace = 0
            if dry_run:
                return obj
            if grace <= 0:
                self._bucket(resource).pop(key, None)
                self._record_node(resource, name, None)
                if resource.kind == "CustomResourceDefinition":
                    self._forget_definition(obj)
                self.removals.pop((resource.api_version, resource.plural) + key, None)
                if resource.kind == "Namespace":  # the namespace controller's job, done at once
                    for (api_version, plural), bucket in self.objects.items():
                        for item in [k for k in bucket if k[0] == name]:
                            del bucket[item]
                            self.removals.pop((api_version, plural) + item, None)
                return obj
            removal_key = (resource.api_version, resource.plural) + key
            wait = grace if self.max_grace_seconds is None else min(grace, self.max_grace_seconds)
            when = time.monotonic() + wait
            if removal_key in self.removals and self.removals[removal_key] <= when:
                return obj  # already Terminating with a shorter grace
            self.removals[removal_key] = when
            stored = self._bucket(resource)[key]
            stored["metadata"]["deletionTimestamp"] = _stamp(_now() + datetime.timedelta(seconds=grace))
            stored["metadata"]["deletionGracePeriodSeconds"] = grace
            stored["metadata"]["resourceVersion"] = self._next_revision()
            return copy.deepcopy(stored)

    def evict(self, namespace, name, eviction):
        """policy/v1 Eviction: 429 while a matching PDB allows no disruption, else a graceful delete (201)."""
        with self.lock:
            pods = self.resource("v1", "pods")
            pod = self.get(pods, namespace, name)
            terminal = pod.get("status", {}).get("phase") in ("Succeeded", "Failed", "Pending") or \
                pod["metadata"].get("deletionTimestamp")
            budgets = self.resource("policy/v1", "poddisruptionbudgets")
            labels = pod["metadata"].get("labels") or {}
            matching = [b for (ns, _n), b in self._bucket(budgets).items()
                        if ns == namespace and _selector_matches(b.get("spec", {}).get("selector") or {}, labels)]
            if not terminal and len(matching) > 1:
                raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the "
                               "eviction subresource does not support.")
            if not terminal and matching:
                budget = matching[0]
                status = budget.get("status") or {}
                budget_name = budget["metadata"]["name"]
                if "disruptionsAllowed" not in status or status.get("observedGeneration", 0) < \
                        budget["metadata"].get("generation", 1):
                    cause = "The disruption budget %s is still being processed by the server." % budget_name
                elif status["disruptionsAllowed"] <= 0:
                    cause = "The disruption budget %s needs %d healthy pods and has %d currently" % (
                        budget_name, status.get("desiredHealthy", 0), status.get("currentHealthy", 0))
                else:
                    cause = None
                if cause:
                    raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption "
                                   "budget.", {"causes": [{"reason": "DisruptionBudget", "message": cause}]})
                stored = self._bucket(budgets)[(namespace, budget_name)]
                stored["status"]["disruptionsAllowed"] -= 1
                stored["status"].setdefault("disruptedPods", {})[name] = _stamp(_now())
                stored["metadata"]["resourceVersion"] = self._next_revision()
            self.delete(pods, namespace, name, (eviction or {}).get("deleteOptions"))
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


# -- HTTP -----------------------------------------------------------------------------------------------
def _age(stamp):
    seconds = int((_now() - datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)).total_seconds())
    return "%ds" % seconds if seconds < 120 else "%dm" % (seconds // 60)


def _node_cells(node):
    ready = next((c["status"] for c in node.get("status", {}).get("conditions") or [] if c["type"] == "Ready"), None)
    status = {"True": "Ready", "False": "NotReady"}.get(ready, "Unknown")
    if node.get("spec", {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in node["metadata"].get("labels") or {}
                   if k.startswith("node-role.kubernetes.io/")) or ["<none>"]
    return [("Status", status), ("Roles", ",".join(roles)),
            ("Version", node.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""))]


def _pod_cells(pod):
    statuses = pod.get("status", {}).get("containerStatuses") or []
    ready = "%d/%d" % (sum(1 for s in statuses if s.get("ready")), len(pod.get("spec", {}).get("containers") or []))
    phase = "Terminating" if pod["metadata"].get("deletionTimestamp") else pod.get("status", {}).get("phase", "")
    return [("Ready", ready), ("Status", phase), ("Node", pod.get("spec", {}).get("nodeName") or "<none>")]


TABLE_CELLS = {"Node": _node_cells, "Pod": _pod_cells}


def as_table(resource, objects, include):
    extra = TABLE_CELLS.get(resource.kind, lambda _o: [])
    sample = extra(objects[0]) if objects else extra({"metadata": {}, "spec": {}, "status": {}})
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}]
    columns += [{"name": n, "type": "string", "format": "", "description": "", "priority": 0} for n, _v in sample]
    columns.append({"name": "Age", "type": "string", "format": "", "description": "", "priority": 0})
    rows = []
    for obj in objects:
        if include == "None":
            embedded = None
        elif include == "Object":
            embedded = obj
        else:
            embedded = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}
        rows.append({"cells": [obj["metadata"]["name"]] + [v for _n, v in extra(obj)] +
                     [_age(obj["metadata"]["creationTimestamp"])], "object": embedded})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": columns,
            "rows": rows}


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubeops-test-apiserver"

    def setup(self):
        http.server.BaseHTTPRequestHandler.setup(self)
        self.user, self.raw_body = None, None
        self.request.do_handshake()  # here, in the request's thread, not in the accept loop
        subject = (self.request.getpeercert() or {}).get("subject") or ()
        attributes = [item for rdn in subject for item in rdn]
        if attributes:
            self.user = {"name": next((v for k, v in attributes if k == "commonName"), ""),
                         "groups": [v for k, v in attributes if k == "organizationName"]}

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass

    def _send(self, code, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.server.api.requests.append((self.command, self.path, code))

    def _body(self):
        if self.raw_body is None:  # read even when the request is refused: the connection is kept alive
            length = int(self.headers.get("Content-Length") or 0)
            self.raw_body = self.rfile.read(length) if length else b""
        return self.raw_body

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _dispatch(self):
        self.raw_body = None
        self._body()
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        try:
            if url.path in ("/readyz", "/livez", "/healthz"):
                return self._send(200, b"ok", "text/plain")
            if url.path == "/version":
                return self._send(200, VERSION)
            if self.user is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            self.server.api.state.requester.user = self.user
            try:
                self.server.api.handle(self, url.path, query)
            finally:
                self.server.api.state.requester.user = None
        except ApiError as exc:
            self._send(exc.code, exc.status())
        except (ValueError, yaml.YAMLError) as exc:
            self._send(400, ApiError(400, "BadRequest", "invalid request body: %s" % exc).status())


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # failed TLS handshakes (a client without our CA) and dropped connections


class KubeAPIServer(object):
    """The test server: KubeState behind HTTPS on 127.0.0.1 (see the module docstring)."""

    def __init__(self, ca=None, max_grace_seconds=2.0, host="127.0.0.1"):
        """ca: (certificate, key) to serve and trust (default: a fresh test CA); host: the address to listen on
        (a test-host bridge's, for a unit on a test host; its certificate names it too)."""
        self.host = host
        self.ca_certificate, self.ca_key = ca or certs.new_ca("kubeops-test-ca")
        self.state = KubeState(max_grace_seconds=max_grace_seconds)
        self.requests = []
        self.workdir = tempfile.mkdtemp(prefix="kube-api-")
        self.httpd = None
        self.url = None

    # -- lifecycle
    def start(self):
        serving, key = certs.issue(self.ca_certificate, self.ca_key, "kube-apiserver", usages=("server",),
                                   dns_names=("localhost", "kubernetes", "kubernetes.default"),
                                   ip_addresses=tuple(sorted({"127.0.0.1", self.host})))
        chain = os.path.join(self.workdir, "serving.pem")
        with open(chain, "wb") as handle:
            handle.write(certs.certificate_pem(serving) + certs.key_pem(key))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain)
        context.load_verify_locations(cadata=certs.certificate_pem(self.ca_certificate).decode())
        context.verify_mode = ssl.CERT_OPTIONAL
        self.httpd = _QuietServer((self.host, 0), _Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.httpd.api = self
        self.url = "https://%s:%d" % (self.host, self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, name="kube-api-server", daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def reset(self):
        self.state.reset()
        self.requests.clear()

    # -- credentials
    @property
    def ca_pem(self):
        return certs.certificate_pem(self.ca_certificate)

    def client_credentials(self, user="admin", groups=("system:masters",)):
        certificate, key = certs.issue(self.ca_certificate, self.ca_key, user, organizations=groups)
        return certs.certificate_pem(certificate), certs.key_pem(key)

    def kubeconfig(self, user="admin", groups=("system:masters",), context="test"):
        certificate, key = self.client_credentials(user, groups)
        return servers.kubeconfig_document(self.url, self.ca_pem, certificate, key, user=user, context=context)

    def write_kubeconfig(self, path, **kwargs):
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(self.kubeconfig(**kwargs), handle)
        os.chmod(path, 0o600)
        return str(path)

    # -- direct state access for test setup
    def create(self, api_version, kind, obj, namespace=None, manager="test-setup"):
        return self.state.create(self.state.resource_of_kind(api_version, kind), namespace, obj, manager)

    def get(self, api_version, kind, name, namespace=None):
        return self.state.get(self.state.resource_of_kind(api_version, kind), namespace, name)

    def set_status(self, api_version, kind, name, status, namespace=None):
        resource = self.state.resource_of_kind(api_version, kind)
        obj = self.state.get(resource, namespace, name)
        obj["status"] = status
        return self.state.update(resource, namespace, name, obj, "test-setup", subresource="status")

    def node_availability_record(self):
        """[(monotonic time, node name, labels, available)] for every Node write since the last reset, in order;
        available is True for a Ready schedulable node, False for a NotReady or cordoned one, None once deleted."""
        with self.state.lock:
            return list(self.state.node_record)

    def mutating_requests(self):
        return [r for r in self.requests if r[0] not in ("GET",)]

    # -- HTTP routing
    def handle(self, handler, path, query):
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/") if p]
        if parts == ["api"]:
            return handler._send(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": self.url[len("https://"):]}]})
        if parts == ["apis"]:
            return handler._send(200, self._groups())
        if parts[:1] == ["api"] and len(parts) >= 2:
            api_version, rest = parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            api_version, rest = "%s/%s" % (parts[1], parts[2]), parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return handler._send(200, self._resource_list(api_version))
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3 and (api_version, rest[2]) in self.state.resources:
            namespace, rest = rest[1], rest[2:]
        resource = self.state.resource(api_version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else ""
        if resource.namespaced and name is not None and namespace is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self._serve(handler, resource, namespace, name, subresource, query)

    def _groups(self):
        groups = {}
        for resource in self.state.resources.values():
            if resource.group:
                groups.setdefault(resource.group, set()).add(resource.version)
        entries = []
        for group, versions in sorted(groups.items()):
            listed = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in sorted(versions)]
            entries.append({"name": group, "versions": listed, "preferredVersion": listed[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": entries}

    def _resource_list(self, api_version):
        resources = [r for r in self.state.resources.values() if r.api_version == api_version]
        if not resources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version,
                "resources": [entry for r in resources for entry in r.discovery()]}

    def authorize(self, user, verb, resource, namespace, name, subresource):
        """403 unless system:masters, a node on Nodes (the Node authorizer), or a bound (Cluster)Role allows it."""
        if "system:masters" in user["groups"]:
            return
        plural = resource.plural + ("/" + subresource if subresource else "")
        if node_identity(user)[0] and resource.plural == "nodes" and verb in NODE_VERBS:
            return
        state = self.state
        with state.lock:
            rbac = "rbac.authorization.k8s.io/v1"
            roles = {(None, n): r for (_ns, n), r in state._bucket(state.resource(rbac, "clusterroles")).items()}
            roles.update({(ns, n): r for (ns, n), r in state._bucket(state.resource(rbac, "roles")).items()})
            bindings = list(state._bucket(state.resource("rbac.authorization.k8s.io/v1", "clusterrolebindings")).values())
            bindings += [b for (ns, _n), b in state._bucket(state.resource(rbac, "rolebindings")).items()
                         if namespace is not None and ns == namespace]
        for binding in bindings:
            if not any(_subject_matches(subject, user) for subject in binding.get("subjects") or []):
                continue
            ref = binding.get("roleRef") or {}
            role = roles.get((None if ref.get("kind") == "ClusterRole" else binding["metadata"].get("namespace"),
                              ref.get("name")))
            if role and any(_rule_allows(rule, verb, resource.group, plural, name) for rule in role.get("rules") or []):
                return
        scope = 'in the namespace "%s"' % namespace if namespace else "at the cluster scope"
        raise ApiError(403, "Forbidden", '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s'
                       % (plural if name is None else '%s "%s"' % (plural, name), user["name"], verb, plural,
                          resource.group, scope), {"name": name or "", "kind": resource.plural})

    def _serve(self, handler, resource, namespace, name, subresource, query):
        state, method = self.state, handler.command
        verb = {"GET": "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list"), "POST": "create",
                "PUT": "update", "PATCH": "patch", "DELETE": "delete" if name else "deletecollection"}.get(method, "")
        self.authorize(handler.user, "create" if subresource == "eviction" else verb, resource, namespace, name,
                       subresource)
        manager = query.get("fieldManager") or (handler.headers.get("User-Agent") or "unknown").split("/")[0]
        dry_run = query.get("dryRun") == "All"
        accept = handler.headers.get("Accept") or ""
        table = "as=Table" in accept
        if subresource not in ("", "status", "eviction") or (subresource == "status" and not resource.status) or \
                (subresource == "eviction" and resource.kind != "Pod"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if name is None:
            if method == "GET":
                if query.get("watch") in ("true", "1"):
                    raise ApiError(405, "MethodNotAllowed", "watch is not implemented by this test server")
                listed = state.list(resource, namespace, query.get("labelSelector", ""),
                                    query.get("fieldSelector", ""), int(query.get("limit") or 0), query.get("continue", ""))
                if table:
                    result = as_table(resource, listed["items"], query.get("includeObject", "Metadata"))
                    result["metadata"] = listed["metadata"]
                    return handler._send(200, result)
                return handler._send(200, listed)
            if method == "POST":
                return handler._send(201, state.create(resource, namespace, json.loads(handler._body()), manager, dry_run))
            if method == "DELETE":  # deletecollection: what the selectors match, returned as a list
                listed = state.list(resource, namespace, query.get("labelSelector", ""), query.get("fieldSelector", ""))
                for item in listed["items"]:
                    state.delete(resource, item["metadata"].get("namespace"), item["metadata"]["name"], {}, dry_run)
                return handler._send(200, listed)
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if subresource == "eviction":
            if method != "POST":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return handler._send(201, state.evict(namespace, name, json.loads(handler._body() or b"{}")))
        if method == "GET":
            obj = state.get(resource, namespace, name)
            return handler._send(200, as_table(resource, [obj], query.get("includeObject", "Metadata")) if table else obj)
        if method == "PUT":
            return handler._send(200, state.update(resource, namespace, name, json.loads(handler._body()), manager,
                                                   subresource, dry_run))
        if method == "PATCH":
            content_type = (handler.headers.get("Content-Type") or "").split(";")[0].strip()
            result = state.patch(resource, namespace, name, content_type, handler._body(), manager, subresource,
                                 query.get("force", "").lower() == "true", dry_run)
            if isinstance(result, tuple):
                return handler._send(result[1], result[0])
            return handler._send(200, result)
        if method == "DELETE":
            body = handler._body()
            options = json.loads(body) if body else {}
            if "gracePeriodSeconds" in query:
                options["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
            return handler._send(200, state.delete(resource, namespace, name, options, dry_run))
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


if __name__ == "__main__":  # a server to poke at by hand: python -m tests.kube_api_server
    with KubeAPIServer() as running:
        config = os.path.join(running.workdir, "kubeconfig")
        running.write_kubeconfig(config)
        print("serving %s; KUBECONFIG=%s (Ctrl-C stops)" % (running.url, config), flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
