"""The kubelet's files against kops' KubeletBuilder goldens (nodeup/pkg/model/tests/kubelet), and the configs
those goldens do not cover (AWS worker with the bootstrap service, GCE token worker, control plane)."""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import credentials as config_credentials
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap_service, credentials, files
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kubelet, warm_pool

from tests.unit.nodeconfig.test_config import _completed, _keysets
from tests.unit.nodeup import kops_golden

CASES = [case for case in kops_golden.CASES if case.directory.startswith("kubelet/")]
TOKEN = "abcdef.0123456789abcdef"
# What differs from kops' goldens by design, per path: a function that undoes it, and why.
BY_DESIGN = {
    # kops' nodeup sets --hostname-override on AWS from the instance metadata (evaluateSpec: the instance id), which
    # its KubeletBuilder test does not run; ours takes it from the bootstrap service's certificate (the same id).
    "/etc/sysconfig/kubelet": lambda text: text.replace(" --hostname-override=%s" % kops_golden.NODE["name"], ""),
}


@pytest.mark.parametrize("case", CASES, ids=[kops_golden._case_id(c) for c in CASES])
def test_kubelet_files_are_kops_goldens(case):
    result = kops_golden.compare(case)
    assert result.kops_only == []
    assert set(result.different) <= set(BY_DESIGN), sorted(result.different)
    for path, (kops, ours) in result.different.items():
        assert BY_DESIGN[path](ours["content"]) == kops["content"], path
    assert "unit kubelet.service" in result.equal and "/var/lib/kubelet/kubelet.conf" in result.equal


def test_the_warmpool_golden_leaves_the_kubelet_stopped_and_the_node_knows_when():
    kops = kops_golden.kops_entries(CASES[1])
    assert CASES[1].mode == "Warming" and kops["unit kubelet.service"]["enabled"] is False
    assert kops_golden.kops_entries(CASES[0])["unit kubelet.service"]["enabled"] is True
    assert warm_pool.mode_of("Warmed:Stopped") == "Warming" and warm_pool.mode_of("Warmed:Hibernated") == "Warming"
    assert warm_pool.mode_of("InService") == "" and warm_pool.mode_of(None) == ""


def _config(name, role):
    completed, groups = _completed(name)
    group = next(g for g in groups if g["spec"]["role"] == role)
    return completed, group, nodeup_config.build_config(completed, group, _keysets(completed),
                                                        completed["spec"]["configBase"])


def _files(document, node):
    return {f.path: f.content.decode() for f in files.node_files(document, node, bootstrap_token=TOKEN)}


def _args(written):
    match = re.match(r'^DAEMON_ARGS="(.*)"\nHOME="/root"\n$', written["/etc/sysconfig/kubelet"])
    assert match, written["/etc/sysconfig/kubelet"]
    return match.group(1).split(" ")


def test_aws_worker_with_the_bootstrap_service():
    _completed_cluster, _group, document = _config("minimal-aws", objects.ROLE_NODE)
    written = _files(document, {"name": "i-0abc", "address": "172.20.32.5", "distribution": "debian"})
    args = _args(written)
    # kops' flags sorted, then --node-ip, --config and the credential provider's, as kops orders them
    assert args == ["--cloud-provider=external", "--hostname-override=i-0abc", "--kubeconfig=/var/lib/kubelet/kubeconfig",
                    "--runtime-request-timeout=15m0s", "--v=2",
                    "--node-ip=172.20.32.5", "--config=/var/lib/kubelet/kubelet.conf",
                    "--image-credential-provider-config=/var/lib/kubelet/credential-provider.conf",
                    "--image-credential-provider-bin-dir=/usr/local/bin"]
    assert not any(a.startswith(("--node-labels", "--bootstrap-kubeconfig")) for a in args)
    conf = yaml.safe_load(written["/var/lib/kubelet/kubelet.conf"])
    assert (conf["tlsCertFile"], conf["tlsPrivateKeyFile"]) == (kubelet.SERVER_CERT, kubelet.SERVER_KEY)
    assert "rotateCertificates" not in conf and conf["containerRuntimeEndpoint"] == "unix:///run/containerd/containerd.sock"
    # debian: no loopback resolv.conf known, the node did not report systemd-resolved's
    assert "resolvConf" not in conf and conf["volumePluginDir"] == "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
    provider = yaml.safe_load(written[kubelet.CREDENTIAL_PROVIDER_CONFIG])
    assert provider["providers"][0]["name"] == "ecr-credential-provider"
    assert provider["providers"][0]["env"] == [{"name": "AWS_REGION", "value": "us-test-1"}]
    assert any(a.endswith("/ecr-credential-provider-linux-amd64") for a in document["Assets"]["amd64"])
    # The serving certificate the config points at comes from the bootstrap service, which issues it by default.
    wanted = {name: (cert, key) for name, cert, key in config_credentials.WORKER_CERTIFICATES}
    assert wanted["kubelet-server"] == (kubelet.SERVER_CERT, kubelet.SERVER_KEY)
    assert "kubelet-server" in bootstrap_service.DEFAULT_CERT_NAMES


