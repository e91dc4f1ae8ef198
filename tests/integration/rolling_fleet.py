"""A cluster of several node groups to roll, on moto's server and a real kube-apiserver (tests/realk8s/apiserver.py:
etcd, kube-apiserver and kube-controller-manager, whose ReplicaSet, garbage-collector and disruption controllers
run), with what neither has played by a thread: the kubelets, the scheduler, the DaemonSet controller and the cloud
controller.  Shared by tests/integration/test_rolling_update.py and bench/rolling_parallel.py.

- Kubelets: every running instance of the cluster registers a Node (labelled with its instance group, with
  allocatable cpu, memory and pods; control-plane Nodes tainted NoSchedule and running their static pods, which the
  API shows as mirror pods), NotReady at first and Ready `boot` seconds later, unless `never_ready(instance)` says it
  never will.  A pod bound to a Ready Node is reported Running and Ready; a pod being deleted there is removed once
  its containers stopped (the kubelet deletes it with grace period 0): without a kubelet it would stay Terminating.
- The node lifecycle controller's part: a Ready Node loses the not-ready taint the API server put on it.
- The DaemonSet controller: a `cilium` DaemonSet (system-node-critical) whose pod every Node runs.
- The scheduler: a Pending pod is bound (pods/binding) to a Ready, schedulable Node its nodeSelector matches and no
  NoSchedule taint forbids, one without a PreferNoSchedule taint first, then the one with fewest pods.
- The cloud controller and the pod garbage collector: a terminated instance's Node goes, and its pods with it.
- With `replicas`, a ReplicaSet per node group (app-<group>, on that group's nodes) and a PodDisruptionBudget per app
  (maxUnavailable 1): kube-controller-manager makes the pods and keeps the budget's status, so evictions are refused
  (429) while an app misses a pod.
- Peak unavailable comes from a watch on Nodes (NodeWatch): at each change, the node groups' desired size less their
  Ready, schedulable Nodes.

The threads speak to the API through the `kubernetes` client's transport as their own user (HARNESS_USER, in
system:masters), so the API server's audit log tells their requests from the roll's.
"""

from __future__ import annotations

import collections
import copy
import json
import threading
import time
import urllib.parse

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from tests.integration.test_aws_update import ADMIN_KEY, _service, _update

CLUSTER = "k8s.example.com"
IG_LABEL = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"
HARNESS_USER = "kubeops-test-kubelets"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
# The API server's admission (TaintNodesByCondition) puts it on every new Node; the node lifecycle controller, which
# the test API server does not run, takes it off once the Node is Ready.
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
PAUSE = "registry.k8s.io/pause:3.10"
MERGE_PATCH = "application/merge-patch+json"


def clients():
    return boto3.client("ec2", region_name="us-east-1"), boto3.client("autoscaling", region_name="us-east-1")


def node_group_names(count):
    return ["nodes-%s" % chr(ord("a") + n) for n in range(count)]


def make_cluster(store, groups=4, size=5, rolling=None):
    """The cluster with `groups` node groups of `size` nodes each (the first is kops' nodes-us-east-1a renamed),
    `rolling` as every node group's spec.rollingUpdate; built on moto."""
    service = _service(store)
    cluster, igs = service.read(CLUSTER)
    template = next(g for g in igs if g["spec"]["role"] == "Node")
    others = [g for g in igs if g["spec"]["role"] != "Node"]
    nodes = []
    for name in node_group_names(groups):
        group = copy.deepcopy(template)
        group["metadata"] = {"name": name, "labels": dict(template["metadata"].get("labels") or {},
                                                          **{"kops.k8s.io/cluster": CLUSTER})}
        group["spec"]["minSize"] = group["spec"]["maxSize"] = size
        if rolling:
            group["spec"]["rollingUpdate"] = dict(rolling)
        nodes.append(group)
    service.execute(service.plan_replace([cluster] + others + nodes, prune=True))
    _update(service, ssh_public_key=ADMIN_KEY)
    return service


