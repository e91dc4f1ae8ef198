"""The addons measured against kops' rendered files (docs/addons.md).

Always: in the two conformance fixtures with rendered data (minimal-aws,
minimal_gce) every addon we render is byte-equal to kops' file, so its
manifestHash is kops'; the channel is kops' minus the two addons we do not
render (kops-controller, dns-controller); in every fixture's kubernetes.tf,
each addon file we write is an aws_s3_object with kops' name and key.

With KOPS_SOURCE set to a kops checkout, every update_cluster fixture in it
is rendered and compared per addon (object sets, objects equal field by
field, byte-equal files); the figures must not fall below FIGURES.
"""

from __future__ import annotations

import collections
import os
import pathlib
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import karpenter as karpenter_model
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.node_labels import build_node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.model.aws import store_objects

from tests.conformance import kops_fixtures

ACCOUNT = "123456789012"  # kops' integration tests' AWS account
# The addons kops renders that this collection replaces with work of its own (docs/addons.md).
REPLACED = {"kops-controller.addons.k8s.io", "dns-controller.addons.k8s.io"}
WITH_DATA = ["minimal-aws", "minimal_gce"]
OBJECT = re.compile(r'resource "aws_s3_object" "([^"]+)" \{\n  bucket += "([^"]+)"\n  content += file\("\$\{path.module\}/'
                    r'data/aws_s3_object_([^"]+)_content"\)\n  key += "([^"]+)"')
# Per addon key, measured over the update_cluster fixtures of kops 1.37.0-alpha.1 (commit 268927e):
# (fixtures rendered, object sets equal, objects matched, objects in kops' files, objects equal, files byte-equal).
# kops' test partition (aws-test) is read as ours (kops_partition_as_ours). Fixtures we cannot complete offline
# (shared subnets) are not counted; cluster-autoscaler is counted where rendered (AWS and GCE).
FIGURES = {
    "coredns.addons.k8s.io-k8s-1.12": (74, 74, 814, 814, 814, 74),
    "kubelet-api.rbac.addons.k8s.io-k8s-1.9": (74, 74, 74, 74, 74, 74),
    "limit-range.addons.k8s.io": (74, 74, 74, 74, 74, 74),
    "storage-aws.addons.k8s.io-v1.15.0": (61, 61, 366, 366, 366, 61),
    "storage-gce.addons.k8s.io-v1.7.0": (11, 11, 11, 11, 11, 11),
    "aws-cloud-controller.addons.k8s.io-k8s-1.18": (61, 61, 305, 305, 305, 61),
    "aws-ebs-csi-driver.addons.k8s.io-k8s-1.17": (61, 61, 1525, 1525, 1525, 61),
    "node-termination-handler.aws-k8s-1.11": (60, 60, 298, 298, 298, 60),
    "gcp-cloud-controller.addons.k8s.io-k8s-1.23": (11, 11, 176, 176, 176, 11),
    "networking.cilium.io-k8s-1.16": (8, 8, 111, 111, 111, 8),
    "networking.kindnet-k8s-1.32": (2, 2, 8, 8, 8, 2),
    "networking.flannel-k8s-1.25": (1, 1, 6, 6, 6, 1),
    "networking.amazon-vpc-routed-eni-k8s-1.16": (3, 3, 18, 18, 18, 3),
    "metrics-server.addons.k8s.io-k8s-1.11": (4, 4, 40, 40, 40, 4),
    "cluster-autoscaler.addons.k8s.io-k8s-1.15": (5, 5, 42, 42, 42, 5),
    "aws-load-balancer-controller.addons.k8s.io-k8s-1.19": (2, 2, 38, 38, 38, 2),
    "aws-load-balancer-controller.addons.k8s.io-k8s-1.19-irsa": (2, 2, 38, 38, 38, 2),
    "eks-pod-identity-webhook.addons.k8s.io-k8s-1.16": (1, 1, 11, 11, 11, 1),
    "certmanager.io-k8s-1.16": (7, 7, 336, 336, 336, 7),
    "networking.projectcalico.org-k8s-1.25": (2, 2, 78, 78, 78, 2),
    "snapshot-controller.addons.k8s.io-k8s-1.20": (2, 2, 26, 26, 26, 2),  # many-addons-ccm-irsa refused (IRSA)
    "node-problem-detector.addons.k8s.io-k8s-1.17": (1, 1, 3, 3, 3, 1),
    "nvidia.addons.k8s.io-k8s-1.16": (1, 1, 2, 2, 2, 1),
    "gcp-pd-csi-driver.addons.k8s.io-k8s-1.23": (10, 10, 250, 250, 250, 10),
    "external-dns.addons.k8s.io-k8s-1.19": (1, 1, 5, 5, 5, 1),  # external_dns_irsa refused (IRSA)
    "authentication.aws-k8s-1.12": (1, 1, 6, 6, 6, 1),
    "networking.kope.io-k8s-1.12": (1, 1, 4, 4, 4, 1),
    "karpenter.sh-k8s-1.19": (1, 1, 21, 21, 21, 1),  # given kops' harness boot scripts (kops_harness_nodes)
}


