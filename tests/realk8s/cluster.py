"""A real cluster on test hosts: the machinery of tests/realk8s/test_cluster.py.

What is real: the collection's playbooks as a user runs them (create, get, replace, update with target direct,
nodeup over SSH, validate, export kubeconfig, rolling update, upgrade), Kubernetes' own components built from the Go
module proxy (hack/k8s_binaries.py) and run by what the collection writes (kubelet under systemd; etcd under
protokube; kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy as static pods under containerd
from images side-loaded through kops' build-URL path), Debian's containerd and CNI plugins, systemd.

What stands in, and why:
- AWS is moto's server on the hosts' bridge, checking signatures and policies (tests/unit/nodeup/bootstrap_cloud.py):
  the cluster's VPC, groups and instances are moto's; a test host plays an instance by holding its role's session
  credentials, which is what the bootstrap service verifies.
- The cloud controller manager: none runs (its image cannot be pulled here), so `CloudControllerStandIn` does its
  node parts (provider ID, addresses, the `uninitialized` taint removed; a terminated instance's Node deleted).
- EBS: the control plane's etcd volumes are directories; its replacement is played by the same host, reimaged but
  for those directories (`InstancePlayer` volumes), as kops re-attaches the volumes to the new instance.
- DNS: api.internal and kops-controller.internal resolve through /etc/hosts on the hosts (kops' APIServerIPs
  block, as the boot script writes it for clusters without DNS).
- The kubelet's cgroup-v1 override (kubelet >= 1.35 refuses cgroup v1 unless failCgroupV1 is false; this machine's
  cgroups are v1 and kops' KubeletConfigSpec has no such field): a systemd drop-in on the test host, as a custom
  machine image would carry it; see docs/real-cluster.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
import urllib.request

import botocore.credentials
import yaml

from tests.integration.conftest import BIN, REPO, ansible_env
from tests.nodes import boot_artifacts
from tests.realk8s import binaries, images
from tests.unit.nodeup import bootstrap_cloud

COLLECTIONS = REPO / "build" / "collections"
PLAYBOOKS = REPO / "playbooks"
MOTO_AMI = "ami-1e749f67"  # one of the AMIs moto ships
REGION = "us-east-1"
ZONE = "us-east-1a"
# Components whose logs a failed step shows, per host role.
UNITS = ("kubelet", "containerd", "etcd-main", "etcd-events", "kubeops-bootstrap", "kubeops-node-labeller")
STATIC_POD_LOGS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")
# The test machine's kubelet drop-in (module docstring): kubelet >= 1.35 refuses cgroup v1 without it.
CGROUP_V1_DROPIN = """[Service]
# Test hosts only: this machine's cgroups are v1, which kubelet >= 1.35 refuses unless told (KEP-5573).
ExecStart=
ExecStart=/usr/local/bin/kubelet "$DAEMON_ARGS" --fail-cgroupv1=false
"""
CGROUP_V1_DROPIN_PATH = "/etc/systemd/system/kubelet.service.d/10-test-host-cgroupv1.conf"
# Debian's containerd, runc and CNI plugins from the image's apt cache (kops' releases are on GitHub, which test hosts
# cannot reach): roles/nodeup's nodeup_distro_packages.
DISTRO_PACKAGES = {"containerd": "containerd", "runc": "runc", "cni-plugins": "containernetworking-plugins"}


# The API is polled before it is up: urllib3's retry warnings would bury the test's own output.
logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)


class StepFailed(AssertionError):
    pass


def host_diagnostics(host, lines=40):
    """The tail of every component's log on a host: systemd units and the static pods' log files."""
    parts = []
    for unit in UNITS:
        proc = host.run("systemctl is-active %s; journalctl -u %s --no-pager -n %d" % (unit, unit, lines), timeout=60)
        if "-- No entries --" not in proc.stdout and proc.stdout.strip() not in ("inactive", ""):
            parts.append("--- %s: journalctl -u %s\n%s" % (host.name, unit, proc.stdout[-6000:]))
    for component in STATIC_POD_LOGS:
        proc = host.run("tail -n %d /var/log/%s.log" % (lines, component), timeout=60)
        if proc.returncode == 0 and proc.stdout.strip():
            parts.append("--- %s: /var/log/%s.log\n%s" % (host.name, component, proc.stdout[-6000:]))
    proc = host.run("crictl --runtime-endpoint unix:///run/containerd/containerd.sock ps -a 2>&1 | head -30; "
                    "ctr -n k8s.io images ls -q 2>&1 | head -30", timeout=60)
    parts.append("--- %s: containers and images\n%s" % (host.name, proc.stdout))
    return "\n".join(parts)


@contextlib.contextmanager
def step(name, hosts, times):
    """A named step: its time goes into times; a failure names the step and shows every component's log."""
    started = time.monotonic()
    try:
        yield
    except Exception as error:
        diagnostics = "\n".join(host_diagnostics(h) for h in hosts)
        raise StepFailed("step %r failed: %s\n%s" % (name, error, diagnostics)) from error
    times[name] = round(time.monotonic() - started, 1)


