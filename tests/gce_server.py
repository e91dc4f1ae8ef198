"""A Google Cloud REST test server of ours: Compute, IAM, Cloud DNS and Resource Manager on 127.0.0.1.

Not an emulator of Google's: it serves the kinds kops creates on GCE with the
APIs' JSON shapes, paths and errors, keeps them in memory, and records every
request so a test can count them (check mode: zero POST/PATCH/PUT/DELETE).
What it reproduces and what not is in docs/gce-test-server.md.

One base URL serves every API under its real path prefix (what
KOPS_GCE_ENDPOINT points at): /compute/v1/, /dns/v1/, /v1/projects/{p}/serviceAccounts
(IAM) and /v1/projects/{p}[:getIamPolicy|:setIamPolicy] (Resource Manager).

Behaviours a client must cope with, as Google has them:
- a Compute mutation answers a compute#operation; it is RUNNING for
  `operation_polls` GETs of its selfLink, then DONE (errors inside the operation
  for a delete of something still used by another resource);
- references (network, subnetwork, instanceTemplate, target, healthChecks ...)
  must exist and are stored as full URLs; names must be RFC 1035, labels valid;
- setLabels needs the current labelFingerprint (412 conditionNotMet otherwise);
- lists page with maxResults / pageToken and take simple `filter`s;
- an instance group manager keeps `targetSize` instances named
  `<baseInstanceName>-xxxx` from its template (labels, metadata, disks);
- errors are Google's JSON error shape (404 notFound, 409 alreadyExists, 400 invalid);
- inject() makes chosen requests fail (429, 500) a number of times.
"""

from __future__ import annotations

import copy
import datetime
import json
import random
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests import servers

MUTATING = ("POST", "PATCH", "PUT", "DELETE")
DEFAULT_REGIONS = {
    "us-central1": ("a", "b", "c", "f"),
    "us-east1": ("b", "c", "d"),
    "europe-west1": ("b", "c", "d"),
    "europe-west4": ("a", "b", "c"),
    "us-test1": ("a", "b", "c"),  # kops' test region (its fixtures use us-test1-a)
}
# Which collections live in which scope.
SCOPED = {
    "global": ("networks", "firewalls", "instanceTemplates", "httpHealthChecks", "healthChecks", "backendServices",
               "addresses", "forwardingRules", "targetPools", "routes"),
    "regions": ("subnetworks", "routers", "addresses", "forwardingRules", "targetPools", "healthChecks",
                "backendServices"),
    "zones": ("instances", "disks", "instanceGroupManagers", "instanceGroups"),
}
SERVED = sorted({c for cs in SCOPED.values() for c in cs})
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
_ACCOUNT_ID = re.compile(r"^[a-z]([-a-z0-9]{4,28}[a-z0-9])$")
_REFERENCE = re.compile(r"(?:^|/compute/v1/)(?:projects/(?P<project>[^/]+)/)?(?P<scope>global|regions/[^/]+|zones/[^/]+)/"
                        r"(?P<collection>%s)/(?P<name>[^/]+)$" % "|".join(SERVED))
STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ALREADY_EXISTS",
                412: "FAILED_PRECONDITION", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class ApiError(Exception):
    def __init__(self, status, reason, message):
        Exception.__init__(self, message)
        self.status = status
        self.reason = reason
        self.message = message


def not_found(path):
    return ApiError(404, "notFound", "The resource '%s' was not found" % path)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "-00:00"


def _kind(collection):
    singular = collection[:-2] if collection.endswith("sses") else collection[:-1]
    return "compute#" + singular


