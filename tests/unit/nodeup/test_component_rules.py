"""Our node's files held to the kubelet's and containerd's start-up rules, read from their source.

No real kubelet or containerd runs here: nodeup/component_rules.py applies the rules hack/gen_k8s_rules.py read
from Kubernetes' and containerd's own source (docs/data-tables.md) to what our node side writes for every
instance group of every kops update_cluster fixture.  The negative tests prove each rule refuses what the
component refuses; the drift test regenerates the table from the sources (K8S_SOURCE).
"""

from __future__ import annotations

import difflib
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import component_rules, files
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.generated import component_rules_data

from tests.conformance import kops_fixtures
from tests.unit.nodeconfig.test_config import _completed, _keysets

REPO = pathlib.Path(__file__).resolve().parents[3]
DATA = "plugins/module_utils/nodeup/generated/component_rules_data.py"
GOLDEN = kops_fixtures.ROOT / "nodeup"
NODE = {"name": "i-0123456789abcdef0", "address": None}
FIXTURES = sorted(path.parent.name for path in kops_fixtures.UPDATE_CLUSTER.glob("*/in-v1alpha2.yaml"))
KUBELET_CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def _groups():
    """(fixture, instance group) of every group a node is made for (a bastion runs no kubelet)."""
    out = []
    for name in FIXTURES:
        _completed_cluster, groups = _completed(name)
        out.extend((name, objects.name_of(group)) for group in groups
                   if group["spec"].get("role") != "Bastion")
    return out


GROUPS = _groups()


def _node_files(name, group_name):
    completed, groups = _completed(name)
    group = next(g for g in groups if objects.name_of(g) == group_name)
    document = nodeup_config.build_config(completed, group, _keysets(completed), completed["spec"]["configBase"])
    written = {node_file.path: node_file.content.decode("utf-8") for node_file in
               files.node_files(document, NODE, bootstrap_token="abcdef.0123456789abcdef")}
    return document, written


@pytest.mark.parametrize("name, group", GROUPS, ids=["%s:%s" % pair for pair in GROUPS])
def test_the_kubelet_and_containerd_would_start_with_our_files(name, group):
    document, written = _node_files(name, group)
    assert component_rules.KUBELET_ENV in written and component_rules.CONTAINERD_CONFIG in written
    violations = component_rules.check_node_files(written, document["KubernetesVersion"],
                                                  document["containerdConfig"]["version"])
    if violations:
        pytest.fail("%s %s (Kubernetes %s, containerd %s): %d violation(s) of the components' start-up rules:\n%s"
                    % (name, group, document["KubernetesVersion"], document["containerdConfig"]["version"],
                       len(violations), "\n".join(violations)), pytrace=False)


def test_every_fixture_group_is_checked():
    # 9 fixtures, 24 groups that make a node (the bastions make none): the groups above are not silently few.
    assert len(FIXTURES) >= 9 and len(GROUPS) >= 24


def test_the_fixture_test_reads_every_command_line():
    # The flag check sees the kubelet's sysconfig and the four static pods of a control-plane node.
    name, group = next(pair for pair in GROUPS if pair[1].startswith("master"))
    _document, written = _node_files(name, group)
    commands = [component_rules.static_pod_command(yaml.safe_load(text)) for path, text in written.items()
                if path.startswith(component_rules.MANIFESTS)]
    assert sorted(found[0] for found in commands if found) == [
        "kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler"]
    assert all(len(found[1]) > 5 for found in commands if found)
    assert len(component_rules.kubelet_words(written[component_rules.KUBELET_ENV])) > 5


KOPS_GOLDEN_PODS = sorted(path.name for path in (GOLDEN / "golden").iterdir() if (path / "cluster.yaml").exists() and
                          any("/etc/kubernetes/manifests/" in tasks.read_text() for tasks in path.glob("tasks-*.yaml")))


