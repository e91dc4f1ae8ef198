"""The real Kubernetes components for tests: built once by hack/k8s_binaries.py into its cache, found here.

`make test` runs the script before pytest (a warm run builds nothing) and sets KUBEOPS_REQUIRE_REAL_K8S, so there a
missing binary fails the test; started some other way without them, a test skips, naming the command that builds
them."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack" / "k8s_binaries.py"


def _script():
    spec = importlib.util.spec_from_file_location("k8s_binaries", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


k8s_binaries = _script()
NEWER, OLDER = k8s_binaries.KUBERNETES_VERSIONS
ETCD_VERSION = k8s_binaries.ETCD_VERSION


class Build(object):
    """The built directories: kubernetes(version) -> dir with bin/linux/amd64/, etcd_dir, tools_dir."""

    def __init__(self, kubernetes, etcd, tools):
        self._kubernetes = {version: pathlib.Path(path) for version, path in kubernetes.items()}
        self.etcd_dir = pathlib.Path(etcd)
        self.tools_dir = pathlib.Path(tools)

    def kubernetes_bin(self, version=NEWER):
        return self._kubernetes[version] / "bin" / "linux" / "amd64"

    def binary(self, name, version=NEWER):
        if name in ("etcd", "etcdctl", "etcdutl"):
            return self.etcd_dir / "bin" / name
        if name in ("go-runner", "pause", "ecr-credential-provider"):
            return self.tools_dir / name
        return self.kubernetes_bin(version) / name

    @property
    def etcd_tarball(self):
        return self.etcd_dir / ("etcd-%s-linux-amd64.tar.gz" % ETCD_VERSION)

    @property
    def pause_version(self):
        return (self.tools_dir / "pause.version").read_text().strip()


def cached_build(versions=(NEWER,)):
    """The cached build of these Kubernetes versions, etcd and the tools, or None when any part is missing (never
    builds: that is make test's step)."""
    if shutil.which("go") is None:
        return None
    kubernetes = {v: k8s_binaries.cache_dir("kubernetes", v) for v in versions}
    etcd = k8s_binaries.cache_dir("etcd", ETCD_VERSION)
    tools = k8s_binaries.cache_dir("tools", NEWER)
    build = Build(kubernetes, etcd, tools)
    needed = [build.binary(n, v) for v in kubernetes for n in k8s_binaries.KUBERNETES_COMMANDS]
    needed += [build.binary(n) for n in ("etcd", "etcdctl", "go-runner", "pause", "ecr-credential-provider")]
    needed.append(build.etcd_tarball)
    return build if all(path.is_file() for path in needed) else None


def require_build(versions=(NEWER,)):
    """The cached build of these Kubernetes versions, or a skip naming the command that makes it."""
    build = cached_build(versions)
    if build is None and os.environ.get("KUBEOPS_REQUIRE_REAL_K8S"):
        # make test built them just before pytest: none here is a failure of that step, not a reason to skip.
        pytest.fail("the real Kubernetes components are missing from %s although make test built them "
                    "(hack/k8s_binaries.py)" % k8s_binaries.CACHE)
    if build is None:
        pytest.skip("the real Kubernetes components are not built: run `make k8s-binaries` "
                    "(hack/k8s_binaries.py; Go and the Go module proxy needed)")
    return build