def load_case(directory):
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all((directory / "in-v1alpha2.yaml").read_text())
                                             if d])
    completed = populate.populate_cluster_spec(cluster, groups, cloudfacts.kops_test_cloud())
    return completed, groups


def addon_key(path):
    """kops' ManagedFile key (after "<cluster>-addons-") of one of our store paths."""
    if path == channel.CHANNEL_PATH:
        return "bootstrap"
    return channel.manifest_keys().get(path) or path[len("addons/"):-len(".yaml")].replace("/", "-")


def kops_files(directory, cluster_name):
    """{addon key: kops' rendered bytes (trailing newline of the golden file dropped)}."""
    prefix = "aws_s3_object_%s-addons-" % cluster_name
    return {f.name[len(prefix):-len("_content")]: f.read_bytes().strip()
            for f in (directory / "data").glob(prefix + "*_content")}


SPEC_ARNS = ("authentication.aws-k8s-1.12",)


def kops_partition_as_ours(files):
    """kops' test cloud is the partition aws-test, which region us-test-1 is not in for us: the service-account role
    ARNs (IRSA) read as aws, and the channel's manifestHash of a file so read is that file's hash."""
    hashes = {}
    converted = {}
    for key, data in files.items():
        # aws-iam-authenticator's ARNs are the spec's own (identityMappings), copied as written: not converted.
        # Only IAM ARNs are the partition's own; others (Karpenter's root volume KMS key) are the spec's.
        converted[key] = data if key in SPEC_ARNS else data.replace(b"arn:aws-test:iam:", b"arn:aws:iam:")
        if converted[key] != data:
            hashes[channel.manifest_hash(data)] = channel.manifest_hash(converted[key])
    if hashes and "bootstrap" in converted:
        text = converted["bootstrap"].decode("utf-8")
        for old, new in hashes.items():
            text = text.replace(old, new)
        converted["bootstrap"] = text.encode("utf-8")
    return converted


def kops_harness_nodes(directory, completed, groups):
    """What kops' test harness gives its Karpenter template (model/aws/karpenter.node_inputs): its mock cloud's
    images (root device /dev/xvda) and the nodeupscript files it rendered as the groups' boot scripts (the golden
    files end with a newline kops' own content does not have); None without Karpenter groups."""
    karpenter_groups = karpenter_model.karpenter_groups(groups)
    if not karpenter_groups:
        return None
    user_data = {g["metadata"]["name"]: (directory / "data" / ("aws_s3_object_nodeupscript-%s_content"
                                                               % g["metadata"]["name"])).read_text().rstrip("\n")
                 for g in karpenter_groups}
    images = {(g.get("spec") or {}).get("image") for g in groups}
    return karpenter_model.node_inputs(completed, groups, user_data, {image: "/dev/xvda" for image in images},
                                       build_node_labels)


def identity(document):
    metadata = document["metadata"]
    return document["kind"], metadata.get("namespace", ""), metadata["name"]


def compare(theirs, ours):
    """(object sets equal, objects matched, objects in kops' file, objects equal, bytes equal)."""
    kops_objects = {identity(d): d for d in yaml.safe_load_all(theirs) if d}
    our_objects = {identity(d): d for d in yaml.safe_load_all(ours) if d}
    matched = set(kops_objects) & set(our_objects)
    return (set(kops_objects) == set(our_objects), len(matched), len(kops_objects),
            sum(1 for key in matched if kops_objects[key] == our_objects[key]), theirs == ours)


# ---------------------------------------------------------------- the conformance fixtures with data


@pytest.mark.parametrize("case", WITH_DATA)
def test_every_rendered_addon_is_byte_equal_to_kops(case):
    directory = kops_fixtures.UPDATE_CLUSTER / case
    completed, groups = load_case(directory)
    theirs = kops_files(directory, completed["metadata"]["name"])
    ours = {addon_key(path): data for path, data in channel.render(completed, groups, account_id=ACCOUNT)}
    manifests = {key: data for key, data in ours.items() if key != "bootstrap"}
    assert len(manifests) >= 5
    for key, data in manifests.items():
        assert data == theirs[key], key
    # Every kops addon is rendered but the two we replace.
    assert {k for k in theirs if k != "bootstrap" and k.split("-k8s-")[0] not in REPLACED} == set(manifests)