def change_machine_type(service, machine_type="t3.large"):
    """A new machine type for every group, applied: each autoscaling group gets a new launch template version."""
    cluster, igs = service.read(CLUSTER)
    for group in igs:
        group["spec"]["machineType"] = machine_type
    service.execute(service.plan_replace([cluster] + igs))
    _counts, _plan, calls = _update(service)
    assert calls["CreateLaunchTemplateVersion"] == len(igs)
    ec2, _autoscaling = clients()
    for template in ec2.describe_launch_templates()["LaunchTemplates"]:
        # moto cannot launch from a version made by CreateLaunchTemplateVersion with UserData (it keeps the text
        # undecoded and asserts when launching): the same version again without UserData becomes $Latest.
        data = ec2.describe_launch_template_versions(LaunchTemplateId=template["LaunchTemplateId"], Versions=[
            "$Latest"])["LaunchTemplateVersions"][0]["LaunchTemplateData"]
        data.pop("UserData", None)
        latest = ec2.create_launch_template_version(LaunchTemplateId=template["LaunchTemplateId"],
                                                    LaunchTemplateData=data)["LaunchTemplateVersion"]["VersionNumber"]
        # moto launches an autoscaling group's instances from the default version, AWS from the group's ($Latest).
        ec2.modify_launch_template(LaunchTemplateId=template["LaunchTemplateId"], DefaultVersion=str(latest))