@pytest.mark.parametrize("case", KOPS_GOLDEN_PODS)
def test_kops_own_static_pods_pass(case):
    # kops' nodeup goldens (Kubernetes 1.33 and 1.35): every flag kops itself passes is registered.
    version = re.search(r"kubernetesVersion: \S*?v?(1\.\d+\.\d+)", (GOLDEN / "golden" / case / "cluster.yaml").read_text()).group(1)
    checked = 0
    for tasks in sorted((GOLDEN / "golden" / case).glob("tasks-*.yaml")):
        for task in yaml.safe_load_all(tasks.read_text()):
            if task and str(task.get("path", "")).startswith(component_rules.MANIFESTS):
                found = component_rules.static_pod_command(yaml.safe_load(task["contents"]))
                if found:
                    checked += 1
                    assert component_rules.check_flags(found[0], found[1], version) == [], (tasks.name, found[0])
    assert checked >= 1


def test_every_kops_golden_with_static_pods_is_checked():
    assert len(KOPS_GOLDEN_PODS) >= 8 and "minimal" in KOPS_GOLDEN_PODS


# --- each rule refuses what the component refuses -----------------------------------------------------------

@pytest.mark.parametrize("labels", [
    "node-role.kubernetes.io/node=",            # kubernetes.io namespace, not the kubelet's
    "node-role.kubernetes.io/control-plane=",
    "kops.k8s.io/instancegroup=nodes",          # k8s.io suffix counts as Kubernetes' own
    "kubernetes.io/role=node",
    "example.com/ok=yes,kubernetes.io/made-up=x",
    "bad key=x",                                # not a qualified name
    "a/b/c=d",                                  # two slashes
    "Example.COM/x=y",                          # prefix not a DNS subdomain
    "example.com/x=" + "v" * 64,                # value over 63 characters
    "example.com/x=-bad",                       # value must start alphanumeric
])
def test_node_labels_the_kubelet_refuses(labels):
    for version in component_rules_data.KUBERNETES_VERSIONS:
        problems = component_rules.check_node_labels(labels, version)
        assert len(problems) == 1, problems
        assert problems[0].startswith("--node-labels: ") and version in problems[0]


def test_node_labels_the_kubelet_accepts():
    labels = ",".join(["node.kubernetes.io/instance-type=m5.large", "kubernetes.io/hostname=h", "kubernetes.io/arch=amd64",
                       "topology.kubernetes.io/zone=us-test-1a", "kubelet.kubernetes.io/x=", "a.node.kubernetes.io/b=c",
                       "node.kubernetes.io/exclude-from-external-load-balancers=", "example.com/role=worker", "plain=1",
                       "beta.kubernetes.io/os=linux"])
    for version in component_rules_data.KUBERNETES_VERSIONS:
        assert component_rules.check_node_labels(labels, version) == []


@pytest.mark.parametrize("config, wanted", [
    ({"clusterDns": ["100.64.0.10"]}, "clusterDns: unknown field of KubeletConfiguration"),
    ({"authentication": {"x509": {"clientCaFile": "/ca.crt"}}},
     "authentication.x509.clientCaFile: unknown field of KubeletX509Authentication"),
    ({"logging": {"format": "text", "flush": 5}}, "logging.flush: unknown field of LoggingConfiguration"),
    ({"clusterDNS": "100.64.0.10"}, "clusterDNS: str, not a list"),
    ({"maxPods": "110"}, "maxPods: '110' is not a int"),
    ({"maxPods": 110.5}, "maxPods: 110.5 is not a int"),
    ({"shutdownGracePeriod": 30}, "shutdownGracePeriod: 30 is not a duration"),
    ({"shutdownGracePeriod": "30 seconds"}, "shutdownGracePeriod: '30 seconds' is not a duration"),
    ({"featureGates": {"ImageVolume": "true"}}, "featureGates[ImageVolume]: 'true' is not a bool"),
    ({"registerWithTaints": [{"key": "a", "effect": "NoSchedule", "value": 1}]},
     "registerWithTaints[0].value: 1 is not a string"),
    ({"authentication": "webhook"}, "authentication: str, not an object (KubeletAuthentication)"),
    ({"kubeReserved": {"cpu": 100}}, "kubeReserved[cpu]: 100 is not a string"),
])
def test_kubelet_configuration_the_kubelet_refuses(config, wanted):
    for version in component_rules_data.KUBERNETES_VERSIONS:
        problems = component_rules.check_kubelet_config(dict(KUBELET_CONFIG, **config), version)
        assert len(problems) == 1 and wanted in problems[0], problems
        assert "types.go %s" % version in problems[0]