def _walk_strings(value, skip=("metadata",)):
    """(container, key, string) for every string in a JSON value, skipping keys in skip."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in skip:
                continue
            if isinstance(item, str):
                yield value, key, item
            else:
                yield from _walk_strings(item, skip)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield value, index, item
            else:
                yield from _walk_strings(item, skip)


class GceServer(object):
    """The server; start() runs it in a daemon thread on a free 127.0.0.1 port (url)."""

    def __init__(self, regions=None):
        self.regions = dict(regions or DEFAULT_REGIONS)
        self.operation_polls = 1
        self._lock = threading.RLock()
        self._httpd = None
        self._thread = None
        self.url = None
        self.reset()

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self):
        server = self

        class Handler(_Handler):
            gce = server
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self._httpd.server_address[1]
        self._thread = servers.serve_in_thread(self._httpd, "gce-test-server")
        return self

    def stop(self):
        if self._httpd:
            servers.stop_serving(self._httpd, self._thread)

    def reset(self):
        with self._lock:
            self.requests = []          # (method, path) of every request, in order
            self.store = {}             # collection path ("compute:projects/p/global/networks") -> {name: resource}
            self.operations = {}        # operation path -> [operation, polls left]
            self.policies = {}          # project -> IAM policy
            self.changes = {}           # dns zone path -> {id: change}
            self.faults = []            # [method, path substring, status, reason, times left]
            self.operation_polls = 1
            self._ids = 1000
            self._random = random.Random(7)

    # -- for tests -------------------------------------------------------------------------------------
    def inject(self, method, path_contains, status, reason="backendError", times=1):
        """The next `times` requests of method whose path contains path_contains fail with status."""
        with self._lock:
            self.faults.append([method, path_contains, status, reason, times])

    def mutations(self):
        return [(m, p) for m, p in self.requests if m in MUTATING]

    def seed(self, path, resource):
        """Put a resource in a collection (a Compute path such as "projects/p/global/networks", or
        "iam:projects/p/serviceAccounts", "dns:projects/p/managedZones"), unlogged, as insert would make it."""
        api, _sep, rel = path.rpartition(":")
        with self._lock:
            if (api or "compute") == "compute":
                return self._compute_insert(rel.strip("/").split("/"), copy.deepcopy(resource), log_operation=False)
            if api == "iam":
                return self._iam_create(rel.split("/")[1], copy.deepcopy(resource))
            if api == "dns":
                parts = rel.strip("/").split("/")
                if parts[-1] == "managedZones":
                    return self._dns_zone_create(parts[1], copy.deepcopy(resource))
                return self._dns_add(parts[1], parts[3], copy.deepcopy(resource))
            raise ValueError("seed: unknown API %r" % api)

    def names(self, collection_path):
        """The names in a collection ("projects/p/zones/z/disks", "iam:projects/p/serviceAccounts" ...)."""
        if ":" not in collection_path:
            collection_path = "compute:" + collection_path
        with self._lock:
            return sorted(self.store.get(collection_path, {}))

    def objects(self):
        """Every stored object as "collection path/name" (NS/SOA records of a zone excepted)."""
        with self._lock:
            found = []
            for path, items in self.store.items():
                for name, item in items.items():
                    if path.endswith("/rrsets") and item.get("type") in ("NS", "SOA"):
                        continue
                    found.append("%s/%s" % (path, name))
            return sorted(found)

    # -- helpers ---------------------------------------------------------------------------------------
    def _next_id(self):
        self._ids += 1
        return str(7000000000000000000 + self._ids)

    def link(self, rel, api="compute/v1"):
        return "%s/%s/%s" % (self.url or "http://127.0.0.1", api, rel)

    def _collection(self, key):
        return self.store.setdefault(key, {})

    def _resolve(self, project, value):
        """A reference (full URL, projects/.. path or global/.. partial) to its (collection key, name, selfLink)."""
        match = _REFERENCE.search(value)
        if not match:
            return None
        rel = "projects/%s/%s/%s" % (match.group("project") or project, match.group("scope"), match.group("collection"))
        return "compute:" + rel, match.group("name"), self.link("%s/%s" % (rel, match.group("name")))

    def _check_references(self, project, resource):
        """Every reference in resource must exist; each is rewritten as the full URL Google stores."""
        for container, key, text in list(_walk_strings(resource, skip=("metadata", "selfLink", "name", "description"))):
            if key in ("zone", "region") or "/" not in text:
                continue
            resolved = self._resolve(project, text)
            if resolved is None:
                continue
            collection, name, link = resolved
            if name not in self.store.get(collection, {}):
                raise not_found(collection.split(":", 1)[1] + "/" + name)
            container[key] = link

    def _check_labels(self, labels):
        for key, value in (labels or {}).items():
            if not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(str(value)):
                raise ApiError(400, "invalid", "Invalid value for field 'resource.labels': '%s: %s'. Label keys and values "
                               "must be lowercase letters, digits, '_' or '-' (keys start with a letter), at most 63 "
                               "characters" % (key, value))

    def _operation(self, project, scope, operation_type, target_link, target_id, error=None):
        self._ids += 1
        name = "operation-%d-%s" % (self._ids, "%08x" % self._random.getrandbits(32))
        rel = "projects/%s/%s/operations/%s" % (project, scope, name)
        done = self.operation_polls <= 0
        operation = {"kind": "compute#operation", "id": self._next_id(), "name": name, "operationType": operation_type,
                     "targetLink": target_link, "targetId": target_id, "status": "DONE" if done else "RUNNING",
                     "progress": 100 if done else 0, "user": "test@example.com", "insertTime": _now(),
                     "startTime": _now(), "selfLink": self.link(rel)}
        if scope.startswith("zones/"):
            operation["zone"] = self.link("projects/%s/%s" % (project, scope))
        elif scope.startswith("regions/"):
            operation["region"] = self.link("projects/%s/%s" % (project, scope))
        if done:
            operation["endTime"] = _now()
        if error:
            operation["error"] = {"errors": [{"code": error[0], "message": error[1]}]}
            operation["httpErrorStatusCode"] = 400
            operation["httpErrorMessage"] = "BAD REQUEST"
        self.operations[rel] = [operation, max(self.operation_polls, 0)]
        return copy.deepcopy(operation)

    def _poll(self, rel):
        entry = self.operations.get(rel)
        if entry is None:
            raise not_found(rel)
        entry[1] -= 1
        if entry[1] <= 0 and entry[0]["status"] != "DONE":
            entry[0].update(status="DONE", progress=100, endTime=_now())
        return copy.deepcopy(entry[0])

    # -- Compute ---------------------------------------------------------------------------------------
    def compute(self, method, parts, query, body):
        if len(parts) < 2 or parts[0] != "projects":
            raise not_found("/".join(parts))
        project, rest = parts[1], parts[2:]
        if not rest:
            return {"kind": "compute#project", "name": project, "id": "123456789012", "selfLink": self.link("projects/" + project)}
        if rest[0] in ("regions", "zones") and len(rest) <= 2 and method == "GET":
            return self._geography(project, rest, query)
        if rest[0] == "aggregated" and len(rest) == 2:
            return self._aggregated(project, rest[1], query)
        if rest[0] == "global":
            scope, rest = "global", rest[1:]
        elif rest[0] in ("regions", "zones") and len(rest) >= 3:
            self._geography(project, rest[:2], {})  # an unknown region or zone is a 404, as Google's
            scope, rest = "%s/%s" % (rest[0], rest[1]), rest[2:]
        else:
            raise not_found("/".join(parts))
        rel_scope = "projects/%s/%s" % (project, scope)
        if rest[0] == "operations" and len(rest) == 2 and method == "GET":
            return self._poll("%s/operations/%s" % (rel_scope, rest[1]))
        if rest[0] not in SCOPED[scope.split("/")[0]]:
            raise ApiError(404, "notFound", "%s/%s: not a kind tests/gce_server.py serves in %s scope (it serves %s)"
                           % (rel_scope, rest[0], scope.split("/")[0], ", ".join(SCOPED[scope.split("/")[0]])))
        collection_rel = "%s/%s" % (rel_scope, rest[0])
        if len(rest) == 1:
            if method == "GET":
                return self._list(collection_rel, query)
            if method == "POST":
                if body is None:
                    raise ApiError(400, "required", "Required field 'resource' not specified")
                return self._compute_insert(collection_rel.split("/"), body)
        elif len(rest) == 2:
            name = rest[1]
            if method == "GET":
                return copy.deepcopy(self._get(collection_rel, name))
            if method == "DELETE":
                return self._compute_delete(collection_rel, name)
            if method in ("PATCH", "PUT"):
                return self._compute_update(collection_rel, name, body or {}, replace=method == "PUT")
        elif len(rest) == 3 and method == "POST":
            return self._compute_action(collection_rel, rest[1], rest[2], query, body or {})
        raise ApiError(400, "badRequest", "%s %s is not served by tests/gce_server.py" % (method, "/".join(parts)))

    def _geography(self, project, rest, query):
        if rest[0] == "regions":
            def region(name):
                if name not in self.regions:
                    raise not_found("projects/%s/regions/%s" % (project, name))
                return {"kind": "compute#region", "name": name, "status": "UP", "id": self._next_id(),
                        "selfLink": self.link("projects/%s/regions/%s" % (project, name)),
                        "zones": [self.link("projects/%s/zones/%s-%s" % (project, name, z)) for z in self.regions[name]]}
            if len(rest) == 2:
                return region(rest[1])
            return self._page([region(r) for r in sorted(self.regions)], query, "compute#regionList")
        zones = {"%s-%s" % (r, z): r for r, zs in self.regions.items() for z in zs}

        def zone(name):
            if name not in zones:
                raise not_found("projects/%s/zones/%s" % (project, name))
            return {"kind": "compute#zone", "name": name, "status": "UP", "id": self._next_id(),
                    "region": self.link("projects/%s/regions/%s" % (project, zones[name])),
                    "selfLink": self.link("projects/%s/zones/%s" % (project, name))}
        if len(rest) == 2:
            return zone(rest[1])
        return self._page([zone(z) for z in sorted(zones)], query, "compute#zoneList")

    def _get(self, collection_rel, name):
        item = self.store.get("compute:" + collection_rel, {}).get(name)
        if item is None:
            raise not_found("%s/%s" % (collection_rel, name))
        return item

    def _list(self, collection_rel, query):
        items = [copy.deepcopy(i) for _n, i in sorted(self.store.get("compute:" + collection_rel, {}).items())]
        items = _filter(items, query.get("filter"))
        kind = _kind(collection_rel.rsplit("/", 1)[1]) + "List"
        return self._page(items, query, kind, self.link(collection_rel))

    def _aggregated(self, project, collection, query):
        if collection not in SERVED:
            raise not_found("projects/%s/aggregated/%s" % (project, collection))
        prefix = "compute:projects/%s/" % project
        scoped = {}
        for key, items in sorted(self.store.items()):
            if key.startswith(prefix) and key.endswith("/" + collection) and items:
                scope = key[len(prefix):-len(collection) - 1]
                found = _filter([copy.deepcopy(i) for _n, i in sorted(items.items())], query.get("filter"))
                if found:
                    scoped[scope] = {collection: found}
        return {"kind": _kind(collection) + "AggregatedList", "items": scoped,
                "selfLink": self.link("projects/%s/aggregated/%s" % (project, collection))}

    def _page(self, items, query, kind, self_link=None, key="items", size_param="maxResults", default_size=500):
        size = int(query.get(size_param) or default_size)
        start = int(query.get("pageToken") or 0)
        answer = {key: items[start:start + size]}
        if kind:
            answer["kind"] = kind
        if self_link:
            answer["selfLink"] = self_link
        if start + size < len(items):
            answer["nextPageToken"] = str(start + size)
        if not answer[key] and key == "items":
            del answer[key]  # Compute leaves items out of an empty list
        return answer

    def _compute_insert(self, collection_parts, body, log_operation=True):
        collection_rel = "/".join(collection_parts)
        project, collection = collection_parts[1], collection_parts[-1]
        scope = "/".join(collection_parts[2:-1])
        name = body.get("name")
        if not name:
            raise ApiError(400, "required", "Required field 'resource.name' not specified")
        if not _NAME.match(name):
            raise ApiError(400, "invalid", "Invalid value for field 'resource.name': '%s'. Must be a match of regex "
                           "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'" % name)
        items = self._collection("compute:" + collection_rel)
        if name in items:
            raise ApiError(409, "alreadyExists", "The resource '%s/%s' already exists" % (collection_rel, name))
        resource = copy.deepcopy(body)
        self._check_references(project, resource)
        self._check_labels(resource.get("labels"))
        self._check_labels(((resource.get("properties") or {}).get("labels")))
        link = self.link("%s/%s" % (collection_rel, name))
        resource.update(kind=_kind(collection), id=self._next_id(), creationTimestamp=_now(), selfLink=link)
        if scope.startswith("zones/"):
            resource["zone"] = self.link("projects/%s/%s" % (project, scope))
        elif scope.startswith("regions/"):
            resource["region"] = self.link("projects/%s/%s" % (project, scope))
        if "labels" in resource:
            resource["labelFingerprint"] = self._fingerprint()
        DEFAULTS.get(collection, lambda server, r, p, s: None)(self, resource, project, scope)
        items[name] = resource
        if collection == "instanceGroupManagers":
            self._igm_created(resource, project, scope)
        if not log_operation:
            return copy.deepcopy(resource)
        return self._operation(project, scope, "insert", link, resource["id"])

    def _fingerprint(self):
        return "%016x" % self._random.getrandbits(64)

    def _compute_delete(self, collection_rel, name):
        resource = self._get(collection_rel, name)
        parts = collection_rel.split("/")
        project, scope = parts[1], "/".join(parts[2:-1])
        users = self._users_of(resource["selfLink"])
        if parts[-1] == "instanceGroupManagers":  # its instance group goes with it, unless a backend service uses it
            users += self._users_of(resource.get("instanceGroup") or "-", but=resource["selfLink"])
        if users:
            return self._operation(project, scope, "delete", resource["selfLink"], resource["id"], error=(
                "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE", "The %s resource '%s/%s' is already being used by '%s'"
                % (_kind(parts[-1]).split("#")[1], collection_rel, name, users[0])))
        self._remove(collection_rel, name)
        return self._operation(project, scope, "delete", resource["selfLink"], resource["id"])

    def _remove(self, collection_rel, name):
        resource = self.store["compute:" + collection_rel].pop(name)
        collection = collection_rel.rsplit("/", 1)[1]
        if collection == "instanceGroupManagers":
            for instance in self._members(resource):
                self._remove_instance(instance)
            group = self._resolve("", resource.get("instanceGroup", ""))
            if group:
                self.store.get(group[0], {}).pop(group[1], None)
        elif collection == "instances":  # its disks are detached; those marked autoDelete go with it
            for disk in resource.get("disks") or []:
                found = self._resolve("", disk.get("source") or "")
                if not found or found[1] not in self.store.get(found[0], {}):
                    continue
                if disk.get("autoDelete"):
                    del self.store[found[0]][found[1]]
                else:
                    users = self.store[found[0]][found[1]].get("users") or []
                    self.store[found[0]][found[1]]["users"] = [u for u in users if u != resource["selfLink"]]

    def _users_of(self, link, but=None):
        """What still references link (Google refuses to delete a resource another one uses): not a disk's
        users (instances), nor what an instance's metadata names, nor `but`."""
        users = []
        skip = ("metadata", "selfLink", "zone", "region", "users", "creationTimestamp", "nextHopInstance")
        for key, items in self.store.items():
            if not key.startswith("compute:"):
                continue
            for item in items.values():
                if item.get("selfLink") in (link, but):
                    continue
                if any(text == link for _c, _k, text in _walk_strings(item, skip)):
                    users.append(item["selfLink"].split("/compute/v1/", 1)[-1])
        return users

    def _compute_update(self, collection_rel, name, body, replace):
        resource = self._get(collection_rel, name)
        project = collection_rel.split("/")[1]
        update = copy.deepcopy(body)
        self._check_references(project, update)
        self._check_labels(update.get("labels"))
        keep = {k: resource[k] for k in ("kind", "id", "creationTimestamp", "selfLink", "name", "zone", "region")
                if k in resource}
        if replace:
            resource.clear()
            resource.update(update)
        else:
            _merge(resource, update)
        resource.update(keep)
        if "fingerprint" in resource:
            resource["fingerprint"] = self._fingerprint()
        parts = collection_rel.split("/")
        return self._operation(parts[1], "/".join(parts[2:-1]), "update" if replace else "patch",
                               resource["selfLink"], resource["id"])

    def _compute_action(self, collection_rel, name, action, query, body):
        resource = self._get(collection_rel, name)
        parts = collection_rel.split("/")
        project, scope, collection = parts[1], "/".join(parts[2:-1]), parts[-1]
        if action == "listManagedInstances" and collection == "instanceGroupManagers":
            return {"managedInstances": [
                {"instance": i["selfLink"], "id": i["id"], "instanceStatus": i["status"], "currentAction": "NONE",
                 "instanceTemplate": _metadata(i).get("instance-template", ""),
                 "version": {"instanceTemplate": _metadata(i).get("instance-template", "")}}
                for i in self._members(resource)]}
        if action == "setLabels":
            if body.get("labelFingerprint") != resource.get("labelFingerprint"):
                raise ApiError(412, "conditionNotMet", "Labels fingerprint either invalid or resource labels have changed")
            self._check_labels(body.get("labels"))
            resource["labels"] = dict(body.get("labels") or {})
            resource["labelFingerprint"] = self._fingerprint()
        elif action == "setMetadata" and collection == "instances":
            metadata = resource.setdefault("metadata", {"kind": "compute#metadata"})
            if body.get("fingerprint") != metadata.get("fingerprint"):
                raise ApiError(412, "conditionNotMet", "Supplied fingerprint does not match current metadata fingerprint.")
            metadata.update(items=body.get("items") or [], fingerprint=self._fingerprint())
        elif collection == "instanceGroupManagers" and action in IGM_ACTIONS:
            getattr(self, IGM_ACTIONS[action])(resource, project, query, body)
        else:
            raise ApiError(400, "badRequest", "%s/%s/%s is not an action tests/gce_server.py serves" % (collection_rel, name, action))
        return self._operation(project, scope, action, resource["selfLink"], resource["id"])

    # -- managed instance groups -------------------------------------------------------------------------
    def _members(self, igm):
        instances = self.store.get("compute:%s/instances" % igm["selfLink"].split("/compute/v1/", 1)[1].rsplit("/", 2)[0], {})
        return [i for _n, i in sorted(instances.items()) if _metadata(i).get("created-by") == igm["selfLink"]]

    def _igm_created(self, igm, project, scope):
        group_rel = "projects/%s/%s/instanceGroups" % (project, scope)
        group = {"name": igm["name"], "kind": "compute#instanceGroup", "id": self._next_id(), "creationTimestamp": _now(),
                 "selfLink": self.link("%s/%s" % (group_rel, igm["name"])), "zone": igm.get("zone"),
                 "fingerprint": self._fingerprint(), "size": 0}
        self._collection("compute:" + group_rel)[igm["name"]] = group
        igm.update(instanceGroup=group["selfLink"], fingerprint=self._fingerprint(), status={"isStable": True},
                   currentActions={"none": 0, "creating": 0, "deleting": 0, "recreating": 0})
        self._scale(igm)

    def _scale(self, igm):
        members = self._members(igm)
        for instance in members[int(igm.get("targetSize") or 0):]:
            self._remove_instance(instance)
        for _index in range(int(igm.get("targetSize") or 0) - len(members)):
            self._new_instance(igm)
        igm["currentActions"]["none"] = len(self._members(igm))

    def _new_instance(self, igm, name=None):
        zone_rel = igm["zone"].split("/compute/v1/", 1)[1]
        template = self._get(*igm["instanceTemplate"].split("/compute/v1/", 1)[1].rsplit("/", 1))
        properties = copy.deepcopy(template.get("properties") or {})
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        instances = self._collection("compute:%s/instances" % zone_rel)
        while not name or name in instances:
            name = "%s-%s" % (igm["baseInstanceName"], "".join(self._random.choice(alphabet) for _letter in range(4)))
        link = self.link("%s/instances/%s" % (zone_rel, name))
        metadata = properties.get("metadata") or {}
        metadata.update(kind="compute#metadata", fingerprint=self._fingerprint())
        metadata["items"] = list(metadata.get("items") or []) + [
            {"key": "instance-template", "value": template["selfLink"]}, {"key": "created-by", "value": igm["selfLink"]}]
        disks = []
        for index, disk in enumerate(properties.get("disks") or []):
            params = disk.get("initializeParams") or {}
            disk_name = name if disk.get("boot") else (params.get("diskName") or "%s-%d" % (name, index))
            self._collection("compute:%s/disks" % zone_rel)[disk_name] = {
                "kind": "compute#disk", "id": self._next_id(), "name": disk_name, "creationTimestamp": _now(),
                "sizeGb": str(params.get("diskSizeGb") or 10), "zone": igm["zone"], "status": "READY",
                "selfLink": self.link("%s/disks/%s" % (zone_rel, disk_name)), "users": [link],
                "type": self.link("%s/diskTypes/%s" % (zone_rel, (params.get("diskType") or "pd-standard").rsplit("/", 1)[-1])),
                "labels": dict(params.get("labels") or {}), "labelFingerprint": self._fingerprint()}
            disks.append({"kind": "compute#attachedDisk", "index": index, "boot": bool(disk.get("boot")),
                          "autoDelete": disk.get("autoDelete", True), "deviceName": disk.get("deviceName") or disk_name,
                          "mode": disk.get("mode", "READ_WRITE"), "type": "PERSISTENT",
                          "source": self.link("%s/disks/%s" % (zone_rel, disk_name))})
        interfaces = []
        for index, nic in enumerate(properties.get("networkInterfaces") or []):
            nic = copy.deepcopy(nic)
            nic.update(name="nic%d" % index, networkIP="10.0.%d.%d" % (self._ids // 250 % 250, self._ids % 250 + 2))
            for access in nic.get("accessConfigs") or []:
                access.setdefault("natIP", "203.0.113.%d" % (self._ids % 250 + 2))
            interfaces.append(nic)
        machine_type = properties.get("machineType") or "e2-medium"
        instance = {"kind": "compute#instance", "id": self._next_id(), "name": name, "creationTimestamp": _now(),
                    "zone": igm["zone"], "status": "RUNNING", "selfLink": link,
                    "machineType": self.link("%s/machineTypes/%s" % (zone_rel, machine_type.rsplit("/", 1)[-1])),
                    "labels": dict(properties.get("labels") or {}), "labelFingerprint": self._fingerprint(),
                    "metadata": metadata, "tags": properties.get("tags") or {}, "disks": disks,
                    "networkInterfaces": interfaces, "serviceAccounts": properties.get("serviceAccounts") or [],
                    "scheduling": properties.get("scheduling") or {}, "canIpForward": bool(properties.get("canIpForward")),
                    "fingerprint": self._fingerprint()}
        instances[name] = instance
        return instance

    def _remove_instance(self, instance):
        self._remove(instance["selfLink"].split("/compute/v1/", 1)[1].rsplit("/", 1)[0], instance["name"])

    def _igm_resize(self, igm, _project, query, _body):
        if "size" not in query:
            raise ApiError(400, "required", "Required parameter 'size' not specified")
        igm["targetSize"] = int(query["size"])
        self._scale(igm)

    def _igm_set_template(self, igm, project, _query, body):
        template = {"instanceTemplate": body.get("instanceTemplate")}
        self._check_references(project, template)
        igm["instanceTemplate"] = template["instanceTemplate"]

    def _igm_delete_instances(self, igm, _project, _query, body):
        self._igm_instances(igm, "deleteInstances", body)

    def _igm_recreate_instances(self, igm, _project, _query, body):
        self._igm_instances(igm, "recreateInstances", body)

    def _igm_abandon_instances(self, igm, _project, _query, body):
        self._igm_instances(igm, "abandonInstances", body)

    def _igm_instances(self, igm, action, body):
        members = {i["selfLink"]: i for i in self._members(igm)}
        chosen = []
        for given in body.get("instances") or []:
            found = next((i for link, i in members.items() if link.endswith("/" + given.split("/compute/v1/")[-1])), None)
            if found is None:
                raise ApiError(400, "invalid", "Instance '%s' is not a member of %s" % (given, igm["name"]))
            chosen.append(found)
        for instance in chosen:
            if action == "abandonInstances":  # it stays, outside the group
                instance["metadata"]["items"] = [i for i in instance["metadata"]["items"] if i.get("key") != "created-by"]
            else:
                self._remove_instance(instance)
            if action == "recreateInstances":
                self._new_instance(igm, instance["name"])
            else:
                igm["targetSize"] = int(igm.get("targetSize") or 0) - 1
        igm["currentActions"]["none"] = len(self._members(igm))

    def _igm_set_target_pools(self, igm, project, _query, body):
        pools = {"targetPools": list(body.get("targetPools") or [])}
        self._check_references(project, pools)
        igm["targetPools"] = pools["targetPools"]

    # -- IAM, Resource Manager -----------------------------------------------------------------------------
    def iam(self, method, parts, query, body):
        if len(parts) < 3 or parts[0] != "projects" or parts[2] != "serviceAccounts":
            raise not_found("/".join(parts))
        project = parts[1]
        accounts = self._collection("iam:projects/%s/serviceAccounts" % project)
        if len(parts) == 3:
            if method == "GET":
                return self._page([copy.deepcopy(a) for _n, a in sorted(accounts.items())], query, None, key="accounts",
                                  size_param="pageSize", default_size=100)
            if method == "POST":
                return self._iam_create(project, body or {})
        elif len(parts) == 4:
            email = parts[3]
            account = accounts.get(email) or next((a for a in accounts.values() if a["uniqueId"] == email), None)
            if account is None:
                raise ApiError(404, "", "Unknown service account")
            if method == "GET":
                return copy.deepcopy(account)
            if method == "DELETE":
                del accounts[account["email"]]
                return {}
            if method == "PATCH":
                _merge(account, (body or {}).get("serviceAccount") or {})
                return copy.deepcopy(account)
        raise ApiError(400, "", "%s %s is not served by tests/gce_server.py" % (method, "/".join(parts)))

    def _iam_create(self, project, body):
        account_id = body.get("accountId") or ""
        if not _ACCOUNT_ID.match(account_id):
            raise ApiError(400, "", "Invalid account ID '%s': 6 to 30 lowercase letters, digits or hyphens, starting with a "
                           "letter" % account_id)
        email = "%s@%s.iam.gserviceaccount.com" % (account_id, project)
        accounts = self._collection("iam:projects/%s/serviceAccounts" % project)
        if email in accounts:
            raise ApiError(409, "", "Service account %s already exists within project projects/%s." % (account_id, project))
        given = body.get("serviceAccount") or {}
        account = {"name": "projects/%s/serviceAccounts/%s" % (project, email), "projectId": project,
                   "uniqueId": self._next_id()[-21:], "email": email, "etag": "MDEwMjE5MjA=",
                   "oauth2ClientId": self._next_id()[-21:]}
        account.update({k: v for k, v in given.items() if k in ("displayName", "description")})
        accounts[email] = account
        return copy.deepcopy(account)

    def crm(self, method, parts, body):
        if len(parts) != 2 or parts[0] != "projects":
            raise not_found("/".join(parts))
        project, _sep, verb = parts[1].partition(":")
        policy = self.policies.setdefault(project, {"version": 1, "etag": "BwWWja0YfJA=", "bindings": [
            {"role": "roles/owner", "members": ["user:owner@example.com"]}]})
        if method == "GET" and not verb:
            return {"projectNumber": "123456789012", "projectId": project, "lifecycleState": "ACTIVE", "name": project}
        if method == "POST" and verb == "getIamPolicy":
            return copy.deepcopy(policy)
        if method == "POST" and verb == "setIamPolicy":
            new = copy.deepcopy((body or {}).get("policy") or {})
            if new.get("etag") and new["etag"] != policy["etag"]:
                raise ApiError(409, "", "There were concurrent policy changes. Please retry the whole read-modify-write "
                               "with exponential backoff.")
            new["etag"] = "BwX%013x=" % self._random.getrandbits(52)
            new.setdefault("version", 1)
            self.policies[project] = new
            return copy.deepcopy(new)
        raise ApiError(400, "", "%s %s is not served by tests/gce_server.py" % (method, "/".join(parts)))

    # -- Cloud DNS -----------------------------------------------------------------------------------------
    def dns(self, method, parts, query, body):
        if len(parts) < 3 or parts[0] != "projects" or parts[2] != "managedZones":
            raise not_found("/".join(parts))
        project = parts[1]
        zones = self._collection("dns:projects/%s/managedZones" % project)
        if len(parts) == 3:
            if method == "GET":
                found = [copy.deepcopy(z) for _n, z in sorted(zones.items())
                         if not query.get("dnsName") or z["dnsName"] == query["dnsName"]]
                return self._page(found, query, "dns#managedZonesListResponse", key="managedZones")
            if method == "POST":
                return self._dns_zone_create(project, body or {})
        zone = zones.get(parts[3])
        if zone is None:
            raise not_found("projects/%s/managedZones/%s" % (project, parts[3]))
        zone_rel = "projects/%s/managedZones/%s" % (project, zone["name"])
        records = self._collection("dns:%s/rrsets" % zone_rel)
        if len(parts) == 4:
            if method == "GET":
                return copy.deepcopy(zone)
            if method == "DELETE":
                if any(r["type"] not in ("NS", "SOA") for r in records.values()):
                    raise ApiError(400, "containerNotEmpty", "The resource named '%s' cannot be deleted because it is not "
                                   "empty" % zone["name"])
                del zones[zone["name"]]
                self.store.pop("dns:%s/rrsets" % zone_rel, None)
                return {}
        elif parts[4] == "rrsets":
            if len(parts) == 5 and method == "GET":
                found = [copy.deepcopy(r) for _k, r in sorted(records.items())
                         if (not query.get("name") or r["name"] == query["name"])
                         and (not query.get("type") or r["type"] == query["type"])]
                return self._page(found, query, "dns#resourceRecordSetsListResponse", key="rrsets")
            if len(parts) == 5 and method == "POST":
                return self._dns_add(project, zone["name"], body or {})
            if len(parts) == 7:
                key = "%s %s" % (parts[5], parts[6])
                if key not in records:
                    raise not_found("%s/rrsets/%s/%s" % (zone_rel, parts[5], parts[6]))
                if method == "GET":
                    return copy.deepcopy(records[key])
                if method == "DELETE":
                    del records[key]
                    return {}
                if method == "PATCH":
                    records[key].update({k: v for k, v in (body or {}).items() if k in ("ttl", "rrdatas")})
                    return copy.deepcopy(records[key])
        elif parts[4] == "changes":
            if len(parts) == 5 and method == "POST":
                return self._dns_change(zone_rel, zone, records, body or {})
            if len(parts) == 6 and method == "GET":
                change = self.changes.get(zone_rel, {}).get(parts[5])
                if change is None:
                    raise not_found("%s/changes/%s" % (zone_rel, parts[5]))
                change[1] -= 1
                if change[1] <= 0:
                    change[0]["status"] = "done"
                return copy.deepcopy(change[0])
        raise ApiError(400, "badRequest", "%s %s is not served by tests/gce_server.py" % (method, "/".join(parts)))

    def _dns_zone_create(self, project, body):
        name, dns_name = body.get("name") or "", body.get("dnsName") or ""
        if not _NAME.match(name) or not dns_name.endswith("."):
            raise ApiError(400, "invalid", "Invalid value for 'entity.managedZone': name %r, dnsName %r (a name as "
                           "RFC 1035, a dnsName ending in '.')" % (name, dns_name))
        zones = self._collection("dns:projects/%s/managedZones" % project)
        if name in zones:
            raise ApiError(409, "alreadyExists", "The resource 'entity.managedZone' named '%s' already exists" % name)
        zone = {"kind": "dns#managedZone", "name": name, "dnsName": dns_name, "description": body.get("description", ""),
                "id": self._next_id()[-19:], "creationTime": _now(), "visibility": body.get("visibility", "public"),
                "nameServers": ["ns-cloud-a%d.googledomains.com." % i for i in range(1, 5)]}
        for key in ("labels", "privateVisibilityConfig"):
            if key in body:
                zone[key] = body[key]
        zones[name] = zone
        records = self._collection("dns:projects/%s/managedZones/%s/rrsets" % (project, name))
        records["%s NS" % dns_name] = {"kind": "dns#resourceRecordSet", "name": dns_name, "type": "NS", "ttl": 21600,
                                       "rrdatas": list(zone["nameServers"])}
        records["%s SOA" % dns_name] = {"kind": "dns#resourceRecordSet", "name": dns_name, "type": "SOA", "ttl": 21600,
                                        "rrdatas": ["ns-cloud-a1.googledomains.com. cloud-dns-hostmaster.google.com. "
                                                    "1 21600 3600 259200 300"]}
        return copy.deepcopy(zone)

    def _dns_record(self, zone, record):
        name, kind = record.get("name") or "", record.get("type") or ""
        if not name.endswith(zone["dnsName"]) or not kind or not record.get("rrdatas"):
            raise ApiError(400, "invalid", "Invalid value for 'entity.change.additions[0].name': '%s' (a name in %s with "
                           "a type and rrdatas)" % (name, zone["dnsName"]))
        value = {"kind": "dns#resourceRecordSet", "name": name, "type": kind, "ttl": int(record.get("ttl") or 300),
                 "rrdatas": list(record["rrdatas"])}
        return "%s %s" % (name, kind), value

    def _dns_add(self, project, zone_name, record):
        zone = self._collection("dns:projects/%s/managedZones" % project)[zone_name]
        records = self._collection("dns:projects/%s/managedZones/%s/rrsets" % (project, zone_name))
        key, value = self._dns_record(zone, record)
        if key in records:
            raise ApiError(409, "alreadyExists", "The resource 'entity.rrset' named '%s' already exists" % key.replace(" ", " ("))
        records[key] = value
        return copy.deepcopy(value)

    def _dns_change(self, zone_rel, zone, records, body):
        deletions = [self._dns_record(zone, r) for r in body.get("deletions") or []]
        additions = [self._dns_record(zone, r) for r in body.get("additions") or []]
        for index, (key, value) in enumerate(deletions):
            current = records.get(key)
            if current is None or current["rrdatas"] != value["rrdatas"] or current["ttl"] != value["ttl"]:
                raise ApiError(404 if current is None else 412, "notFound" if current is None else "conditionNotMet",
                               "The resource 'entity.change.deletions[%d]' named '%s (%s)' does not exist%s"
                               % (index, value["name"], value["type"], "" if current is None else " as given"))
        removed = {key for key, _v in deletions}
        for index, (key, value) in enumerate(additions):
            if key in records and key not in removed:
                raise ApiError(409, "alreadyExists", "The resource 'entity.change.additions[%d]' named '%s (%s)' already "
                               "exists" % (index, value["name"], value["type"]))
        for key in removed:
            del records[key]
        for key, value in additions:
            records[key] = value
        self._ids += 1
        change = {"kind": "dns#change", "id": str(self._ids), "startTime": _now(),
                  "status": "pending" if self.operation_polls > 0 else "done",
                  "additions": [v for _k, v in additions], "deletions": [v for _k, v in deletions]}
        self.changes.setdefault(zone_rel, {})[change["id"]] = [change, self.operation_polls]
        return copy.deepcopy(change)

    # -- dispatch ------------------------------------------------------------------------------------------
    def handle(self, method, raw_path, body):
        parsed = urllib.parse.urlsplit(raw_path)
        path = parsed.path
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query).items()}
        with self._lock:
            self.requests.append((method, path))
            for fault in self.faults:
                if fault[4] > 0 and fault[0] == method and fault[1] in path:
                    fault[4] -= 1
                    return self._error(path, ApiError(fault[2], fault[3], "injected by the test"))
            try:
                if path.startswith("/compute/v1/"):
                    return 200, self.compute(method, _split(path[len("/compute/v1/"):]), query, body)
                if path.startswith("/dns/v1/"):
                    return 200, self.dns(method, _split(path[len("/dns/v1/"):]), query, body)
                if path.startswith("/v1/"):
                    parts = _split(path[len("/v1/"):])
                    if len(parts) >= 3 and parts[2] == "serviceAccounts":
                        return 200, self.iam(method, parts, query, body)
                    return 200, self.crm(method, parts, body)
                raise not_found(path)
            except ApiError as exc:
                return self._error(path, exc)

    @staticmethod
    def _error(path, exc):
        error = {"code": exc.status, "message": exc.message, "status": STATUS_NAMES.get(exc.status, "UNKNOWN")}
        if not path.startswith("/v1/"):  # IAM and Resource Manager give no errors[] list
            error["errors"] = [{"message": exc.message, "domain": "global", "reason": exc.reason}]
        return exc.status, {"error": error}


