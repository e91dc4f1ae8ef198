"""node_assets state=plan: what a node installs (architecture, downloads, packages) decided in Python, the set the
nodeup role's Jinja used to compute (roles/nodeup/defaults/main.yml's nodeup_packages, the arch maps of the nodeup
and protokube roles); the roles only loop over it."""

from __future__ import annotations

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