def test_kubelet_configuration_kinds_the_kubelet_accepts():
    config = dict(KUBELET_CONFIG, clusterDNS=["100.64.0.10"], maxPods=110, shutdownGracePeriod="1m30s",
                  featureGates={"ImageVolume": True}, logging={"flushFrequency": 5000000000, "verbosity": 2},
                  registerWithTaints=[{"key": "a", "effect": "NoSchedule"}], evictionHard={"memory.available": "100Mi"},
                  authentication={"x509": {"clientCAFile": "/srv/kubernetes/ca.crt"}}, cpuCFSQuotaPeriod="100ms")
    for version in component_rules_data.KUBERNETES_VERSIONS:
        assert component_rules.check_kubelet_config(config, version) == []


def test_kubelet_configuration_fields_are_per_version():
    tables = component_rules_data.KUBELET_CONFIGURATION
    oldest, newest = component_rules_data.KUBERNETES_VERSIONS[0], component_rules_data.KUBERNETES_VERSIONS[-1]
    added = sorted(set(dict(tables[newest]["KubeletConfiguration"])) - set(dict(tables[oldest]["KubeletConfiguration"])))
    # kubelet.config.k8s.io/v1beta1 gained userNamespaces in 1.33 (k8s.io/kubelet config/v1beta1/types.go).
    assert "userNamespaces" in added
    config = dict(KUBELET_CONFIG, userNamespaces={"idsPerPod": 65536})
    assert component_rules.check_kubelet_config(config, "1.33.0") == []
    assert component_rules.check_kubelet_config(config, "v1.32.4") == [
        "KubeletConfiguration userNamespaces: unknown field of KubeletConfiguration "
        "[k8s.io/kubelet config/v1beta1/types.go 1.32]"]


def test_kops_own_kubelet_config_passes():
    config = yaml.safe_load(_golden("kubelet/featuregates", "/var/lib/kubelet/kubelet.conf"))
    for version in component_rules_data.KUBERNETES_VERSIONS:
        assert component_rules.check_kubelet_config(config, version) == []


@pytest.mark.parametrize("version", ["1.31.0", "v1.37.0", "1.9", "latest", None])
def test_a_version_without_a_table_is_refused_by_name(version):
    with pytest.raises(component_rules.RulesUnknown) as raised:
        component_rules.check_kubelet_config(KUBELET_CONFIG, version)
    assert str(version) in str(raised.value) or "cannot read a version" in str(raised.value)
    with pytest.raises(component_rules.RulesUnknown):
        component_rules.check_node_labels("a=b", version)


def _golden(case, path):
    for task in yaml.safe_load_all((GOLDEN / case / "tasks.yaml").read_text()):
        if task and task.get("path") == path:
            return task["contents"]
    raise AssertionError("%s has no %s" % (case, path))


@pytest.mark.parametrize("case, containerd", [("containerdbuilder/simple", "2.3.4"), ("containerdbuilder/flatcar", "2.1.6")])
def test_kops_own_containerd_config_passes(case, containerd):
    assert component_rules.check_containerd_config(_golden(case, "/etc/containerd/config.toml"), containerd) == []