def test_gce_token_worker():
    _completed_cluster, _group, document = _config("minimal_gce", objects.ROLE_NODE)
    assert "kubeletBootstrap" in document["kubeops"] and "bootstrapService" not in document["kubeops"]
    written = _files(document, {"name": "nodes-abcd", "address": "", "distribution": "ubuntu"})
    args = _args(written)
    assert "--bootstrap-kubeconfig=%s" % kubelet.KUBELET_BOOTSTRAP_KUBECONFIG in args
    assert not any(a.startswith(("--hostname-override", "--node-labels", "--node-ip")) for a in args)
    assert args[-2:] == ["--image-credential-provider-config=/var/lib/kubelet/credential-provider.conf",
                         "--image-credential-provider-bin-dir=/usr/local/bin"]
    conf = yaml.safe_load(written["/var/lib/kubelet/kubelet.conf"])
    # No one issues a token worker's serving certificate: the kubelet makes its own.
    assert "tlsCertFile" not in conf and "tlsPrivateKeyFile" not in conf
    assert conf["resolvConf"] == "/run/systemd/resolve/resolv.conf"  # ubuntu's loopback /etc/resolv.conf
    assert written[kubelet.CREDENTIAL_PROVIDER_CONFIG] == kubelet.GCP_CREDENTIAL_PROVIDER_CONFIG
    assert "token: %s" % TOKEN in written[kubelet.KUBELET_BOOTSTRAP_KUBECONFIG].replace('"', "").replace(",", "")


def test_control_plane():
    _completed_cluster, _group, document = _config("minimal-aws", objects.ROLE_CONTROL_PLANE)
    written = _files(document, {"name": "i-0cp", "address": "172.20.32.9", "distribution": "flatcar"})
    args = _args(written)
    # The control plane issues its own certificates (no bootstrap service client): no override, no bootstrap.
    assert not any(a.startswith(("--hostname-override", "--node-labels", "--bootstrap-kubeconfig")) for a in args)
    assert "--kubeconfig=/var/lib/kubelet/kubeconfig" in args and "--config=/var/lib/kubelet/kubelet.conf" in args
    conf = yaml.safe_load(written["/var/lib/kubelet/kubelet.conf"])
    assert conf["volumePluginDir"] == "/var/lib/kubelet/volumeplugins/"  # /usr is read-only on Flatcar
    assert conf["registerWithTaints"] == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    assert conf["tlsCertFile"] == kubelet.SERVER_CERT
    requests = {r["cert_path"]: r for r in credentials.control_plane_requests(document, "i-0cp", ["172.20.32.9"])}
    server = requests[kubelet.SERVER_CERT]
    assert (server["common_name"], server["key_path"], server["usages"]) == ("i-0cp", kubelet.SERVER_KEY, ["server"])
    assert (server["dns_names"], server["ip_addresses"]) == (["i-0cp"], ["172.20.32.9"])


def test_kubelet_configuration_fields_map_to_kops_spec_fields():
    from ansible_collections.kubeops.kops.plugins.module_utils.api.generated import schema_data
    fields = schema_data.STRUCTS["KubeletConfigSpec"]
    assert [f for f, _path, _kind in kubelet.CONFIG_FIELDS if f not in fields] == []
    assert [f for f, _flag, _kind, _options in kubelet.FLAGS if f not in fields] == []
    # A field is either a flag or a config file field, never both (kops: flag:"-" for the config file's).
    assert {f for f, *_rest in kubelet.CONFIG_FIELDS} & {f for f, *_rest in kubelet.FLAGS} == set()


