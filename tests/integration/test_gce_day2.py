"""GCE day 2 on tests/gce_server.py: the inventory (ansible-inventory --list), the rolling update's table and plan
in check mode (reads only), one roll step with drain and validation on a real kube-apiserver
(tests/realk8s/apiserver.py), and the node side (etcd disk finder, api.internal in Cloud DNS) through their modules.

The cluster is created in a file:// store as a user would (plan_create with cloud_provider gce); its managed
instance groups are seeded on the test server the way kops makes them (template metadata cluster-name and
kops-k8s-io-instance-group-name, labels k8s-io-*), so the reader is tested on the API's shapes, not on ours.
"""

from __future__ import annotations

import collections
import json
import subprocess
import time

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from tests.integration.conftest import BIN, REPO, ansible_env, task_results
from tests.realk8s import apiserver

CLUSTER = "gce.example.com"
LABEL = "gce-example-com"
PROJECT = "p1"
ZONE = "us-test1-a"
PLAYBOOK = REPO / "playbooks" / "rolling_update.yml"
TASK = "Rolling update of %s" % CLUSTER
READS = ("GET",)


def _create(store_url):
    service = ClusterService(store_url)
    service.execute(service.plan_create({"cluster_name": CLUSTER, "cloud_provider": "gce", "zones": [ZONE],
                                         "project": PROJECT, "networking": "cni", "kubernetes_version": "v1.34.2"}))
    _cluster, groups = service.read(CLUSTER)
    return {g["metadata"]["name"]: g["spec"]["role"] for g in groups}


def _template(gce, name, group, role):
    role_labels = {"Master": {"k8s-io-role-master": "master", "k8s-io-role-control-plane": "control-plane"},
                   "ControlPlane": {"k8s-io-role-master": "master", "k8s-io-role-control-plane": "control-plane"},
                   "Node": {"k8s-io-role-node": "node"}}[role]
    return gce.seed("projects/%s/global/instanceTemplates" % PROJECT, {"name": name, "properties": {
        "machineType": "e2-medium", "labels": dict({"k8s-io-cluster-name": LABEL, "k8s-io-instance-group": group},
                                                   **role_labels),
        "metadata": {"items": [{"key": "cluster-name", "value": CLUSTER},
                               {"key": "kops-k8s-io-instance-group-name", "value": group}]},
        "networkInterfaces": [{"accessConfigs": [{"type": "ONE_TO_ONE_NAT"}]}]}})


def _seed(gce, groups, sizes):
    """A template and a manager per instance group (kops' names: <zone letter>-<group>-<cluster dashes>)."""
    managers = {}
    for group, role in sorted(groups.items()):
        template = _template(gce, "%s-%s-1" % (group, LABEL)[:60], group, role)
        name = "a-%s-%s" % (group, LABEL)
        gce.seed("projects/%s/zones/%s/instanceGroupManagers" % (PROJECT, ZONE), {
            "name": name, "instanceTemplate": template["selfLink"], "targetSize": sizes.get(role, 1),
            "baseInstanceName": "%s-%s" % (group, LABEL)})
        managers[group] = name
    # Another cluster's group beside.
    other = gce.seed("projects/%s/global/instanceTemplates" % PROJECT, {"name": "nodes-other", "properties": {
        "labels": {"k8s-io-cluster-name": "other-example-com"},
        "metadata": {"items": [{"key": "cluster-name", "value": "other.example.com"},
                               {"key": "kops-k8s-io-instance-group-name", "value": "nodes"}]}}})
    gce.seed("projects/%s/zones/%s/instanceGroupManagers" % (PROJECT, ZONE), {
        "name": "a-nodes-other-example-com", "instanceTemplate": other["selfLink"], "targetSize": 1,
        "baseInstanceName": "nodes-other"})
    return managers


def _new_template(gce, groups, group, managers):
    """What an update does: a new template, set on the group's manager (its instances keep the old one)."""
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
    template = _template(gce, "%s-%s-2" % (group, LABEL)[:60], group, groups[group])
    GceCloud(CLUSTER, PROJECT, "us-test1").call("compute", "POST", "projects/%s/zones/%s/instanceGroupManagers/%s/"
                                                "setInstanceTemplate" % (PROJECT, ZONE, managers[group]),
                                                body={"instanceTemplate": template["selfLink"]})


