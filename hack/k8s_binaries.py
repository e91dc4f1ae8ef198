#!/usr/bin/env python
"""Build Kubernetes' own components, etcd, pause and a go-runner from the Go module proxy, once, into a cache.

The tests that run a real cluster (tests/realk8s/) need kube-apiserver, kube-controller-manager, kube-scheduler,
kubelet, kube-proxy, kubectl and etcd as Kubernetes and etcd release them.  Nothing here is committed or vendored:
the modules come from the Go module proxy like any dependency, and what is built goes to a cache outside the
repository, one directory per (component, version, Go version, recipe hash), like the test-host image:

    $KUBEOPS_K8S_CACHE (default /var/cache/kubeops-kops/k8s)/
      kubernetes-v1.36.3-go1.26.8-<recipe>/bin/linux/amd64/{kube-apiserver,...,kubelet,kubectl}
      etcd-v3.6.16-go1.26.8-<recipe>/etcd-v3.6.16-linux-amd64.tar.gz   (etcd's release layout) and bin/
      tools-v1.36.3-go1.26.8-<recipe>/{go-runner,pause}

How Kubernetes is built from the proxy: k8s.io/kubernetes requires its staging modules (k8s.io/api, ...) at
v0.0.0 and replaces them with ./staging/src/...; a dependency's replaces are ignored, so a wrapper module
replaces every staging module the release requires with its published tag (v1.36.3 -> v0.36.3).  The list is
read from the release's own go.mod (it changes between minors), never typed here.  The binaries are stamped
with the version (-X ...gitVersion) as Kubernetes' hack/lib/version.sh does, so each reports its real version.

Usage: hack/k8s_binaries.py [--kubernetes v1.36.3 ...] [--etcd v3.6.16] [--kubeadm v1.36.3 ...] [--json]
A directory already built is reused (a warm run builds nothing).  --json prints the directories.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import inspect
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time

HERE = pathlib.Path(__file__).resolve().parent
GO_RUNNER = HERE / "go-runner" / "main.go"
CACHE = pathlib.Path(os.environ.get("KUBEOPS_K8S_CACHE", "/var/cache/kubeops-kops/k8s"))

# The two minors the tests run: the stable channel's 1.36 and the 1.35 an upgrade starts from.
KUBERNETES_VERSIONS = ("v1.36.3", "v1.35.4")
# kops' etcd for Kubernetes 1.34-1.36 (completion/components/versions.py ETCD_VERSIONS).
ETCD_VERSION = "v3.6.12"
# etcdctl and etcdutl of 3.6.12 and 3.6.13 are not on the Go module proxy (403 "not available"); the same minor's
# newest is: clients of the same v3 API, they go into the 3.6.12 tarball (the test docs say so).
ETCD_CLIENT_VERSION = "v3.6.16"
# The credential provider kops installs beside the kubelet on AWS (its asset k8s.io/cloud-provider-aws, this
# version for Kubernetes 1.34-1.36).  The checksum database the proxy mirrors has no entry for the module
# (sum.golang.org answers 404), so its sum is not checked there (GONOSUMDB for that module only; its dependencies are).
ECR_CREDENTIAL_PROVIDER = ("k8s.io/cloud-provider-aws", "v1.31.7", "cmd/ecr-credential-provider")
KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy",
                       "kubectl")
# command -> (module, which version: the server's or the clients')
ETCD_COMMANDS = {"etcd": ("go.etcd.io/etcd/server/v3", "server"), "etcdctl": ("go.etcd.io/etcd/etcdctl/v3", "client"),
                 "etcdutl": ("go.etcd.io/etcd/etcdutl/v3", "client")}
VERSION_PACKAGES = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")


class BuildError(RuntimeError):
    pass


@functools.lru_cache(maxsize=None)
def recipe_hash(kind):
    """The code of the functions that decide what a kind's build makes (and the go-runner's source for the tools):
    a change to any of them builds again; an edit elsewhere in this script (the CLI) does not."""
    digest = hashlib.sha256()
    for function in RECIPES[kind]:
        # The function's syntax tree without its docstring: a comment, a docstring or a line wrapped differently
        # builds nothing again.
        definition = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
        if ast.get_docstring(definition) is not None:
            definition.body = definition.body[1:]
        digest.update(ast.dump(definition).encode())
    if kind == "tools":
        digest.update(GO_RUNNER.read_bytes())
    return digest.hexdigest()[:12]


@functools.lru_cache(maxsize=None)
def go_version():
    out = _run(["go", "env", "GOVERSION"]).strip()
    if not out.startswith("go"):
        raise BuildError("`go env GOVERSION` printed %r; Go 1.26 or later is needed on PATH" % out)
    return out


def cache_dir(kind, version):
    return CACHE / ("%s-%s-%s-%s" % (kind, version, go_version(), recipe_hash(kind)))


def _run(command, cwd=None, env=None):
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout)[-4000:]
        raise BuildError("%s failed (exit %s):\n%s" % (" ".join(command), proc.returncode, output))
    return proc.stdout


def _go(args, workdir, **environment):
    """`go <args>` in a wrapper module's directory.  GOFLAGS=-mod=mod lets `go build` record the sums it downloads
    in the wrapper's go.sum; GOTOOLCHAIN=local: the installed Go builds (a release asking a newer one fails here,
    named)."""
    env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local", CGO_ENABLED="0", GOOS="linux", GOARCH="amd64",
               **environment)
    env.pop("GOWORK", None)
    return _run(["go"] + list(args), cwd=workdir, env=env)


def module_info(path, version, workdir):
    """`go mod download -json` of one module: its go.mod text, source dir, sum and release time."""
    info = json.loads(_go(["mod", "download", "-json", "%s@%s" % (path, version)], workdir))
    if info.get("Error"):
        raise BuildError("%s@%s: %s" % (path, version, info["Error"]))
    info["GoModText"] = pathlib.Path(info["GoMod"]).read_text()
    info["ReleaseTime"] = json.loads(pathlib.Path(info["Info"]).read_text()).get("Time", "")
    return info


def local_replaces(gomod_text, directory_prefix):
    """Module paths a go.mod replaces with a directory of its own repository under directory_prefix
    (Kubernetes: `X => ./staging/src/X`; etcd: `go.etcd.io/etcd/api/v3 => ../api`, but not its guard
    `go.etcd.io/etcd => ./FORBIDDEN_DEPENDENCY`, which names no module to build)."""
    found = []
    for line in gomod_text.splitlines():
        match = re.match(r"^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\.\.?/\S*)\s*$", line)
        if match and match.group(2).startswith(directory_prefix):
            found.append(match.group(1))
    return found


def required_modules(gomod_text):
    found = set()
    in_block = False
    for line in gomod_text.splitlines():
        stripped = line.split("//")[0].strip()
        if stripped.startswith("require ("):
            in_block = True
        elif in_block and stripped == ")":
            in_block = False
        elif in_block and stripped:
            found.add(stripped.split()[0])
        elif stripped.startswith("require "):
            found.add(stripped.split()[1])
    return found


def go_directives(gomod_text):
    """The release's `go` and `godebug` lines: they set the GODEBUG defaults its binaries were released with."""
    lines = [line for line in gomod_text.splitlines() if re.match(r"^(go|godebug)\s", line)]
    if not any(line.startswith("go ") for line in lines):
        raise BuildError("no go directive in the release's go.mod")
    return lines


