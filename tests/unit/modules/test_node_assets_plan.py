"""node_assets state=plan: what a node installs (architecture, downloads, packages) decided in Python, the set the
nodeup role's Jinja used to compute (roles/nodeup/defaults/main.yml's nodeup_packages, the arch maps of the nodeup
and protokube roles); the roles only loop over it."""

from __future__ import annotations

import pathlib
import platform

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import assets
from ansible_collections.kubeops.kops.plugins.modules import node_assets

from tests.unit.nodeup.test_golden_containerd import _asset_config

CONTROL_PLANE = ["python3-cryptography", "python3-yaml"]
WORKER = ["python3-cryptography", "python3-botocore", "python3-yaml"]
UPDATES = "unattended-upgrades"


def _packages(config, distro=None):
    return assets.packages(config, distro, CONTROL_PLANE, WORKER, UPDATES)


@pytest.mark.parametrize("config, expected", [
    ({}, [UPDATES]),  # a worker with nothing asked for: kops' update service only
    ({"APIServerConfig": {}}, CONTROL_PLANE + [UPDATES]),
    ({"ControlPlaneConfig": None}, CONTROL_PLANE + [UPDATES]),  # present, whatever its value (Jinja's "is defined")
    ({"kubeops": {"bootstrapService": {"server": "https://api.internal:3988"}}}, WORKER + [UPDATES]),
    ({"kubeops": {"bootstrapService": None}}, WORKER + [UPDATES]),
    ({"APIServerConfig": {}, "kubeops": {"bootstrapService": {"serverCert": "/srv/kubernetes/kops-controller.crt"}}},
     CONTROL_PLANE + [UPDATES]),  # the node that serves the service does not ask it
    ({"UpdatePolicy": "external"}, []),
    ({"UpdatePolicy": None}, [UPDATES]),
])
def test_packages_as_the_role_computed_them(config, expected):
    assert _packages(config) == expected


def test_a_token_worker_gets_what_every_node_needs_and_each_package_once():
    # A worker that joins with the kubelet bootstrap token (metal, GCE over SSH) asks no bootstrap service, but
    # node_files still writes YAML on it: without PyYAML it failed ("writing kops' YAML files needs PyYAML").
    token_worker = {"kubeops": {"kubeletBootstrap": {"tokenSecret": "kubelet-bootstrap-token"}}}
    assert assets.packages(token_worker, {}, CONTROL_PLANE, WORKER, UPDATES, ["python3-yaml"]) == [
        "python3-yaml", UPDATES]
    assert assets.packages({"APIServerConfig": {}}, {}, CONTROL_PLANE, WORKER, "", ["python3-yaml"]) == [
        "python3-yaml", "python3-cryptography"]


def test_distribution_packages_first_and_no_update_package_when_none_is_given():
    assert _packages({}, {"containerd": "containerd", "runc": "runc"}) == ["containerd", "runc", UPDATES]
    assert assets.packages({}, {}, CONTROL_PLANE, WORKER, "") == []


def test_machines_kops_builds_for():
    assert (assets.arch_of("x86_64"), assets.arch_of("aarch64")) == ("amd64", "arm64")
    with pytest.raises(ValueError, match="the node's machine 's390x' is not one kops builds nodes for"):
        assets.arch_of("s390x")


def test_the_plan_the_role_loops_over(run_module):
    config = _asset_config(APIServerConfig={})
    plan = run_module(node_assets, nodeup_config=config, state="plan", arch="arm64",
                      distro_packages={"containerd": "containerd.io", "runc": "runc"},
                      control_plane_packages=CONTROL_PLANE, worker_packages=WORKER, update_package=UPDATES)
    assert plan["changed"] is False and plan["arch"] == "arm64"
    assert plan["packages"] == ["containerd.io", "runc"] + CONTROL_PLANE + [UPDATES]
    download = run_module(node_assets, nodeup_config=config, state="download", arch="arm64",
                          distro_packages=["containerd", "runc"])
    assert plan["downloads"] == download["downloads"] and download["downloads"]
    assert {d["name"] for d in plan["downloads"]} == {"kubelet", "kubectl", "ecr-credential-provider", "cni-plugins"}


def test_the_plan_takes_the_nodes_own_architecture_and_may_skip_downloads(run_module, monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    plan = run_module(node_assets, nodeup_config=_asset_config(), state="plan", assets=False)
    assert plan["arch"] == "arm64" and plan["downloads"] == [] and plan["packages"] == []
    monkeypatch.setattr(platform, "machine", lambda: "ppc64le")
    failed = run_module(node_assets, nodeup_config=_asset_config(), state="plan")
    assert failed["failed"] and failed["msg"].startswith("arch: the node's machine 'ppc64le' is not one kops builds")


def test_an_asset_the_machine_image_brings_is_neither_downloaded_nor_a_package(run_module):
    # The real cluster's test hosts (tests/realk8s) carry ecr-credential-provider in their image: an empty package.
    distro = {"containerd": "containerd", "ecr-credential-provider": ""}
    assert _packages({}, distro) == ["containerd", UPDATES]
    plan = run_module(node_assets, nodeup_config=_asset_config(), state="plan", arch="amd64", distro_packages=distro)
    assert "ecr-credential-provider" not in {d["name"] for d in plan["downloads"]}
    assert "" not in plan["packages"]


def test_cni_plugins_from_a_package_are_linked_where_containerd_looks():
    config = {"InstallCNIAssets": True}
    found = {"/usr/lib/cni": ["loopback", "bridge", "host-local"]}
    assert assets.cni_links(config, ["cni-plugins"], found) == [
        assets.Link("/opt/cni/bin/bridge", "/usr/lib/cni/bridge"),
        assets.Link("/opt/cni/bin/host-local", "/usr/lib/cni/host-local"),
        assets.Link("/opt/cni/bin/loopback", "/usr/lib/cni/loopback")]
    assert assets.cni_links(config, ["containerd"], found) == []  # downloaded plugins: installs() puts them there
    assert assets.cni_links({}, ["cni-plugins"], found) == []  # a CNI that brings its own plugins
    with pytest.raises(ValueError, match="none of /usr/lib/cni, /usr/libexec/cni holds a plugin"):
        assets.cni_links(config, ["cni-plugins"], {})


def test_install_links_the_packaged_plugins_once(run_module, tmp_path):
    (tmp_path / "usr" / "lib" / "cni").mkdir(parents=True)
    for name in ("bridge", "loopback"):
        (tmp_path / "usr" / "lib" / "cni" / name).write_text("#!/bin/true\n")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text("ID=debian\nVERSION_ID=\"12\"\n")
    config = dict(_asset_config(), InstallCNIAssets=True)
    args = dict(nodeup_config=config, state="install", arch="amd64", root=str(tmp_path), cache=str(tmp_path / "cache"),
                distro_packages={"cni-plugins": "containernetworking-plugins", "containerd": "containerd", "runc": "runc",
                                 "kubelet": "", "kubectl": "", "ecr-credential-provider": ""})
    first = run_module(node_assets, **args)
    assert first["changed"] and first["changed_files"] == ["/opt/cni/bin/bridge", "/opt/cni/bin/loopback"]
    assert (tmp_path / "opt" / "cni" / "bin" / "bridge").readlink() == pathlib.Path("/usr/lib/cni/bridge")
    again = run_module(node_assets, **args)
    assert again["changed"] is False and again["changed_files"] == []