def _split(rel):
    return [urllib.parse.unquote(p) for p in rel.strip("/").split("/") if p]


def _merge(target, update):
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _metadata(instance):
    return {i.get("key"): i.get("value") for i in (instance.get("metadata") or {}).get("items") or []}


_CLAUSE = re.compile(r"^\(?\s*([A-Za-z0-9_.-]+)\s*(=|!=|eq|ne)\s*\"?([^\"()]*?)\"?\s*\)?$")


def _filter(items, expression):
    """Compute's filter: clauses `field = value`, `field != value` (exact), `field eq regex`, `field ne regex`
    joined by AND (or written side by side in parentheses); field may be labels.<key>."""
    if not expression:
        return items
    clauses = []
    for text in re.split(r"\s+AND\s+|\)\s*\(", expression.strip()):
        match = _CLAUSE.match(text.strip())
        if not match:
            raise ApiError(400, "invalid", "Invalid list filter expression %r (tests/gce_server.py takes `field = value`, "
                           "`field != value`, `field eq regex`, `field ne regex` joined by AND)" % expression)
        clauses.append(match.groups())

    def value_of(item, field):
        for part in field.split("."):
            item = item.get(part) if isinstance(item, dict) else None
        return "" if item is None else str(item)

    def keep(item):
        for field, op, value in clauses:
            actual = value_of(item, field)
            if op in ("=", "!=") and (actual == value) != (op == "="):
                return False
            if op in ("eq", "ne") and bool(re.fullmatch(value, actual)) != (op == "eq"):
                return False
        return True
    return [i for i in items if keep(i)]


