"""Container images for the real-cluster tests, written in Python: no docker, no registry on the internet.

An air-gapped kops user has two ways to give nodes images, and the tests take both:
- side-loading: `kubernetesVersion` names a Kubernetes build (kops' CI-build mode, kops docs/testing.md); nodes
  download `<url>/bin/linux/amd64/{kubelet,kubectl}` and the control plane's images as docker-archive tarballs
  (`<component>.tar`), import them with `ctr -n k8s.io images import` (roles/nodeup/tasks/images.yml), and the
  static pods name them `registry.k8s.io/<component>-amd64:<the build's <component>.docker_tag>`
  (completion/components/context.py).  `kubernetes_build_directory` writes such a build from the binaries
  hack/k8s_binaries.py built.
- a registry mirror (`spec.containerd.registryMirrors`) for the rest: the pause image and workloads, served by
  tests/realk8s/registry.py from the archives `pause_image` and `sleeper_image` write.

`write_image` writes the docker-archive format `docker save` writes (manifest.json with RepoTags and Layers, the
config JSON named by its sha256, `<id>/layer.tar`), deterministically: fixed mtimes and owners, sorted entries,
so the same inputs give the same bytes.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import os
import pathlib
import posixpath
import shutil
import struct
import subprocess
import tarfile
import tempfile

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import versions
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeconfig

from tests.hosts import testhosts

# Every entry's mtime and the config's "created": the same inputs must give the same archive.
EPOCH = 0
EPOCH_TEXT = "1970-01-01T00:00:00Z"
# What docker gives a container when the image sets no PATH; kube-proxy finds iptables through it.
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CREATED_BY = "kubeops-kops tests/realk8s/images.py"

# The images a control-plane node side-loads from a build (a worker: kube-proxy's alone), as our product reads them,
# and the binaries every node downloads from it.
SIDELOADED_COMPONENTS = nodeconfig.SIDELOADED_COMPONENTS[objects.ROLE_CONTROL_PLANE]
BUILD_BINARIES = ("kubelet", "kubectl")
PAUSE_IMAGE = versions.SANDBOX_IMAGE
PAUSE_USER = "65535:65535"
SLEEPER_IMAGE = "%s/kubeops-test/sleeper:1" % versions.KUBERNETES_REGISTRY
# Non-root, as a workload should run; a numeric user needs no /etc/passwd entry.
SLEEPER_USER = "65534:65534"

# kube-proxy (iptables mode) execs these (k8s.io/kubernetes pkg/util/iptables); Debian's nft build answers to every
# one of these names through xtables-nft-multi.  conntrack is left out: kube-proxy >= 1.32 clears UDP conntrack
# entries through netlink (kubernetes/kubernetes#126847).  Also left out: ipset (ipvs mode), nft (nftables mode).
XTABLES_MULTI = "/usr/sbin/xtables-nft-multi"
IPTABLES_COMMANDS = tuple("%s%s%s" % (family, variant, suffix) for family in ("iptables", "ip6tables")
                          for variant in ("", "-nft") for suffix in ("", "-save", "-restore"))
XTABLES_MODULES = "/usr/lib/x86_64-linux-gnu/xtables"
# Where a DT_NEEDED name is looked for in a Debian root (multiarch first, as ld.so's default search does).
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib")

# The few files of distroless' static base, which Kubernetes' go-runner images are built on: users for numeric
# ids, a writable /tmp, and the host lookup order Go's resolver reads.
BASE_FILES = {
    "/etc/passwd": b"root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
    "/etc/group": b"root:x:0:\nnogroup:x:65534:\n",
    "/etc/nsswitch.conf": b"hosts: files dns\n",
}


class File(object):
    """A regular file: from a path on disk (its mode unless given) or bytes (0644 unless given)."""

    def __init__(self, source, mode=None, uid=0, gid=0):
        self.source = source
        self.uid, self.gid = uid, gid
        if mode is None:
            mode = 0o644 if isinstance(source, bytes) else os.stat(source).st_mode & 0o7777
        self.mode = mode


class Symlink(object):
    def __init__(self, target):
        self.target = target


class Directory(object):
    def __init__(self, mode=0o755, uid=0, gid=0):
        self.mode, self.uid, self.gid = mode, uid, gid


ImageArchive = collections.namedtuple("ImageArchive", "path sha256 config_digest diff_ids repo_tags")


def _entry(value):
    if isinstance(value, (File, Symlink, Directory)):
        return value
    return File(value)


def _layer_entries(files):
    """{relative path: entry}, with every parent directory (docker's layers carry them)."""
    entries = {}
    for path, value in files.items():
        relative = posixpath.normpath(path).lstrip("/")
        if not relative or relative == ".":
            raise ValueError("%r: an image path names a file, not the root" % (path,))
        entries[relative] = _entry(value)
    for relative in list(entries):
        parent = posixpath.dirname(relative)
        while parent and parent not in entries:
            entries[parent] = Directory()
            parent = posixpath.dirname(parent)
    return entries


def _tarinfo(name, entry):
    info = tarfile.TarInfo(name)
    info.mtime = EPOCH
    info.uname = info.gname = ""
    if isinstance(entry, Symlink):
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, entry.target, 0o777
        return info, None
    info.uid, info.gid, info.mode = entry.uid, entry.gid, entry.mode
    if isinstance(entry, Directory):
        info.type = tarfile.DIRTYPE
        return info, None
    if isinstance(entry.source, bytes):
        info.size = len(entry.source)
        return info, io.BytesIO(entry.source)
    info.size = os.stat(entry.source).st_size
    return info, open(entry.source, "rb")


def _write_tar(fileobj, entries):
    """A tar of {name: entry}, sorted by name."""
    with tarfile.open(fileobj=fileobj, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in sorted(entries):
            info, content = _tarinfo(name, entries[name])
            try:
                archive.addfile(info, content)
            finally:
                if content is not None:
                    content.close()


def _sha256_file(path):
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _canonical_json(document):
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def image_config(diff_ids, entrypoint=None, cmd=None, user=None, env=None):
    """The image config JSON (the docker/OCI image spec's), as bytes."""
    env = list(env or ())
    if not any(item.startswith("PATH=") for item in env):
        env.insert(0, DEFAULT_PATH)
    config = {"Env": env, "WorkingDir": "/"}
    for key, value in (("Entrypoint", entrypoint), ("Cmd", cmd)):
        if value is not None:
            config[key] = list(value)
    if user is not None:
        config["User"] = user
    return _canonical_json({
        "architecture": "amd64", "os": "linux", "created": EPOCH_TEXT, "config": config,
        "rootfs": {"type": "layers", "diff_ids": ["sha256:%s" % digest for digest in diff_ids]},
        "history": [{"created": EPOCH_TEXT, "created_by": CREATED_BY} for _digest in diff_ids],
    })


def write_image(path, repo_tags, files, entrypoint=None, cmd=None, user=None, env=None):
    """A docker-archive at path holding one image named by every repo tag.

    files: {path in the image: a File, Symlink, Directory, a path on disk or bytes} for one layer, or a list of
    such mappings, one layer each, bottom first.  Returns an ImageArchive (the archive's sha256, the config's digest,
    the layers' diff_ids)."""
    layers = [files] if isinstance(files, dict) else list(files)
    if not layers or not repo_tags:
        raise ValueError("an image needs at least one layer and one repo tag")
    path = pathlib.Path(path)
    with tempfile.TemporaryDirectory(prefix="image-", dir=path.parent) as workdir:
        layer_files, diff_ids = [], []
        for index, layer in enumerate(layers):
            layer_file = pathlib.Path(workdir) / ("layer-%d.tar" % index)
            with open(layer_file, "wb") as handle:
                _write_tar(handle, _layer_entries(layer))
            layer_files.append(layer_file)
            diff_ids.append(_sha256_file(layer_file))
        config = image_config(diff_ids, entrypoint, cmd, user, env)
        config_digest = hashlib.sha256(config).hexdigest()
        config_name = "%s.json" % config_digest
        # A layer's directory is named by its diff_id: unique per content, as docker's layer ids are.
        layer_names = ["%s/layer.tar" % digest for digest in diff_ids]
        manifest = [{"Config": config_name, "RepoTags": list(repo_tags), "Layers": layer_names}]
        # `repositories`: what loaders before manifest.json read; docker save still writes it.
        repositories = {}
        for tag in repo_tags:
            name, _colon, version = tag.rpartition(":")
            repositories.setdefault(name, {})[version] = diff_ids[-1]
        outer = {config_name: File(config), "manifest.json": File(_canonical_json(manifest)),
                 "repositories": File(_canonical_json(repositories))}
        for digest, name, layer_file in zip(diff_ids, layer_names, layer_files):
            outer[digest] = Directory()
            outer[name] = File(str(layer_file), mode=0o644)
        partial = path.with_name(path.name + ".partial")
        with open(partial, "wb") as handle:
            _write_tar(handle, outer)
        partial.replace(path)
    return ImageArchive(str(path), _sha256_file(path), "sha256:" + config_digest, ["sha256:" + d for d in diff_ids],
                        list(repo_tags))


def read_image(path):
    """The images of a docker-archive: [{"repo_tags", "config" (bytes), "layers" ([bytes], uncompressed)}]."""
    with tarfile.open(path) as archive:
        def member(name):
            return archive.extractfile(name).read()
        return [{"repo_tags": list(item.get("RepoTags") or ()), "config": member(item["Config"]),
                 "layers": [member(layer) for layer in item["Layers"]]}
                for item in json.loads(member("manifest.json"))]


# -- ELF: the shared libraries a binary needs, read from its dynamic section (no ldd, no chroot, no root).
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5


def elf_dependencies(path):
    """(interpreter or None, [DT_NEEDED names]) of a 64-bit little-endian ELF; (None, []) for anything else (a
    static binary has neither)."""
    data = pathlib.Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None, []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic, interpreter = [], None, None
    for index in range(phnum):
        p_type, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from("<IIQQQQ", data, phoff + index * phentsize)
        if p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, filesz)
        elif p_type == PT_INTERP:
            interpreter = data[offset:offset + filesz].split(b"\0", 1)[0].decode()
    if dynamic is None:
        return interpreter, []
    needed, strtab = [], None
    for position in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, value = struct.unpack_from("<qQ", data, position)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            needed.append(value)
        elif tag == DT_STRTAB:
            strtab = value
    # DT_STRTAB is an address: the file offset is found through the load segment that maps it.
    base = next(offset + strtab - vaddr for vaddr, offset, size in loads if vaddr <= strtab < vaddr + size)
    return interpreter, [data[base + name:data.index(b"\0", base + name)].decode() for name in needed]


def real_path(root, path, hops=0):
    """path inside root with every symlink resolved inside root (an absolute link is relative to root, never to this
    machine), or None when it does not exist there."""
    if hops > 40:
        raise ValueError("%s: too many symbolic links under %s" % (path, root))
    parts = [part for part in path.split("/") if part]
    current = "/"
    for index, part in enumerate(parts):
        candidate = posixpath.join(current, part)
        on_disk = pathlib.Path(root) / candidate.lstrip("/")
        if on_disk.is_symlink():
            target = os.readlink(on_disk)
            rest = "/".join(parts[index + 1:])
            resolved = posixpath.normpath(posixpath.join(current if not target.startswith("/") else "/", target, rest))
            return real_path(root, resolved, hops + 1)
        current = candidate
    return current if (pathlib.Path(root) / current.lstrip("/")).exists() else None


def _link(path, real):
    return Symlink(posixpath.relpath(real, posixpath.dirname(path)))


def binaries_with_libraries(root, paths):
    """{image path: entry} for binaries of a root filesystem (a Debian image) and every library they load, found
    as ld.so finds them; each at its real path, and a symlink where a binary or library names another path."""
    files, pending, seen = {}, list(paths), set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        real = real_path(root, path)
        if real is None:
            raise FileNotFoundError("%s: not found under %s" % (path, root))
        files[real] = File(str(pathlib.Path(root) / real.lstrip("/")))
        if real != path:
            files[path] = _link(path, real)
        interpreter, needed = elf_dependencies(pathlib.Path(root) / real.lstrip("/"))
        if interpreter:
            pending.append(interpreter)
        for name in needed:
            found = next((posixpath.join(directory, name) for directory in LIBRARY_DIRS
                          if real_path(root, posixpath.join(directory, name))), None)
            if found is None:
                raise FileNotFoundError("%s needs %s, which is in none of %s under %s"
                                        % (path, name, ", ".join(LIBRARY_DIRS), root))
            pending.append(found)
    return files


def iptables_files(root):
    """Debian's nft iptables from a root filesystem (the test-host image): xtables-nft-multi under every name
    kube-proxy runs, its xtables match/target modules, and the libraries all of them load."""
    modules_dir = pathlib.Path(root) / XTABLES_MODULES.lstrip("/")
    if not modules_dir.is_dir():
        raise FileNotFoundError("%s: no %s (Debian's iptables package)" % (root, XTABLES_MODULES))
    modules = sorted(posixpath.join(XTABLES_MODULES, name.name) for name in modules_dir.glob("*.so"))
    files = binaries_with_libraries(root, [XTABLES_MULTI] + modules)
    for command in IPTABLES_COMMANDS:
        files[posixpath.join(posixpath.dirname(XTABLES_MULTI), command)] = Symlink(posixpath.basename(XTABLES_MULTI))
    return files


def base_files():
    files = {path: File(content) for path, content in BASE_FILES.items()}
    files["/tmp"] = Directory(0o1777)
    return files


# -- a Kubernetes CI build, as kops side-loads it
def docker_tag(version):
    """The tag of a build's images, as Kubernetes' build writes <component>.docker_tag: its version, '+' -> '_'."""
    return version.replace("+", "_")


def component_image_name(component, version):
    """What our completion names a side-loaded component's image (context.py kubernetes_image)."""
    return "%s/%s-amd64:%s" % (versions.KUBERNETES_REGISTRY, component, docker_tag(version))


def component_image(build, version, component, path, iptables_root=None):
    """The docker-archive of one control-plane component: /go-runner and /usr/local/bin/<component> (what our
    static pods run), on distroless' few base files; kube-proxy's also carries iptables from iptables_root."""
    files = base_files()
    files["/go-runner"] = File(str(build.binary("go-runner")), mode=0o755)
    files["/usr/local/bin/%s" % component] = File(str(build.binary(component, version)), mode=0o755)
    if component == "kube-proxy":
        if iptables_root is None:
            raise ValueError("kube-proxy's image needs iptables: give iptables_root (the test-host image)")
        files.update(iptables_files(iptables_root))
    return write_image(path, [component_image_name(component, version)], files, entrypoint=["/go-runner"])


def _write_sha256(path, digest):
    # As dl.k8s.io publishes them: the hex digest alone (roles/nodeup checks against <url>.sha256).
    pathlib.Path(str(path) + ".sha256").write_text(digest)


def _link_or_copy(source, target):
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def kubernetes_build_directory(build, version, dest, iptables_root=None):
    """Write a Kubernetes build as kops side-loads it (kops docs/testing.md) into dest: bin/linux/amd64/ with
    kubelet and kubectl (hard links of the built binaries, or copies) and, for each side-loaded component,
    <component>.tar, .tar.sha256 and .docker_tag; every file with a <name>.sha256.

    build: tests.realk8s.binaries.Build; iptables_root: a Debian root filesystem with iptables (default: the
    test-host image, built if missing).  kubernetesVersion is then the URL dest is served at, which must name the
    version (`.../v1.36.3`: semver.kubernetes_version reads the minor from it, and fails on a URL without one), so
    serve a parent of a dest named after the version.  Returns {component: image name}."""
    if iptables_root is None:
        iptables_root = testhosts.ensure_image()
    out = pathlib.Path(dest) / "bin" / "linux" / "amd64"
    out.mkdir(parents=True, exist_ok=True)
    for name in BUILD_BINARIES:
        target = out / name
        if target.exists():
            target.unlink()
        _link_or_copy(build.binary(name, version), target)
        _write_sha256(target, _sha256_file(target))
    images = {}
    for component in SIDELOADED_COMPONENTS:
        archive = component_image(build, version, component, out / ("%s.tar" % component), iptables_root)
        _write_sha256(archive.path, archive.sha256)
        (out / ("%s.docker_tag" % component)).write_text(docker_tag(version))
        images[component] = archive.repo_tags[0]
    return images


# -- images for the registry mirror
def pause_tag():
    """The tag of our sandbox image (kops' pin), which need not be the pause.c version Kubernetes builds."""
    return PAUSE_IMAGE.rpartition(":")[2]


def pause_image(build, path):
    """registry.k8s.io/pause:<our sandbox image's tag> from the pause hack/k8s_binaries.py built."""
    return write_image(path, [PAUSE_IMAGE], {"/pause": File(str(build.binary("pause")), mode=0o755)},
                       entrypoint=["/pause"], user=PAUSE_USER)


SLEEPER_SOURCE = """\
// sleeper: the workload of the real-cluster tests' Deployments. It waits for SIGTERM (or SIGINT) and exits 0,
// as a well-behaved pod does when it is drained. As PID 1 it gets no default signal handling: it handles them.
package main

import (
\t"fmt"
\t"os"
\t"os/signal"
\t"syscall"
)

func main() {
\tsignals := make(chan os.Signal, 1)
\tsignal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
\tfmt.Println("sleeper: waiting for SIGTERM")
\tfmt.Printf("sleeper: %v, exiting\\n", <-signals)
}
"""


def build_sleeper(dest):
    """Compile the sleeper (static, no module from anywhere: GOPROXY=off) to dest; returns dest."""
    if shutil.which("go") is None:
        raise FileNotFoundError("Go is not on PATH: the sleeper workload is compiled with it")
    with tempfile.TemporaryDirectory(prefix="kubeops-sleeper-") as workdir:
        pathlib.Path(workdir, "go.mod").write_text("module example.invalid/sleeper\n\ngo 1.24\n")
        pathlib.Path(workdir, "main.go").write_text(SLEEPER_SOURCE)
        env = dict(os.environ, CGO_ENABLED="0", GOOS="linux", GOARCH="amd64", GOPROXY="off", GOTOOLCHAIN="local",
                   GOFLAGS="-mod=mod")
        env.pop("GOWORK", None)
        proc = subprocess.run(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", str(dest), "."], cwd=workdir,
                              env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError("building the sleeper failed:\n%s" % proc.stderr[-3000:])
    return pathlib.Path(dest)


def sleeper_image(binary, path):
    """registry.k8s.io/kubeops-test/sleeper:1: the sleeper as /sleeper, run as nobody."""
    return write_image(path, [SLEEPER_IMAGE], {"/sleeper": File(str(binary), mode=0o755)}, entrypoint=["/sleeper"],
                       user=SLEEPER_USER)