def test_kops_config_additions_land_on_keys_containerd_ignores():
    # kops' own test ConfigAdditions (containerdbuilder/complex) write a `containerd` table under the 2.x
    # io.containerd.grpc.v1.cri plugin, whose ServerConfig has no such key: containerd logs and ignores it.
    assert component_rules.check_containerd_config(_golden("containerdbuilder/complex", "/etc/containerd/config.toml"),
                                                   "2.3.4") == [
        'containerd config.toml (version 4) plugins."io.containerd.grpc.v1.cri".containerd: unknown key of '
        'ServerConfig, ignored by containerd [containerd 2.3.4 config structs]']


V2 = '''version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = true
'''
V3 = '''version = 3
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "registry.k8s.io/pause:3.10.1"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
'''


@pytest.mark.parametrize("text, containerd, wanted", [
    (V2.replace("sandbox_image", "sandbox_imag"), "1.7.20",
     'plugins."io.containerd.grpc.v1.cri".sandbox_imag: unknown key of PluginConfig'),
    (V2.replace("sandbox_image", "sandbox_imag"), "2.3.4",      # migrated: still version 2's keys
     'plugins."io.containerd.grpc.v1.cri".sandbox_imag: unknown key of PluginConfig'),
    (V3.replace("pinned_images]\n  sandbox", "pinned_images]\n  sandbox = 1\n  x"), "2.1.6",
     "pinned_images.sandbox: 1 is not a string"),
    # version 3 moved sandbox_image out of the CRI runtime (to the images plugin's pinned_images.sandbox)
    (V3 + '[plugins."io.containerd.cri.v1.runtime"]\n  sandbox_image = "x"\n', "2.3.4",
     'plugins."io.containerd.cri.v1.runtime".sandbox_image: unknown key of RuntimeConfig'),
    (V3 + '[plugins."io.containerd.cri.v1.runtime"]\n  enable_selinux = "yes"\n', "2.0.1",
     "enable_selinux: 'yes' is not a bool"),
    (V3.replace("version = 3", "version = 4"), "2.1.6", "containerd 2.1.9 refuses config version 4"),
    (V3, "1.7.20", "containerd 1.7.34 refuses config version 3"),
    ("version = 3\nroots = '/var/lib/containerd'\n", "2.2.0", "roots: unknown top-level key"),
    ('version = 3\n[plugins."io.containerd.made.up"]\n  a = 1\n', "2.2.0",
     'plugins."io.containerd.made.up": a plugin the rules have no table for'),
])
def test_containerd_config_keys_containerd_does_not_have(text, containerd, wanted):
    problems = component_rules.check_containerd_config(text, containerd)
    assert len(problems) == 1 and wanted in problems[0], problems


def test_containerd_configs_containerd_reads():
    assert component_rules.check_containerd_config(V2, "1.7.20") == []
    assert component_rules.check_containerd_config(V2, "2.3.4") == []
    assert component_rules.check_containerd_config(V3, "2.0.0") == []
    assert component_rules.check_containerd_config(V3.replace("version = 3", "version = 4"), "2.3.4") == []


@pytest.mark.parametrize("containerd", ["1.6.30", "3.0.0", "", None])
def test_a_containerd_without_a_table_is_refused_by_name(containerd):
    with pytest.raises(component_rules.RulesUnknown):
        component_rules.check_containerd_config(V3, containerd)


