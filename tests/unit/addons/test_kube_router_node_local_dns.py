"""kube-router (networking.kuberouter) and node-local-dns (nodelocaldns.addons.k8s.io) against kops' templates.

No kops fixture renders either addon, so there is no rendered file to compare byte for byte
(docs/addons.md).  Measured instead:
(a) with KOPS_SOURCE, the objects (kind, namespace, name) equal what kops' template declares, read from its text;
(b) always, the fields that matter (images, args, ports, RBAC rules, Corefile) equal the values read from kops'
    templates and bootstrapchannelbuilder.go; with KOPS_SOURCE, every object equals, field by field, kops' template
    evaluated (a small Go-template evaluator below, for the actions these two templates use) with the values
    kops' template functions give for the same completed spec, over spec variants;
(c) always, every rendered manifest validates strictly against the cluster version's API schemas;
and the channel entries (id, manifest, selector, needsRollingUpdate, order) as kops' builder writes them.
Node-local-dns also moves the kubelets' clusterDNS to its local IP (kops' KubeletOptionsBuilder): checked down
to the kubelet configuration file nodeup writes.
"""

from __future__ import annotations

import json
import os
import pathlib
import re

import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel, kube_router, node_local_dns
from ansible_collections.kubeops.kops.plugins.module_utils.addons.facts import AddonError, Facts
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import files as nodeup_files
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import kubelet as nodeup_kubelet
from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore

from tests.unit.addons.test_addons_vs_kops import ACCOUNT
from tests.unit.addons.test_channel import _populated

KOPS = os.environ.get("KOPS_SOURCE")
NEEDS_KOPS = pytest.mark.skipif(not KOPS, reason="KOPS_SOURCE is not set: point it at a kops checkout to compare "
                                                 "with kops' addon templates (no kops fixture renders these addons)")
TEMPLATES = "upup/models/cloudup/resources/addons"
KUBE_ROUTER = "addons/networking.kuberouter/k8s-1.12.yaml"
NODE_LOCAL_DNS = "addons/nodelocaldns.addons.k8s.io/k8s-1.12.yaml"

KUBE_ROUTER_VARIANTS = {
    "default": {"networking": {"kuberouter": {}}, "kubeProxy": {"enabled": False}},
    "nftables-selinux": {"networking": {"kuberouter": {"useNFTablesForNetpol": True}}, "kubeProxy": {"enabled": False},
                         "containerd": {"seLinuxEnabled": True}, "serviceClusterIPRange": "100.96.0.0/16"},
}
NODE_LOCAL_DNS_VARIANTS = {
    "default": {"kubeDNS": {"nodeLocalDNS": {"enabled": True}}},
    "ipvs": {"kubeDNS": {"nodeLocalDNS": {"enabled": True}}, "kubeProxy": {"proxyMode": "ipvs"}},
    "ipv6": {"kubeDNS": {"nodeLocalDNS": {"enabled": True}}, "nonMasqueradeCIDR": "::/0"},
    "forward-selinux": {"kubeDNS": {"nodeLocalDNS": {"enabled": True, "forwardToKubeDNS": True, "cpuRequest": "1",
                                                     "memoryRequest": "16Mi", "image": "example.com/node-cache:2"}},
                        "containerd": {"seLinuxEnabled": True}},
    "additional-annotations": {"kubeDNS": {"domain": "example.internal", "nodeLocalDNS": {
        "enabled": True, "localIP": "169.254.20.11", "podAnnotations": {"b.example.com/x": "1", "a.example.com/y": "z"},
        "additionalConfig": "example.com:53 {\n    errors\n    forward . 10.0.0.2\n}\n\n"}}},
    "external-corefile": {"kubeDNS": {"nodeLocalDNS": {"enabled": True,
                                                       "externalCoreFile": ".:53 {\n    forward . 8.8.8.8\n}\n"}}},
}


def _render(spec):
    completed, groups = _populated(**spec)
    return completed, groups, dict(channel.render(completed, groups, account_id=ACCOUNT))


def _documents(data):
    return [d for d in yaml.safe_load_all(data) if d]


def _by_kind(documents, kind):
    return next(d for d in documents if d["kind"] == kind)


def _entries(files):
    return {e["name"]: e for e in yaml.safe_load(files[channel.CHANNEL_PATH])["spec"]["addons"]}


# ---------------------------------------------------------------- (b) the fields that matter, always