def test_kubelet_configuration_values_as_kops_marshals_them():
    spec = {"clusterDNS": "100.64.0.10", "maxPods": 0, "readOnlyPort": 10255, "podPidsLimit": 0,
            "featureGates": {"A": "1", "B": "F"}, "taints": ["a=b:NoSchedule", "c:NoExecute"],
            "evictionSoft": "memory.available<200Mi", "evictionSoftGracePeriod": "memory.available=1m30s",
            "enforceNodeAllocatable": "pods,system-reserved", "eventQPS": 5, "eventRecordQPS": 9,
            "logFormat": "json", "cpuCFSQuotaPeriod": "100ms", "nodeStatusUpdateFrequency": "10s",
            "anonymousAuth": False, "authorizationMode": "AlwaysAllow", "authenticationTokenWebhook": True}
    conf = kubelet.kubelet_configuration({"containerdConfig": {"address": "/run/other.sock"}}, spec)
    assert "maxPods" not in conf and conf["readOnlyPort"] == 10255 and conf["podPidsLimit"] == 0
    assert conf["featureGates"] == {"A": True, "B": False}
    assert conf["registerWithTaints"] == [{"key": "a", "value": "b", "effect": "NoSchedule"},
                                          {"key": "c", "effect": "NoExecute"}]
    assert conf["evictionSoft"] == {"memory.available": "200Mi"}
    assert conf["evictionSoftGracePeriod"] == {"memory.available": "1m30s"}
    assert conf["enforceNodeAllocatable"] == ["pods", "system-reserved"] and conf["eventRecordQPS"] == 5
    assert conf["logging"]["format"] == "json" and conf["cpuCFSQuotaPeriod"] == "100ms"
    assert conf["nodeStatusUpdateFrequency"] == "10s" and conf["syncFrequency"] == "0s"
    assert conf["authentication"]["anonymous"] == {"enabled": False} and conf["authorization"]["mode"] == "AlwaysAllow"
    assert conf["containerRuntimeEndpoint"] == "unix:///run/other.sock"
    assert 'infoBufferSize: "0"' in kubelet.go_yaml(conf)


@pytest.mark.parametrize("spec, message", [
    ({"featureGates": {"A": "yes"}}, "KubeletConfig.featureGates.A: 'yes' is not a boolean"),
    ({"evictionHard": "memory.available=1Gi"}, "KubeletConfig.evictionHard: 'memory.available=1Gi' is not key<value"),
    ({"taints": ["novalue"]}, "KubeletConfig.taints: 'novalue' is not key[=value]:effect"),
])
def test_bad_kubelet_values_name_the_field(spec, message):
    with pytest.raises(kubelet.KubeletConfigError, match=re.escape(message)):
        kubelet.kubelet_configuration({}, spec)


def test_no_node_labels_on_the_command_line():
    document = {"KubeletConfig": {"nodeLabels": {"node-role.kubernetes.io/node": "", "kops.k8s.io/instancegroup": "x"}},
                "kubeops": {}}
    written = _files(document, {"name": "n", "address": ""})
    assert "node-labels" not in written["/etc/sysconfig/kubelet"] and "kubernetes.io" not in written["/etc/sysconfig/kubelet"]


def test_warm_pool_settings_in_the_config_and_who_asks():
    completed, groups = _completed("minimal-aws")
    completed["spec"]["warmPool"] = {"maxSize": 3, "enableLifecycleHook": True}
    worker = next(g for g in groups if g["spec"]["role"] == objects.ROLE_NODE)
    control = next(g for g in groups if g["spec"]["role"] == objects.ROLE_CONTROL_PLANE)
    keysets = _keysets(completed)
    document = nodeup_config.build_config(completed, worker, keysets, completed["spec"]["configBase"])
    assert document["EnableLifecycleHook"] is True
    assert document["kubeops"]["warmPool"] == {"autoscalingGroup": "nodes.minimal-aws.example.com",
                                               "lifecycleHook": "kops-warmpool"}
    assert document["WarmPoolImages"] == [document["KubeProxy"]["image"]]
    assert warm_pool.asks_for_mode(document)
    # The control plane has no warm pool unless its group asks (kops' ResolveDefaults) and does not autoscale.
    control_document = nodeup_config.build_config(completed, control, keysets, completed["spec"]["configBase"])
    assert "WarmPoolImages" not in control_document and "EnableLifecycleHook" not in control_document
    assert not warm_pool.asks_for_mode(control_document)


class _Autoscaling(object):
    def __init__(self, hooks):
        self.hooks, self.completed = hooks, []

    def describe_lifecycle_hooks(self, AutoScalingGroupName, LifecycleHookNames):  # noqa: N803  # boto3's names
        return {"LifecycleHooks": [{"LifecycleHookName": n} for n in LifecycleHookNames if n in self.hooks]}

    def complete_lifecycle_action(self, **kwargs):
        self.completed.append(kwargs)