@pytest.mark.parametrize("case", WITH_DATA)
def test_channel_is_kops_minus_the_replaced_addons(case):
    directory = kops_fixtures.UPDATE_CLUSTER / case
    completed, groups = load_case(directory)
    theirs = yaml.safe_load(kops_files(directory, completed["metadata"]["name"])["bootstrap"])
    ours = yaml.safe_load(dict(channel.render(completed, groups, account_id=ACCOUNT))[channel.CHANNEL_PATH])
    expected = [a for a in theirs["spec"]["addons"] if a["name"] not in REPLACED]
    assert ours == dict(theirs, spec={"addons": expected})
    assert len(expected) == len(theirs["spec"]["addons"]) - 2


@pytest.mark.parametrize("case", sorted(p.name for p in kops_fixtures.UPDATE_CLUSTER.iterdir()
                                        if (p / "kubernetes.tf").exists()))
def test_addon_files_are_s3_objects_with_kops_names(case):
    directory = kops_fixtures.UPDATE_CLUSTER / case
    completed, groups = load_case(directory)
    name = completed["metadata"]["name"]
    kops = {m[2]: (m[0], m[1], m[3]) for m in OBJECT.findall((directory / "kubernetes.tf").read_text())}
    kops_addons = {n for n in kops if n.startswith(name + "-addons-")}
    bucket, key = kops["%s-addons-bootstrap" % name][1:]
    config_base = "s3://%s/%s" % (bucket, key[:-len("/addons/bootstrap-channel.yaml")])
    tasks = {}
    store_objects.build_store_objects(name, config_base, channel.render(completed, groups, account_id=ACCOUNT), tasks)
    ours = {t.name: t for t in tasks.values()}
    not_ours = {n for n in kops_addons if any(n.startswith("%s-addons-%s" % (name, r)) for r in REPLACED)}
    unrendered = channel.not_rendered(channel.Facts(completed, groups))
    # What we leave out is what not_rendered names (e.g. a cluster's kube-router).
    missing = kops_addons - not_ours - set(ours)
    assert {n for n in missing if not any(n.startswith("%s-addons-%s-" % (name, u)) for u in unrendered)} == set()
    assert set(ours) <= kops_addons and len(ours) >= 5 and len(missing) == len(unrendered)
    for object_name, task in ours.items():
        body = task.render_terraform()
        assert (task.terraform_name, body["bucket"], body["key"]) == kops[object_name]


# ---------------------------------------------------------------- every fixture of a kops checkout


def _kops_cases():
    source = os.environ.get("KOPS_SOURCE")
    if not source:
        return []
    root = pathlib.Path(source) / "tests" / "integration" / "update_cluster"
    return sorted(p for p in root.iterdir() if (p / "in-v1alpha2.yaml").exists() and (p / "data").is_dir())


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"),
                    reason="KOPS_SOURCE is not set: point it at a kops checkout to measure every fixture")
def test_per_addon_equality_does_not_regress():
    totals = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    entries_differing = []
    for directory in _kops_cases():
        try:
            completed, groups = load_case(directory)
            rendered = dict(channel.render(completed, groups, account_id=ACCOUNT,
                                           karpenter_nodes=kops_harness_nodes(directory, completed, groups)))
        except ValueError:
            continue  # refused specs (see FIGURES' note) and fixtures that need cloud facts we do not invent
        ours = {addon_key(path): data for path, data in rendered.items()}
        theirs_files = kops_partition_as_ours(kops_files(directory, completed["metadata"]["name"]))
        our_entries = {e["name"]: e for e in yaml.safe_load(ours["bootstrap"])["spec"]["addons"]}
        for entry in yaml.safe_load(theirs_files["bootstrap"])["spec"]["addons"]:
            if entry["name"] in our_entries and our_entries[entry["name"]] != entry:
                entries_differing.append((directory.name, entry["name"]))
        for key, theirs in theirs_files.items():
            if key not in FIGURES or key not in ours:
                continue
            same_set, matched, total, equal, same_bytes = compare(theirs, ours[key])
            figures = totals[key]
            for index, value in enumerate((1, same_set, matched, total, equal, same_bytes)):
                figures[index] += int(value)
    measured = {key: tuple(values) for key, values in totals.items()}
    regressions = {key: (measured.get(key), expected) for key, expected in FIGURES.items()
                   if any(m < e for m, e in zip(measured.get(key, (0,) * 6), expected))}
    assert regressions == {}, "measured (fixtures, sets, matched, total, equal, bytes) below the recorded figures"
    # Every channel entry we write (name, id, manifest, manifestHash, selector, needsRollingUpdate, needsPKI, prune)
    # is kops' entry for that addon.
    assert entries_differing == []
