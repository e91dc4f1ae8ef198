"""hack/k8s_binaries.py: the wrapper module is derived from the release's own go.mod, and what it built reports the
version it was built as (an unstamped build says v0.0.0-master, which every version check of ours would misread)."""

from __future__ import annotations

import subprocess

import pytest

from tests.realk8s import binaries

k8s_binaries = binaries.k8s_binaries

RELEASE_GOMOD = """module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
\tgithub.com/blang/semver/v4 v4.0.0
\tk8s.io/api v0.0.0
\tk8s.io/client-go v0.0.0
\tk8s.io/kubelet v0.0.0 // indirect
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet
\tk8s.io/sample-controller => ./staging/src/k8s.io/sample-controller
)
"""


def test_the_wrapper_replaces_every_required_staging_module_by_its_published_tag():
    staging = set(k8s_binaries.local_replaces(RELEASE_GOMOD, "./staging/")) & \
        k8s_binaries.required_modules(RELEASE_GOMOD)
    assert staging == {"k8s.io/api", "k8s.io/client-go", "k8s.io/kubelet"}  # sample-controller: not required
    text = k8s_binaries.wrapper_gomod({"k8s.io/kubernetes": "v1.36.3"},
                                      dict.fromkeys(staging, k8s_binaries.staging_version("v1.36.3")),
                                      k8s_binaries.go_directives(RELEASE_GOMOD))
    assert "go 1.26.0\ngodebug default=go1.26\n" in text
    assert "\tk8s.io/kubelet => k8s.io/kubelet v0.36.3\n" in text and "require k8s.io/kubernetes v1.36.3" in text
    with pytest.raises(k8s_binaries.BuildError, match="a release version"):
        k8s_binaries.staging_version("v1.36.3-rc.0")


def test_etcds_guard_replaces_name_no_module_to_build():
    gomod = "replace (\n\tgo.etcd.io/etcd/api/v3 => ../api\n)\n\nreplace go.etcd.io/etcd => ./FORBIDDEN_DEPENDENCY\n"
    assert k8s_binaries.local_replaces(gomod, "../") == ["go.etcd.io/etcd/api/v3"]


def _version(path, *args):
    proc = subprocess.run([str(path)] + list(args), capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("version", k8s_binaries.KUBERNETES_VERSIONS)
def test_every_component_reports_the_version_it_was_built_as(version):
    build = binaries.require_build(versions=(version,))
    for command in k8s_binaries.KUBERNETES_COMMANDS:
        if command == "kubectl":
            assert "Client Version: %s" % version in _version(build.binary(command, version), "version", "--client")
        else:
            assert _version(build.binary(command, version), "--version").strip() == "Kubernetes %s" % version
    assert "etcd Version: %s" % binaries.ETCD_VERSION.lstrip("v") in _version(build.binary("etcd"), "--version")
    assert "etcdctl version: %s" % k8s_binaries.ETCD_CLIENT_VERSION.lstrip("v") in _version(
        build.binary("etcdctl"), "version")
