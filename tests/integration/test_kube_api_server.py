"""The Kubernetes API test server against the real clients: kubectl 1.34 and the `kubernetes` Python client.

Each test checks one behaviour measured on a real kube-apiserver (docs/kube-api-test-server.md).
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
from kubernetes.client.rest import ApiException  # noqa: E402


def _message(exc):
    body = exc.body.decode() if isinstance(exc.body, bytes) else exc.body
    return json.loads(body)["message"] + json.dumps(json.loads(body).get("details"))


def _client(kube_api):
    return kubernetes.config.new_client_from_config(config_file=kube_api.kubeconfig_path)


def _node(name, ready="True"):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def _pod(name, node, namespace="default", labels=None, owner=None, grace=30):
    metadata = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "u-" + name,
                                        "controller": True}]
    return {"metadata": metadata, "spec": {"nodeName": node, "terminationGracePeriodSeconds": grace,
                                           "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


def _running(kube_api, name, namespace="default"):
    status = {"phase": "Running", "containerStatuses": [
        {"name": "c", "ready": True, "restartCount": 0, "image": "registry.k8s.io/pause:3.10", "imageID": "sha256:0"}]}
    kube_api.set_status("v1", "Pod", name, status, namespace=namespace)


def _kubectl(kubectl, kube_api, *args, timeout=60):
    return subprocess.run([kubectl, "--kubeconfig", kube_api.kubeconfig_path, *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_without_a_system_masters_certificate_the_server_refuses(kube_api, tmp_path):
    other = kube_api.write_kubeconfig(tmp_path / "viewer", user="viewer", groups=("developers",))
    with pytest.raises(ApiException) as refused:
        kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(config_file=other)).list_node()
    assert refused.value.status == 403
    assert kubernetes.client.CoreV1Api(_client(kube_api)).list_node().items == []


def test_pod_creation_needs_the_default_service_account(kube_api):
    core = kubernetes.client.CoreV1Api(_client(kube_api))
    core.create_namespace({"metadata": {"name": "apps"}})
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("apps", _pod("web", "n1", namespace="apps"))
    assert refused.value.status == 403 and 'serviceaccount "default" not found' in _message(refused.value)
    core.create_namespaced_service_account("apps", {"metadata": {"name": "default"}})
    created = core.create_namespaced_pod("apps", _pod("web", "n1", namespace="apps"))
    assert created.status.phase == "Pending" and created.spec.service_account_name == "default"


def test_node_status_is_a_subresource_and_cordon_patches_spec(kube_api, kubectl):
    core = kubernetes.client.CoreV1Api(_client(kube_api))
    core.create_node(_node("n1", ready="False"))
    # The main resource ignores status; the status subresource ignores everything else.
    core.patch_node("n1", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert core.read_node("n1").status.conditions[0].status == "False"
    core.patch_node_status("n1", {"status": {"conditions": [{"type": "Ready", "status": "True"}]},
                                  "metadata": {"labels": {"ignored": "yes"}}})
    node = core.read_node("n1")
    assert node.status.conditions[0].status == "True" and "ignored" not in node.metadata.labels

    done = _kubectl(kubectl, kube_api, "cordon", "n1")
    assert done.returncode == 0, done.stderr
    assert core.read_node("n1").spec.unschedulable is True
    listed = _kubectl(kubectl, kube_api, "get", "nodes")
    assert "Ready,SchedulingDisabled" in listed.stdout


def test_pods_list_across_namespaces_with_selectors_and_pages(kube_api):
    core = kubernetes.client.CoreV1Api(_client(kube_api))
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="default")
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="kube-system")
    for index in range(5):
        core.create_namespaced_pod("default", _pod("p%d" % index, "n%d" % (index % 2), labels={"i": str(index)}))
    core.create_namespaced_pod("kube-system", _pod("dns", "n1", namespace="kube-system", labels={"k8s-app": "dns"}))
    names, token, pages = [], None, 0
    while True:
        page = core.list_pod_for_all_namespaces(limit=2, _continue=token)
        names += [p.metadata.name for p in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3 and names == ["p0", "p1", "p2", "p3", "p4", "dns"]
    on_n1 = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1").items
    assert sorted(p.metadata.name for p in on_n1) == ["dns", "p1", "p3"]
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces(label_selector="i in (1,4)").items] == ["p1", "p4"]
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces(label_selector="k8s-app").items] == ["dns"]


def test_eviction_is_refused_until_the_budget_allows_then_the_pod_terminates(kube_api):
    api = _client(kube_api)
    core, policy = kubernetes.client.CoreV1Api(api), kubernetes.client.PolicyV1Api(api)
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="default")
    core.create_namespaced_pod("default", _pod("web", "n1", labels={"app": "web"}, grace=30))
    _running(kube_api, "web")
    policy.create_namespaced_pod_disruption_budget("default", {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web", "namespace": "default"}}
    # Before the disruption controller filled the status: refused.
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod_eviction("web", "default", eviction)
    assert refused.value.status == 429 and "disruption budget" in _message(refused.value)
    kube_api.set_status("policy/v1", "PodDisruptionBudget", "web", {
        "observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
        "expectedPods": 1}, namespace="default")
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod_eviction("web", "default", eviction)
    assert refused.value.status == 429 and "needs 1 healthy pods and has 1 currently" in _message(refused.value)

    kube_api.set_status("policy/v1", "PodDisruptionBudget", "web", {
        "observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1,
        "expectedPods": 2}, namespace="default")
    core.create_namespaced_pod_eviction("web", "default", eviction)
    assert kube_api.requests[-1][2] == 201
    terminating = core.read_namespaced_pod("web", "default")
    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.deletion_grace_period_seconds == 30
    assert policy.read_namespaced_pod_disruption_budget("web", "default").status.disruptions_allowed == 0
    # The grace period (capped at the server's max_grace_seconds for tests) ends, and the pod is gone.
    time.sleep(kube_api.state.max_grace_seconds + 0.2)
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_pod("web", "default")
    assert gone.value.status == 404


def test_delete_with_grace_period_zero_removes_at_once(kube_api):
    core = kubernetes.client.CoreV1Api(_client(kube_api))
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="default")
    core.create_namespaced_pod("default", _pod("web", "n1"))
    core.delete_namespaced_pod("web", "default", grace_period_seconds=0)
    assert core.list_namespaced_pod("default").items == []


def test_server_side_apply_records_managers_and_conflicts(kube_api):
    api = _client(kube_api)
    dynamic = kubernetes.dynamic.DynamicClient(api)
    config_maps = dynamic.resources.get(api_version="v1", kind="ConfigMap")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"},
            "data": {"mode": "fast"}}
    config_maps.server_side_apply(body=body, name="settings", namespace="default", field_manager="addons")
    assert kube_api.requests[-1][2] == 201
    config_maps.server_side_apply(body=body, name="settings", namespace="default", field_manager="addons")
    assert kube_api.requests[-1][2] == 200
    stored = config_maps.get(name="settings", namespace="default").to_dict()
    managers = {(m["manager"], m["operation"]) for m in stored["metadata"]["managedFields"]}
    assert managers == {("addons", "Apply")}

    taken = dict(body, data={"mode": "slow"})
    with pytest.raises(kubernetes.dynamic.exceptions.ConflictError) as conflict:
        config_maps.server_side_apply(body=taken, name="settings", namespace="default", field_manager="operator")
    assert 'conflict with "addons"' in _message(conflict.value) and ".data.mode" in _message(conflict.value)
    config_maps.server_side_apply(body=taken, name="settings", namespace="default", field_manager="operator",
                                  force_conflicts=True)
    stored = config_maps.get(name="settings", namespace="default").to_dict()
    assert stored["data"] == {"mode": "slow"}
    assert [m["manager"] for m in stored["metadata"]["managedFields"]] == ["operator"]


def test_secret_string_data_is_folded_into_data_on_every_write(kube_api):
    """As the API server does on create, update, patch and apply: stringData never stored, data base64."""
    import base64
    api = _client(kube_api)
    dynamic = kubernetes.dynamic.DynamicClient(api)
    secrets = dynamic.resources.get(api_version="v1", kind="Secret")
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
            "stringData": {"token": "one"}}

    def stored():
        secret = secrets.get(name="s", namespace="default").to_dict()
        assert "stringData" not in secret
        return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    secrets.server_side_apply(body=body, name="s", namespace="default", field_manager="addons")
    assert stored() == {"token": "one"}
    secrets.server_side_apply(body=dict(body, stringData={"token": "two"}), name="s", namespace="default",
                              field_manager="addons")
    assert stored() == {"token": "two"}
    secrets.patch(body={"stringData": {"extra": "three"}}, name="s", namespace="default",
                  content_type="application/merge-patch+json")
    assert stored() == {"token": "two", "extra": "three"}
    current = secrets.get(name="s", namespace="default").to_dict()
    current["stringData"] = {"token": "four"}
    secrets.replace(body=current, name="s", namespace="default")
    assert stored() == {"token": "four", "extra": "three"}


def test_kubectl_drain_ignores_daemonsets_waits_on_the_budget_and_evicts(kube_api, kubectl):
    kube_api.create("v1", "Node", _node("n1"))
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="kube-system")
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="default")
    kube_api.create("apps/v1", "DaemonSet", {"metadata": {"name": "proxy"}, "spec": {}}, namespace="kube-system")
    kube_api.create("apps/v1", "ReplicaSet", {"metadata": {"name": "web"}, "spec": {}}, namespace="default")
    kube_api.create("v1", "Pod", _pod("proxy-x", "n1", "kube-system", owner=("DaemonSet", "proxy")))
    kube_api.create("v1", "Pod", _pod("web-1", "n1", labels={"app": "web"}, owner=("ReplicaSet", "web")))
    _running(kube_api, "proxy-x", "kube-system")
    _running(kube_api, "web-1")
    kube_api.create("policy/v1", "PodDisruptionBudget", {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
        namespace="default")

    started = time.monotonic()
    blocked = _kubectl(kubectl, kube_api, "drain", "n1", "--ignore-daemonsets", "--timeout=3s")
    assert blocked.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget" in blocked.stderr
    assert time.monotonic() - started >= 3
    assert kube_api.get("v1", "Node", "n1")["spec"]["unschedulable"] is True

    kube_api.set_status("policy/v1", "PodDisruptionBudget", "web", {
        "observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1,
        "expectedPods": 2}, namespace="default")
    drained = _kubectl(kubectl, kube_api, "drain", "n1", "--ignore-daemonsets", "--timeout=30s")
    assert drained.returncode == 0, drained.stderr
    assert "evicting pod default/web-1" in drained.stdout + drained.stderr
    assert "ignoring DaemonSet-managed Pods: kube-system/proxy-x" in drained.stdout + drained.stderr
    assert "node/n1 drained" in drained.stdout
    pods = _kubectl(kubectl, kube_api, "get", "pods", "-A", "-o", "name")
    assert pods.stdout.split() == ["pod/proxy-x"]


def test_kubectl_drain_refuses_unmanaged_pods_without_force(kube_api, kubectl):
    kube_api.create("v1", "Node", _node("n1"))
    kube_api.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace="default")
    kube_api.create("v1", "Pod", _pod("lonely", "n1"))
    _running(kube_api, "lonely")
    refused = _kubectl(kubectl, kube_api, "drain", "n1", "--ignore-daemonsets", "--timeout=5s")
    assert refused.returncode != 0 and "cannot delete Pods that declare no controller" in refused.stderr
    forced = _kubectl(kubectl, kube_api, "drain", "n1", "--ignore-daemonsets", "--force", "--timeout=30s")
    assert forced.returncode == 0, forced.stderr
