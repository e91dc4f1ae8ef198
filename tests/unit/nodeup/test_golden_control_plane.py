"""The control plane's files equal kops' nodeup goldens (issue 21: nodes that real Kubernetes accepts).

Every control-plane case of kops' nodeup golden tests (kube-apiserver, kube-controller-manager, kube-scheduler,
kube-proxy, kubectl, secrets, hooks, update service, channels; side-loaded builds on amd64 and arm64) through the
harness (kops_golden.compare): every file both write is equal (manifests byte for byte, kubeconfigs by server and
credential, certificates by signer, subject and names, modes, owners), and kops writes nothing we do not, except the
files listed below, each with the reason ours differs."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.api import validation

from tests.unit.nodeup import kops_golden

CONTROL_PLANE = tuple(case for case in kops_golden.CASES
                      if case.directory.startswith(("golden/", "updateservicebuilder/", "channels")))

# kops files that ours replaces by design: {(case id, path): why}.
BY_DESIGN = {
    ("golden/minimal:tasks-kops-controller", "/etc/kubernetes/kops-controller/keypair-ids.yaml"):
        "kops-controller's record of the keypair ids to sign with; our bootstrap service (which replaces "
        "kops-controller's node bootstrap) is given its settings in the nodeup config (kubeops.bootstrapService) "
        "and checks the request's kubernetes-ca keypair id against the CA it signs with",
    ("golden/minimal:tasks-kops-controller", "/etc/kubernetes/kops-controller/kops-controller.crt"):
        "kops-controller's serving certificate; the bootstrap service's is the same request (kubernetes-ca, "
        "CN kops-controller, kops-controller.internal.<cluster>) at /etc/kubernetes/kubeops-bootstrap/server.crt",
    ("golden/minimal:tasks-kops-controller", "/etc/kubernetes/kops-controller/kops-controller.key"):
        "its key: /etc/kubernetes/kubeops-bootstrap/server.key",
    ("golden/minimal:tasks-kops-controller", "/etc/kubernetes/kops-controller/kubernetes-ca.crt"):
        "the CA kops-controller signs node certificates with; the bootstrap service signs with the copy the "
        "controller manager already has (/srv/kubernetes/kube-controller-manager/ca.crt)",
    ("golden/minimal:tasks-kops-controller", "/etc/kubernetes/kops-controller/kubernetes-ca.key"):
        "its key: /srv/kubernetes/kube-controller-manager/ca.key",
    ("channels:tasks-channels", "/etc/kubernetes/manifests/kops-channels.manifest"):
        "kops' static pod that runs `channels apply channel` every minute; roles/protokube applies the addons "
        "channel on each run instead (the channel_apply module)",
    ("channels:tasks-channels", "/var/lib/kops/kubeconfig"):
        "the kops-channels pod's system:masters kubeconfig; channel_apply issues itself a short-lived admin "
        "credential from the state store instead",
}


@pytest.mark.parametrize("case", CONTROL_PLANE, ids=[kops_golden._case_id(case) for case in CONTROL_PLANE])
def test_control_plane_case_equals_kops(case):
    case_id = kops_golden._case_id(case)
    result = kops_golden.compare(case)
    assert result.different == {}, sorted(result.different)
    excused = {path for (where, path) in BY_DESIGN if where == case_id}
    assert set(result.kops_only) == excused, "kops-only: %s" % sorted(set(result.kops_only) ^ excused)
    assert result.equal or excused


def test_every_excused_file_is_a_case_of_this_test():
    ids = {kops_golden._case_id(case) for case in CONTROL_PLANE}
    assert {where for where, _path in BY_DESIGN} <= ids
    assert all(len(reason) > 40 for reason in BY_DESIGN.values())


@pytest.mark.parametrize("text, expected", [
    ("https://dl.k8s.io/release/v1.35.0", "1.35.0"), ("https://storage.googleapis.com/k8s-release-dev/ci/"
                                                      "v1.36.0-alpha.1.123+abc/", "1.36.0"),
    ("v1.34.2", "1.34.2"), ("1.33.0", "1.33.0")])
def test_a_build_url_is_a_kubernetes_version_as_kops_reads_it(text, expected):
    assert str(semver.kubernetes_version(text)) == expected


def test_a_build_url_without_a_version_fails_naming_it():
    with pytest.raises(ValueError, match="must name its version in its path"):
        semver.kubernetes_version("https://example.com/builds/latest")
    problems = []
    validation._check_version({"kubernetesVersion": "https://example.com/builds/latest"}, problems)
    assert len(problems) == 1 and "spec.kubernetesVersion" in str(problems[0])
    accepted = []
    validation._check_version({"kubernetesVersion": "https://dl.k8s.io/release/v1.35.0"}, accepted)
    assert accepted == []


def test_a_side_loaded_build_hands_its_image_tarballs_to_the_nodes():
    """kops' NodeupConfig.Images: the control plane loads its four components' images from the build (each
    architecture its own), which roles/nodeup imports into containerd (tasks/images.yml)."""
    case = next(c for c in CONTROL_PLANE if c.directory == "golden/side-loading")
    document, _keysets = kops_golden.our_config(case)
    base = "https://dl.k8s.io/release/v1.35.0/bin/linux"
    assert document["KubernetesVersion"] == "https://dl.k8s.io/release/v1.35.0"
    assert {arch: [image["sources"] for image in images] for arch, images in document["Images"].items()} == {
        arch: [["%s/%s/%s.tar" % (base, arch, component)] for component in
               ("kube-proxy", "kube-apiserver", "kube-controller-manager", "kube-scheduler")]
        for arch in ("amd64", "arm64")}
    released = next(c for c in CONTROL_PLANE if c.directory == "golden/minimal")
    assert "Images" not in kops_golden.our_config(released)[0]
