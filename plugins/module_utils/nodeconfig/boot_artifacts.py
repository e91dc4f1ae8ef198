# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""What a node installs at boot, pinned by sha256 and served from the state store (controller side).

kops' nodes download one nodeup binary pinned by its hash.  Ours need this
collection and the Python it runs on; instead of PyPI and Galaxy at boot,
`update cluster` puts them where the node reads its config:

* the collection tarball, built from the collection this controller runs
  (deterministic: sorted members, zero times, gzip without a timestamp, so
  the same tree gives the same sha256);
* the wheels of the node side's Python dependencies (NODE_REQUIREMENTS,
  every version pinned, the whole closure), resolved on the controller by
  `pip download --only-binary=:all:` for each node target (TARGETS: the
  CPython of the supported images on x86_64 and aarch64), cached in the
  user's cache directory, or taken from KUBEOPS_BOOT_WHEELHOUSE (a
  directory of wheels, for a controller without an index);
* a manifest listing each file, its sha256 and its path.

Every object lives at boot/sha256/<sha256>/<file name> under the base
(spec.assets.fileRepository when it is a store URL, as kops mirrors its
assets there, else the cluster's config base): content-addressed, so a run
uploads only what the store does not hold, never overwrites, and nodes of
an older launch template keep finding their files during a rolling update.
The boot script carries the manifest's URL and sha256 (boot_fetch.py checks
everything against them).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

from ansible_collections.kubeops.kops.plugins.module_utils import user_cache, waits
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeConfigError

# The node side's Python closure, every version pinned (what `pip download` resolved for
# ansible-core, cryptography, PyYAML, boto3, google-auth and requests on 2026-11-23).
NODE_REQUIREMENTS = (
    "ansible-core==2.19.14", "jinja2==3.1.6", "markupsafe==3.0.4", "packaging==26.3", "pyyaml==6.0.3",
    "resolvelib==1.2.1", "cryptography==50.0.2", "cffi==2.1.1", "pycparser==3.12",
    "boto3==1.44.5", "botocore==1.44.5", "s3transfer==0.19.3", "jmespath==1.1.0", "python-dateutil==2.9.0.post0",
    "six==1.17.0", "urllib3==2.8.0",
    "google-auth==2.62.2", "pyasn1==0.6.5", "pyasn1-modules==0.4.2",
    "requests==2.34.2", "certifi==2026.10.18", "charset-normalizer==3.5.2", "idna==3.20",
)
# What the node's python3 may be: Debian 12 (3.11), Ubuntu 24.04 (3.12), Debian 13 (3.13); ansible-core 2.19 needs
# 3.11 or newer, so Ubuntu 22.04 (3.10) cannot boot this way.
PYTHONS = ("3.11", "3.12", "3.13")
MACHINES = ("x86_64", "aarch64")
# glibc 2.35 and newer (Ubuntu 22.04): the manylinux tags pip may pick, most specific first.
MANYLINUX = ("manylinux_2_35_%s", "manylinux_2_34_%s", "manylinux_2_28_%s", "manylinux_2_17_%s", "manylinux2014_%s")
TARGETS = tuple((python, machine) for python in PYTHONS for machine in MACHINES)
# What pip_download fetches for NODE_REQUIREMENTS and TARGETS (measured; tests/unit/nodeconfig checks it against
# a downloaded wheelhouse): said before the download, which is the first run's longest wait.
WHEELS_EXPECTED = (44, 37993070)
WHEELHOUSE_ENV = "KUBEOPS_BOOT_WHEELHOUSE"
PREFETCH_MODULE = "ansible_collections.kubeops.kops.plugins.plugin_utils.boot_wheels"
COLLECTION_ENV = "KUBEOPS_COLLECTION_DIR"
OBJECT_PATH = "boot/sha256/%s/%s"
WRITABLE_SCHEMES = ("file", "s3", "gs")
# Tarballs built in this process (a build takes seconds): directory (None: the running one) -> (name, bytes).
_BUILT = {}


class BootArtifactError(NodeConfigError):
    """A boot artefact that cannot be built or found; the message names the fix."""


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def object_path(digest, name):
    return OBJECT_PATH % (digest, name)


def _size(content):
    return len(content) if isinstance(content, bytes) else content.stat().st_size


_DIGESTS = "wheel-digests.json"