def test_kube_router_fields_are_kops_template_values():
    _completed, _groups, files = _render(KUBE_ROUTER_VARIANTS["default"])
    documents = _documents(files[KUBE_ROUTER])
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("ConfigMap", "kube-router-cfg"), ("DaemonSet", "kube-router"), ("ServiceAccount", "kube-router"),
        ("ClusterRole", "kube-router"), ("ClusterRoleBinding", "kube-router")]
    pod = _by_kind(documents, "DaemonSet")["spec"]["template"]["spec"]
    container, init = pod["containers"][0], pod["initContainers"][0]
    assert container["image"] == init["image"] == "docker.io/cloudnativelabs/kube-router:v2.11.1"
    assert container["args"] == [
        "--strict-external-ip-validation=false", "--run-router=true", "--run-firewall=true",
        "--run-service-proxy=true", "--bgp-graceful-restart=true", "--kubeconfig=/var/lib/kube-router/kubeconfig",
        "--metrics-port=12013", "--runtime-endpoint=unix:///run/containerd/containerd.sock", "--hairpin-mode=true",
        '--service-cluster-ip-range="100.64.0.0/13"']
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 20244}
    assert pod["hostNetwork"] is pod["hostPID"] is True and pod["tolerations"] == [{"operator": "Exists"}]
    assert "securityContext" not in pod
    conf = json.loads(_by_kind(documents, "ConfigMap")["data"]["cni-conf.json"])
    assert [p["type"] for p in conf["plugins"]] == ["bridge", "portmap"] and conf["plugins"][0]["bridge"] == "kube-bridge"
    role = _by_kind(documents, "ClusterRole")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["namespaces", "pods", "services", "nodes", "endpoints"],
         "verbs": ["list", "get", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list", "get", "watch"]},
        {"apiGroups": ["extensions"], "resources": ["networkpolicies"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        {"apiGroups": [""], "resources": ["services/status"], "verbs": ["update"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]}]
    assert _by_kind(documents, "ClusterRoleBinding")["subjects"] == [
        {"kind": "ServiceAccount", "name": "kube-router", "namespace": "kube-system"},
        {"kind": "User", "name": "system:kube-router"}]  # the CN of the kubeconfig nodeup issues


def test_kube_router_options_change_what_kops_changes():
    _completed, _groups, files = _render(KUBE_ROUTER_VARIANTS["nftables-selinux"])
    pod = _by_kind(_documents(files[KUBE_ROUTER]), "DaemonSet")["spec"]["template"]["spec"]
    assert pod["containers"][0]["args"][-2:] == ['--service-cluster-ip-range="100.96.0.0/16"',
                                                 "--use-nftables-for-netpol=true"]
    assert pod["securityContext"] == {"seLinuxOptions": {"level": "s0", "type": "spc_t"}}


def test_node_local_dns_fields_are_kops_template_values():
    completed, _groups, files = _render(NODE_LOCAL_DNS_VARIANTS["default"])
    documents = _documents(files[NODE_LOCAL_DNS])
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("ServiceAccount", "node-local-dns"), ("Service", "kube-dns-upstream"), ("ConfigMap", "node-local-dns"),
        ("DaemonSet", "node-local-dns")]
    daemonset = _by_kind(documents, "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert completed["spec"]["kubeDNS"]["nodeLocalDNS"]["image"] == "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0"
    assert container["image"] == "registry.k8s.io/dns/k8s-dns-node-cache:1.26.0"  # kops' default (components/kubedns.go)
    assert container["args"] == ["-localip=169.254.20.10", "-conf=/etc/Corefile", "-upstreamsvc=kube-dns-upstream",
                                 "-setupiptables=false"]
    assert container["ports"] == [{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                  {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                  {"containerPort": 9253, "name": "metrics", "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"host": "169.254.20.10", "path": "/health", "port": 3989}
    assert container["resources"] == {"requests": {"cpu": "25m", "memory": "5Mi"}}
    assert pod["dnsPolicy"] == "Default" and pod["hostNetwork"] is True
    assert daemonset["spec"]["updateStrategy"] == {"type": "OnDelete"}
    service = _by_kind(documents, "Service")["spec"]
    assert service["selector"] == {"k8s-app": "kube-dns"} and [p["port"] for p in service["ports"]] == [53, 53]
    corefile = _by_kind(documents, "ConfigMap")["data"]["Corefile"]
    assert corefile.startswith("cluster.local:53 {\n    errors\n    cache {\n      success 9984 30\n")
    assert "    forward . __PILLAR__CLUSTER__DNS__ {\n      force_tcp\n    }\n" in corefile
    assert "    health 169.254.20.10:3989\n" in corefile and corefile.endswith(
        "    forward . __PILLAR__UPSTREAM__SERVERS__\n    prometheus :9253\n}\n")
    assert [line for line in corefile.splitlines() if line.endswith(":53 {")] == [
        "cluster.local:53 {", "in-addr.arpa:53 {", "ip6.arpa:53 {", ".:53 {"]


@pytest.mark.parametrize("variant, expected", [
    ("ipvs", ["forward . 100.64.0.10 {"]),  # with IPVS, straight to the kube-dns service IP
    ("ipv6", ["bind fd00:90de:d95::1", "health [fd00:90de:d95::1]:3989", "dns64"]),
    ("forward-selinux", ["forward . __PILLAR__CLUSTER__DNS__ {"]),
    ("additional-annotations", ["example.internal:53 {", "bind 169.254.20.11", "forward . 10.0.0.2"]),
])
def test_node_local_dns_corefile_follows_the_spec(variant, expected):
    _completed, _groups, files = _render(NODE_LOCAL_DNS_VARIANTS[variant])
    documents = _documents(files[NODE_LOCAL_DNS])
    corefile = _by_kind(documents, "ConfigMap")["data"]["Corefile"]
    lines = [line.strip() for line in corefile.splitlines()]
    assert all(line in lines for line in expected), corefile
    assert corefile.endswith("}\n")
    if variant == "forward-selinux":  # everything to CoreDNS: no reverse zones, no upstream servers
        assert "in-addr.arpa:53 {" not in lines and "__PILLAR__UPSTREAM__SERVERS__" not in corefile
        pod = _by_kind(documents, "DaemonSet")["spec"]["template"]["spec"]
        assert pod["containers"][0]["securityContext"]["seLinuxOptions"] == {"level": "s0", "type": "spc_t"}
        assert pod["containers"][0]["resources"] == {"requests": {"cpu": 1, "memory": "16Mi"}}
        assert pod["containers"][0]["image"] == "example.com/node-cache:2"
    if variant == "additional-annotations":
        annotations = _by_kind(documents, "DaemonSet")["spec"]["template"]["metadata"]["annotations"]
        assert annotations == {"prometheus.io/port": "9253", "prometheus.io/scrape": "true",
                               "a.example.com/y": "z", "b.example.com/x": "1"}


def test_external_corefile_replaces_kops_corefile():
    _completed, _groups, files = _render(NODE_LOCAL_DNS_VARIANTS["external-corefile"])
    configmap = _by_kind(_documents(files[NODE_LOCAL_DNS]), "ConfigMap")
    assert configmap["data"]["Corefile"] == ".:53 {\n    forward . 8.8.8.8\n}\n"


def test_node_local_dns_without_its_completed_fields_is_refused_naming_them():
    completed, groups = _populated(**NODE_LOCAL_DNS_VARIANTS["default"])
    del completed["spec"]["kubeDNS"]["nodeLocalDNS"]["localIP"]
    with pytest.raises(AddonError, match=r"spec.kubeDNS.nodeLocalDNS.localIP is missing.*complete the cluster spec"):
        channel.render(completed, groups, account_id=ACCOUNT)


# ---------------------------------------------------------------- channel entries, as bootstrapchannelbuilder.go


def test_channel_entries_are_kops():
    spec = dict(KUBE_ROUTER_VARIANTS["default"], **NODE_LOCAL_DNS_VARIANTS["default"])
    completed, groups, files = _render(spec)
    entries = _entries(files)
    for name, addon_id, selector, rolling in (
            ("networking.kuberouter", "k8s-1.12", {"role.kubernetes.io/networking": "1"}, None),
            ("nodelocaldns.addons.k8s.io", "k8s-1.12", {"k8s-addon": "nodelocaldns.addons.k8s.io"}, "all")):
        manifest = "%s/%s.yaml" % (name, addon_id)
        expected = {"name": name, "id": addon_id, "manifest": manifest, "selector": selector,
                    "manifestHash": channel.manifest_hash(files["addons/" + manifest])}
        if rolling:
            expected["needsRollingUpdate"] = rolling
        assert entries[name] == expected
    names = list(entries)
    assert names.index("limit-range.addons.k8s.io") < names.index("nodelocaldns.addons.k8s.io") \
        < names.index("node-termination-handler.aws") < names.index("networking.kuberouter") \
        < names.index("aws-cloud-controller.addons.k8s.io")
    assert channel.not_rendered(Facts(completed, groups)) == []
    # node-local-dns needs CoreDNS: with kube-dns kops renders neither it nor (here) CoreDNS.
    assert not node_local_dns.applies(Facts({"metadata": {"name": "x"}, "spec": {"kubeDNS": {
        "provider": "KubeDNS", "nodeLocalDNS": {"enabled": True}}}}, ()))


def _go_block(go_source, key):
    """The text of bootstrapchannelbuilder.go's block for one addon key, up to the next key."""
    start = go_source.index('key := "%s"' % key)
    following = go_source.find("key := ", start + 1)
    return go_source[start:following if following > 0 else len(go_source)]


@NEEDS_KOPS
def test_channel_entries_and_order_are_what_kops_builder_says():
    go_source = (pathlib.Path(KOPS) / "upup/pkg/fi/cloudup/bootstrapchannelbuilder/bootstrapchannelbuilder.go"
                 ).read_text()
    spec = dict(KUBE_ROUTER_VARIANTS["default"], **NODE_LOCAL_DNS_VARIANTS["default"])
    _completed, _groups, files = _render(spec)
    entries = _entries(files)
    for name in ("networking.kuberouter", "nodelocaldns.addons.k8s.io"):
        block = _go_block(go_source, name)
        assert entries[name]["id"] == re.search(r'id := "([^"]+)"', block).group(1)
        assert entries[name]["manifest"] == name + "/" + re.search(r'location := key \+ "/([^"]+)"', block).group(1)
        assert ("NeedsRollingUpdate: channelsapi.NeedsRollingUpdateAll" in block) == (
            entries[name].get("needsRollingUpdate") == "all")
        networking = "Selector: networkingSelector()" in block
        assert networking or 'Selector:           map[string]string{"k8s-addon": key}' in block
        assert entries[name]["selector"] == (channel.NETWORKING_SELECTOR if networking else {"k8s-addon": name})
        assert "Prune" not in block and "NeedsPKI" not in block
    kops_order = re.findall(r'key := "([^"]+)"', go_source)
    ours = [n for n in entries if n in kops_order]
    assert ours == sorted(ours, key=kops_order.index)


# ---------------------------------------------------------------- (c) strict validation, always


@pytest.mark.parametrize("variant", sorted(["kube-router-" + v for v in KUBE_ROUTER_VARIANTS]
                                           + ["node-local-dns-" + v for v in NODE_LOCAL_DNS_VARIANTS]))
def test_every_manifest_validates_strictly(variant):
    spec = (KUBE_ROUTER_VARIANTS[variant[len("kube-router-"):]] if variant.startswith("kube-router-")
            else NODE_LOCAL_DNS_VARIANTS[variant[len("node-local-dns-"):]])
    completed, _groups, files = _render(spec)
    version = completed["spec"]["kubernetesVersion"].lstrip("v")
    path = KUBE_ROUTER if variant.startswith("kube-router-") else NODE_LOCAL_DNS
    documents = _documents(files[path])
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)
    assert len(documents) in (4, 5)


# ---------------------------------------------------------------- the kubelets' clusterDNS


@pytest.mark.parametrize("spec, cluster_dns", [
    ({}, "100.64.0.10"),
    (NODE_LOCAL_DNS_VARIANTS["default"], "169.254.20.10"),
    (NODE_LOCAL_DNS_VARIANTS["ipv6"], "fd00:90de:d95::1"),
    (NODE_LOCAL_DNS_VARIANTS["additional-annotations"], "169.254.20.11"),
])
def test_node_local_dns_is_every_kubelets_cluster_dns(spec, cluster_dns):
    """kops' KubeletOptionsBuilder: an unset clusterDNS is node-local-dns' IP when it is enabled, for the control
    plane's kubelet too; checked in the kubelet configuration file nodeup writes on each node."""
    completed, groups = _populated(**spec)
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    roles = set()
    for group in groups:
        group = populate.populate_instance_group_spec(completed, group)
        config = nodeup_config.build_config(completed, group, keysets, completed["spec"]["configBase"])
        written = {f.path: f for f in nodeup_files.node_files(config, {"name": "i-0123", "address": "10.0.0.5"})}
        kubelet = yaml.safe_load(written[nodeup_kubelet.KUBELET_CONFIG].content)
        assert kubelet["clusterDNS"] == [cluster_dns], objects.name_of(group)
        roles.add(group["spec"]["role"])
    assert len(roles) == 2


# ---------------------------------------------------------------- (a) and (b) against kops' template text


def _template(name):
    return (pathlib.Path(KOPS) / TEMPLATES / name / "k8s-1.12.yaml.template").read_text()


def template_identities(text):
    """(kind, namespace, name) of every object a template declares, read from its text: each `---` document's
    top-level kind and the name and namespace directly under its top-level metadata."""
    found = set()
    for document in re.split(r"^---\s*$", text, flags=re.M):
        kind = re.search(r"^kind:\s*(\S+)", document, re.M)
        metadata = re.search(r"^metadata:\n((?:[ ].*\n?)*)", document, re.M)
        if not kind or not metadata:
            continue
        fields = dict(re.findall(r"^  (name|namespace):\s*(\S+)", metadata.group(1), re.M))
        found.add((kind.group(1), fields.get("namespace", ""), fields["name"]))
    return found


@NEEDS_KOPS
@pytest.mark.parametrize("addon, path, spec", [
    ("networking.kuberouter", KUBE_ROUTER, KUBE_ROUTER_VARIANTS["default"]),
    ("nodelocaldns.addons.k8s.io", NODE_LOCAL_DNS, NODE_LOCAL_DNS_VARIANTS["default"]),
])
def test_object_set_is_what_kops_template_declares(addon, path, spec):
    _completed, _groups, files = _render(spec)
    ours = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in _documents(files[path])}
    theirs = template_identities(_template(addon))
    assert len(theirs) >= 4
    assert ours == theirs


ACTION = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)


def go_template(text, values, conditions):
    """kops' template text with the actions these two templates use evaluated: trim markers, if/else/end,
    range over a map ($key, $value), expressions looked up in values (`| indent N` as sprig's indent).
    An action the test does not know fails (KeyError): a template change kops makes shows up here."""
    tokens, position = [], 0
    for match in ACTION.finditer(text):
        tokens.append(("text", text[position:match.start()]))
        tokens.append(("action", match.group(2), match.group(1) == "-", match.group(3) == "-"))
        position = match.end()
    tokens.append(("text", text[position:]))
    for index, token in enumerate(tokens):  # trim markers eat the whitespace of the neighbouring text
        if token[0] == "action":
            if token[2]:
                tokens[index - 1] = ("text", tokens[index - 1][1].rstrip(" \t\r\n"))
            if token[3]:
                tokens[index + 1] = ("text", tokens[index + 1][1].lstrip(" \t\r\n"))

    def block(start, scope):
        """(text, index of the closing else/end) from start; scope None: a branch not taken, skipped unevaluated."""
        out, index = [], start
        while index < len(tokens):
            token = tokens[index]
            if token[0] == "text":
                out.append(token[1])
                index += 1
                continue
            action = token[1]
            if action in ("end", "else"):
                return "".join(out), index
            if action.startswith("if "):
                taken = scope is not None and conditions[action[3:]]
                then, index = block(index + 1, scope if taken else None)
                otherwise = ""
                if tokens[index][1] == "else":
                    otherwise, index = block(index + 1, None if taken or scope is None else scope)
                out.append(then if taken else otherwise)
            elif action.startswith("range "):
                variables, source = action[len("range "):].split(" := ")
                key_name, value_name = [v.strip() for v in variables.split(",")]
                items = values[source] if scope is not None else {}
                end = block(index + 1, None)[1]
                for key in sorted(items):
                    out.append(block(index + 1, dict(scope, **{key_name: key, value_name: items[key]}))[0])
                index = end
            elif scope is not None:
                expression, _pipe, function = action.partition(" | ")
                value = scope[expression] if expression in scope else values[expression]
                if function:
                    spaces = int(function.split()[1])
                    value = " " * spaces + str(value).replace("\n", "\n" + " " * spaces)
                out.append(str(value))
            index += 1
        return "".join(out), index

    rendered, _end = block(0, {})
    return rendered


def _kube_router_template_values(completed):
    spec = completed["spec"]
    kube_router_spec = spec["networking"]["kuberouter"]
    return ({".Networking.ServiceClusterIPRange": spec["serviceClusterIPRange"]},
            {"ContainerdSELinuxEnabled": bool(spec.get("containerd", {}).get("seLinuxEnabled")),
             "WithDefaultBool .Networking.KubeRouter.UseNFTablesForNetpol false":
                 bool(kube_router_spec.get("useNFTablesForNetpol"))})


def _node_local_dns_template_values(completed):
    """What kops' template functions return for this completed spec (template_functions.go, wellknownports.go)."""
    spec = completed["spec"]
    local = spec["kubeDNS"]["nodeLocalDNS"]
    health_port = "3989"
    cluster_ip = spec["kubeDNS"]["serverIP"] if spec.get("kubeProxy", {}).get("proxyMode") == "ipvs" \
        else "__PILLAR__CLUSTER__DNS__"
    host = "[%s]" % local["localIP"] if ":" in local["localIP"] else local["localIP"]
    values = {
        "KubeDNS.Domain": spec["kubeDNS"]["domain"],
        "KubeDNS.NodeLocalDNS.LocalIP": local["localIP"], ".KubeDNS.NodeLocalDNS.LocalIP": local["localIP"],
        "NodeLocalDNSClusterIP": cluster_ip, "NodeLocalDNSHealthCheck": health_port,
        "joinHostPort KubeDNS.NodeLocalDNS.LocalIP NodeLocalDNSHealthCheck": host + ":" + health_port,
        "KubeDNS.NodeLocalDNS.Image": local["image"], "KubeDNS.NodeLocalDNS.CPURequest": local["cpuRequest"],
        "KubeDNS.NodeLocalDNS.MemoryRequest": local["memoryRequest"],
        "KubeDNS.NodeLocalDNS.ExternalCoreFile": local.get("externalCoreFile", ""),
        "KubeDNS.NodeLocalDNS.AdditionalConfig": local.get("additionalConfig", ""),
        "KubeDNS.NodeLocalDNS.PodAnnotations": local.get("podAnnotations") or {},
    }
    conditions = {
        "KubeDNS.NodeLocalDNS.ExternalCoreFile": bool(local.get("externalCoreFile")),
        "WithDefaultBool KubeDNS.NodeLocalDNS.ForwardToKubeDNS false": bool(local.get("forwardToKubeDNS")),
        "IsIPv6Only": Facts(completed, ()).ipv6_only,
        "ContainerdSELinuxEnabled": bool(spec.get("containerd", {}).get("seLinuxEnabled")),
    }
    return values, conditions


def test_go_template_evaluator_follows_trim_markers_and_branches():
    text = "a:\n  {{- if X }}\n  b: {{ V | indent 2 }}\n  {{- else }}\n  c\n  {{- end }}\n{{ range $k, $v := M }}{{ $k }}={{ $v }};{{ end }}"
    assert go_template(text, {"V": "1\n2", "M": {"y": 2, "x": 1}}, {"X": True}) == "a:\n  b:   1\n  2\nx=1;y=2;"
    assert go_template(text, {"V": "", "M": {}}, {"X": False}) == "a:\n  c\n"
    with pytest.raises(KeyError):
        go_template("{{ Unknown }}", {}, {})


@NEEDS_KOPS
@pytest.mark.parametrize("addon, path, variant", [("networking.kuberouter", KUBE_ROUTER, v)
                                                  for v in KUBE_ROUTER_VARIANTS]
                         + [("nodelocaldns.addons.k8s.io", NODE_LOCAL_DNS, v) for v in NODE_LOCAL_DNS_VARIANTS])
def test_every_object_equals_kops_template_field_by_field(addon, path, variant):
    spec = (KUBE_ROUTER_VARIANTS if addon == "networking.kuberouter" else NODE_LOCAL_DNS_VARIANTS)[variant]
    completed, groups, files = _render(spec)
    values = (_kube_router_template_values if addon == "networking.kuberouter"
              else _node_local_dns_template_values)(completed)
    theirs = [d for d in yaml.safe_load_all(go_template(_template(addon), *values)) if d]
    registered = next(a for a in channel.ADDONS if a.name == addon)
    # kops relabels its template's objects as channel.remap does: compare what is stored.
    assert _documents(files[path]) == channel.remap(registered, theirs)
    assert (kube_router if addon == "networking.kuberouter" else node_local_dns).ADDON == addon


@NEEDS_KOPS
def test_node_local_dns_default_image_is_kops():
    source = (pathlib.Path(KOPS) / "pkg/model/components/kubedns.go").read_text()
    kops_image = re.search(r'nodeLocalDNS\.Image = new\("([^"]+)"\)', source).group(1)
    completed, _groups = _populated(**NODE_LOCAL_DNS_VARIANTS["default"])
    assert completed["spec"]["kubeDNS"]["nodeLocalDNS"]["image"] == kops_image