def run_playbook(name, *args, env=None, cwd=None, timeout=1800):
    """ansible-playbook <playbooks/name> as a user runs it; the CompletedProcess (text)."""
    environment = dict(ansible_env(COLLECTIONS), **(env or {}))
    return subprocess.run([str(BIN / "ansible-playbook"), str(PLAYBOOKS / name)] + list(args), env=environment,
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def check(proc, what):
    if proc.returncode != 0:
        output = "%s\n%s" % (proc.stdout[-8000:], proc.stderr[-3000:])
        raise AssertionError("%s failed (exit %s):\n%s" % (what, proc.returncode, output))
    return proc


def wait_for(what, probe, timeout, interval=2.0):
    """Call probe() until it returns something true; its last answer (or error) in the failure."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except Exception as error:  # the last error is the failure's message
            last = error
        time.sleep(interval)
    raise AssertionError("%s: not within %.0f s (last: %s)" % (what, timeout, last))


class Cloud(object):
    """moto on the hosts' bridge with signatures checked; the playbooks' AWS environment."""

    def __init__(self, address):
        self.moto = bootstrap_cloud.SigningMoto(host=address).start()
        credentials = self.moto.admin.get_credentials()
        self.env = {"AWS_ACCESS_KEY_ID": credentials.access_key, "AWS_SECRET_ACCESS_KEY": credentials.secret_key,
                    "AWS_ENDPOINT_URL": self.moto.url, "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
                    "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}

    def client(self, name):
        return self.moto.client(name)

    def instances(self, cluster):
        """{instance group: [running instance ids]} of the cluster's autoscaling groups."""
        found = {}
        for group in self.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]:
            tags = {t["Key"]: t["Value"] for t in group.get("Tags", [])}
            if tags.get("KubernetesCluster") != cluster:
                continue
            name = tags.get("kops.k8s.io/instancegroup") or group["AutoScalingGroupName"].split(".")[0]
            found[name] = [i["InstanceId"] for i in group["Instances"]
                           if i["LifecycleState"] in ("InService", "Pending")]
        return found

    def instance(self, instance_id):
        """EC2's description of one instance (moto keeps terminated ones, as EC2 does for a while)."""
        return self.client("ec2").describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]

    def instance_state(self, instance_id):
        return self.instance(instance_id)["State"]["Name"]

    def instance_credentials(self, instance_id):
        """What EC2's metadata service hands the instance: its profile role's session (tests/moto_server.py)."""
        url = "%s/moto-api/kubeops/instance-credentials?instance_id=%s" % (self.moto.url, instance_id)
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - moto on the test bridge
            found = json.loads(answer.read())
        return botocore.credentials.Credentials(found["AccessKeyId"], found["SecretAccessKey"], found["Token"])

    def stop(self):
        self.moto.stop()


