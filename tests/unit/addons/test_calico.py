"""Calico (networking.projectcalico.org): kops' rendering of privatecalico, the spec options the template reads,
strict schema validation, go-yaml's folding of double-quoted scalars, and the CRD table's generator."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.addons.generated import calico_crds

from tests.unit.addons.test_addons_vs_kops import ACCOUNT
from tests.unit.addons.test_channel import _case, _documents, _populated

REPO = pathlib.Path(__file__).resolve().parents[3]
PATH = "addons/networking.projectcalico.org/k8s-1.25.yaml"
# kops' manifestHash for privatecalico's Calico manifest (kops 1.37.0-alpha.1, commit 268927e:
# tests/integration/update_cluster/privatecalico/data/aws_s3_object_privatecalico.example.com-addons-bootstrap_content).
KOPS_PRIVATECALICO_HASH = "70426f074113d56f2e51a8bcc3de9cd4676ef08eb5f14964fda98bfebb5f5d14"
OPTIONS = {"encapsulationMode": "vxlan", "vxlanMode": "Always", "typhaReplicas": 3, "typhaPrometheusMetricsEnabled": True,
           "bpfEnabled": True, "bpfLogLevel": "Debug", "wireguardEnabled": True, "mtu": 8981, "cpuRequest": "1",
           "prometheusMetricsEnabled": True, "prometheusMetricsPort": 9095, "allowIPForwarding": True,
           "nftablesMode": "Enabled", "awsSrcDstCheck": "DoNothing", "registry": "mirror.example.com",
           "version": "v3.30.0"}
VARIANTS = {
    "privatecalico": lambda: _case("privatecalico"),
    "ipv6": lambda: _populated(networking={"calico": {}}, nonMasqueradeCIDR="::/0"),
    "options": lambda: _case("privatecalico", networking={"calico": dict(OPTIONS)},
                             egressProxy={"httpProxy": {"host": "proxy.example.com", "port": 3128},
                                          "excludes": "127.0.0.1,localhost"}),
}


def _render(variant):
    completed, groups = VARIANTS[variant]()
    files = channel.render(completed, groups, account_id=ACCOUNT)
    return {(d["kind"], d["metadata"]["name"]): d for d in _documents(files, PATH)}, dict(files)


def _env(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_privatecalico_is_kops_byte_for_byte():
    completed, groups = VARIANTS["privatecalico"]()
    files = dict(channel.render(completed, groups, account_id=ACCOUNT))
    entry = next(e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]
                 if e["name"] == "networking.projectcalico.org")
    assert entry["manifestHash"] == KOPS_PRIVATECALICO_HASH
    assert entry["selector"] == {"role.kubernetes.io/networking": "1"} and entry["id"] == "k8s-1.25"
    assert "needsRollingUpdate" not in entry
    prune = {(k.get("group", ""), k["kind"]): k.get("namespaces") for k in entry["prune"]["kinds"]}
    assert prune[("apps", "DaemonSet")] == ["kube-system"] and prune[("rbac.authorization.k8s.io", "ClusterRole")] is None
    assert channel.not_rendered(channel.Facts(completed, groups)) == []


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_calico_object_validates_strictly(variant):
    completed, _groups = VARIANTS[variant]()
    documents, _files = _render(variant)
    for document in documents.values():
        kubernetes_validate.validate(document, completed["spec"]["kubernetesVersion"].lstrip("v"), strict=True)
    crds = [d for d in documents.values() if d["kind"] == "CustomResourceDefinition"]
    assert len(crds) == len(calico_crds.CRDS) == 24
    assert all("creationTimestamp" not in d["metadata"] for d in crds)


def test_ipv4_defaults_are_kops():
    documents, _files = _render("privatecalico")
    node = documents[("DaemonSet", "calico-node")]["spec"]["template"]["spec"]
    env = _env(node["containers"][0])
    assert env["CALICO_IPV4POOL_IPIP"] == "CrossSubnet" and env["CALICO_IPV4POOL_VXLAN"] == "Never"
    assert env["CALICO_IPV4POOL_CIDR"] == "100.96.0.0/11" and env["FELIX_AWSSRCDSTCHECK"] == "Disable"
    assert node["containers"][0]["livenessProbe"]["exec"]["command"][-1] == "-bird-live"
    assert node["containers"][0]["image"] == "docker.io/calico/node:v3.31.6"
    assert [c["name"] for c in node["initContainers"]] == ["upgrade-ipam", "install-cni", "ebpf-bootstrap"]
    assert documents[("ConfigMap", "calico-config")]["data"]["calico_backend"] == "bird"
    assert ("Deployment", "calico-typha") not in documents
    assert ("ConfigMap", "kubernetes-services-endpoint") not in documents


def test_ipv6_keeps_host_local_ipam_without_bird():
    documents, _files = _render("ipv6")
    node = documents[("DaemonSet", "calico-node")]["spec"]["template"]["spec"]
    env = _env(node["containers"][0])
    assert env["USE_POD_CIDR"] == "true" and env["NO_DEFAULT_POOLS"] == "true" and "CALICO_IPV4POOL_CIDR" not in env
    assert env["IP"] == "none" and env["IP6"] == "autodetect" and env["IP6_AUTODETECTION_METHOD"] == "first-found"
    assert env["FELIX_AWSSRCDSTCHECK"] == "DoNothing" and env["FELIX_IPV6SUPPORT"] == "true"
    assert node["containers"][0]["livenessProbe"]["exec"]["command"] == ["/bin/calico-node", "-felix-live"]
    assert "upgrade-ipam" not in [c["name"] for c in node["initContainers"]]
    assert "host-local-net-dir" not in [v["name"] for v in node["volumes"]]
    config = documents[("ConfigMap", "calico-config")]["data"]
    assert config["calico_backend"] == "none"
    ipam = json.loads(config["cni_network_config"].replace("__CNI_MTU__", "1500"))["plugins"][0]["ipam"]
    assert ipam == {"assign_ipv4": "false", "assign_ipv6": "true", "type": "host-local",
                    "ranges": [[{"subnet": "usePodCidrIPv6"}]]}


def test_spec_options_change_what_kops_changes():
    documents, _files = _render("options")
    node = documents[("DaemonSet", "calico-node")]["spec"]["template"]["spec"]
    container = node["containers"][0]
    env = _env(container)
    assert (env["CALICO_IPV4POOL_IPIP"], env["CALICO_IPV4POOL_VXLAN"], env["CALICO_IPV6POOL_VXLAN"]) == (
        "Never", "Always", "Always")
    assert env["FELIX_BPFENABLED"] == "true" and env["FELIX_BPFLOGLEVEL"] == "Debug"
    assert env["FELIX_WIREGUARDENABLED"] == "true" and env["FELIX_NFTABLESMODE"] == "Enabled"
    assert env["FELIX_AWSSRCDSTCHECK"] == "DoNothing" and env["FELIX_PROMETHEUSMETRICSPORT"] == "9095"
    assert env["FELIX_TYPHAK8SSERVICENAME"] == {"configMapKeyRef": {"name": "calico-config", "key": "typha_service_name"}}
    assert [e["name"] for e in container["env"][-4:]] == ["NO_PROXY", "http_proxy", "https_proxy", "no_proxy"]
    assert env["http_proxy"] == "http://proxy.example.com:3128" and env["NO_PROXY"] == "127.0.0.1,localhost"
    assert container["resources"] == {"requests": {"cpu": 1}}
    assert container["ports"] == [{"containerPort": 9095, "name": "metrics", "protocol": "TCP"}]
    assert container["livenessProbe"]["exec"]["command"] == ["/bin/calico-node", "-felix-live"]
    assert container["image"] == "mirror.example.com/calico/node:v3.30.0"
    config = documents[("ConfigMap", "calico-config")]["data"]
    assert (config["calico_backend"], config["veth_mtu"], config["typha_service_name"]) == ("vxlan", "8981", "calico-typha")
    plugin = json.loads(config["cni_network_config"].replace("__CNI_MTU__", "8981"))["plugins"][0]
    assert plugin["container_settings"] == {"allow_ip_forwarding": True}
    endpoint = documents[("ConfigMap", "kubernetes-services-endpoint")]["data"]
    assert endpoint == {"KUBERNETES_SERVICE_HOST": "api.internal.privatecalico.example.com", "KUBERNETES_SERVICE_PORT": "443"}
    typha = documents[("Deployment", "calico-typha")]["spec"]
    assert typha["replicas"] == 3
    assert typha["template"]["spec"]["containers"][0]["ports"][1] == {"containerPort": 9093, "name": "metrics",
                                                                      "protocol": "TCP"}
    assert typha["template"]["spec"]["containers"][0]["image"] == "mirror.example.com/calico/typha:v3.30.0"
    assert {("PodDisruptionBudget", "calico-typha"), ("Service", "calico-typha")} <= set(documents)


# ---------------------------------------------------------------- go-yaml's double-quoted scalars

# A CRD description as kops writes it (privatecalico's manifest, nested 9 levels): go-yaml breaks at the first
# space past column 80, and escapes a space that follows a break.
CONDITION = ("Condition contains details for one aspect of the current state of this API Resource.\n---\nThis struct "
             "is intended for direct use as an array at the field path .status.conditions.  For example,\n\n\n\ttype "
             "FooStatus struct{\n\t    // Represents the observations of a foo's current state.\n\t    // Known "
             ".status.conditions.type are: \"Available\", \"Progressing\", and \"Degraded\"\n\t    // "
             "+patchMergeKey=type\n\t    // +patchStrategy=merge\n\t    // +listType=map\n\t    // "
             "+listMapKey=type\n\t    Conditions []metav1.Condition `json:\"conditions,omitempty\" "
             "patchStrategy:\"merge\" patchMergeKey:\"type\" protobuf:\"bytes,1,rep,name=conditions\"`\n\n\n\t    "
             "// other fields\n\t}")
KOPS_LINES = r'''description: "Condition contains details for one aspect of the current
  state of this API Resource.\n---\nThis struct is intended for
  direct use as an array at the field path .status.conditions.  For
  example,\n\n\n\ttype FooStatus struct{\n\t    // Represents the
  observations of a foo's current state.\n\t    // Known .status.conditions.type
  are: \"Available\", \"Progressing\", and \"Degraded\"\n\t    //
  +patchMergeKey=type\n\t    // +patchStrategy=merge\n\t    // +listType=map\n\t
  \   // +listMapKey=type\n\t    Conditions []metav1.Condition `json:\"conditions,omitempty\"
  patchStrategy:\"merge\" patchMergeKey:\"type\" protobuf:\"bytes,1,rep,name=conditions\"`\n\n\n\t
  \   // other fields\n\t}"'''


def test_double_quoted_scalars_fold_as_go_yaml():
    document = {"description": CONDITION}
    for level in range(9):  # kops' key sits 9 mappings deep (column 18)
        document = {"k%d" % level: document}
    data = channel.dump_manifest([document]).decode()
    keys = "\n".join("  " * level + "k%d:" % (8 - level) for level in range(9))
    assert data == keys + "\n" + "\n".join("  " * 9 + line for line in KOPS_LINES.splitlines())
    assert yaml.safe_load(data) == document
    assert channel.dump_manifest([{"a": "tab\there \u00e9 \ufeff"}]).decode() == '''a: "tab\\there \u00e9 \\uFEFF"'''


# ---------------------------------------------------------------- the CRD table and its generator


def _generator(kops, *args):
    return subprocess.run([sys.executable, str(REPO / "hack" / "gen_crds.py"), "--addon", "calico", "--kops", str(kops)]
                          + list(args), capture_output=True, text=True, check=False, timeout=300)


def _mini_kops(tmp_path, crd_name="a.crd.projectcalico.org"):
    template = tmp_path / "upup/models/cloudup/resources/addons/networking.projectcalico.org/k8s-1.25.yaml.template"
    template.parent.mkdir(parents=True)
    description = "x " * 100
    template.write_text(
        "---\n{{- if .Networking.Calico.BPFEnabled }}\nkind: ConfigMap\n{{- end }}\n---\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n"
        "spec:\n  description: \"%s\"\n  pattern: '^(\\d+)$'\n  enabled: true\n  none: null\n"
        "---\nkind: ClusterRole\nmetadata:\n  name: calico-node\n" % (crd_name, description))
    (tmp_path / "kops-version.go").write_text('const KOPS_RELEASE_VERSION = "1.99.0"\n')
    return tmp_path


def test_generator_writes_the_crds_as_python_data(tmp_path):
    result = _generator(_mini_kops(tmp_path), "--commit", "abcdef1234")
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 160
    table = {}
    exec(compile(result.stdout, "calico_crds", "exec"), table)  # pylint: disable=exec-used  # our generator's output
    assert table["CRDS"] == [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "a.crd.projectcalico.org"},
                              "spec": {"description": "x " * 100, "pattern": "^(\\d+)$", "enabled": True,
                                       "none": None}}]
    assert "kops 1.99.0 (commit abcdef1)" in result.stdout


def test_generator_refuses_a_templated_crd(tmp_path):
    result = _generator(_mini_kops(tmp_path, crd_name="{{ .Name }}"), "--commit", "abcdef1234")
    assert result.returncode == 1 and "holds a template action" in result.stderr


@pytest.mark.skipif(not os.environ.get("KOPS_SOURCE"),
                    reason="KOPS_SOURCE is not set: point it at a kops checkout to compare the CRD table with kops")
def test_committed_crd_table_is_what_kops_source_generates():
    args = ["--commit", os.environ["KOPS_COMMIT"]] if os.environ.get("KOPS_COMMIT") else []
    result = _generator(os.environ["KOPS_SOURCE"], *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO / "plugins/module_utils/addons/generated/calico_crds.py").read_text()