def _network_defaults(server, resource, _project, _scope):
    resource.setdefault("routingConfig", {"routingMode": "REGIONAL"})
    resource.setdefault("autoCreateSubnetworks", False)


def _subnetwork_defaults(server, resource, _project, _scope):
    cidr = resource.get("ipCidrRange") or ""
    if not re.match(r"^\d+\.\d+\.\d+\.\d+/\d+$", cidr):
        raise ApiError(400, "invalid", "Invalid value for field 'resource.ipCidrRange': '%s'" % cidr)
    if not resource.get("network"):
        raise ApiError(400, "required", "Required field 'resource.network' not specified")
    base = cidr.split("/")[0].rsplit(".", 1)
    resource.setdefault("gatewayAddress", "%s.%d" % (base[0], int(base[1]) + 1))
    resource["fingerprint"] = server._fingerprint()
    resource.setdefault("stackType", "IPV4_ONLY")


def _firewall_defaults(server, resource, _project, _scope):
    if not resource.get("network"):
        raise ApiError(400, "required", "Required field 'resource.network' not specified (tests/gce_server.py has no "
                       "default network)")
    resource.setdefault("direction", "INGRESS")
    resource.setdefault("priority", 1000)
    resource.setdefault("disabled", False)
    resource.setdefault("logConfig", {"enable": False})


