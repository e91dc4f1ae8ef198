"""kubeops.kops.channel_apply as a user runs it (the installed collection, from a playbook): kops' rendered
bootstrap channel of the minimal-aws fixture (its manifests at kops' store paths) applied to a real kube-apiserver
(tests/realk8s/apiserver.py), the objects read back with the real clients (kubectl 1.34 and the kubernetes Python
client); the audit log shows which requests wrote."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
from tests.integration.conftest import task_results

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")

FIXTURE = pathlib.Path("/work/shared/conformance/kops/update_cluster/minimal-aws")
if not FIXTURE.exists():
    FIXTURE = pathlib.Path(__file__).resolve().parents[3] / "shared/conformance/kops/update_cluster/minimal-aws"
CLUSTER = "minimal-aws.example.com"
TASK = "Apply the channel"
NTH = "node-termination-handler.aws"
NTH_MANIFEST = "addons/node-termination-handler.aws/k8s-1.11.yaml"
KOPS_CONTROLLER = "kops-controller.addons.k8s.io"
COREDNS_MANIFEST = "addons/coredns.addons.k8s.io/k8s-1.12.yaml"
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Apply the channel
      kubeops.kops.channel_apply:
        channel: "{{ channel | default(omit) }}"
        config_base: "{{ config_base | default(omit) }}"
        kubeconfig: "{{ kubeconfig | default(omit) }}"
        api_server: "{{ api_server | default(omit) }}"
"""


def _store_from_fixture(root):
    """Every addon object of the fixture's Terraform (aws_s3_object key -> data/ file), at its key under root:
    a file:// state store holding kops' channel and manifests as kops uploads them."""
    terraform = (FIXTURE / "kubernetes.tf").read_text()
    written = []
    for block in re.findall(r'resource "aws_s3_object" "[^"]+" \{(.*?)\n\}', terraform, re.S):
        content = re.search(r'content\s*=\s*file\("\$\{path.module\}/data/([^"]+)"\)', block)
        key = re.search(r'key\s*=\s*"([^"]+)"', block).group(1)
        if content and "/addons/" in key:
            target = root / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes((FIXTURE / "data" / content.group(1)).read_bytes())
            written.append(key)
    return written


@pytest.fixture
def fixture_channel(tmp_path):
    if not FIXTURE.exists():
        pytest.skip("kops' conformance fixtures are not at %s" % FIXTURE)
    state = tmp_path / "state"
    keys = _store_from_fixture(state)
    assert len(keys) == 10  # the channel and its 9 manifests
    config_base = "file://%s/clusters.example.com/%s" % (state, CLUSTER)
    (tmp_path / "apply.yml").write_text(PLAYBOOK)
    return {"config_base": config_base, "dir": state / "clusters.example.com" / CLUSTER,
            "channel": config_base + "/addons/bootstrap-channel.yaml", "playbook": tmp_path / "apply.yml"}


def _channel(fixture_channel):
    return yaml.safe_load((fixture_channel["dir"] / "addons/bootstrap-channel.yaml").read_text())


def _write_channel(fixture_channel, channel):
    (fixture_channel["dir"] / "addons/bootstrap-channel.yaml").write_text(yaml.safe_dump(channel))