def test_node_files_name_the_file_and_rule():
    files_ = {
        component_rules.KUBELET_ENV: 'KUBELET_ARGS="--config=/var/lib/kubelet/kubelet-config.yaml '
                                     '--node-labels=node-role.kubernetes.io/node=,example.com/a=b"\n',
        "/var/lib/kubelet/kubelet-config.yaml": '{"apiVersion": "kubelet.config.k8s.io/v1beta1", '
                                                '"kind": "KubeletConfiguration", "maxPod": 3}',
        component_rules.CONTAINERD_CONFIG: V2.replace("runtime_type", "runtime_typ"),
    }
    lines = component_rules.check_node_files(files_, "v1.34.1", "2.3.4")
    assert [line.split(":")[0] for line in lines] == [
        "/etc/sysconfig/kubelet", "/var/lib/kubelet/kubelet-config.yaml", "/etc/containerd/config.toml"]
    assert "node-role.kubernetes.io/node" in lines[0] and "maxPod" in lines[1] and ".runtime_typ:" in lines[2]
    del files_["/var/lib/kubelet/kubelet-config.yaml"]
    assert "a file the node does not write" in component_rules.check_node_files(files_, "1.34", "2.3.4")[1]


# --- command-line flags --------------------------------------------------------------------------------------

@pytest.mark.parametrize("component, flag, accepted, refused", [
    # kube-apiserver dropped its cloud provider flags in 1.33 (they remain in 1.32, deprecated)
    ("kube-apiserver", "--cloud-provider=external", ("1.32",), ("1.33", "1.34", "1.35", "1.36")),
    ("kube-apiserver", "--cloud-config=/etc/kubernetes/cloud.config", ("1.32",), ("1.33", "1.34", "1.35", "1.36")),
    # the kubelet's deprecated --pod-infra-container-image was removed in 1.35, --register-schedulable in 1.34
    ("kubelet", "--pod-infra-container-image=registry.k8s.io/pause:3.10", ("1.32", "1.33", "1.34"), ("1.35", "1.36")),
    ("kubelet", "--register-schedulable=true", ("1.32", "1.33"), ("1.34", "1.35", "1.36")),
    # added later: refused before
    ("kube-scheduler", "--tls-curve-preferences=X25519", ("1.36",), ("1.32", "1.33", "1.34", "1.35")),
    ("kube-controller-manager", "--concurrent-device-taint-eviction-syncs=5", ("1.35", "1.36"),
     ("1.32", "1.33", "1.34")),
])
def test_a_flag_is_checked_per_version(component, flag, accepted, refused):
    for version in accepted:
        assert component_rules.check_flags(component, [flag], version + ".2") == [], version
    name = flag.split("=")[0]
    for version in refused:
        problems = component_rules.check_flags(component, ["--v=2", flag, "value"], "v%s.0" % version)
        assert len(problems) == 1, problems
        assert problems[0].startswith("%s %s: unknown to %s %s, which refuses to start: " % (component, name, component, version))
        assert ("removed in" in problems[0]) == (version > accepted[-1]), problems[0]
        assert "Kubernetes v%s." % version in problems[0] and "openshift/microshift" in problems[0]


@pytest.mark.parametrize("component", component_rules.FLAG_COMPONENTS)
def test_an_unknown_flag_is_refused(component):
    for version in component_rules_data.FLAG_VERSIONS:
        assert component_rules.check_flags(component, ["--made-up-flag=1", "-x"], version) == [
            "%s --made-up-flag: unknown to %s %s, which refuses to start: not a flag of %s in any of %s [%s]" % (
                component, component, version, component, ", ".join(component_rules_data.FLAG_VERSIONS),
                component_rules.flag_source(version)),
            "%s --x: unknown to %s %s, which refuses to start: not a flag of %s in any of %s [%s]" % (
                component, component, version, component, ", ".join(component_rules_data.FLAG_VERSIONS),
                component_rules.flag_source(version))]
        # every component takes the logging and version flags (component-base)
        assert component_rules.check_flags(component, ["--v=2", "--version=false", "--help"], version) == []


def test_flag_names_are_normalized_as_the_components_do():
    # component-base's WordSepNormalizeFunc reads "_" as "-"
    assert component_rules.check_flags("kube-apiserver", ["--etcd_servers=https://127.0.0.1:4001"], "1.34") == []
    assert component_rules.check_flags("kubelet", ["--max_pods=110"], "1.36") == []