def write_credentials(host, credentials):
    """The instance profile's credentials where botocore finds them on the host (no IMDS here)."""
    script = ("mkdir -p /root/.aws && umask 077 && printf '[default]\\naws_access_key_id=%s\\naws_secret_access_key=%s"
              "\\naws_session_token=%s\\n' > /root/.aws/credentials"
              % (credentials.access_key, credentials.secret_key, credentials.token))
    done = host.run(script)
    assert done.returncode == 0, done.stderr


# What the test machine image carries that nodeup would otherwise download: kops' ECR credential provider (its
# release is on artifacts.k8s.io, which test hosts cannot reach; built from the Go module proxy by
# hack/k8s_binaries.py), where kops' KubeletBuilder puts it.  nodeup_distro_packages names it with no package.
IMAGE_BINARIES = {"ecr-credential-provider": "/usr/local/bin/ecr-credential-provider"}


def served_directory(build, versions, directory):
    """One directory served on the bridge: a Kubernetes CI build per version in <version>/ (kubernetesVersion is its
    URL, which must name the version) and etcd's release tarball in etcd/."""
    for version in versions:
        images.kubernetes_build_directory(build, version, directory / version)
    (directory / "etcd").mkdir(parents=True, exist_ok=True)
    shutil.copy(build.etcd_tarball, directory / "etcd" / build.etcd_tarball.name)
    return directory


def etcd_install(build, served_url):
    """roles/protokube's etcd install override: kops' etcd version (3.6.12 for 1.36), built here from the Go module
    proxy, so its tarball is not etcd's published one whose sha256 the install plan pins."""
    version = binaries.ETCD_VERSION.lstrip("v")
    digest = (build.etcd_dir / "SHA256SUMS").read_text().split()[0]
    asset = "%s@%s/etcd/%s" % (digest, served_url, build.etcd_tarball.name)
    return {"version": version, "dir": "/opt/etcd-v%s" % version, "assets": {"amd64": asset, "arm64": asset}}


def edit_spec(path, registry_url, more=None):
    """The user's edits of the spec kept in git (each a kops field; docs/real-cluster.md says why each):
    - containerd.registryMirrors: images that are not side-loaded (the pause image, the test workload) come from a
      registry on the hosts' network, as an air-gapped user's mirror;
    - kubeProxy.conntrackMaxPerCore 0: /sys is read-only in a test host (kind sets the same);
    - containerd.configAdditions restrict_oom_score_adj (TEST HOSTS ONLY, as kind sets it): this machine lacks
      CAP_SYS_RESOURCE, so runc cannot lower a sandbox's oom_score_adj and every pod sandbox fails without it.
    more(spec): a test's own edits of the Cluster's spec; the file holds the Cluster and its InstanceGroups."""
    documents = list(yaml.safe_load_all(path.read_text()))
    spec = next(d for d in documents if d["kind"] == "Cluster")["spec"]
    spec.setdefault("containerd", {})["registryMirrors"] = {"registry.k8s.io": [registry_url]}
    spec["containerd"]["configAdditions"] = {'plugins."io.containerd.grpc.v1.cri".restrict_oom_score_adj': "true"}
    spec.setdefault("kubeProxy", {})["conntrackMaxPerCore"] = 0
    if more is not None:
        more(spec)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def write_cgroup_v1_dropin(host):
    """The kubelet's cgroup-v1 drop-in a test machine image carries (CGROUP_V1_DROPIN)."""
    done = host.run("mkdir -p %s && printf %%s %s > %s" % (os.path.dirname(CGROUP_V1_DROPIN_PATH),
                                                           shlex.quote(CGROUP_V1_DROPIN), CGROUP_V1_DROPIN_PATH))
    assert done.returncode == 0, done.stderr


def prepare_metal_host(host):
    """What a metal test host's machine image carries: the kubelet's cgroup-v1 drop-in. The host keeps its own name
    (kops' metal nodes register under their host name: the inventory's name here)."""
    write_cgroup_v1_dropin(host)
    named = host.run("hostname")
    assert named.stdout.strip() == host.name, named.stdout


def playbook_recap(output):
    """{host: {"changed": n, "failed": n}} from ansible-playbook's PLAY RECAP."""
    found = {}
    for host, changed, failed in re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)",
                                            output, re.M):
        found[host] = {"changed": int(changed), "failed": int(failed)}
    return found