def _address_defaults(server, resource, _project, _scope):
    resource.setdefault("addressType", "EXTERNAL")
    resource.setdefault("status", "RESERVED")
    if "address" not in resource:
        server._ids += 1
        internal = resource["addressType"] == "INTERNAL"
        resource["address"] = ("10.0.255.%d" if internal else "203.0.113.%d") % (server._ids % 250 + 2)
    resource.setdefault("networkTier", "PREMIUM")


def _forwarding_rule_defaults(server, resource, project, scope):
    if "IPAddress" not in resource:
        server._ids += 1
        resource["IPAddress"] = "198.51.100.%d" % (server._ids % 250 + 2)
    resource.setdefault("IPProtocol", "TCP")
    resource.setdefault("loadBalancingScheme", "EXTERNAL")
    resource["fingerprint"] = server._fingerprint()
    del project, scope


def _health_check_defaults(server, resource, _project, _scope):
    for key, value in (("checkIntervalSec", 5), ("timeoutSec", 5), ("healthyThreshold", 2), ("unhealthyThreshold", 2)):
        resource.setdefault(key, value)
    if resource.get("kind") == "compute#httpHealthCheck":
        resource.setdefault("port", 80)
        resource.setdefault("requestPath", "/")


def _disk_defaults(server, resource, _project, _scope):
    resource.setdefault("sizeGb", "10")
    resource["sizeGb"] = str(resource["sizeGb"])
    resource.setdefault("status", "READY")
    resource.setdefault("labelFingerprint", server._fingerprint())