def _objects(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _kubectl_get(kubectl, kubeconfig, manifest):
    """kubectl get -f MANIFEST: each object of the manifest, read back through the API (kubectl's discovery)."""
    listed = subprocess.run([kubectl, "--kubeconfig", kubeconfig, "get", "-f", str(manifest), "-o", "json",
                             "--show-managed-fields"],
                            capture_output=True, text=True, timeout=60, check=False)
    return listed.returncode, listed.stdout, listed.stderr


def test_fixture_channel_applied_then_stable_then_updated_with_prune(real_kube_api, kubectl, playbook,
                                                                     fixture_channel):
    server = real_kube_api
    for name, role in (("cp-1", "control-plane"), ("node-1", "node")):
        server.create("v1", "Node", {"metadata": {"name": name, "labels": {"node-role.kubernetes.io/%s" % role: ""}},
                                     "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    args = ("-e", "config_base=%s" % fixture_channel["config_base"], "-e", "kubeconfig=%s" % server.kubeconfig_path)
    channel = _channel(fixture_channel)
    names = [a["name"] for a in channel["spec"]["addons"]]
    assert len(names) == 9

    # Check mode: the plan, from reads only.
    start = server.audit_mark()
    code, run = playbook(fixture_channel["playbook"], *args, "--check")
    result = task_results(run, TASK)
    assert code == 0, result
    assert result["changed"] is True and [a["action"] for a in result["addons"]] == ["install"] * 9
    assert server.mutations_since(start) == []
    planned = {a["name"]: a["applied"] for a in result["addons"]}
    assert "Deployment kube-system/coredns" in planned["coredns.addons.k8s.io"]

    # Apply: every object of every manifest is there, read back by kubectl; kops' records on kube-system.
    start = server.audit_mark()
    code, run = playbook(fixture_channel["playbook"], *args)
    result = task_results(run, TASK)
    assert code == 0, result
    assert result["changed"] is True and result["channel"] == fixture_channel["channel"]
    assert {a["name"]: a["applied"] for a in result["addons"]} == planned
    # The audit log has every write: one server-side apply (a PATCH) per object and one record per addon.
    writes = server.mutations_since(start)
    assert [verb for verb, _uri, _code, _user in writes] == ["patch"] * (65 + 9), writes
    assert sum(uri == "/api/v1/namespaces/kube-system" for _v, uri, _c, _u in writes) == 9, writes
    applied = 0
    for addon in channel["spec"]["addons"]:
        manifest = fixture_channel["dir"] / "addons" / addon["manifest"]
        code, out, err = _kubectl_get(kubectl, server.kubeconfig_path, manifest)
        assert code == 0, err
        found = json.loads(out)
        found = found.get("items", [found])
        wanted = [(o["kind"], o["metadata"]["name"]) for o in _objects(manifest)]
        assert [(o["kind"], o["metadata"]["name"]) for o in found] == wanted
        applied += len(found)
        for obj in found:
            managers = {(m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields") or []}
            assert ("kubeops-channels", "Apply") in managers, obj["metadata"]
    assert applied == 65
    api = kubernetes.config.new_client_from_config(config_file=server.kubeconfig_path)
    core = kubernetes.client.CoreV1Api(api)
    annotations = core.read_namespace("kube-system").metadata.annotations
    for addon in channel["spec"]["addons"]:
        record = annotations["addons.k8s.io/" + addon["name"]]
        expected = {"channel": fixture_channel["channel"], "manifestHash": addon["manifestHash"],
                    "systemGeneration": 1}
        if addon.get("id"):
            expected["id"] = addon["id"]
        assert json.loads(record) == expected
        assert record == json.dumps({k: expected[k] for k in ("channel", "id", "manifestHash", "systemGeneration")
                                     if k in expected}, separators=(",", ":"))  # Go's compact, ordered JSON
    assert not any("kops.k8s.io/needs-update" in (n.metadata.annotations or {}) for n in core.list_node().items)

    # Second run: nothing to apply, no write at all.
    start = server.audit_mark()
    code, run = playbook(fixture_channel["playbook"], *args)
    result = task_results(run, TASK)
    assert code == 0 and result["changed"] is False, result
    assert {a["action"] for a in result["addons"]} == {"unchanged"}
    assert server.mutations_since(start) == []

    # Another manager edits a field the channel owns: the API refuses without --force-conflicts (409).
    corefile = next(o for o in _objects(fixture_channel["dir"] / COREDNS_MANIFEST) if o["kind"] == "ConfigMap")
    edited = dict(corefile, data={"Corefile": ".:53 {\n    errors\n}\n"})
    edit = fixture_channel["dir"].parent / "edited-coredns.yaml"
    edit.write_text(yaml.safe_dump(edited))
    apply_edit = [kubectl, "--kubeconfig", server.kubeconfig_path, "apply", "--server-side", "--validate=false",
                  "--field-manager=someone",
                  "-f", str(edit)]
    refused = subprocess.run(apply_edit, capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode != 0 and "conflict" in refused.stderr.lower(), refused.stderr
    forced = subprocess.run(apply_edit + ["--force-conflicts"], capture_output=True, text=True, timeout=60, check=False)
    assert forced.returncode == 0, forced.stderr

    # A new NTH manifest without its ServiceAccount (a prune kind), a new kops-controller (needsRollingUpdate:
    # control-plane) and a new coredns hash: those three are applied, the dropped object pruned.
    nth = fixture_channel["dir"] / NTH_MANIFEST
    kept = [o for o in _objects(nth) if o["kind"] != "ServiceAccount"]
    nth.write_text("---\n".join(yaml.safe_dump(o) for o in kept))
    for addon in channel["spec"]["addons"]:
        if addon["name"] in (NTH, KOPS_CONTROLLER, "coredns.addons.k8s.io"):
            addon["manifestHash"] = "0" * 64
    _write_channel(fixture_channel, channel)

    start = server.audit_mark()
    code, run = playbook(fixture_channel["playbook"], *args, "--check", "--diff")
    result = task_results(run, TASK)
    assert code == 0, result
    assert server.mutations_since(start) == []
    by_name = {a["name"]: a for a in result["addons"]}
    assert {n for n, a in by_name.items() if a["action"] == "update"} == {NTH, KOPS_CONTROLLER,
                                                                          "coredns.addons.k8s.io"}
    assert by_name[NTH]["pruned"] == ["ServiceAccount kube-system/aws-node-termination-handler"]
    assert by_name[KOPS_CONTROLLER]["nodes_annotated"] == ["cp-1"]
    assert "0000000000" in result["diff"]["after"] and "ServiceAccount kube-system/aws-node-termination-handler" \
        in result["diff"]["after"]

    code, run = playbook(fixture_channel["playbook"], *args)
    result = task_results(run, TASK)
    assert code == 0 and result["changed"] is True, result
    by_name = {a["name"]: a for a in result["addons"]}
    assert by_name[NTH]["pruned"] == ["ServiceAccount kube-system/aws-node-termination-handler"]
    assert sum(a["action"] == "unchanged" for a in result["addons"]) == 6
    with pytest.raises(kubernetes.client.ApiException) as gone:
        core.read_namespaced_service_account("aws-node-termination-handler", "kube-system")
    assert gone.value.status == 404
    code, out, err = _kubectl_get(kubectl, server.kubeconfig_path, nth)
    assert code == 0 and len(json.loads(out)["items"]) == len(kept), err
    nodes = {n.metadata.name: n.metadata.annotations or {} for n in core.list_node().items}
    assert "kops.k8s.io/needs-update" in nodes["cp-1"] and "kops.k8s.io/needs-update" not in nodes["node-1"]
    # The forced apply took the Corefile back from the other manager.
    assert core.read_namespaced_config_map("coredns", "kube-system").data == corefile["data"]
    record = json.loads(core.read_namespace("kube-system").metadata.annotations["addons.k8s.io/" + NTH])
    assert record["manifestHash"] == "0" * 64

    start = server.audit_mark()
    code, run = playbook(fixture_channel["playbook"], *args)
    assert code == 0 and task_results(run, TASK)["changed"] is False
    assert server.mutations_since(start) == []


ROLE_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The API part of roles/protokube, as the control plane runs it
      ansible.builtin.include_role:
        name: kubeops.kops.protokube
        tasks_from: api
      vars:
        protokube_nodeup_config: {kubeops: {configBase: "{{ config_base }}"}, ClusterName: minimal-aws.example.com}
        protokube_api_url: "{{ api_server }}/healthz"
        protokube_api_server: "{{ api_server }}"
        protokube_channel_python_packages: []
"""
ROLE_TASK = "kubeops.kops.protokube : Apply the addons channel (kops' channels apply channel)"


def test_protokube_applies_the_channel_with_a_credential_it_issues(playbook, fixture_channel, tmp_path,
                                                                   start_real_kube_api, real_kube_api):
    """roles/protokube: once the API answers, the bootstrap channel under configBase is applied with a
    system:masters certificate issued from the store's kubernetes-ca: an API server trusting only that CA (401/403
    to anything else) accepts it; the temporary credential files are gone after the run."""
    import tempfile
    keyset = keystore.new_keyset("kubernetes-ca")
    keyset_path = fixture_channel["dir"] / keystore.path("kubernetes-ca")
    keyset_path.parent.mkdir(parents=True, exist_ok=True)
    keyset_path.write_bytes(keystore.dump(keyset))
    (tmp_path / "role.yml").write_text(ROLE_PLAYBOOK)
    leftovers = set(pathlib.Path(tempfile.gettempdir()).glob("kubeops-channels-*"))
    server = start_real_kube_api(ca=keystore.primary(keyset))
    args = ("-e", "config_base=%s" % fixture_channel["config_base"], "-e", "api_server=%s" % server.url)
    code, run = playbook(tmp_path / "role.yml", *args)
    result = task_results(run, ROLE_TASK)
    assert code == 0, result
    assert [a["action"] for a in result["addons"]] == ["install"] * 9
    assert result["channel"] == fixture_channel["channel"]
    assert server.get("apps/v1", "Deployment", "coredns", namespace="kube-system")
    assert "PRIVATE KEY" not in json.dumps(run)
    code, run = playbook(tmp_path / "role.yml", *args)
    assert code == 0 and task_results(run, ROLE_TASK)["changed"] is False
    assert set(pathlib.Path(tempfile.gettempdir()).glob("kubeops-channels-*")) == leftovers

    # Another cluster's API (the session's, with a CA of its own): it does not trust this CA.
    code, run = playbook(fixture_channel["playbook"], "-e", "config_base=%s" % fixture_channel["config_base"],
                         "-e", "api_server=%s" % real_kube_api.url)
    result = task_results(run, TASK)
    assert code != 0 and "Kubernetes API" in result["msg"], result


def test_a_failing_addon_is_reported_and_left_unrecorded(real_kube_api, playbook, fixture_channel):
    """An object of a kind the API does not serve fails its addon, names it, and the other addons are applied."""
    channel = _channel(fixture_channel)
    manifest = fixture_channel["dir"] / "addons" / "limit-range.addons.k8s.io/v1.5.0.yaml"
    manifest.write_text(manifest.read_text() + "\n---\napiVersion: example.com/v1\nkind: Widget\n"
                        "metadata:\n  name: w\n  namespace: default\n")
    _write_channel(fixture_channel, channel)
    code, run = playbook(fixture_channel["playbook"], "-e", "config_base=%s" % fixture_channel["config_base"],
                         "-e", "kubeconfig=%s" % real_kube_api.kubeconfig_path)
    result = task_results(run, TASK)
    assert code != 0
    assert "addon limit-range.addons.k8s.io: Widget default/w: the API serves no example.com/v1 Widget" in result["msg"]
    annotations = real_kube_api.get("v1", "Namespace", "kube-system")["metadata"]["annotations"]
    assert "addons.k8s.io/limit-range.addons.k8s.io" not in annotations
    assert len([k for k in annotations if k.startswith("addons.k8s.io/")]) == 8


WIDGETS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _widget(name):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "widgets", "labels": {"addon.kops.k8s.io/name": "widgets"}},
            "spec": {"size": 1}}


def test_a_crd_its_namespace_and_its_objects_from_a_channel_on_the_host(real_kube_api, playbook, tmp_path):
    """A channel given as a path: objects of a kind whose CRD the same manifest defines (listed first) are applied
    once the kind is served; a prune kind of that CRD deletes the object a new manifest dropped."""
    addons = tmp_path / "addons"
    (addons / "widgets").mkdir(parents=True)
    manifest = addons / "widgets" / "v1.yaml"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "widgets"}}
    manifest.write_text(yaml.safe_dump_all([_widget("w1"), _widget("w2"), WIDGETS_CRD, namespace]))
    channel = {"kind": "Addons", "metadata": {"name": "extra"}, "spec": {"addons": [
        {"name": "widgets", "id": "v1", "manifest": "widgets/v1.yaml", "manifestHash": "1" * 64,
         "prune": {"kinds": [{"group": "example.com", "kind": "Widget",
                              "labelSelector": "addon.kops.k8s.io/name=widgets",
                              "namespaces": ["widgets"]}]}}]}}
    (addons / "channel.yaml").write_text(yaml.safe_dump(channel))
    (tmp_path / "apply.yml").write_text(PLAYBOOK)
    args = ("-e", "channel=%s" % (addons / "channel.yaml"), "-e", "kubeconfig=%s" % real_kube_api.kubeconfig_path)

    start = real_kube_api.audit_mark()
    code, run = playbook(tmp_path / "apply.yml", *args, "--check")
    result = task_results(run, TASK)
    assert code == 0 and result["changed"] is True and result["addons"][0]["pruned"] == [], result
    assert real_kube_api.mutations_since(start) == []

    code, run = playbook(tmp_path / "apply.yml", *args)
    result = task_results(run, TASK)
    assert code == 0, result
    assert result["addons"][0]["applied"] == [
        "Namespace widgets", "CustomResourceDefinition widgets.example.com", "Widget widgets/w1", "Widget widgets/w2"]
    api = kubernetes.config.new_client_from_config(config_file=real_kube_api.kubeconfig_path)
    custom = kubernetes.client.CustomObjectsApi(api)
    listed = custom.list_namespaced_custom_object("example.com", "v1", "widgets", "widgets")
    assert sorted(w["metadata"]["name"] for w in listed["items"]) == ["w1", "w2"]
    annotations = kubernetes.client.CoreV1Api(api).read_namespace("kube-system").metadata.annotations
    record = annotations["addons.k8s.io/widgets"]
    assert json.loads(record)["channel"] == str(addons / "channel.yaml")

    manifest.write_text(yaml.safe_dump_all([namespace, WIDGETS_CRD, _widget("w1")]))
    channel["spec"]["addons"][0]["manifestHash"] = "2" * 64
    (addons / "channel.yaml").write_text(yaml.safe_dump(channel))
    code, run = playbook(tmp_path / "apply.yml", *args)
    result = task_results(run, TASK)
    assert code == 0 and result["addons"][0]["pruned"] == ["Widget widgets/w2"], result
    listed = custom.list_namespaced_custom_object("example.com", "v1", "widgets", "widgets")
    assert [w["metadata"]["name"] for w in listed["items"]] == ["w1"]


def test_the_replica_deletes_a_collection_by_label_and_stores_nothing_for_a_no_op_patch(kube_api):
    """Not a test of the collection: the replica's own (tests/kube_api_server.py), which its tests in
    test_kube_api_server.py do not cover, kept on it so that what it claims stays proven against the real client."""
    api = kubernetes.config.new_client_from_config(config_file=kube_api.kubeconfig_path)
    core = kubernetes.client.CoreV1Api(api)
    for name, labels in (("a", {"addon": "x"}), ("b", {"addon": "x"}), ("c", {"addon": "y"})):
        core.create_namespaced_config_map("default", {"metadata": {"name": name, "labels": labels}})
    core.delete_collection_namespaced_config_map("default", label_selector="addon=x")
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["c"]
    version = core.read_namespaced_config_map("c", "default").metadata.resource_version
    core.patch_namespaced_config_map("c", "default", {"metadata": {"labels": {"addon": "y"}}})  # changes nothing
    assert core.read_namespaced_config_map("c", "default").metadata.resource_version == version


ISSUERS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "issuers.cert-manager.io"},
    "spec": {"group": "cert-manager.io", "scope": "Namespaced",
             "names": {"kind": "Issuer", "plural": "issuers", "singular": "issuer", "listKind": "IssuerList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_needs_pki_makes_the_addons_ca_and_issuer_as_kops_channels_do(real_kube_api, tmp_path):
    """needsPKI (kops sets it on metrics-server): a CA of the addon's own in Secret kube-system/<name>-ca and a
    cert-manager CA Issuer kube-system/<name> over it, made before the manifest is applied; without cert-manager's
    Issuer kind the addon fails naming it and stays unrecorded; a lost Issuer is made again, the CA kept."""
    from ansible_collections.kubeops.kops.plugins.module_utils.kube import channels
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "v1.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "metrics", "namespace": "kube-system"}}))
    (tmp_path / "channel.yaml").write_text(yaml.safe_dump({"kind": "Addons", "spec": {"addons": [
        {"name": "metrics", "id": "v1", "manifest": "metrics/v1.yaml", "manifestHash": "1" * 64, "needsPKI": True}]}}))
    api = channels.ApiService.from_kubeconfig(real_kube_api.kubeconfig_path)

    def run(check_mode=False):
        return channels.ChannelRunner(api, str(tmp_path / "channel.yaml")).run(check_mode=check_mode)

    first = run()
    assert first["errors"] and "install cert-manager" in first["errors"][0], first
    core = kubernetes.client.CoreV1Api(real_kube_api.api_client())
    assert "addons.k8s.io/metrics" not in (core.read_namespace("kube-system").metadata.annotations or {})

    api.apply(api.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition"), ISSUERS_CRD)
    # cert-manager installed by an earlier pass: its CRD is served by the time the channel runs again.
    assert api.wait_for_resource(channels.ISSUER_API, "Issuer", 30)
    start = real_kube_api.audit_mark()
    planned = run(check_mode=True)
    assert planned["addons"][0]["pki"] == ["Secret kube-system/metrics-ca", "Issuer kube-system/metrics"]
    assert real_kube_api.mutations_since(start) == []
    applied = run()
    assert applied["errors"] == [] and applied["addons"][0]["action"] == "install", applied
    secret = core.read_namespaced_secret("metrics-ca", "kube-system")
    assert secret.type == "kubernetes.io/tls"
    import base64
    ca = certs.load_certificate(base64.b64decode(secret.data["tls.crt"]))
    assert ca.subject.rfc4514_string() == "CN=metrics" and certs.issued_by(ca, ca)
    custom = kubernetes.client.CustomObjectsApi(core.api_client)
    issuer = custom.get_namespaced_custom_object("cert-manager.io", "v1", "kube-system", "issuers", "metrics")
    assert issuer["spec"] == {"ca": {"secretName": "metrics-ca"}}
    assert run()["changed"] is False

    custom.delete_namespaced_custom_object("cert-manager.io", "v1", "kube-system", "issuers", "metrics")
    again = run()
    assert [a["action"] for a in again["addons"]] == ["pki"] and again["addons"][0]["applied"] == []
    assert custom.get_namespaced_custom_object("cert-manager.io", "v1", "kube-system", "issuers", "metrics")
    assert core.read_namespaced_secret("metrics-ca", "kube-system").data["tls.crt"] == secret.data["tls.crt"]