def prepare_machine(host, build, names, instance_id):
    """What the test machine image carries besides Debian: the kubelet's cgroup-v1 drop-in, IMAGE_BINARIES; names in
    /etc/hosts ({name: address}: the cluster's internal API and bootstrap-service names, kops' APIServerIPs block).
    The host takes the instance's name, as an EC2 instance's is its own (kops names AWS nodes by instance ID), so a
    replacement played by the same host registers as a new node."""
    write_cgroup_v1_dropin(host)
    names = dict(names, **{instance_id: host.address})
    hosts = "".join("%s %s\n" % (address, name) for name, address in sorted(names.items()))
    script = "hostname %s && echo %s > /etc/hostname && printf %%s %s >> /etc/hosts" % (
        instance_id, instance_id, shlex.quote(hosts))
    done = host.run(script)
    assert done.returncode == 0, done.stderr
    for name, path in IMAGE_BINARIES.items():
        with open(build.binary(name), "rb") as binary:
            copied = subprocess.run(host.ssh_command("cat > %s && chmod 755 %s" % (path, path)), stdin=binary,
                                    capture_output=True, check=False)
        assert copied.returncode == 0, copied.stderr


def user_data_of(cloud, instance_id):
    """The launch template user data of an instance (what cloud-init would run)."""
    ec2 = cloud.client("ec2")
    tags = {t["Key"]: t["Value"] for t in cloud.instance(instance_id).get("Tags", [])}
    template = tags.get("aws:ec2launchtemplate:id")
    versions = ec2.describe_launch_template_versions(LaunchTemplateId=template)["LaunchTemplateVersions"]
    return base64.b64decode(versions[-1]["LaunchTemplateData"]["UserData"]).decode()


def core_api(kubeconfig):
    import kubernetes
    return kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(config_file=str(kubeconfig)))


def readyz(kubeconfig):
    """The API server's /readyz body ("ok") through the kubeconfig's credentials."""
    import kubernetes
    client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
    answer = client.call_api("GET", client.configuration.host + "/readyz", _request_timeout=10)
    return answer.read() == b"ok"


def node_ready(node):
    return any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))


def ready_node(core, name):
    node = core.read_node(name)
    return node if node_ready(node) else None


def control_plane_pods_running(core, components):
    """True when each component's mirror pod in kube-system is Running and ready."""
    pods = core.list_namespaced_pod("kube-system").items
    for component in components:
        found = [p for p in pods if p.metadata.name.startswith(component + "-")]
        if not found or not all(p.status.phase == "Running" and all(c.ready for c in p.status.container_statuses or [])
                                for p in found):
            return False
    return True


def play_cloud_controller(core, node_name, instance_id, address):
    """STAND-IN for the AWS cloud controller manager's node controller (no CCM image can be pulled here): the
    provider ID and addresses it would read from EC2, then its `uninitialized` taint removed."""
    node = core.read_node(node_name)
    if not node.spec.provider_id:
        core.patch_node(node_name, {"spec": {"providerID": "aws:///%s/%s" % (ZONE, instance_id)}})
    core.patch_node_status(node_name, {"status": {"addresses": [
        {"type": "InternalIP", "address": address}, {"type": "Hostname", "address": node_name}]}})
    taints = [t for t in (node.spec.taints or []) if t.key != "node.cloudprovider.kubernetes.io/uninitialized"]
    if len(taints) != len(node.spec.taints or []):
        core.patch_node(node_name, {"spec": {"taints": [
            {"key": t.key, "value": t.value, "effect": t.effect} for t in taints] or None}})


def api_server_version(kubeconfig):
    """The version the API server reports (GET /version)."""
    import kubernetes
    client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
    return kubernetes.client.VersionApi(client).get_code().git_version


