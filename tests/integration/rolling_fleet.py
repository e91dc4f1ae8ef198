"""A cluster of several node groups to roll, on moto's server and the Kubernetes API test server, with what moto
lacks played by a thread: kubelets, a ReplicaSet controller and the disruption controller.  Shared by
tests/integration/test_rolling_update.py (the budget's tests) and bench/rolling_parallel.py (serial against parallel).

- Kubelets: every running instance of the cluster registers a Node (labelled with its instance group, with
  allocatable cpu, memory and pods), NotReady at first and Ready `boot` seconds later, unless `never_ready(instance)`
  says it never will; a terminated instance's Node and pods go (the cloud controller's part).
- A ReplicaSet per node group (`replicas` pods of app-<group>, on that group's Ready, schedulable nodes, the node
  with fewest first; Pending with no node when none is free) and a PodDisruptionBudget per app (maxUnavailable 1)
  whose status the thread keeps as the disruption controller would, so evictions are refused (429) while an app
  already misses a pod.
- Peak unavailable comes from the API server's own record of Node writes (KubeAPIServer.node_availability_record):
  at each write, the node groups' desired size less their Ready, schedulable Nodes.
"""

from __future__ import annotations

import copy
import threading
import time

import boto3

from ansible_collections.kubeops.kops.plugins.module_utils.cloud.aws import tag_dict
from tests.integration.test_aws_update import ADMIN_KEY, _service, _update

CLUSTER = "k8s.example.com"
IG_LABEL = "kops.k8s.io/instancegroup"
DETACHED_TAG = "kops.k8s.io/detached-from-asg"


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


def prepare(server):
    """The namespaces' default ServiceAccounts (the API refuses pods without them)."""
    for namespace in ("default", "kube-system"):
        server.create("v1", "ServiceAccount", {"metadata": {"name": "default"}}, namespace=namespace)