def wrapper_gomod(requires, replaces, directives):
    lines = ["module example.invalid/kubeopsbuild", ""] + directives + [""]
    lines += ["require %s %s" % item for item in sorted(requires.items())]
    if replaces:
        replace_lines = ["\t%s => %s %s" % (path, path, version) for path, version in sorted(replaces.items())]
        lines += ["", "replace ("] + replace_lines + [")"]
    return "\n".join(lines) + "\n"


def staging_version(kubernetes_version):
    """k8s.io/kubernetes v1.X.Y publishes its staging modules as v0.X.Y."""
    match = re.match(r"^v1\.(\d+)\.(\d+)$", kubernetes_version)
    if not match:
        raise BuildError("%s: a release version (v1.X.Y) is needed" % kubernetes_version)
    return "v0.%s.%s" % match.groups()


def version_ldflags(version, commit, build_date):
    major, minor = version.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for package in VERSION_PACKAGES:
        for name, value in (("gitVersion", version), ("gitMajor", major), ("gitMinor", minor),
                            ("gitCommit", commit), ("gitTreeState", "clean"), ("buildDate", build_date)):
            flags.append("-X '%s.%s=%s'" % (package, name, value))
    return " ".join(flags)


def _publish(partial, target):
    """Move a finished build into place; a build cut off leaves only its .partial directory."""
    if target.exists():
        shutil.rmtree(partial)
    else:
        partial.rename(target)
    return target


def _fresh(target):
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    return partial


