"""kops upgrade cluster's rules (module_utils/upgrade.py) on the embedded channels."""

from __future__ import annotations

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import semver, upgrade
from ansible_collections.kubeops.kops.plugins.module_utils.completion import channels

STABLE = channels.load_channel("stable")
NOBLE = "099720109477/ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-%s-server-20260714"
JAMMY_OLD = "099720109477/ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20240101"


def cluster(version, channel="stable"):
    spec = {"kubernetesVersion": version, "cloudProvider": "aws"}
    if channel:
        spec["channel"] = channel
    return {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "Cluster", "metadata": {"name": "u.example.com"}, "spec": spec}


def group(name, image=None, machine_type="m6i.large"):
    spec = {"role": "Node", "machineType": machine_type}
    if image is not None:
        spec["image"] = image
    return {"kind": "InstanceGroup", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize("current, proposed", [
    ("1.32.0", "1.33.13"),   # the next minor's recommendation: kops steps one minor per run
    ("1.33.1", "1.34.10"),
    ("1.35.0", "1.36.3"),
    ("1.36.0", "1.36.3"),    # 1.37.0 is above this kops (1.37.0-alpha.1): only the patch release
    ("1.36.3", "1.36.3"),
])
def test_channel_proposal_steps_one_minor(current, proposed):
    assert str(upgrade.channel_proposal(STABLE, semver.parse(current))) == proposed


def test_skipping_a_minor_is_refused_with_the_path():
    with pytest.raises(upgrade.UpgradeError) as exc:
        upgrade.plan_upgrade(cluster("v1.33.1"), [], kubernetes_version="1.35.7")
    message = str(exc.value)
    assert "skips 1.34" in message
    assert "1.33.1 -> 1.34.10 -> 1.35.7" in message and "kubernetes_version=1.34.10" in message


def test_downgrade_and_unsupported_versions_are_refused():
    for version, words in [("1.33.0", "does not downgrade"), ("1.38.0", "up to 1.37.x"), ("1.31.9", "1.32.0 and newer"),
                           ("next", "neither a version")]:
        with pytest.raises(upgrade.UpgradeError, match=words):
            upgrade.plan_upgrade(cluster("1.34.2"), [], kubernetes_version=version)


def test_required_version_of_the_channel_is_enforced():
    # The stable channel's range "<1.11.0" requires 1.11.10; a fabricated channel requires 1.35.2 for >=1.35.0.
    strict = channels.Channel("strict", {"kubernetesVersions": [
        {"range": ">=1.35.0", "recommendedVersion": "1.35.7", "requiredVersion": "1.35.2"},
        {"range": ">=1.34.0", "recommendedVersion": "1.34.10", "requiredVersion": "1.34.0"}]})
    with pytest.raises(upgrade.UpgradeError, match="requires at least 1.35.2"):
        upgrade.check_target(strict, semver.parse("1.34.10"), semver.parse("1.35.1"))
    upgrade.check_target(strict, semver.parse("1.34.10"), semver.parse("1.35.2"))


def test_already_current_changes_nothing():
    actions, after, groups, notes = upgrade.plan_upgrade(cluster("1.36.3"), [group("nodes", NOBLE % "amd64")])
    assert actions == [] and notes == []
    assert after["spec"]["kubernetesVersion"] == "1.36.3" and groups[0]["spec"]["image"] == NOBLE % "amd64"
    # the same version given explicitly, with a leading v in the spec: still nothing
    actions = upgrade.plan_upgrade(cluster("v1.36.3"), [group("nodes", NOBLE % "amd64")], kubernetes_version="1.36.3")[0]
    assert actions == []


BUILD = "http://10.0.0.1:8080/%s"  # a side-loaded Kubernetes build (kops' base URL), named by its version


def test_a_build_url_is_an_upgrade_target_and_written_as_given():
    """A cluster running a side-loaded build moves to the next minor's build: the URL names the minor (kops'
    ParseKubernetesVersion), the rules apply to it, and the spec keeps the URL the nodes take the build from."""
    actions, after, _groups, _notes = upgrade.plan_upgrade(cluster(BUILD % "v1.35.4"), [],
                                                           kubernetes_version=BUILD % "v1.36.3")
    assert [(a.property, a.old, a.new) for a in actions] == [
        ("KubernetesVersion", BUILD % "v1.35.4", BUILD % "v1.36.3")]
    assert after["spec"]["kubernetesVersion"] == BUILD % "v1.36.3"
    assert upgrade.plan_upgrade(cluster(BUILD % "v1.36.3"), [], kubernetes_version=BUILD % "v1.36.3")[0] == []
    with pytest.raises(upgrade.UpgradeError, match="skips 1.35"):
        upgrade.plan_upgrade(cluster(BUILD % "v1.34.2"), [], kubernetes_version=BUILD % "v1.36.3")
    with pytest.raises(upgrade.UpgradeError, match="older than the cluster's"):
        upgrade.plan_upgrade(cluster("1.36.3"), [], kubernetes_version=BUILD % "v1.35.4")
    with pytest.raises(upgrade.UpgradeError, match="neither a version .* nor the URL of a Kubernetes build"):
        upgrade.plan_upgrade(cluster("1.36.3"), [], kubernetes_version="http://builds.example.com/latest")


def test_without_a_target_a_build_url_moves_to_the_channels_release_as_kops_does():
    actions, after, _groups, notes = upgrade.plan_upgrade(cluster(BUILD % "v1.35.4"), [])
    assert after["spec"]["kubernetesVersion"] == "1.36.3" and notes == []
    assert [(a.old, a.new) for a in actions if a.property == "KubernetesVersion"] == [(BUILD % "v1.35.4", "1.36.3")]


def test_newer_than_the_channel_is_kept():
    actions, after, _groups, notes = upgrade.plan_upgrade(cluster("1.37.0"), [])
    assert actions == [] and after["spec"]["kubernetesVersion"] == "1.37.0"
    assert "newer than the stable channel's 1.36.3" in notes[0]


def test_channel_images_swap_and_custom_images_stay():
    groups = [group("old-channel", JAMMY_OLD), group("arm", NOBLE.replace("20260714", "20250101") % "arm64", "m7g.large"),
              group("empty"), group("custom", "ami-0123456789abcdef0")]
    actions, after, groups_after, notes = upgrade.plan_upgrade(cluster("v1.34.2", channel=None), groups)
    rows = [(a.item, a.property, a.old, a.new) for a in actions]
    assert rows == [
        ("Cluster", "Channel", "", "stable"),
        ("Cluster", "KubernetesVersion", "v1.34.2", "1.35.7"),
        ("InstanceGroup/old-channel", "Image", JAMMY_OLD, NOBLE % "amd64"),
        ("InstanceGroup/arm", "Image", NOBLE.replace("20260714", "20250101") % "arm64", NOBLE % "arm64"),
        ("InstanceGroup/empty", "Image", "", NOBLE % "amd64"),
    ]
    assert after["spec"]["channel"] == "stable" and after["spec"]["kubernetesVersion"] == "1.35.7"
    assert [g["spec"].get("image") for g in groups_after] == [NOBLE % "amd64", NOBLE % "arm64", NOBLE % "amd64",
                                                              "ami-0123456789abcdef0"]
    assert notes == ["instance group custom: custom image ami-0123456789abcdef0 kept"]
    assert groups[0]["spec"]["image"] == JAMMY_OLD, "the input objects are not modified"


def test_table_is_aligned_like_kops():
    actions = upgrade.plan_upgrade(cluster("1.35.0"), [])[0]
    assert upgrade.table(actions) == [
        "ITEM    PROPERTY                OLD     NEW",
        "Cluster KubernetesVersion       1.35.0  1.36.3",
    ]