def test_completes_the_lifecycle_action_only_where_the_group_has_the_hook():
    client = _Autoscaling(["kops-warmpool"])
    assert warm_pool.complete_lifecycle_action(client, "nodes.c", "kops-warmpool", "i-1")
    assert client.completed == [{"AutoScalingGroupName": "nodes.c", "LifecycleHookName": "kops-warmpool",
                                 "InstanceId": "i-1", "LifecycleActionResult": "CONTINUE"}]
    other = _Autoscaling([])
    assert not warm_pool.complete_lifecycle_action(other, "nodes.c", "kops-warmpool", "i-1") and other.completed == []


KUBELET_TYPES = "vendor/k8s.io/kubelet/config/v1beta1/types.go"
GO_FIELD = re.compile(r'^\s+[A-Z]\w*\s+(\S+)\s+`json:"(\w+)')


def _kubelet_configuration_fields(text):
    """{json name: Go type} of KubeletConfiguration in k8s.io/kubelet's types.go."""
    body = text.split("type KubeletConfiguration struct {", 1)[1].split("\n}\n", 1)[0]
    return {m.group(2): m.group(1) for m in (GO_FIELD.match(line) for line in body.splitlines()) if m}


@pytest.mark.skipif(not (os.environ.get("KOPS_SOURCE") and
                         os.path.exists(os.path.join(os.environ.get("KOPS_SOURCE", ""), KUBELET_TYPES))),
                    reason="KOPS_SOURCE is not set or has no %s (a kops checkout with its vendor directory, "
                           "docs/data-tables.md)" % KUBELET_TYPES)
def test_kubelet_fields_agree_with_the_kubelet_types_kops_vendors():
    """ZERO_DURATIONS and CONFIG_FIELDS' kinds are k8s.io/kubelet's KubeletConfiguration Go types."""
    with open(os.path.join(os.environ["KOPS_SOURCE"], KUBELET_TYPES), encoding="utf-8") as handle:
        types = _kubelet_configuration_fields(handle.read())
    durations = {name for name, go_type in types.items() if go_type == "metav1.Duration"}
    assert durations == set(kubelet.ZERO_DURATIONS) | {p for _f, p, kind in kubelet.CONFIG_FIELDS if kind == "duration"}
    wanted = {"pointer": lambda t: t.startswith("*"), "pointer-duration": lambda t: t == "*metav1.Duration",
              "list": lambda t: t.startswith("[]"), "map": lambda t: t.startswith("map["),
              "string": lambda t: t == "string" or t[0].isupper() and "." not in t,
              "int": lambda t: t in ("int32", "int64"), "bool": lambda t: t == "bool",
              "duration": lambda t: t == "metav1.Duration"}
    wrong = [(path, kind, types.get(path)) for _f, path, kind in kubelet.CONFIG_FIELDS
             if "." not in path and not (path in types and wanted[kind](types[path]))]
    assert wrong == []


def test_a_flag_value_with_a_double_quote_is_go_quoted():
    written = kubelet.kubelet_flags({}, {}, {"hostnameOverride": 'a"b', "logLevel": 2})
    assert written == 'DAEMON_ARGS="--hostname-override="a\\"b" --v=2 --config=/var/lib/kubelet/kubelet.conf"\nHOME="/root"\n'


def test_map_keys_in_go_yaml_order():
    document = {"b": 1, "a10": 1, "a9": 1, "A": 1, "a_b": 1, "ab": 1, "a.b": 1}
    # go-yaml: digit runs by number (a9 < a10), other characters before letters (a.b, a_b < ab), A < a
    assert list(yaml.safe_load(kubelet.go_yaml(document))) == ["A", "a.b", "a_b", "a9", "a10", "ab", "b"]


def test_control_plane_from_1_35_restarts_crash_looping_pods_sooner_and_ipv6_nodes_take_any_address():
    _completed_cluster, _group, document = _config("minimal-aws", objects.ROLE_CONTROL_PLANE)
    document = dict(document, KubernetesVersion="1.35.0", Networking=dict(document["Networking"],
                                                                          nonMasqueradeCIDR="::/0"))
    written = _files(document, {"name": "i-0cp", "address": ""})
    conf = yaml.safe_load(written["/var/lib/kubelet/kubelet.conf"])
    assert conf["crashLoopBackOff"] == {"maxContainerRestartPeriod": "1m0s"}
    assert "--node-ip=::" in _args(written)
    _completed_cluster, _group, worker = _config("minimal-aws", objects.ROLE_NODE)
    conf = yaml.safe_load(_files(dict(worker, KubernetesVersion="1.35.0"), {"name": "i-1"})["/var/lib/kubelet/kubelet.conf"])
    assert conf["crashLoopBackOff"] == {}
