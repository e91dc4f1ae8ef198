"""The toy cloud's API (tests/integration/toy_cloud/): a small JSON server on 127.0.0.1 that keeps networks, machine
pools and the machines a pool starts, and logs every request, so that a test can tell which verbs a run sent.

    GET    /_mark/<step>                                a test's marker: the requests after it are that step's
    GET    /<collection>?field=value&label=key=value   list, filtered (a label filter matches the object's labels)
    GET    /<collection>/<id>                           one object (404: gone)
    POST   /<collection>                                create; a pool starts min_size machines labelled like it
    PATCH  /<collection>/<id>                           change the given fields (a pool's size: machines follow)
    DELETE /<collection>/<id>                           delete (a pool its machines; 409: a network a pool uses)
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import urllib.parse

COLLECTIONS = ("networks", "pools", "machines")
MUTATING = ("POST", "PATCH", "DELETE")


class ToyApi(object):
    def __init__(self):
        self.objects = {c: {} for c in COLLECTIONS}
        self.requests = []  # (method, path)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = None

    # -- what the handler does -----------------------------------------------------------------------
    def _matches(self, item, query):
        for key, values in query.items():
            for value in values:
                if key == "label":
                    name, _sep, wanted = value.partition("=")
                    if (item.get("labels") or {}).get(name) != wanted:
                        return False
                elif str(item.get(key)) != value:
                    return False
        return True

    def _machines(self, pool):
        existing = [m for m in self.objects["machines"].values() if m["pool_id"] == pool["id"]]
        for machine in existing[pool["min_size"]:]:
            del self.objects["machines"][machine["id"]]
        for index in range(len(existing), pool["min_size"]):
            number = next(self._ids)
            machine = {"id": "m-%d" % number, "name": "%s-%d" % (pool["name"], index), "pool_id": pool["id"],
                       "zone": (pool.get("zones") or [""])[0], "private_ip": "10.0.0.%d" % number,
                       "labels": dict(pool.get("labels") or {})}
            self.objects["machines"][machine["id"]] = machine

    def handle(self, method, path, body):
        """(status, JSON body)."""
        parsed = urllib.parse.urlparse(path)
        parts = [p for p in parsed.path.split("/") if p]
        if len(parts) == 2 and parts[0] == "_mark":  # a test's playbook marks where its next step starts
            with self._lock:
                self.requests.append(("MARK", parts[1]))
            return 200, {}
        if not parts or parts[0] not in COLLECTIONS or len(parts) > 2:
            return 404, {"error": "no such resource %s" % parsed.path}
        objects = self.objects[parts[0]]
        with self._lock:
            self.requests.append((method, parsed.path))
            if len(parts) == 1 and method == "GET":
                query = urllib.parse.parse_qs(parsed.query)
                return 200, [item for item in objects.values() if self._matches(item, query)]
            if len(parts) == 1 and method == "POST":
                item = dict(body, id="%s-%d" % (parts[0][:-1], next(self._ids)))
                objects[item["id"]] = item
                if parts[0] == "pools":
                    self._machines(item)
                return 201, item
            item = objects.get(parts[1])
            if item is None:
                return 404, {"error": "%s %s not found" % (parts[0][:-1], parts[1])}
            if method == "GET":
                return 200, item
            if method == "PATCH":
                item.update(body)
                if parts[0] == "pools":
                    self._machines(item)
                return 200, item
            if method == "DELETE":
                if parts[0] == "networks" and any(p.get("network_id") == item["id"]
                                                  for p in self.objects["pools"].values()):
                    return 409, {"error": "network %s is used by a pool" % item["id"]}
                del objects[item["id"]]
                if parts[0] == "pools":
                    for machine in [m for m in self.objects["machines"].values() if m["pool_id"] == item["id"]]:
                        del self.objects["machines"][machine["id"]]
                return 204, None
        return 405, {"error": "%s not allowed" % method}

    # -- the server ----------------------------------------------------------------------------------
    def start(self):
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                status, answer = api.handle(self.command, self.path, body)
                data = json.dumps(answer).encode() if answer is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return "http://127.0.0.1:%d" % self._server.server_address[1]

    def stop(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def steps(self):
        """{step: [(method, path)]}: the requests before the first mark (step "start"), then after each mark."""
        steps, step = {"start": []}, "start"
        for method, path in self.requests:
            if method == "MARK":
                step = path
                steps[step] = []
            else:
                steps[step].append((method, path))
        return steps


def mutating(requests):
    return [r for r in requests if r[0] in MUTATING]