def _fingerprinted(server, resource, _project, _scope):
    resource["fingerprint"] = server._fingerprint()


def _igm_defaults(server, resource, _project, _scope):
    for key in ("instanceTemplate", "baseInstanceName"):
        if not resource.get(key):
            raise ApiError(400, "required", "Required field 'resource.%s' not specified" % key)
    resource.setdefault("targetSize", 0)


DEFAULTS = {"networks": _network_defaults, "subnetworks": _subnetwork_defaults, "firewalls": _firewall_defaults,
            "addresses": _address_defaults, "forwardingRules": _forwarding_rule_defaults,
            "httpHealthChecks": _health_check_defaults, "healthChecks": _health_check_defaults,
            "disks": _disk_defaults, "routers": _fingerprinted, "backendServices": _fingerprinted,
            "instanceGroupManagers": _igm_defaults, "instanceTemplates": lambda *a: None, "targetPools": lambda *a: None}
# action -> GceServer method(igm, project, query, body)
IGM_ACTIONS = {"resize": "_igm_resize", "setInstanceTemplate": "_igm_set_template",
               "setTargetPools": "_igm_set_target_pools", "deleteInstances": "_igm_delete_instances",
               "recreateInstances": "_igm_recreate_instances", "abandonInstances": "_igm_abandon_instances"}


class _Handler(BaseHTTPRequestHandler):
    gce = None
    protocol_version = "HTTP/1.1"
    # Keep-alive with Nagle on costs a delayed ACK (about 40 ms) per request; Google's front ends answer at once.
    disable_nagle_algorithm = True

    def log_message(self, *_args):  # quiet
        return

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            status, answer = GceServer._error(self.path, ApiError(400, "parseError", "the body is not JSON"))
        else:
            status, answer = self.gce.handle(self.command, self.path, body)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self._headers_buffer.append(b"\r\n")  # headers and body in one write (end_headers would flush twice)
        self.wfile.write(b"".join(self._headers_buffer) + data)
        self._headers_buffer = []

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve


if __name__ == "__main__":  # python tests/gce_server.py: serve until interrupted
    import time
    running = GceServer().start()
    print("KOPS_GCE_ENDPOINT=%s" % running.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        running.stop()