def _instances(gce):
    return {name: gce.store["compute:projects/%s/zones/%s/instances" % (PROJECT, ZONE)][name]
            for name in gce.names("projects/%s/zones/%s/instances" % (PROJECT, ZONE))}


def _mutations_besides_reads(gce):
    """Mutating requests other than listManagedInstances (a POST that only reads)."""
    return [(m, p) for m, p in gce.mutations() if not p.endswith("/listManagedInstances")]


def test_inventory_lists_the_managed_instances(gce, tmp_path):
    store_url = "file://%s" % (tmp_path / "state")
    groups = _create(store_url)
    managers = _seed(gce, groups, {"Node": 2})
    nodes = next(g for g, role in groups.items() if role == "Node")
    _new_template(gce, groups, nodes, managers)
    config = tmp_path / "cluster.kops.yml"
    config.write_text("plugin: kubeops.kops.kops\nstate_store: %s\ncluster_name: %s\n" % (store_url, CLUSTER))
    gce.requests.clear()
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(config), "--list"],
                          env=ansible_env(REPO / "build" / "collections"), capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert gce.mutations() == [("POST", "/compute/v1/projects/p1/zones/%s/instanceGroupManagers/%s/listManagedInstances"
                                % (ZONE, m)) for m in sorted(managers.values())]
    inventory = json.loads(proc.stdout)
    hostvars = json.loads(json.dumps(inventory["_meta"]["hostvars"]),
                          object_hook=lambda d: d.get("__ansible_unsafe", d) if len(d) == 1 else d)
    instances = _instances(gce)
    ours = {n: i for n, i in instances.items() if i["labels"].get("k8s-io-cluster-name") == LABEL}
    assert len(ours) == 3 and len(instances) == 4  # the other cluster's instance is not listed
    assert sorted(hostvars) == sorted(i["networkInterfaces"][0]["networkIP"] for i in ours.values())
    assert len(inventory["role_control_plane"]["hosts"]) == 1 and len(inventory["role_node"]["hosts"]) == 2
    assert sorted(inventory["needs_update"]["hosts"]) == sorted(inventory["role_node"]["hosts"])
    node = hostvars[inventory["role_node"]["hosts"][0]]
    assert node["kops_instance_id"] in ours and node["kops_zone"] == ZONE and node["kops_status"] == "NeedsUpdate"
    assert node["kops_instance_group_manager"] == managers[nodes]
    assert node["kops_group_instance_template"].endswith("-2") and node["kops_instance_template"].endswith("-1")
    assert node["ansible_host"] == node["kops_public_ip"] == ours[node["kops_instance_id"]][
        "networkInterfaces"][0]["accessConfigs"][0]["natIP"]