def file_sha256(path):
    """sha256 of a file, kept in the user's cache under its path, size and mtime (the wheels are 38 MB that would
    otherwise be read and hashed on every run); a cache that cannot be read or written only costs a hash."""
    stat = path.stat()
    key = "%s\0%d\0%d" % (path.resolve(), stat.st_size, stat.st_mtime_ns)
    cache = user_cache.root() / _DIGESTS
    if not _DIGEST_CACHE:
        try:
            _DIGEST_CACHE.update(json.loads(cache.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            _DIGEST_CACHE["\0"] = ""  # read once per process, even when absent
    if key not in _DIGEST_CACHE:
        digest = hashlib.sha256()
        with open(str(path), "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        _DIGEST_CACHE[key] = digest.hexdigest()
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            partial = cache.with_name(".%s.%d" % (_DIGESTS, os.getpid()))
            partial.write_text(json.dumps(_DIGEST_CACHE, sort_keys=True), encoding="utf-8")
            partial.replace(cache)
        except OSError:
            pass
    return _DIGEST_CACHE[key]


_DIGEST_CACHE = {}


# -- the collection ---------------------------------------------------------------------------------


# Run by the controller's Python in a subprocess: module_utils may not import ansible itself (the module
# runs on the controller, where ansible-core is installed). "paths": the configured collection paths;
# "build DIR OUT": ansible-galaxy's own build of a source tree (galaxy.yml and its manifest), its path.
_ANSIBLE_HELPER = r"""
import contextlib, io, json, sys
if sys.argv[1] == "paths":
    from ansible import constants
    print(json.dumps(list(constants.COLLECTIONS_PATHS)))
else:
    from ansible.galaxy.collection import build_collection
    with contextlib.redirect_stdout(io.StringIO()):
        path = build_collection(sys.argv[2], sys.argv[3], True)
    print(json.dumps(path))
"""


def _ansible(*args):
    result = subprocess.run([sys.executable, "-c", _ANSIBLE_HELPER] + list(args), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise BootArtifactError("ansible-core on this controller (%s) could not %s: %s; set %s to the collection's "
                                "directory" % (sys.executable, " ".join(args[:1]), result.stderr.strip()[-600:],
                                               COLLECTION_ENV))
    return json.loads(result.stdout)


def collection_dir():
    """The directory of the kubeops.kops collection this controller runs (KUBEOPS_COLLECTION_DIR first)."""
    if os.environ.get(COLLECTION_ENV):
        candidates = [os.environ[COLLECTION_ENV]]
    else:
        candidates = [os.path.join(p, "ansible_collections", "kubeops", "kops") for p in _ansible("paths") + sys.path if p]
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, "MANIFEST.json")) or os.path.isfile(os.path.join(candidate, "galaxy.yml")):
            return os.path.realpath(candidate)
    raise BootArtifactError("cannot find the kubeops.kops collection to put on the nodes (looked in %s); set %s to its "
                            "directory" % (", ".join(candidates) or "nothing", COLLECTION_ENV))


def _deterministic_tar_gz(members):
    """A .tar.gz (bytes) of [(name, mode, bytes-or-None for a directory)], the same bytes for the same input."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, mode, data in sorted(members, key=lambda m: m[0]):
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = mode
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as compressed:
        compressed.write(raw.getvalue())
    return out.getvalue()


def _members_of(tarball):
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        for info in tar.getmembers():
            if info.isdir():
                yield info.name, 0o755, None
            elif info.isfile():
                yield info.name, 0o755 if info.mode & 0o111 else 0o644, tar.extractfile(info).read()


def collection_tarball(directory=None):
    """(file name, bytes) of the running collection (or directory's) as `ansible-galaxy collection install` takes it.

    Built once per process and directory (a controller's collection does not change under a run)."""
    key = str(directory) if directory else None
    if key not in _BUILT:
        _BUILT[key] = _tarball_of(pathlib.Path(directory or collection_dir()))
    return _BUILT[key]


def _tarball_of(directory):
    manifest = directory / "MANIFEST.json"
    if manifest.is_file():  # an installed collection: exactly the files its FILES.json lists
        info = json.loads(manifest.read_text(encoding="utf-8"))["collection_info"]
        files = json.loads((directory / "FILES.json").read_text(encoding="utf-8"))["files"]
        members = [("MANIFEST.json", 0o644, manifest.read_bytes()),
                   ("FILES.json", 0o644, (directory / "FILES.json").read_bytes())]
        for entry in files:
            if entry["name"] == ".":
                continue
            path = directory / entry["name"]
            if entry["ftype"] == "dir":
                members.append((entry["name"], 0o755, None))
            else:
                members.append((entry["name"], 0o755 if os.access(path, os.X_OK) else 0o644, path.read_bytes()))
        name = "%s-%s-%s.tar.gz" % (info["namespace"], info["name"], info["version"])
        return name, _deterministic_tar_gz(members)
    return _galaxy_build(directory)


def _galaxy_build(directory):
    """ansible-galaxy's own build of a source tree, made deterministic: (name, bytes).

    A build costs a second (a subprocess, and gzip); its result is kept in the user's cache under the tree's
    state (every file's path, size, mode and mtime), so an unchanged tree is built once, not once per run."""
    cached = user_cache.root() / ("collection-%s" % _tree_state(directory))
    found = sorted(cached.glob("*.tar.gz")) if cached.is_dir() else []
    if found:
        return found[0].name, found[0].read_bytes()
    with tempfile.TemporaryDirectory(prefix="kubeops-boot-") as out:
        built = pathlib.Path(_ansible("build", str(directory), out))
        name, data = built.name, _deterministic_tar_gz(list(_members_of(built.read_bytes())))
    _keep(cached, name, data)
    return name, data


def _keep(cached, name, data):
    """Store a built tarball in the cache; a cache that cannot be written only costs the next run a build."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = pathlib.Path(tempfile.mkdtemp(prefix=".collection-", dir=str(cached.parent)))
    except OSError:
        return
    try:
        (partial / name).write_bytes(data)
        partial.rename(cached)  # never a half-written entry; a concurrent run's identical entry wins
    except OSError:
        pass
    finally:
        shutil.rmtree(str(partial), ignore_errors=True)


# Directories a source tree's build never takes (this collection's galaxy.yml does not list them; galaxy.yml itself is
# in the state, so a different manifest is a different state).
_NOT_BUILT = frozenset((".git", ".venv", "build", "out", "__pycache__", ".pytest_cache", ".ruff_cache", ".ansible"))


def _tree_state(directory):
    """A digest of what a build of the tree depends on: each file's path, size, mode and mtime (stat only)."""
    digest = hashlib.sha256()
    for root, dirs, names in os.walk(str(directory)):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_BUILT)
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue  # a dangling link: galaxy skips it too
            entry = "%s\0%d\0%o\0%d\n" % (os.path.relpath(path, str(directory)), stat.st_size, stat.st_mode,
                                          stat.st_mtime_ns)
            digest.update(entry.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


# -- the wheels -------------------------------------------------------------------------------------


def pip_download(requirements, targets, dest):
    """Download the pinned wheels (no source distributions, no dependency resolution) for each target."""
    for python, machine in targets:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--implementation", "cp", "--python-version", python, "--dest", str(dest)]
        for tag in MANYLINUX:
            command += ["--platform", tag % machine]
        result = subprocess.run(command + list(requirements), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BootArtifactError("pip download of the nodes' wheels for CPython %s on %s failed (%s); give the "
                                    "controller an index, or a directory of those wheels in %s"
                                    % (python, machine, result.stderr.strip()[-600:], WHEELHOUSE_ENV))


def wheelhouse(requirements=NODE_REQUIREMENTS, targets=TARGETS, download=pip_download):
    """The directory holding the nodes' wheels: KUBEOPS_BOOT_WHEELHOUSE, else a cache filled once by pip."""
    given = os.environ.get(WHEELHOUSE_ENV)
    if given:
        if not sorted(pathlib.Path(given).glob("*.whl")):
            raise BootArtifactError("%s=%s holds no wheels" % (WHEELHOUSE_ENV, given))
        return pathlib.Path(given)
    key = sha256(json.dumps([list(requirements), [list(t) for t in targets]]).encode())[:16]
    target = user_cache.root() / ("boot-wheels-%s" % key)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=".boot-wheels-", dir=str(target.parent)))
    what = ("the nodes' wheels (%d pinned packages for CPython %s on %s: %d files, %.1f MB, once) from the package "
            "index into %s" % (len(requirements), "/".join(sorted({t[0] for t in targets})),
                               "/".join(sorted({t[1] for t in targets})), WHEELS_EXPECTED[0], WHEELS_EXPECTED[1] / 1e6,
                               target))
    waits.notice("downloading %s; prefetch them with `make wheels` in a checkout or `python -m %s`, or name a "
                 "directory of them in %s" % (what, PREFETCH_MODULE, WHEELHOUSE_ENV))
    started = time.monotonic()
    try:
        with waits.waiting("the download of " + what):
            download(requirements, targets, partial)
        partial.rename(target)  # never a half-filled cache
    finally:
        shutil.rmtree(str(partial), ignore_errors=True)
    files = sorted(target.glob("*.whl"))
    size = sum(f.stat().st_size for f in files) / 1e6
    waits.notice("downloaded %d wheels, %.1f MB, in %.0f s" % (len(files), size, time.monotonic() - started))
    return target


# -- the manifest and the store ---------------------------------------------------------------------


def base_url(completed_cluster, config_base):
    """Where the artefacts live: spec.assets.fileRepository when a store URL, else the cluster's config base."""
    repository = (completed_cluster["spec"].get("assets") or {}).get("fileRepository") or ""
    if repository.split("://", 1)[0] in WRITABLE_SCHEMES and "://" in repository:
        return repository.rstrip("/")
    return config_base.rstrip("/")


class BootArtifacts(object):
    """The manifest (its URL and sha256 go into the user data) and the objects behind it."""

    def __init__(self, base, collection, wheels):
        self.base = base
        self.uploaded = []  # the paths a run wrote (updates.py sets it)
        # [(store path, file name, bytes-or-path)]
        self.objects = []
        entries = []
        for name, data in [collection] + wheels:
            # A wheel stays a path (read only to upload it); its digest is cached under its size and mtime.
            content = data if isinstance(data, bytes) else pathlib.Path(data)
            digest = sha256(content) if isinstance(content, bytes) else file_sha256(content)
            path = object_path(digest, name)
            self.objects.append((path, content))
            entries.append({"file": name, "sha256": digest, "path": path})
        document = {"base": base, "collection": entries[0], "wheels": sorted(entries[1:], key=lambda e: e["file"])}
        self.manifest = (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")
        self.manifest_sha256 = sha256(self.manifest)
        self.manifest_path = object_path(self.manifest_sha256, "manifest.json")
        self.manifest_url = "%s/%s" % (base, self.manifest_path)
        self.objects.append((self.manifest_path, self.manifest))

    def describe(self):
        """[(file, sha256, bytes)] of what a node downloads, manifest last."""
        return [(path.rsplit("/", 1)[1], path.split("/")[2], _size(content)) for path, content in self.objects]

    def missing(self, store):
        """The (path, bytes) the store at the base does not hold (content-addressed: present means equal)."""
        store.list("boot/sha256/")
        return [(path, content) for path, content in self.objects if not store.exists(path)]

    def upload(self, store):
        """Write what is missing, manifest last; returns the paths written."""
        written = []
        for path, content in self.missing(store):
            if path != self.manifest_path:
                store.write(path, content if isinstance(content, bytes) else content.read_bytes())
                written.append(path)
        if not store.exists(self.manifest_path):
            store.write(self.manifest_path, self.manifest)
            written.append(self.manifest_path)
        return written


def build(completed_cluster, config_base, collection=None, wheels_dir=None):
    """BootArtifacts for a cluster: collection (name, bytes) and wheels default to the running ones."""
    name, data = collection or collection_tarball()
    directory = pathlib.Path(wheels_dir) if wheels_dir else wheelhouse()
    wheels = [(path.name, path) for path in sorted(directory.glob("*.whl"))]
    if not wheels:
        raise BootArtifactError("no wheels in %s for the nodes" % directory)
    return BootArtifacts(base_url(completed_cluster, config_base), (name, data), wheels)


def open_base_store(base, endpoint=None):
    return vfs.open_store(base, endpoint=endpoint)


class Prefixed(object):
    """A store seen from a prefix (the cluster's directory of the state store), for what the artefacts need."""

    def __init__(self, store, prefix):
        self.store = store
        self.prefix = prefix

    def list(self, prefix=""):
        return [p[len(self.prefix):] for p in self.store.list(self.prefix + prefix)]

    def exists(self, relpath):
        return self.store.exists(self.prefix + relpath)

    def write(self, relpath, data):
        self.store.write(self.prefix + relpath, data)