def group_sizes():
    """{autoscaling group name: (desired, InService members, running detached instances)}."""
    ec2, autoscaling = clients()
    detached = {}
    for reservation in ec2.describe_instances(Filters=[{"Name": "tag-key", "Values": [DETACHED_TAG]}, {
            "Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
        for instance in reservation["Instances"]:
            group = tag_dict(instance.get("Tags"))[DETACHED_TAG]
            detached[group] = detached.get(group, 0) + 1
    return {g["AutoScalingGroupName"]: (g["DesiredCapacity"],
                                        sum(1 for m in g["Instances"] if m["LifecycleState"] == "InService"),
                                        detached.get(g["AutoScalingGroupName"], 0))
            for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]}


class ApiError(RuntimeError):
    def __init__(self, method, path, status, body):
        RuntimeError.__init__(self, "%s %s: HTTP %s %s" % (method, path, status, body[:300]))
        self.status = status


class Api(object):
    """The Kubernetes API as `user` (in system:masters), plain JSON over the `kubernetes` client's transport (its
    TLS set up from the server's kubeconfig)."""

    def __init__(self, server, user=HARNESS_USER):
        import kubernetes
        self.client = kubernetes.config.new_client_from_config_dict(server.kubeconfig(user=user))
        self.user = user

    def call(self, method, path, body=None, query=None, content_type="application/json", ok=(200, 201)):
        url = self.client.configuration.host + path + ("?" + urllib.parse.urlencode(query) if query else "")
        response = self.client.rest_client.request(method, url, headers={
            "Accept": "application/json", "Content-Type": content_type, "User-Agent": self.user}, body=body,
            _request_timeout=30)
        data = response.read()
        if response.status not in ok:
            raise ApiError(method, path, response.status, data.decode("utf-8", "replace"))
        return json.loads(data) if data else {}

    def items(self, path, **query):
        return self.call("GET", path, query=query or None)["items"]


def ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _running_status(pod):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": kind, "status": "True", "lastTransitionTime": now} for kind in (
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"phase": "Running", "conditions": conditions, "startTime": now, "containerStatuses": [
        {"name": c["name"], "ready": True, "started": True, "restartCount": 0, "image": c["image"],
         "imageID": c["image"], "containerID": "containerd://%s-%s" % (pod["metadata"]["uid"], c["name"]),
         "state": {"running": {"startedAt": now}}} for c in pod["spec"]["containers"]]}


class Fleet(threading.Thread):
    """What moto and the API server lack (see the module docstring); start() it, stop() it.

    server: anything with kubeconfig(user=...) (tests/realk8s/apiserver.py's RealKubeAPIServer)."""

    def __init__(self, server, boot=1.0, replicas=3, never_ready=None, period=0.15):
        threading.Thread.__init__(self, daemon=True)
        self.api = Api(server)
        self.boot = boot
        self.replicas = replicas
        self.never_ready = never_ready or (lambda instance: False)
        self.period = period
        self.stopping = threading.Event()
        self.registered = {}  # instance id -> (node name, monotonic time it turns Ready or None: Ready, or never)
        self.groups = set()
        self.peak = collections.Counter()  # autoscaling group -> most of its instances running at once (surge)
        self.daemonset = None
        self.error = None

    # -- the kubelets and the cloud controller
    def sync(self):
        ec2, _autoscaling = clients()
        running = {}
        for reservation in ec2.describe_instances(Filters=[
                {"Name": "tag:KubernetesCluster", "Values": [CLUSTER]},
                {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
            for instance in reservation["Instances"]:
                running[instance["InstanceId"]] = instance
        per_group = collections.Counter(tag_dict(i.get("Tags")).get("aws:autoscaling:groupName")
                                        or tag_dict(i.get("Tags")).get(DETACHED_TAG) for i in running.values())
        for group, count in per_group.items():
            self.peak[group] = max(self.peak[group], count)
        now = time.monotonic()
        for instance_id, instance in running.items():
            if instance_id not in self.registered:
                self.register(instance, now)
        for instance_id, (name, ready_at) in list(self.registered.items()):
            if instance_id not in running:
                self.unregister(instance_id)
            elif ready_at is not None and ready_at <= now:
                self.api.call("PATCH", "/api/v1/nodes/%s/status" % name, {"status": {"conditions": [
                    {"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}, content_type=MERGE_PATCH)
                self.registered[instance_id] = (name, None)
        self.pods()

    def _daemonset(self):
        """The cilium DaemonSet every node runs a pod of (made on first use: its pods' owner must exist, or the
        garbage collector deletes them)."""
        if self.daemonset is None:
            self.daemonset = self.api.call("POST", "/apis/apps/v1/namespaces/kube-system/daemonsets", {
                "metadata": {"name": "cilium"}, "spec": {
                    "selector": {"matchLabels": {"k8s-app": "cilium"}},
                    "template": {"metadata": {"labels": {"k8s-app": "cilium"}}, "spec": {
                        "priorityClassName": "system-node-critical", "tolerations": [{"operator": "Exists"}],
                        "containers": [{"name": "c", "image": PAUSE}]}}}})
        return self.daemonset

    def register(self, instance, now):
        tags = tag_dict(instance.get("Tags"))
        role = "control-plane" if "k8s.io/role/control-plane" in tags else "node"
        zone, name = instance["Placement"]["AvailabilityZone"], instance["PrivateDnsName"]
        group = tags.get(IG_LABEL, "")
        ready_now = role == "control-plane" or not self.boot  # the control plane is not what is measured
        self.api.call("POST", "/api/v1/nodes", {
            "metadata": {"name": name, "labels": {"node-role.kubernetes.io/%s" % role: "", IG_LABEL: group,
                                                  "topology.kubernetes.io/zone": zone}},
            "spec": {"providerID": "aws:///%s/%s" % (zone, instance["InstanceId"]),
                     "taints": [CONTROL_PLANE_TAINT] if role == "control-plane" else []},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready_now else "False"}],
                       "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}})
        daemonset = self._daemonset()
        self.pod("kube-system", "cilium-%s" % name, name, {"k8s-app": "cilium"}, critical=True, owner=daemonset)
        if role == "control-plane":  # static pods, which the API shows as mirror pods
            for app in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
                self.pod("kube-system", "%s-%s" % (app, name), name, {"k8s-app": app}, critical=True, mirror=True)
        elif self.replicas and group not in self.groups:
            self.app(group)
        never = self.never_ready(instance)
        self.registered[instance["InstanceId"]] = (name, None if ready_now or never else now + self.boot)

    def unregister(self, instance_id):
        name, _ready_at = self.registered.pop(instance_id)
        self.api.call("DELETE", "/api/v1/nodes/%s" % name, ok=(200, 404))
        for pod in self.api.items("/api/v1/pods", fieldSelector="spec.nodeName=%s" % name):
            path = "/api/v1/namespaces/%s/pods/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.api.call("DELETE", path, {"gracePeriodSeconds": 0}, ok=(200, 404))

    def pod(self, namespace, name, node, labels, owner=None, critical=False, mirror=False, empty_dir=False):
        """A pod bound to node (the kubelets report it Running once the node is Ready).  owner: the object
        (DaemonSet, ReplicaSet) that controls it."""
        metadata = {"name": name, "labels": labels}
        if mirror:
            metadata["annotations"] = {"kubernetes.io/config.mirror": "hash"}
        if owner:
            metadata["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                            "controller": True, "name": owner["metadata"]["name"],
                                            "uid": owner["metadata"]["uid"]}]
        spec = {"nodeName": node, "containers": [{"name": "c", "image": PAUSE}]}
        if empty_dir:
            spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
            spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        if critical:
            spec["priorityClassName"] = "system-node-critical"
        return self.api.call("POST", "/api/v1/namespaces/%s/pods" % namespace, {"metadata": metadata, "spec": spec})

    # -- the kubelets' pods and the scheduler
    def pods(self):
        nodes = {n["metadata"]["name"]: n for n in self.api.items("/api/v1/nodes")}
        live = {name for name, _ready_at in self.registered.values()}
        pods = self.api.items("/api/v1/pods")
        load = collections.Counter(p["spec"].get("nodeName") for p in pods)
        for name in live & set(nodes):
            taints = nodes[name]["spec"].get("taints") or []
            if ready(nodes[name]) and any(t["key"] == NOT_READY_TAINT for t in taints):
                # with the resourceVersion read: a concurrent change (the roll's taint) wins, the next pass retries
                self.api.call("PATCH", "/api/v1/nodes/%s" % name, {
                    "metadata": {"resourceVersion": nodes[name]["metadata"]["resourceVersion"]},
                    "spec": {"taints": [t for t in taints if t["key"] != NOT_READY_TAINT]}}, content_type=MERGE_PATCH,
                    ok=(200, 404, 409))
        for pod in pods:
            meta, node = pod["metadata"], pod["spec"].get("nodeName")
            path = "/api/v1/namespaces/%s/pods/%s" % (meta["namespace"], meta["name"])
            if node in live and meta.get("deletionTimestamp"):
                # the kubelet stopped its containers: it deletes the pod for good (its uid, not a successor's)
                self.api.call("DELETE", path, {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}},
                              ok=(200, 404, 409))
            elif node in live and ready(nodes.get(node) or {}) and pod["status"].get("phase") != "Running":
                self.api.call("PATCH", path + "/status", {"status": _running_status(pod)}, content_type=MERGE_PATCH,
                              ok=(200, 404))
            elif not node and not meta.get("deletionTimestamp"):
                chosen = self.schedule(pod, [nodes[n] for n in sorted(live) if n in nodes], load)
                if chosen:
                    self.api.call("POST", path + "/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {
                        "name": meta["name"]}, "target": {"apiVersion": "v1", "kind": "Node", "name": chosen}},
                        ok=(200, 201, 404, 409))
                    load[chosen] += 1

    @staticmethod
    def schedule(pod, nodes, load):
        """The node for a Pending pod, or None (it stays Pending)."""
        selector = pod["spec"].get("nodeSelector") or {}
        fits = [n for n in nodes if ready(n) and not n["spec"].get("unschedulable")
                and all((n["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
                and not any(t.get("effect") in ("NoSchedule", "NoExecute") for t in n["spec"].get("taints") or [])]
        if not fits:
            return None

        def preference(node):
            avoid = any(t.get("effect") == "PreferNoSchedule" for t in node["spec"].get("taints") or [])
            return avoid, load[node["metadata"]["name"]], node["metadata"]["name"]
        return min(fits, key=preference)["metadata"]["name"]

    def app(self, group):
        """A node group's ReplicaSet and its PodDisruptionBudget (kube-controller-manager does the rest)."""
        app = "app-%s" % group
        self.api.call("POST", "/apis/apps/v1/namespaces/default/replicasets", {"metadata": {"name": app}, "spec": {
            "replicas": self.replicas, "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": {
                "nodeSelector": {IG_LABEL: group}, "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "c", "image": PAUSE,
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}})
        self.api.call("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", {"metadata": {"name": app},
                      "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}}})
        self.groups.add(group)

    def run(self):
        while not self.stopping.is_set():
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - reported by stop()
                self.error = exc
            self.stopping.wait(self.period)

    def stop(self):
        self.stopping.set()
        self.join(10)
        assert self.error is None, repr(self.error)


class NodeWatch(threading.Thread):
    """Every change of a Node as a watch on the API server reports it, in order: (monotonic time received, node name,
    labels, available), available True for a Ready, schedulable Node, False otherwise, None once deleted.  start()
    returns once the Nodes are listed and the watch is on; stop() ends it."""

    def __init__(self, server):
        threading.Thread.__init__(self, daemon=True)
        import kubernetes
        self.kubernetes = kubernetes
        self.core = kubernetes.client.CoreV1Api(Api(server, HARNESS_USER + "-watch").client)
        self.record = []
        self.stopping = threading.Event()
        self.listed = threading.Event()
        self.error = None

    def start(self):
        threading.Thread.start(self)
        assert self.listed.wait(30), "the Node list for the watch did not come"

    def _add(self, node, deleted=False):
        meta = node["metadata"]
        available = None if deleted else ready(node) and not (node.get("spec") or {}).get("unschedulable")
        self.record.append((time.monotonic(), meta["name"], dict(meta.get("labels") or {}), available))

    def run(self):
        try:
            listed = json.loads(self.core.list_node(_preload_content=False).data)
            for node in listed["items"]:
                self._add(node)
            version = listed["metadata"]["resourceVersion"]
            self.listed.set()
            while not self.stopping.is_set():
                # timeout_seconds: the server ends the watch after 1 s, so stop() is seen; it goes on from version.
                for event in self.kubernetes.watch.Watch().stream(self.core.list_node, resource_version=version,
                                                                  timeout_seconds=1, deserialize=False):
                    if event["type"] not in ("ADDED", "MODIFIED", "DELETED"):
                        raise RuntimeError("Node watch: %s" % json.dumps(event)[:300])
                    version = event["object"]["metadata"]["resourceVersion"]
                    self._add(event["object"], deleted=event["type"] == "DELETED")
        except Exception as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc
            self.listed.set()

    def stop(self):
        self.stopping.set()
        self.join(10)
        assert self.error is None, repr(self.error)
        return list(self.record)


def peak_unavailable(record, desired, since=0.0, until=None):
    """From a record of Node changes (NodeWatch): the most node-group nodes short of `desired` (their desired
    sizes summed) at any moment in [since, until], counting only Ready, schedulable Nodes of a node group."""
    available, peak = {}, 0
    for moment, name, labels, state in record:
        if labels.get("node-role.kubernetes.io/node") is None and state is not None:
            continue
        if state is None:
            available.pop(name, None)
        else:
            available[name] = state
        if moment >= since and (until is None or moment <= until):
            peak = max(peak, desired - sum(1 for v in available.values() if v))
    return peak