def _kubelets(server, gce):
    """What no kubelet does here: a Ready Node per running instance of the cluster (named as the instance, with
    kops' GCE providerID), and the control plane's static pods, which the API shows as mirror pods."""
    for name, instance in _instances(gce).items():
        if instance["labels"].get("k8s-io-cluster-name") != LABEL:
            continue
        control = "k8s-io-role-control-plane" in instance["labels"]
        role = "control-plane" if control else "node"
        server.create("v1", "Node", {
            "metadata": {"name": name, "labels": {"node-role.kubernetes.io/%s" % role: "",
                                                  "topology.kubernetes.io/zone": ZONE}},
            "spec": {"providerID": "gce://%s/%s/%s" % (PROJECT, ZONE, name)},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        if control:
            for app in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
                _mirror_pod(server, "%s-%s" % (app, name), name, app)


def _mirror_pod(server, name, node, app):
    server.create("v1", "Pod", {
        "metadata": {"name": name, "labels": {"k8s-app": app}, "annotations": {"kubernetes.io/config.mirror": "hash"}},
        "spec": {"nodeName": node, "priorityClassName": "system-node-critical",
                 "containers": [{"name": app, "image": "registry.k8s.io/%s:v1.34.2" % app}]}}, namespace="kube-system")
    server.set_status("v1", "Pod", name, {"phase": "Running", "containerStatuses": [
        {"name": app, "ready": True, "restartCount": 0, "image": "x", "imageID": "x"}]}, namespace="kube-system")


def test_rolling_update_plan_and_a_roll_step(gce, real_kube_api, tmp_path, playbook):
    pytest.importorskip("kubernetes", reason="the kubernetes Python client is in requirements.txt")
    store_url = "file://%s" % (tmp_path / "state")
    groups = _create(store_url)
    managers = _seed(gce, groups, {"Node": 2})
    nodes = next(g for g, role in groups.items() if role == "Node")
    control = next(g for g, role in groups.items() if role != "Node")
    _kubelets(real_kube_api, gce)
    args = ("-e", "state_store=%s" % store_url, "-e", "cluster_name=%s" % CLUSTER, "-e",
            "kubeconfig=%s" % real_kube_api.kubeconfig_path, "-e", "interval=0", "-e", "post_drain_delay=0",
            "-e", "validate_retry_interval=1", "-e", "validate_recheck_interval=0", "-e", "validate_count=1",
            "-e", "validation_timeout=30", "-e", "drain_timeout=30")

    _new_template(gce, groups, nodes, managers)
    gce.requests.clear()
    code, run = playbook(PLAYBOOK, *args, "--check")
    result = task_results(run, TASK)
    assert code == 0, result.get("msg")
    assert [line.split() for line in result["lines"][1:3]] == [
        [control, "Ready", "0", "1", "1", "1", "1", "1"], [nodes, "NeedsUpdate", "2", "0", "2", "2", "2", "2"]]
    plan = result["lines"][-1]
    assert plan.startswith("%s: 2 instance(s) to replace" % nodes) and "max surge 0, max unavailable 1" in plan
    assert _mutations_besides_reads(gce) == [] and result["changed"] is False

    old = {n for n, i in _instances(gce).items() if i["labels"].get("k8s-io-instance-group") == nodes}
    check_requests = len(gce.requests)
    gce.requests.clear()
    mark = real_kube_api.audit_mark()
    started = time.monotonic()
    code, run = playbook(PLAYBOOK, *args)
    seconds = time.monotonic() - started
    result = task_results(run, TASK)
    assert code == 0, (result.get("msg"), result.get("log"))
    # A request's kind: its verb (POST) or the collection it lists or reads (a last part with a digit or a dash is a
    # resource's name).
    kinds = collections.Counter("%s %s" % (m, next(part for part in reversed(p.split("/")) if m == "POST" or not any(
        c.isdigit() or c == "-" for c in part))) for m, p in gce.requests)
    kube_requests = real_kube_api.requests_since(mark)
    kube_writes = [r for r in kube_requests if r[0] in apiserver.MUTATING_VERBS]
    print("GCE roll of 2 nodes with drain and validation: %.1fs (ansible-playbook included), roll %s; check mode %d "
          "GCE requests; roll %d GCE requests %s, %d Kubernetes API requests (%d writes)"
          % (seconds, result["log"][-1].split("]")[0].strip("[ "), check_requests, len(gce.requests), dict(kinds),
             len(kube_requests), len(kube_writes)))
    # kops on GCE: no surge, each instance recreated through its manager after its drain, one at a time.
    recreated = "/compute/v1/projects/%s/zones/%s/instanceGroupManagers/%s/recreateInstances" % (
        PROJECT, ZONE, managers[nodes])
    assert _mutations_besides_reads(gce) == [("POST", recreated)] * 2
    cordoned = {uri.split("?")[0].rsplit("/", 1)[-1] for verb, uri, _code, _user in kube_writes
                if verb == "patch" and uri.startswith("/api/v1/nodes/")}
    assert old <= cordoned
    now = _instances(gce)
    assert {n for n, i in now.items() if i["labels"].get("k8s-io-instance-group") == nodes} == old  # same names
    metadata = {n: {m["key"]: m["value"] for m in now[n]["metadata"]["items"]} for n in old}
    assert all(m["instance-template"].endswith("-2") for m in metadata.values())

    # Nothing left to roll (the reader the next run starts with; a third ansible-playbook run costs 10-25 s here).
    from ansible_collections.kubeops.kops.plugins.module_utils.providers.gce import groups as gce_groups
    from ansible_collections.kubeops.kops.plugins.module_utils.cloud.gce import GceCloud
    after = gce_groups.cloud_groups(GceCloud(CLUSTER, PROJECT, "us-test1"))
    assert not [i["name"] for g in after.values() for i in g["instances"] if i["needs_update"]]