def static_pod_images(core, node_name):
    """{component: image} of the node's mirror pods in kube-system (kops' static pods, named <component>-<node>)."""
    pods = core.list_namespaced_pod("kube-system", field_selector="spec.nodeName=%s" % node_name).items
    suffix = "-" + node_name
    return {p.metadata.name[:-len(suffix)]: p.spec.containers[0].image
            for p in pods if p.metadata.name.endswith(suffix)}


def config_map(kubeconfig, name, data):
    """A ConfigMap in default: a record in etcd that an upgrade must keep."""
    core_api(kubeconfig).create_namespaced_config_map("default", {"metadata": {"name": name}, "data": data})


def apps_api(kubeconfig):
    import kubernetes
    return kubernetes.client.AppsV1Api(kubernetes.config.new_client_from_config(config_file=str(kubeconfig)))


def labelled(core, name, group, role):
    """The node carries the labels the node labeller gives its instance group (kops-controller's)."""
    labels = core.read_node(name).metadata.labels or {}
    return labels.get("kops.k8s.io/instancegroup") == group and "node-role.kubernetes.io/%s" % role in labels


def _images(template):
    return [c.image for c in (template.spec.init_containers or []) + template.spec.containers]


def remove_workloads_without_images(apps, core, registry):
    """Deployments and DaemonSets in kube-system whose images are neither side-loaded here nor served by the test
    registry (CoreDNS, the cloud controller, the EBS CSI driver: nothing here can pull them) are deleted after the
    channel applied them, so their pods do not fail validation for a reason no test here can change.  Returns
    their names; a workload whose image IS here is kept."""
    have = {image for node in core.list_node().items for i in (node.status.images or []) for image in i.names or []}
    have |= set(registry.references())
    removed = []
    for kind, listing, delete in (
            ("Deployment", apps.list_namespaced_deployment, apps.delete_namespaced_deployment),
            ("DaemonSet", apps.list_namespaced_daemon_set, apps.delete_namespaced_daemon_set)):
        for workload in listing("kube-system").items:
            missing = [image for image in _images(workload.spec.template) if image not in have]
            if missing:
                delete(workload.metadata.name, "kube-system", propagation_policy="Foreground")
                removed.append(workload.metadata.name)
    return removed


SLEEPER_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sleeper", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "sleeper"}}, "template": {
        "metadata": {"labels": {"app": "sleeper"}},
        "spec": {"terminationGracePeriodSeconds": 10, "containers": [
            {"name": "sleeper", "image": "registry.k8s.io/kubeops-test/sleeper:1"}]}}}}


def run_sleepers(apps, core, replicas):
    """A Deployment of the test workload (pulled through the registry mirror): its pods Running on the worker,
    each with an address from the node's pod range (kubenet's bridge)."""
    spec = dict(SLEEPER_DEPLOYMENT["spec"], replicas=replicas)
    apps.create_namespaced_deployment("default", dict(SLEEPER_DEPLOYMENT, spec=spec))

    def running():
        pods = core.list_namespaced_pod("default", label_selector="app=sleeper").items
        ready = [p for p in pods if p.status.phase == "Running" and p.status.pod_ip]
        return ready if len(ready) == replicas else None
    return wait_for("%d sleeper pods Running" % replicas, running, 300)


