"""A read-only container registry (Docker Registry HTTP API v2) serving docker-archives, for test hosts that pull.

The air-gapped user's registry mirror: `spec.containerd.registryMirrors: {"registry.k8s.io": [<url>]}`, which our
product writes as containerd's /etc/containerd/certs.d/registry.k8s.io/hosts.toml (nodeup/containerd.py); an
`http://` host there is spoken to in plain HTTP.  containerd then asks the mirror for the path without the
registry's host and says which registry it means in `?ns=`:
    GET /v2/pause/manifests/3.10.1?ns=registry.k8s.io

What is served, per image of each archive (tests/realk8s/images.py writes them):
- GET/HEAD /v2/ -> 200 {}
- GET/HEAD /v2/<name>/manifests/<tag or digest> -> a Docker manifest v2 schema 2, with its Content-Type and
  Docker-Content-Digest
- GET/HEAD /v2/<name>/blobs/<digest> -> the config, or a layer gzip-compressed
  (application/vnd.docker.image.rootfs.diff.tar.gzip, which every containerd reads; the config's diff_ids stay
  the uncompressed layers' sha256, as the image spec has them)
Anything else: the registry's JSON errors (404 *_UNKNOWN, 405 UNSUPPORTED for writes).  One platform (amd64) per
image, so no manifest list.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import pathlib
import urllib.parse

from tests import servers
from tests.realk8s import images

MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
CONFIG_TYPE = "application/vnd.docker.container.image.v1+json"
LAYER_TYPE = "application/vnd.docker.image.rootfs.diff.tar.gzip"


def split_reference(reference):
    """registry.k8s.io/kubeops-test/sleeper:1 -> ("registry.k8s.io", "kubeops-test/sleeper", "1"); a name without a
    registry host is Docker Hub's, as containerd reads it."""
    name, _colon, tag = reference.rpartition(":")
    if not name or "/" in tag:
        raise ValueError("%r: an image reference with a tag (name:tag) is needed" % (reference,))
    host, _slash, path = name.partition("/")
    if not path or not ("." in host or ":" in host or host == "localhost"):
        return "docker.io", name if "/" in name else "library/" + name, tag
    return host, path, tag


def _digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Repository(object):
    def __init__(self, host):
        self.host = host
        self.tags = {}
        self.manifests = {}
        self.blobs = {}

    def add(self, tag, config, layers):
        descriptors = []
        self.blobs[_digest(config)] = config
        for layer in layers:
            # mtime 0 and a fixed level: the same layer always gives the same blob digest.
            compressed = gzip.compress(layer, compresslevel=1, mtime=0)
            self.blobs[_digest(compressed)] = compressed
            descriptors.append({"mediaType": LAYER_TYPE, "size": len(compressed), "digest": _digest(compressed)})
        manifest = json.dumps({"schemaVersion": 2, "mediaType": MANIFEST_TYPE,
                               "config": {"mediaType": CONFIG_TYPE, "size": len(config), "digest": _digest(config)},
                               "layers": descriptors}, indent=3, sort_keys=True).encode("utf-8")
        self.manifests[_digest(manifest)] = manifest
        self.tags[tag] = _digest(manifest)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass

    def do_GET(self):
        self._serve(body=True)

    def do_HEAD(self):
        self._serve(body=False)

    def _refuse(self):
        self._send(405, *self._error("UNSUPPORTED", "this registry is read-only"))

    do_PUT = do_POST = do_PATCH = do_DELETE = _refuse

    @staticmethod
    def _error(code, message):
        return json.dumps({"errors": [{"code": code, "message": message}]}).encode(), "application/json"

    def _send(self, status, data, content_type, digest=None, body=True):
        self.send_response(status)
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if digest:
            self.send_header("Docker-Content-Digest", digest)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _serve(self, body):
        url = urllib.parse.urlsplit(self.path)
        namespace = urllib.parse.parse_qs(url.query).get("ns", [None])[-1]
        self.server.registry.requests.append((self.command, self.path))
        if url.path in ("/v2", "/v2/"):
            return self._send(200, b"{}", "application/json", body=body)
        for kind in ("manifests", "blobs"):
            name, separator, reference = url.path.partition("/v2/")[2].rpartition("/%s/" % kind)
            if url.path.startswith("/v2/") and name and separator:
                break
        else:
            return self._send(404, *self._error("NOT_FOUND", "not a registry API path: %s" % url.path), body=body)
        repository = self.server.registry.repositories.get(name)
        if repository is None or (namespace and namespace != repository.host):
            return self._send(404, *self._error("NAME_UNKNOWN", "no repository %s" % name), body=body)
        if kind == "manifests":
            digest = repository.tags.get(reference, reference)
            if digest not in repository.manifests:
                return self._send(404, *self._error("MANIFEST_UNKNOWN", "%s:%s" % (name, reference)), body=body)
            return self._send(200, repository.manifests[digest], MANIFEST_TYPE, digest, body=body)
        if reference not in repository.blobs:
            return self._send(404, *self._error("BLOB_UNKNOWN", "%s@%s" % (name, reference)), body=body)
        return self._send(200, repository.blobs[reference], "application/octet-stream", reference, body=body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def standard_images(build, directory):
    """The images a cluster pulls through the mirror, written into directory: our sandbox image (the pause the build
    made) and the sleeper workload (compiled here).  Returns their archives' paths."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    pause = images.pause_image(build, directory / "pause.tar")
    sleeper = images.sleeper_image(images.build_sleeper(directory / "sleeper"), directory / "sleeper.tar")
    return [pause.path, sleeper.path]


class Registry(object):
    """Registry(images=[docker-archive paths], host=address to listen on).start(); url; mirrors(); stop().

    host: 127.0.0.1, or a test-host pool's bridge address (`pool.subnet + ".1"`, what pool.serve_directory uses) for
    containerd on the hosts.  requests: every (method, path) served, for a test to see what was pulled."""

    def __init__(self, images=(), host="127.0.0.1", port=0):
        self.host, self.port = host, port
        self.repositories = {}
        self.requests = []
        self._httpd = None
        self._thread = None
        self.url = None
        for path in images:
            self.add(path)

    def add(self, archive):
        """Serve every image of a docker-archive, under each of its repo tags."""
        for image in images.read_image(archive):
            for reference in image["repo_tags"]:
                host, name, tag = split_reference(reference)
                repository = self.repositories.setdefault(name, Repository(host))
                if repository.host != host:
                    raise ValueError("%s: %s is already served for %s" % (reference, name, repository.host))
                repository.add(tag, image["config"], image["layers"])

    def start(self):
        self._httpd = _Server((self.host, self.port), _Handler)
        self._httpd.registry = self
        self.url = "http://%s:%d" % (self.host, self._httpd.server_address[1])
        self._thread = servers.serve_in_thread(self._httpd, "test-registry")
        return self

    def stop(self):
        if self._httpd:
            servers.stop_serving(self._httpd, self._thread)
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def references(self):
        """Every image served, as a pod names it (registry.k8s.io/pause:3.10.1)."""
        return sorted("%s/%s:%s" % (repository.host, name, tag) for name, repository in self.repositories.items()
                      for tag in repository.tags)

    def mirrors(self):
        """spec.containerd.registryMirrors sending every served registry here (plain HTTP: an http:// endpoint)."""
        return {host: [self.url] for host in sorted({repository.host for repository in self.repositories.values()})}