def test_openshift_flags_are_not_in_the_tables():
    # the Kubernetes tree comes from openshift/microshift; OpenShift's own flags are left out (OPENSHIFT_CARRIES)
    assert "openshift-config" not in component_rules_data.FLAGS["kube-apiserver"]
    assert "openshift-config" not in component_rules_data.FLAGS["kube-controller-manager"]
    assert "unsupported-kube-api-over-localhost" not in component_rules_data.FLAGS["kube-scheduler"]
    assert "max-housekeeping-interval" not in component_rules_data.FLAGS["kubelet"]
    assert "send-retry-after-while-not-ready-once" not in component_rules_data.FLAGS["kube-apiserver"]
    problems = component_rules.check_flags("kube-apiserver", ["--openshift-config=/etc/x"], "1.36")
    assert len(problems) == 1 and "not a flag of kube-apiserver" in problems[0]


def test_deprecated_flags_are_accepted_and_named():
    assert component_rules.check_flags("kube-apiserver", ["--apiserver-count=3"], "1.35") == []
    assert component_rules.deprecated_flags("kube-apiserver", ["--apiserver-count=3", "--v=2"], "1.35") == [
        "kube-apiserver --apiserver-count: deprecated in 1.35: apiserver-count is deprecated and will be removed in a "
        "future version. [%s]" % component_rules.flag_source("1.35")]


@pytest.mark.parametrize("version", ["1.31.4", "v1.37.0", None])
def test_a_version_without_a_flag_table_is_refused_by_name(version):
    with pytest.raises(component_rules.RulesUnknown):
        component_rules.check_flags("kubelet", ["--v=2"], version)
    with pytest.raises(component_rules.RulesUnknown):
        component_rules.check_flags("kube-made-up", ["--v=2"], "1.33")


def test_static_pod_flags_name_the_manifest():
    manifest = {"spec": {"containers": [{"command": ["/go-runner"], "args": [
        "--log-file=/var/log/kube-scheduler.log", "--also-stdout", "/usr/local/bin/kube-scheduler",
        "--kubeconfig=/var/lib/kube-scheduler/kubeconfig", "--leader-elect=true", "--made-up=1"]}]}}
    files_ = {component_rules.MANIFESTS + "kube-scheduler.manifest": yaml.safe_dump(manifest),
              component_rules.KUBELET_ENV: 'DAEMON_ARGS="--v=2 --pod-infra-container-image=x --kubeconfig=/k"\n'}
    lines = component_rules.check_node_files(files_, "1.35.1")
    assert [line.split(" --")[0] for line in lines] == [
        "/etc/sysconfig/kubelet: kubelet", "/etc/kubernetes/manifests/kube-scheduler.manifest: kube-scheduler"]
    assert "--pod-infra-container-image: unknown to kubelet 1.35" in lines[0] and "--made-up:" in lines[1]
    # go-runner's own flags (before the binary) are not the component's
    assert component_rules.static_pod_command(manifest)[1][0] == "--kubeconfig=/var/lib/kube-scheduler/kubeconfig"


# --- the table against its generator --------------------------------------------------------------------------

def test_tables_cover_kops_supported_versions():
    # kops 1.37 supports Kubernetes from 1.32 (upup/pkg/fi/cloudup/apply_cluster.go OldestSupportedKubernetesVersion)
    # and installs containerd 2.3.4 by default (pkg/model/components/containerd.go).
    assert component_rules_data.KUBERNETES_VERSIONS == ("1.32", "1.33", "1.34", "1.35", "1.36")
    assert {"1.7", "2.3"} <= set(component_rules_data.CONTAINERD_VERSIONS)
    assert component_rules_data.FLAG_VERSIONS == component_rules_data.KUBERNETES_VERSIONS
    assert set(component_rules_data.FLAGS) == set(component_rules.FLAG_COMPONENTS)
    for version in component_rules_data.KUBERNETES_VERSIONS:
        assert component_rules_data.SOURCES[version], version
        assert component_rules_data.SOURCES["flags " + version], version
        assert "KubeletConfiguration" in component_rules_data.KUBELET_CONFIGURATION[version]