def build_kubernetes(version, log):
    target = cache_dir("kubernetes", version)
    if (target / "bin" / "linux" / "amd64" / "kubelet").is_file():
        return target
    partial = _fresh(target)
    with tempfile.TemporaryDirectory(prefix="kubeops-k8sbuild-") as workdir:
        work = pathlib.Path(workdir)
        (work / "go.mod").write_text("module example.invalid/probe\n")
        release = module_info("k8s.io/kubernetes", version, workdir)
        staging = set(local_replaces(release["GoModText"], "./staging/")) & required_modules(release["GoModText"])
        if not staging:
            raise BuildError("k8s.io/kubernetes %s: no staging replaces found in its go.mod" % version)
        (work / "go.mod").write_text(wrapper_gomod({"k8s.io/kubernetes": version},
                                                   dict.fromkeys(staging, staging_version(version)),
                                                   go_directives(release["GoModText"])))
        out = partial / "bin" / "linux" / "amd64"
        out.mkdir(parents=True)
        started = time.monotonic()
        # One `go build` for all the commands: their common packages are compiled once in one action graph.
        ldflags = version_ldflags(version, release["Sum"], release["ReleaseTime"])
        _go(["build", "-trimpath", "-ldflags", ldflags, "-o", str(out) + "/"]
            + ["k8s.io/kubernetes/cmd/%s" % command for command in KUBERNETES_COMMANDS], workdir)
        log("kubernetes %s: built in %.0f s" % (version, time.monotonic() - started))
        (partial / "go.mod").write_text((work / "go.mod").read_text())
    return _publish(partial, target)


def build_kubeadm(version, log):
    """kubeadm (k8s.io/kubernetes/cmd/kubeadm), built as build_kubernetes builds the other commands, into its own
    cache directory: only bench/kubespray.py needs it (kubespray installs clusters with kubeadm), so `make
    k8s-binaries` does not build it, and adding it to KUBERNETES_COMMANDS would rebuild every checkout's cache."""
    target = cache_dir("kubeadm", version)
    if (target / "kubeadm").is_file():
        return target
    partial = _fresh(target)
    with tempfile.TemporaryDirectory(prefix="kubeops-kubeadmbuild-") as workdir:
        work = pathlib.Path(workdir)
        (work / "go.mod").write_text("module example.invalid/probe\n")
        release = module_info("k8s.io/kubernetes", version, workdir)
        staging = set(local_replaces(release["GoModText"], "./staging/")) & required_modules(release["GoModText"])
        if not staging:
            raise BuildError("k8s.io/kubernetes %s: no staging replaces found in its go.mod" % version)
        (work / "go.mod").write_text(wrapper_gomod({"k8s.io/kubernetes": version},
                                                   dict.fromkeys(staging, staging_version(version)),
                                                   go_directives(release["GoModText"])))
        started = time.monotonic()
        ldflags = version_ldflags(version, release["Sum"], release["ReleaseTime"])
        _go(["build", "-trimpath", "-ldflags", ldflags, "-o", str(partial / "kubeadm"),
             "k8s.io/kubernetes/cmd/kubeadm"], workdir)
        log("kubeadm %s: built in %.0f s" % (version, time.monotonic() - started))
    return _publish(partial, target)


def build_etcd(version, log, client_version=ETCD_CLIENT_VERSION):
    """etcd (version), etcdctl and etcdutl (client_version) in bin/ and as etcd's release tarball (amd64) with its
    SHA256SUMS line: what roles/protokube installs (its install override names the tarball's sha256 and URL)."""
    target = cache_dir("etcd", version)
    if (target / "SHA256SUMS").is_file():
        return target
    partial = _fresh(target)
    out = partial / "bin"
    out.mkdir()
    started = time.monotonic()
    versions = {"server": version, "client": client_version}
    # One wrapper module per version: the server's and the clients' modules pin each other at their own tag.
    for which in sorted(set(versions)):
        commands = {c: m for c, (m, w) in ETCD_COMMANDS.items() if w == which}
        with tempfile.TemporaryDirectory(prefix="kubeops-etcdbuild-") as workdir:
            work = pathlib.Path(workdir)
            (work / "go.mod").write_text("module example.invalid/probe\n")
            requires, replaces, directives = {}, {}, None
            for module in commands.values():
                info = module_info(module, versions[which], workdir)
                requires[module] = versions[which]
                # etcd's modules replace each other with ../<dir>; each is published at the same tag.
                replaces.update(dict.fromkeys(local_replaces(info["GoModText"], "../"), versions[which]))
                directives = directives or [l for l in go_directives(info["GoModText"]) if l.startswith("go ")]
            (work / "go.mod").write_text(wrapper_gomod(requires, replaces, directives))
            for command, module in commands.items():
                _go(["build", "-trimpath", "-ldflags", "-s -w", "-o", str(out / command), module], workdir)
    # etcd's release tarball layout, which roles/protokube installs from (nodeconfig/etcd_assets.py).
    release_dir = "etcd-%s-linux-amd64" % version
    tarball = partial / ("%s.tar.gz" % release_dir)
    with tarfile.open(tarball, "w:gz") as archive:
        for command in ETCD_COMMANDS:
            archive.add(out / command, arcname="%s/%s" % (release_dir, command))
    (partial / "SHA256SUMS").write_text("%s  %s\n" % (hashlib.sha256(tarball.read_bytes()).hexdigest(), tarball.name))
    log("etcd %s (etcdctl, etcdutl %s): built in %.0f s" % (version, client_version, time.monotonic() - started))
    return _publish(partial, target)