def create_budget(kubeconfig, selector, min_available):
    """A PodDisruptionBudget in default: kube-controller-manager's disruption controller fills its status."""
    import kubernetes
    policy = kubernetes.client.PolicyV1Api(kubernetes.config.new_client_from_config(config_file=str(kubeconfig)))
    policy.create_namespaced_pod_disruption_budget("default", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "sleeper"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": selector}}})
    return wait_for("the budget's status", lambda: policy.read_namespaced_pod_disruption_budget(
        "sleeper", "default").status.current_healthy, 120)


class Poller(object):
    """A thread calling poll() every interval seconds from start() to stop(); an exception in a round is kept in
    errors (the API not up yet, moto busy) and the next round goes on."""

    def __init__(self, poll, interval=2.0):
        self.poll, self.interval = poll, interval
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception as error:  # kept for the failure message; the next round tries again
                self.errors.append(str(error)[:200])

    def stop(self):
        self._stop.set()
        self._thread.join(10)


class ReadyPodsWatch(Poller):
    """Samples, every half second, how many pods of a selector are Running and ready (the budget's promise)."""

    def __init__(self, kubeconfig, selector):
        super().__init__(self._sample, interval=0.5)
        self.core = core_api(kubeconfig)
        self.selector = selector
        self.samples = []

    def _sample(self):
        pods = self.core.list_namespaced_pod("default", label_selector=self.selector).items
        self.samples.append(sum(1 for p in pods if p.status.phase == "Running" and not p.metadata.deletion_timestamp
                                and all(c.ready for c in p.status.container_statuses or [])))

    def fewest(self):
        return min(self.samples) if self.samples else None


class InstancePlayer(Poller):
    """Plays EC2 for a group during a roll: a host whose instance was terminated is powered off, and an instance the
    autoscaling group launches is booted on a spare test host (its user data, as at the cluster's creation).

    volumes: for a group whose instances keep data on volumes (the control plane's etcd, kops' EBS volumes), the
    directories a replacement finds as the old instance left them: the powered-off host plays the replacement,
    reimaged except those directories (testhosts.Host.reimage), as the volume is re-attached to the new instance."""

    def __init__(self, cloud, cluster, group, hosts, spares, boot, stand_in, volumes=None):
        super().__init__(self._follow)
        self.cloud, self.cluster, self.group = cloud, cluster, group
        self.hosts = dict(hosts)  # instance id -> host playing it
        self.spares = list(spares)
        self.boot = boot  # boot(host, instance id) -> CompletedProcess of its user data
        self.stand_in = stand_in
        self.volumes = volumes
        self.reimaged = set()  # hosts whose previous instance terminated: reimaged before they play the next
        self.booted = {}

    def _follow(self):
        running = set(self.cloud.instances(self.cluster).get(self.group, []))
        for instance_id, host in list(self.hosts.items()):
            if instance_id in running:
                continue
            if self.cloud.instance_state(instance_id) in ("shutting-down", "terminated"):
                host.kill()
                del self.hosts[instance_id]
                if self.volumes is not None:
                    self.spares.insert(0, host)
                    self.reimaged.add(host.name)
        for instance_id in sorted(running - set(self.hosts)):
            if not self.spares:
                self.errors.append("no spare host for %s" % instance_id)
                continue
            host = self.hosts[instance_id] = self.spares.pop(0)
            self.stand_in.add(instance_id, instance_id, host.address)
            threading.Thread(target=self._boot, args=(host, instance_id), daemon=True).start()

    def _boot(self, host, instance_id):
        if host.name in self.reimaged:
            host.reimage(self.volumes)
        self.booted[instance_id] = self.boot(host, instance_id)


class CloudControllerStandIn(Poller):
    """Plays the cloud controller's node parts in a thread: its node controller (play_cloud_controller) for every
    node that registers, and its node lifecycle controller: a Node no longer Ready whose instance the cloud terminated
    is deleted (the AWS cloud controller asks EC2 whether the provider ID's instance still exists), so its pods go
    with it.

    nodes: {node name: (instance id, address)}."""

    def __init__(self, kubeconfig, nodes, cloud):
        super().__init__(self._follow_nodes)
        self.kubeconfig = kubeconfig
        self.nodes = dict(nodes)
        self.cloud = cloud
        self.done = set()
        self.deleted = []
        self._core = None

    def add(self, name, instance_id, address):
        self.nodes[name] = (instance_id, address)

    def _follow_nodes(self):
        self._core = self._core or core_api(self.kubeconfig)
        for node in self._core.list_node().items:
            name = node.metadata.name
            if name in self.nodes and name not in self.done:
                play_cloud_controller(self._core, name, *self.nodes[name])
                self.done.add(name)
            elif (node.spec.provider_id and not node_ready(node)
                  and self.cloud.instance_state(node.spec.provider_id.rsplit("/", 1)[-1]) == "terminated"):
                self._core.delete_node(name)
                self.deleted.append(name)


def boot_wheels():
    return boot_artifacts.wheelhouse()
