"""The data tables copied from kops, and the hack/gen_*.py scripts that regenerate them.

Always on: the tables agree with each other (every flag field is a v1alpha2
field of the right struct and type, every asset has a sha256, every channel
parses with valid versions), and each generator, run as a maintainer runs it,
reads the small kops-shaped tree in data/kops_mini the way kops' Go does.
With KOPS_SOURCE pointing at a kops checkout, each table is regenerated from
it and must equal the committed one (docs/data-tables.md).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api.generated import schema_data
from ansible_collections.kubeops.kops.plugins.module_utils import semver
from ansible_collections.kubeops.kops.plugins.module_utils.completion.generated import channel_data
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.generated import asset_data
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import flag_data

REPO = pathlib.Path(__file__).resolve().parents[2]
MINI = pathlib.Path(__file__).resolve().parent / "data" / "kops_mini"
# etcd's SHA256SUMS files (not in kops) for gen_asset_data.py --etcd-sums, made up like kops_mini.
ETCD_SUMS_MINI = pathlib.Path(__file__).resolve().parent / "data" / "etcd_sums_mini"
TABLES = {
    "schema_data": "plugins/module_utils/api/generated/schema_data.py",
    "asset_data": "plugins/module_utils/nodeconfig/generated/asset_data.py",
    "channel_data": "plugins/module_utils/completion/generated/channel_data.py",
    "flag_data": "plugins/module_utils/nodeup/generated/flag_data.py",
}
# flag_data table -> the v1alpha2 struct its rows are fields of.
FLAG_STRUCTS = {
    "KUBE_APISERVER": "KubeAPIServerConfig",
    "KUBE_CONTROLLER_MANAGER": "KubeControllerManagerConfig",
    "KUBE_SCHEDULER": "KubeSchedulerConfig",
    "KUBE_PROXY": "KubeProxyConfig",
    "LEADER_ELECTION": "LeaderElectionConfiguration",
    "KUBELET": "KubeletConfigSpec",
}
# flag kind -> the Go types (schema_data spelling) it can format.
KIND_GO_TYPES = {
    "string": {"string"}, "bool": {"bool"}, "int": {"int", "int32", "int64"}, "list": {"[]string"},
    "map": {"map[string]string"}, "duration": {"metav1.Duration"}, "quantity": {"resource.Quantity"},
}
FLAG_OPTIONS = {"always", "empty", "repeat", "include_empty"}
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# semver.org's grammar: MAJOR.MINOR.PATCH, optional -prerelease and +build.
_IDENT = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-%s(?:\.%s)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
                    % (_IDENT, _IDENT))
COMPARATOR = re.compile(r"^(?:>=|<=|>|<|==|=|!=)?(.+)$")


def _hash(text):
    """The made-up sha256 kops_mini gives a file (sha256 of a label)."""
    return hashlib.sha256(text.encode()).hexdigest()


def generate(table, kops, *args, etcd_sums=ETCD_SUMS_MINI):
    """Run hack/gen_<table>.py the way a maintainer does; the finished process."""
    extra = ["--etcd-sums", str(etcd_sums)] if table == "asset_data" and etcd_sums else []
    return subprocess.run([sys.executable, str(REPO / "hack" / ("gen_%s.py" % table)), "--kops", str(kops)] + extra
                          + list(args), capture_output=True, text=True, check=False, timeout=120)


def load(text, name):
    """The names a generated table module defines."""
    namespace = {}
    exec(compile(text, name, "exec"), namespace)  # pylint: disable=exec-used  # our own generator's output
    return namespace


# ---------------------------------------------------------------- the committed tables agree


def test_every_flag_field_is_a_v1alpha2_field_of_its_component():
    problems = []
    for table, struct in FLAG_STRUCTS.items():
        fields = schema_data.STRUCTS[struct]
        for field, flag, kind, options in getattr(flag_data, table):
            where = "flag_data.%s %s" % (table, field)
            if field not in fields:
                problems.append("%s: not a field of v1alpha2 %s" % (where, struct))
                continue
            go_type = fields[field]
            while go_type in schema_data.ALIASES:
                go_type = schema_data.ALIASES[go_type]
            if flag is None:
                if FLAG_STRUCTS.get(kind) != go_type:
                    problems.append("%s: nested table %s, but the field is a %s" % (where, kind, go_type))
            elif go_type not in KIND_GO_TYPES.get(kind, ()):
                problems.append("%s: kind %s cannot format Go type %s" % (where, kind, go_type))
            if set(options) - FLAG_OPTIONS:
                problems.append("%s: unknown options %s" % (where, sorted(set(options) - FLAG_OPTIONS)))
    assert problems == []


def test_flag_tables_are_the_ones_manifests_reads():
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import manifests
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kubelet
    assert set(manifests.TABLES) | {"KUBELET"} == set(FLAG_STRUCTS)
    assert kubelet.FLAGS is flag_data.KUBELET


def test_every_asset_has_a_sha256():
    assert len(asset_data.SHA256) > 100
    assert asset_data.SHA256["https://github.com/etcd-io/etcd/releases/download/v3.6.12/etcd-v3.6.12-linux-amd64.tar.gz"] \
        == "d2564bb50b58e52fbaf3bde4a9561a1d04e20cdc761f795580e4d615d5d41355"
    bad = {url: digest for url, digest in asset_data.SHA256.items()
           if not url.startswith("https://") or not isinstance(digest, str) or not SHA256.match(digest)}
    assert bad == {}


def _range_versions(expression):
    return [COMPARATOR.match(part).group(1) for part in str(expression).replace("||", " ").split()]


@pytest.mark.parametrize("name", sorted(channel_data.CHANNEL_TEXT))
def test_channel_parses_and_its_versions_are_semver(name):
    spec = yaml.safe_load(channel_data.CHANNEL_TEXT[name])["spec"]
    versions = []  # (where, version text)
    for section in ("kubernetesVersions", "kopsVersions"):
        assert spec[section], "channel %s has no %s" % (name, section)
        for index, entry in enumerate(spec[section]):
            where = "%s.%s[%d]" % (name, section, index)
            versions += [(where + ".range", v) for v in _range_versions(entry["range"])]
            versions += [(where + "." + key, str(entry[key])) for key in
                         ("recommendedVersion", "requiredVersion", "kubernetesVersion") if key in entry]
    for index, image in enumerate(spec["images"]):
        assert image["name"] and image["providerID"] and image["architectureID"] in ("amd64", "arm64")
        versions += [("%s.images[%d]" % (name, index), v) for v in _range_versions(image.get("kubernetesVersion", ""))]
    versions += [("%s.packages.%s" % (name, p["name"]), str(p["version"])) for p in spec.get("packages") or []]
    if "cluster" in spec:  # a cluster spec's kubernetesVersion may carry Kubernetes' "v"
        versions.append(("%s.cluster.kubernetesVersion" % name, str(spec["cluster"]["kubernetesVersion"]).lstrip("v")))
    assert len(versions) > 50
    assert [(where, v) for where, v in versions if not SEMVER.match(v)] == []
    for _where, version in versions:  # and the collection's own parser reads each of them
        semver.parse(version)


# ---------------------------------------------------------------- the generators on kops_mini


def test_schema_generator_reads_kops_mini():
    result = generate("schema_data", MINI, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert "(kops 1.99.0-mini.1, commit abcdef1)" in result.stdout
    table = load(result.stdout, "schema_data")
    assert table["STRUCTS"] == {
        # Only what ClusterSpec and InstanceGroupSpec reach (not Cluster, Unreachable, zz_generated's Generated).
        "AlwaysAllowAuthorizationSpec": {},
        "AuthorizationSpec": {"alwaysAllow": "AlwaysAllowAuthorizationSpec"},
        "ClusterSpec": {  # no json:"-" field; the untagged one keeps its Go name; LegacySpec inlined
            "NoJSONTag": "int32", "authorization": "AuthorizationSpec", "channel": "string",
            "cloudLabels": "map[string]string", "kubeAPIServer": "KubeAPIServerConfig",
            "kubeControllerManager": "KubeControllerManagerConfig", "kubeProxy": "KubeProxyConfig",
            "kubeScheduler": "KubeSchedulerConfig", "kubernetesVersion": "string", "masterPublicName": "string",
            "subnets": "[]ClusterSubnetSpec"},
        "ClusterSubnetSpec": {"name": "string", "type": "SubnetType"},
        "InstanceGroupSpec": {"kubelet": "KubeletConfigSpec", "minSize": "int32", "nodeLabels": "map[string]string",
                              "role": "InstanceGroupRole"},
        "KubeAPIServerConfig": {
            "allowPrivileged": "bool", "authorizationWebhookCacheAuthorizedTtl": "metav1.Duration",
            "etcdCaFile": "string", "image": "string", "logLevel": "int32", "oidcRequiredClaim": "[]string",
            "runtimeConfig": "map[string]string", "securePort": "int32", "serviceAccountKeyFile": "[]string"},
        "KubeControllerManagerConfig": {"concurrentRcSyncs": "int32", "kubeAPIQPS": "resource.Quantity",
                                        "leaderElection": "LeaderElectionConfiguration"},
        "KubeProxyConfig": {"ipvsExcludeCidrs": "[]string"},
        "KubeSchedulerConfig": {"leaderElection": "LeaderElectionConfiguration"},
        "KubeletConfigSpec": {"maxPods": "int32", "logLevel": "int32"},
        "LeaderElectionConfiguration": {"leaderElect": "bool"},
    }
    assert table["ALIASES"] == {"InstanceGroupRole": "string", "SubnetType": "string"}  # not KeysetType


def test_flag_generator_keys_rows_by_v1alpha2_names():
    result = generate("flag_data", MINI, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert "KubeAPIServerConfig.InternalOnly (--internal-only) has no v1alpha2 field" in result.stderr
    table = load(result.stdout, "flag_data")
    assert table["KUBE_APISERVER"] == (
        ("logLevel", "v", "int", {"always": True, "empty": "0"}),
        ("securePort", "secure-port", "int", {"always": True}),
        ("etcdCaFile", "etcd-cafile", "string", {}),
        ("authorizationWebhookCacheAuthorizedTtl", "authorization-webhook-cache-authorized-ttl", "duration", {}),
        ("oidcRequiredClaim", "oidc-required-claim", "list", {"repeat": True}),
        ("serviceAccountKeyFile", "service-account-key-file", "list", {"repeat": True}),
        ("runtimeConfig", "runtime-config", "map", {}),
        ("allowPrivileged", "allow-privileged", "bool", {}),
    )
    assert table["KUBE_CONTROLLER_MANAGER"] == (
        ("concurrentRcSyncs", "concurrent-rc-syncs", "int", {}),
        ("kubeAPIQPS", "kube-api-qps", "quantity", {}),
        ("leaderElection", None, "LEADER_ELECTION", {}),
    )
    assert table["KUBE_SCHEDULER"] == (("leaderElection", None, "LEADER_ELECTION", {}),)
    assert table["KUBE_PROXY"] == (("ipvsExcludeCidrs", "ipvs-exclude-cidrs", "list", {}),)
    assert table["LEADER_ELECTION"] == (("leaderElect", "leader-elect", "bool", {}),)
    # maxPods is flag:"-" (the kubelet's config file), nodeLabels has no v1alpha2 field here.
    assert table["KUBELET"] == (("logLevel", "v", "int", {"empty": "0"}),)
    assert "KubeletConfigSpec.NodeLabels (--node-labels) has no v1alpha2 field" in result.stderr
    assert "kops 1.99.0-mini.1, commit abcdef1" in result.stdout


def test_asset_generator_keeps_what_nodes_download():
    result = generate("asset_data", MINI)
    assert result.returncode == 0, result.stderr
    assert load(result.stdout, "asset_data")["SHA256"] == {
        "https://dl.k8s.io/release/v1.99.0/bin/linux/amd64/kubectl": _hash("amd64-kubectl"),
        "https://dl.k8s.io/release/v1.99.0/bin/linux/amd64/kubelet": _hash("amd64-kubelet"),
        "https://dl.k8s.io/release/v1.99.0/bin/linux/arm64/kubelet": _hash("arm64-kubelet"),
        "https://github.com/containerd/containerd/releases/download/v2.9.0/containerd-2.9.0-linux-arm64.tar.gz":
            _hash("containerd-arm64"),
        "https://github.com/opencontainers/runc/releases/download/v1.9.0/runc.amd64": _hash("runc.amd64"),
        # etcd: linux amd64/arm64 tarballs of the versions kops supports (3.9.0-3.9.1, 3.10.0) that have sums.
        "https://github.com/etcd-io/etcd/releases/download/v3.9.0/etcd-v3.9.0-linux-amd64.tar.gz":
            _hash("etcd-3.9.0-amd64"),
        "https://github.com/etcd-io/etcd/releases/download/v3.9.0/etcd-v3.9.0-linux-arm64.tar.gz":
            _hash("etcd-3.9.0-arm64"),
        "https://github.com/etcd-io/etcd/releases/download/v3.9.1/etcd-v3.9.1-linux-amd64.tar.gz":
            _hash("etcd-3.9.1-amd64"),
    }
    assert "no SHA256SUMS in %s for etcd 3.10.0" % ETCD_SUMS_MINI in result.stderr


def test_asset_generator_needs_etcds_sums_and_refuses_a_bad_one(tmp_path):
    result = generate("asset_data", MINI, etcd_sums=None)
    assert result.returncode == 1 and "give --etcd-sums DIR" in result.stderr
    sums = tmp_path / "sums"
    shutil.copytree(ETCD_SUMS_MINI, sums)
    path = sums / "v3.9.1" / "SHA256SUMS"
    path.write_text("not-a-hash  etcd-v3.9.1-linux-amd64.tar.gz\n")
    result = generate("asset_data", MINI, etcd_sums=sums)
    assert result.returncode == 1 and result.stdout == ""
    assert "v3.9.1/SHA256SUMS:1: etcd-v3.9.1-linux-amd64.tar.gz has sha256 'not-a-hash'" in result.stderr


def test_channel_generator_copies_byte_for_byte():
    result = generate("channel_data", MINI, "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert "commit abcdef1)" in result.stdout
    assert load(result.stdout, "channel_data")["CHANNEL_TEXT"] == {
        name: (MINI / "channels" / name).read_text() for name in ("stable", "alpha")}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_generated_table_is_a_lint_clean_module(table, tmp_path):
    target = tmp_path / ("%s.py" % table)
    result = generate(table, MINI, "--commit", "abcdef1234", "--write", str(target))
    assert result.returncode == 0 and result.stdout == "", result.stderr
    text = target.read_text()
    assert text.startswith("# -*- coding: utf-8 -*-\n# Copyright: kubeops.kops contributors\n")
    assert max(len(line) for line in text.splitlines()) <= 160
    load(text, table)


def _mini_copy(tmp_path):
    copy = tmp_path / "kops"
    shutil.copytree(MINI, copy)
    return copy


def test_a_bad_asset_hash_is_refused_naming_the_file(tmp_path):
    kops = _mini_copy(tmp_path)
    path = kops / "pkg/assets/assetdata/k8s-1.99.yaml"
    path.write_text(path.read_text().replace(_hash("amd64-kubelet"), "not-a-hash"))
    result = generate("asset_data", kops)
    assert result.returncode == 1 and result.stdout == ""
    assert "k8s-1.99.yaml: https://dl.k8s.io/release/v1.99.0/bin/linux/amd64/kubelet has sha256 'not-a-hash'" \
        in result.stderr


def test_an_unreadable_struct_line_is_refused(tmp_path):
    kops = _mini_copy(tmp_path)
    path = kops / "pkg/apis/kops/v1alpha2/instancegroup.go"
    path.write_text(path.read_text().replace("MinSize     *int32", "MinSize, MaxSize *int32"))
    result = generate("schema_data", kops, "--commit", "abcdef1")
    assert result.returncode == 1
    assert "cannot read this Go struct line" in result.stderr and "MinSize, MaxSize" in result.stderr


def test_without_git_the_commit_must_be_given(tmp_path):
    kops = _mini_copy(tmp_path)
    result = generate("schema_data", kops)
    assert result.returncode == 1
    assert "not a git checkout; say which kops commit it is with --commit" in result.stderr


# ---------------------------------------------------------------- against a real kops checkout


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"),
                    reason="KOPS_SOURCE is not set: point it at a kops checkout to compare the tables with kops "
                           "(docs/data-tables.md)")
@pytest.mark.parametrize("table", sorted(TABLES))
def test_committed_table_is_what_kops_source_generates(table):
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    if table == "asset_data" and not os.environ.get("ETCD_SUMS"):
        pytest.skip("ETCD_SUMS is not set: asset_data also holds etcd's release hashes, from a directory of etcd's "
                    "SHA256SUMS files (docs/data-tables.md)")
    result = generate(table, os.environ["KOPS_SOURCE"], *args, etcd_sums=os.environ.get("ETCD_SUMS"))
    assert result.returncode == 0, result.stderr
    committed = (REPO / TABLES[table]).read_text()
    diff = list(difflib.unified_diff(committed.splitlines(), result.stdout.splitlines(), TABLES[table],
                                     "hack/gen_%s.py --kops %s" % (table, os.environ["KOPS_SOURCE"]), lineterm=""))
    assert diff == [], "the committed table differs from kops (first 40 lines of the diff):\n" + "\n".join(diff[:40])


# ---------------------------------------------------------------- drift, on every run (no kops checkout needed)
# What CI has of kops is the data kept under ../shared/conformance/kops (tests/conformance/kops_fixtures.py) and
# the tables themselves: the channels are compared with kops' own files there; every other table must be exactly
# what its generator's writer makes of the table's own data, so a hand edit, or a writer changed without the
# tables being regenerated, fails here.  The comparison with a full kops tree stays opt-in (KOPS_SOURCE, above).

def _hack(name):
    """hack/<name>.py as a module (the generators are scripts, not a package)."""
    import importlib.util
    sys.path.insert(0, str(REPO / "hack"))
    try:
        spec = importlib.util.spec_from_file_location("hack_" + name, REPO / "hack" / ("%s.py" % name))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "hack"))


def _source(table):
    """(committed text, kops version, commit) of a table, from its own header."""
    text = (REPO / TABLES[table]).read_text()
    match = re.search(r"kops ([0-9][\w.-]*), commit ([0-9a-f]{7})", text) or re.search(r"commit ([0-9a-f]{7})", text)
    assert match, "%s names no kops commit in its header" % TABLES[table]
    return text, (match.group(1) if match.lastindex == 2 else None), match.group(match.lastindex)


def test_channel_table_is_what_kops_channels_in_the_shared_fixtures_generate(tmp_path):
    from tests.conformance.kops_fixtures import ROOT
    committed, _version, commit = _source("channel_data")
    tree = tmp_path / "kops"
    shutil.copytree(ROOT / "channels", tree / "channels")
    result = generate("channel_data", tree, "--commit", commit)
    assert result.returncode == 0, result.stderr
    diff = list(difflib.unified_diff(committed.splitlines(), result.stdout.splitlines(), TABLES["channel_data"],
                                     "kops channels (%s)" % (ROOT / "channels"), lineterm=""))
    assert diff == [], "\n".join(diff[:40])


def test_schema_table_is_what_its_generator_writes_of_it():
    committed, version, commit = _source("schema_data")
    assert _hack("gen_schema_data").render(schema_data.STRUCTS, schema_data.ALIASES, version, commit) == committed


def test_flag_table_is_what_its_generator_writes_of_it():
    committed, version, commit = _source("flag_data")
    gen = _hack("gen_flag_data")
    names = re.findall(r"^([A-Z_]+) = \($", committed, re.M)
    assert set(names) == set(FLAG_STRUCTS)
    text = gen.HEADER % {"version": version, "commit": commit}
    for name in names:
        text += "%s = (\n" % name + "".join("    %r,\n" % (row,) for row in getattr(flag_data, name)) + ")\n"
    assert text == committed


def test_asset_table_is_what_its_generator_writes_of_it():
    committed = (REPO / TABLES["asset_data"]).read_text()
    gen = _hack("gen_asset_data")
    lines = [gen.HEADER + "SHA256 = {"]
    lines += ["    %s:\n        %s," % (json.dumps(url), json.dumps(digest)) for url, digest in sorted(asset_data.SHA256.items())]
    assert "\n".join(lines + ["}"]) + "\n" == committed


def test_a_hand_edit_of_a_table_is_caught():
    """The check above fails on a changed row: one hash edited in a copy of the table."""
    gen = _hack("gen_asset_data")
    url = sorted(asset_data.SHA256)[0]
    edited = dict(asset_data.SHA256, **{url: "0" * 64})
    lines = [gen.HEADER + "SHA256 = {"] + ["    %s:\n        %s," % (json.dumps(u), json.dumps(d))
                                           for u, d in sorted(edited.items())]
    assert "\n".join(lines + ["}"]) + "\n" != (REPO / TABLES["asset_data"]).read_text()


# ---------------------------------------------------------------- generated apart from hand-written code

MODULE_UTILS = REPO / "plugins" / "module_utils"
# What a generator's usage line says it writes: "--write <path>" or "> <path>".
WRITES = re.compile(r"(?:--write|>) (plugins/module_utils/[\w/]+\.py)")


def _generated_files():
    return sorted(str(p.relative_to(REPO)) for p in MODULE_UTILS.glob("*/generated/*.py") if p.name != "__init__.py")


def _written_by_generators():
    """{module_utils file: the hack/gen_*.py that writes it}, from each generator's usage lines (gen_crds.py: one
    data module per addon it lists, named as its --module says)."""
    written = {}
    for script in sorted((REPO / "hack").glob("gen_*.py")):
        for path in WRITES.findall(script.read_text()):
            written[path] = script.name
    crds = [sys.executable, str(REPO / "hack" / "gen_crds.py")]
    for addon in subprocess.run(crds + ["--list"], capture_output=True, text=True, check=True).stdout.split():
        module = subprocess.run(crds + ["--module", addon], capture_output=True, text=True, check=True).stdout.strip()
        written["plugins/module_utils/addons/generated/%s" % module] = "gen_crds.py"
    return written


def test_every_generated_table_is_in_a_generated_package_and_only_those():
    """The layout says which code is generated: each layer's generated/ holds exactly what hack/gen_*.py write."""
    written = _written_by_generators()
    assert sorted(written) == _generated_files()


def test_every_generated_table_names_its_generator():
    for path, script in _written_by_generators().items():
        header = (REPO / path).read_text()[:2000]
        assert "hack/%s" % script in header, "%s: its header does not name hack/%s" % (path, script)


def test_no_hand_written_module_says_it_is_generated():
    """A module outside generated/ whose docstring says it is generated belongs in its layer's generated/."""
    import ast
    found = []
    for path in sorted(MODULE_UTILS.rglob("*.py")):
        if "generated" in path.relative_to(MODULE_UTILS).parts:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if re.search(r"\b[Gg]enerated by hack/gen_", doc):
            found.append(str(path.relative_to(REPO)))
    assert found == []