def build_tools(kubernetes_version, log):
    """go-runner (ours: hack/go-runner), pause (Kubernetes' build/pause/linux/pause.c, built as its Makefile does)
    and the ECR credential provider (which the test hosts' machine image carries, see tests/realk8s/cluster.py)."""
    target = cache_dir("tools", kubernetes_version)
    if all((target / name).is_file() for name in ("pause", "go-runner", "ecr-credential-provider")):
        return target
    partial = _fresh(target)
    with tempfile.TemporaryDirectory(prefix="kubeops-tools-") as workdir:
        work = pathlib.Path(workdir)
        (work / "go.mod").write_text("module example.invalid/gorunner\n\ngo 1.24\n")
        shutil.copy(GO_RUNNER, work / "main.go")
        _go(["build", "-trimpath", "-ldflags", "-s -w", "-o", str(partial / "go-runner"), "."], workdir)
        release = module_info("k8s.io/kubernetes", kubernetes_version, workdir)
        source = pathlib.Path(release["Dir"]) / "build" / "pause" / "linux" / "pause.c"
        pause_version = _pause_version(pathlib.Path(release["Dir"]) / "build" / "pause" / "Makefile")
        _run(["gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v%s" % pause_version, "-o",
              str(partial / "pause"), str(source)])
        _run(["strip", str(partial / "pause")])
        (partial / "pause.version").write_text(pause_version + "\n")
        module, version, command = ECR_CREDENTIAL_PROVIDER
        (work / "go.mod").write_text(wrapper_gomod({module: version}, {}, ["go 1.24"]))
        (work / "main.go").unlink()
        _go(["build", "-trimpath", "-ldflags", "-s -w", "-o", str(partial / "ecr-credential-provider"),
             "%s/%s" % (module, command)], workdir, GONOSUMDB=module)
    log("go-runner, pause %s and ecr-credential-provider %s: built" % (pause_version, ECR_CREDENTIAL_PROVIDER[1]))
    return _publish(partial, target)


def _pause_version(makefile):
    match = re.search(r"^TAG\s*\?=\s*(\S+)", makefile.read_text(), re.M)
    if not match:
        raise BuildError("%s: no TAG line (the pause version)" % makefile)
    return match.group(1)


def ensure(kubernetes_versions=KUBERNETES_VERSIONS, etcd_version=ETCD_VERSION, log=print):
    """Build what is missing; return {"kubernetes": {version: dir}, "etcd": {version: dir}, "tools": dir}."""
    if shutil.which("go") is None:
        raise BuildError("Go is not on PATH: the real Kubernetes components are built from the Go module proxy")
    CACHE.mkdir(parents=True, exist_ok=True)
    built = {"kubernetes": {}, "etcd": {}}
    # The first version, etcd and the tools first: with them the single-version tests can run while older minors build.
    built["kubernetes"][kubernetes_versions[0]] = str(build_kubernetes(kubernetes_versions[0], log))
    built["etcd"][etcd_version] = str(build_etcd(etcd_version, log))
    built["tools"] = str(build_tools(kubernetes_versions[0], log))
    for version in kubernetes_versions[1:]:
        built["kubernetes"][version] = str(build_kubernetes(version, log))
    return built


_COMMON = (_go, module_info, local_replaces, wrapper_gomod, go_directives, _publish, _fresh)
RECIPES = {"kubernetes": _COMMON + (build_kubernetes, required_modules, staging_version, version_ldflags),
           "kubeadm": _COMMON + (build_kubeadm, required_modules, staging_version, version_ldflags),
           "etcd": _COMMON + (build_etcd,),
           "tools": _COMMON + (build_tools, _pause_version)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--kubernetes", action="append", help="a k8s.io/kubernetes release (repeatable); default "
                        + " ".join(KUBERNETES_VERSIONS))
    parser.add_argument("--etcd", default=ETCD_VERSION)
    parser.add_argument("--kubeadm", action="append", default=[], help="also build kubeadm of this release "
                        "(repeatable; bench/kubespray.py's, not built by default)")
    parser.add_argument("--json", action="store_true", help="print the built directories as JSON")
    args = parser.parse_args(argv)

    def log(line):
        print(line, file=sys.stderr)

    try:
        built = ensure(tuple(args.kubernetes or KUBERNETES_VERSIONS), args.etcd, log=log)
        built["kubeadm"] = {version: str(build_kubeadm(version, log)) for version in args.kubeadm}
    except BuildError as exc:
        print("hack/k8s_binaries.py: %s" % exc, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(built, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