def test_generator_reads_go_comments_and_literals():
    sys.path.insert(0, str(REPO / "hack"))
    try:
        import gen_k8s_rules  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    text = ('type A struct {\n\t// a glob "/etc/*.conf" in a comment\n\tB string `json:"b"` // trailing */\n'
            '\t/* a block\n\t   comment */\n\tC map[string][]int32 `json:"c,omitempty"`\n}\n')
    assert gen_k8s_rules.strip_comments(text).count("\n") == text.count("\n")
    path = REPO / "build" / "gen_k8s_rules_test.go"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    go_file = gen_k8s_rules.GoFile(path)
    assert [field[:2] for field in go_file.fields("A")] == [("B", "string"), ("C", "map[string][]int32")]
    resolver = gen_k8s_rules.Resolver({"p": go_file}, {}, "json")
    resolver.struct("p", "A")
    assert resolver.structs == {"A": (("b", "string"), ("c", "map[string][]int"))}


@pytest.mark.skipif(not os.environ.get("K8S_SOURCE"),
                    reason="K8S_SOURCE is not set: point it at the assembled Kubernetes / containerd sources "
                           "(docs/data-tables.md) to regenerate the component rules and compare")
def test_component_rules_match_their_sources():
    result = subprocess.run([sys.executable, str(REPO / "hack" / "gen_k8s_rules.py"), "--source",
                             os.environ["K8S_SOURCE"]], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    committed = (REPO / DATA).read_text(encoding="utf-8")
    if result.stdout != committed:
        diff = "\n".join(difflib.unified_diff(committed.splitlines(), result.stdout.splitlines(), DATA,
                                              "hack/gen_k8s_rules.py --source %s" % os.environ["K8S_SOURCE"],
                                              lineterm=""))
        pytest.fail("the component rules differ from their sources:\n%s" % diff[:20000], pytrace=False)


def test_generator_reads_flag_registrations(tmp_path):
    sys.path.insert(0, str(REPO / "hack"))
    try:
        import gen_k8s_rules  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    package = tmp_path / "k8s.io" / "x" / "opts"
    package.mkdir(parents=True)
    (package / "opts.go").write_text(
        'package opts\n\nimport (\n\t"fmt"\n\n\t"github.com/spf13/pflag"\n)\n\nconst nameFlag = "name"\n\n'
        'type Options struct {\n\tSub *SubOptions\n}\n\ntype SubOptions struct {\n\tA string\n}\n\n'
        'func (o *Options) AddFlags(fs *pflag.FlagSet) {\n\tfs.StringVar(&o.X, nameFlag, "", "a { brace")\n'
        '\tfs.BoolP("quiet", "q", false, "")\n\tfs.MarkDeprecated("quiet", "use --" + "name")\n'
        '\to.Sub.AddFlags("audit", fs)\n}\n\n'
        'func (o *SubOptions) AddFlags(plugin string, fs *pflag.FlagSet) {\n'
        '\tfs.IntVar(&o.A, fmt.Sprintf("%s-size", plugin), 0, "")\n}\n'
        '\nfunc Other(fs *pflag.FlagSet) {\n\tunknown.Register(fs)\n}\n', encoding="utf-8")
    reader = gen_k8s_rules.FlagReader(tmp_path)
    reader.walk("k8s.io/x/opts", "Options", "AddFlags", {})
    assert {name: entry["deprecated"] for name, entry in reader.flags.items()} == {
        "name": None, "quiet": "use --name", "audit-size": None}
    with pytest.raises(ValueError, match="cannot follow unknown.Register"):
        gen_k8s_rules.FlagReader(tmp_path).walk("k8s.io/x/opts", None, "Other", {})