def group_sizes():
    """{autoscaling group name: (desired, InService members, running detached instances)}."""
    ec2, autoscaling = clients()
    detached = {}
    for reservation in ec2.describe_instances(Filters=[{"Name": "tag-key", "Values": [DETACHED_TAG]}, {
            "Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
        for instance in reservation["Instances"]:
            group = tag_dict(instance.get("Tags"))[DETACHED_TAG]
            detached[group] = detached.get(group, 0) + 1
    return {g["AutoScalingGroupName"]: (g["DesiredCapacity"], sum(1 for m in g["Instances"] if m["LifecycleState"] ==
                                                                  "InService"), detached.get(g["AutoScalingGroupName"], 0))
            for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]}


class Fleet(threading.Thread):
    """What moto and the test server lack (see the module docstring); start() it, stop() it."""

    def __init__(self, server, boot=1.0, replicas=3, never_ready=None, period=0.15):
        threading.Thread.__init__(self, daemon=True)
        self.server = server
        self.boot = boot
        self.replicas = replicas
        self.never_ready = never_ready or (lambda instance: False)
        self.period = period
        self.stopping = threading.Event()
        self.registered = {}  # instance id -> (node name, monotonic time it turns Ready or None: never)
        self.groups = set()
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
        now = time.monotonic()
        for instance_id, instance in running.items():
            if instance_id not in self.registered:
                self.register(instance, now)
        for instance_id, (name, ready_at) in list(self.registered.items()):
            if instance_id not in running:
                self.unregister(instance_id)
            elif ready_at is not None and ready_at <= now:
                node = self.server.get("v1", "Node", name)
                self.server.set_status("v1", "Node", name, dict(node["status"], conditions=[
                    {"type": "Ready", "status": "True"}]))
                self.registered[instance_id] = (name, None)
        self.replicasets()
        self.disruption_budgets()

    def register(self, instance, now):
        tags = tag_dict(instance.get("Tags"))
        role = "control-plane" if "k8s.io/role/control-plane" in tags else "node"
        zone, name = instance["Placement"]["AvailabilityZone"], instance["PrivateDnsName"]
        group = tags.get(IG_LABEL, "")
        ready = role == "control-plane"  # the control plane is not what is measured: Ready at once
        self.server.create("v1", "Node", {
            "metadata": {"name": name, "labels": {"node-role.kubernetes.io/%s" % role: "", IG_LABEL: group,
                                                  "topology.kubernetes.io/zone": zone}},
            "spec": {"providerID": "aws:///%s/%s" % (zone, instance["InstanceId"])},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}})
        if role == "control-plane":  # static pods, which the API shows as mirror pods
            for app in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
                self._pod("kube-system", "%s-%s" % (app, name), name, {"k8s-app": app}, mirror=True)
        else:
            self.groups.add(group)
        never = self.never_ready(instance)
        self.registered[instance["InstanceId"]] = (name, None if ready or never else now + self.boot)

    def unregister(self, instance_id):
        name, _ready_at = self.registered.pop(instance_id)
        state = self.server.state
        state.delete(state.resource("v1", "nodes"), None, name)
        for pod in state.list(state.resource("v1", "pods"), field_selector="spec.nodeName=%s" % name)["items"]:
            state.delete(state.resource("v1", "pods"), pod["metadata"]["namespace"], pod["metadata"]["name"],
                         {"gracePeriodSeconds": 0})

    # -- the ReplicaSet and disruption controllers
    def _pod(self, namespace, name, node, labels, mirror=False):
        metadata = {"name": name, "labels": labels}
        if mirror:
            metadata["annotations"] = {"kubernetes.io/config.mirror": "hash"}
        else:
            metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": labels["app"],
                                            "uid": "u-%s" % labels["app"], "controller": True}]
        spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                "terminationGracePeriodSeconds": 1}
        if node:
            spec["nodeName"] = node
        self.server.create("v1", "Pod", {"metadata": metadata, "spec": spec}, namespace=namespace)
        if node:
            self._run(namespace, name)

    def _run(self, namespace, name):
        self.server.set_status("v1", "Pod", name, {"phase": "Running", "containerStatuses": [
            {"name": "c", "ready": True, "restartCount": 0, "image": "x", "imageID": "x"}]}, namespace=namespace)

    def _free_nodes(self, group):
        state = self.server.state
        nodes = state.list(state.resource("v1", "nodes"), label_selector="%s=%s" % (IG_LABEL, group))["items"]
        return [n["metadata"]["name"] for n in nodes if not n["spec"].get("unschedulable")
                and any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])]

    def replicasets(self):
        state = self.server.state
        pods = state.resource("v1", "pods")
        for group in sorted(self.groups):
            app = "app-%s" % group
            live = [p for p in state.list(pods, "default", label_selector="app=%s" % app)["items"]
                    if not p["metadata"].get("deletionTimestamp")]
            free = self._free_nodes(group)
            load = {n: sum(1 for p in live if p["spec"].get("nodeName") == n) for n in free}
            for pod in [p for p in live if not p["spec"].get("nodeName")]:
                if load:  # the scheduler: a Pending pod goes where there is room now
                    node = min(sorted(load), key=load.get)
                    obj = state.get(pods, "default", pod["metadata"]["name"])
                    obj["spec"]["nodeName"] = node
                    state.update(pods, "default", pod["metadata"]["name"], obj, "kube-scheduler")
                    self._run("default", pod["metadata"]["name"])
                    load[node] += 1
            for _missing in range(self.replicas - len(live)):
                node = min(sorted(load), key=load.get) if load else None
                self._pod("default", "%s-%s" % (app, _suffix()), node, {"app": app})
                if node:
                    load[node] += 1

    def disruption_budgets(self):
        state = self.server.state
        pods, budgets = state.resource("v1", "pods"), state.resource("policy/v1", "poddisruptionbudgets")
        for group in sorted(self.groups):
            app = "app-%s" % group
            try:
                budget = state.get(budgets, "default", app)
            except Exception:  # noqa: BLE001 - the test server's NotFound: made on first sight of the group
                self.server.create("policy/v1", "PodDisruptionBudget", {"metadata": {"name": app}, "spec": {
                    "maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}}}, namespace="default")
                budget = state.get(budgets, "default", app)
            healthy = sum(1 for p in state.list(pods, "default", label_selector="app=%s" % app)["items"]
                          if not p["metadata"].get("deletionTimestamp") and (p.get("status") or {}).get("phase") == "Running")
            desired = self.replicas - 1
            status = {"disruptionsAllowed": max(0, healthy - desired), "currentHealthy": healthy,
                      "desiredHealthy": desired, "expectedPods": self.replicas, "observedGeneration": 1}
            if {k: (budget.get("status") or {}).get(k) for k in status} != status:
                self.server.set_status("policy/v1", "PodDisruptionBudget", app, status, namespace="default")

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


_COUNTER = [0]


def _suffix():
    _COUNTER[0] += 1
    return "%05d" % _COUNTER[0]


def peak_unavailable(record, desired, since=0.0, until=None):
    """From the API server's record of Node writes: the most node-group nodes short of `desired` (their desired
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
