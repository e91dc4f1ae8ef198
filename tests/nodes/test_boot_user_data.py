"""The launch template's user data, run in a fresh test host, makes it a node.

The worker host has no state store at all: its nodeup config and its kubelet's certificate come from the bootstrap
service (in the test process, reading the file:// store as the control plane does), which checks the host's
instance identity against moto; only the pinned boot artefacts are bound into the host (real workers read them from
the store's boot/, the one path their IAM role may read)."""

from __future__ import annotations

import hashlib
import time

import yaml

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import bootstrap, config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import component_rules
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore

from tests.nodes import boot_artifacts
from tests.unit.nodeup import bootstrap_cloud as cloud

pytestmark = pytest.mark.hosts
CLUSTER = "boot.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}


def _kubelet_files(host):
    """{path: text} of what the kubelet would be started with on the host: its sysconfig, the --config file it
    names, and the static pods' manifests."""
    sysconfig = host.run("cat %s" % component_rules.KUBELET_ENV).stdout
    written = {component_rules.KUBELET_ENV: sysconfig}
    config_path = component_rules.kubelet_args(sysconfig).get("config")
    if config_path:
        written[config_path] = host.run("cat %s" % config_path).stdout
    for path in host.run("ls %s" % component_rules.MANIFESTS).stdout.split():
        written["%s/%s" % (component_rules.MANIFESTS.rstrip("/"), path)] = host.run(
            "cat %s/%s" % (component_rules.MANIFESTS.rstrip("/"), path)).stdout
    return written


def test_user_data_boots_a_worker(host_pool, tmp_path):
    store = tmp_path / "state"
    service = ClusterService("file://%s" % store)
    service.execute(service.plan_create(OPTIONS))
    completed, groups = updates.load_completed(service, CLUSTER)  # as update completes them, once
    cluster_store = service.cluster_store(CLUSTER)
    changes, hashes = nodeup_store.node_files(cluster_store, completed, groups)
    cluster_store.apply(changes)
    worker = next(g for g in groups if g["spec"]["role"] == "Node")
    config_path = store / CLUSTER / nodeup_config.config_path(worker)
    assert hashes[worker["metadata"]["name"]] == hashlib.sha256(config_path.read_bytes()).hexdigest()
    # What update cluster uploads: the collection tarball and the pinned wheels (here beside the store, so that
    # the host gets them and not the store).
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    manifest = boot_artifacts.upload_boot_artifacts(completed, "file://%s/boot-store" % artifacts)

    pool = host_pool(1, binds=[artifacts])
    host = pool.hosts[0]
    assert host.run("test -e %s" % store).returncode != 0
    # The worker's certificates come from the bootstrap service (in the test process on the bridge; the control
    # plane's own is tests/nodes/test_bootstrap_service.py's), the instance's identity from moto.
    ca = keystore.primary(keystore.load(cluster_store, "kubernetes-ca"))
    with cloud.WorkerService(pool, host, CLUSTER, worker["metadata"]["name"], "file://%s/%s" % (store, CLUSTER), ca,
                             tmp_path) as service:
        # As in a cluster without DNS: the service's name resolves only through the user data's /etc/hosts block
        # (kops' APIServerIPs; here the bridge, where the service listens, stands for the API balancer).
        assert host.run("sed -i '/kops-controller.internal/d' /etc/hosts").returncode == 0
        settings = bootstrap.config_server(yaml.safe_load(config_path.read_text()),
                                           sts_endpoint=service.hostvars["nodeup_bootstrap_sts_endpoint"],
                                           api_server_ips=["%s.1" % pool.subnet])
        script = bootstrap.bootstrap_user_data(
            completed, worker, "file://%s/%s" % (store, CLUSTER), hashes[worker["metadata"]["name"]], manifest,
            environment={"AWS_REGION": "us-east-1"},
            nodeup_vars=dict(service.hostvars, nodeup_distro_packages={"containerd": "containerd", "runc": "runc"},
                             nodeup_download_assets=False), config_server_settings=settings)
        assert "igconfig" not in script
        (artifacts / "user_data").write_text(script)
        started = time.monotonic()
        boot = host.run("bash %s/user_data" % artifacts, timeout=900)
        elapsed = time.monotonic() - started
    instance, lines = service.instance, service.lines
    assert boot.returncode == 0, boot.stdout[-4000:] + boot.stderr[-4000:]
    assert host.run("ctr version").returncode == 0
    assert host.run("systemctl is-active containerd").stdout.strip() == "active"  # real containerd, our config
    # No kubelet binary exists here (no registry we reach ships one): what it would be started with is held to the
    # kubelet's own start-up rules (flags, --node-labels, its config file) and the static pods' to theirs.
    violations = component_rules.check_node_files(_kubelet_files(host), OPTIONS["kubernetes_version"])
    assert violations == [], "\n".join(violations)
    assert "--bootstrap-kubeconfig" not in host.run("cat /etc/sysconfig/kubelet").stdout
    kubelet = certs.load_certificate(host.run("cat /var/lib/kubelet/pki/kubelet-client.crt").stdout.encode())
    assert kubelet.subject.rfc4514_string() == "CN=system:node:%s,O=system:nodes" % instance["InstanceId"]
    assert any("bootstrapped %s" % instance["InstanceId"] in line for line in lines), lines
    # The config came from the service, the certificates in a second request (roles/nodeup's node_bootstrap).
    assert any("bootstrapped %s" % instance["InstanceId"] in line and line.endswith(": , nodeup config")
               for line in lines), lines
    assert host.run("cat /opt/kubeops/conf/nodeupconfig.yaml").stdout == config_path.read_text()
    hosts = host.run("cat /etc/hosts").stdout
    assert "%s.1\tapi.internal.%s kops-controller.internal.%s\n" % (pool.subnet, CLUSTER, CLUSTER) in hosts, hosts
    assert host.run("test -e %s" % store).returncode != 0
    assert host.run("/opt/kubeops/venv/bin/ansible --version").returncode == 0
    print("boot: user data configured a fresh host in %.1f s" % elapsed)

    # A config that changed after the template was made is refused at once, as kops refuses a wrong NodeupConfigHash.
    tampered = script.replace("NODEUP_CONFIG_HASH=" + hashes[worker["metadata"]["name"]],
                              "NODEUP_CONFIG_HASH=" + "0" * 64)
    (artifacts / "tampered").write_text(tampered)
    with cloud.WorkerService(pool, host, CLUSTER, worker["metadata"]["name"], "file://%s/%s" % (store, CLUSTER), ca,
                             tmp_path) as again:
        tampered = tampered.replace(service.hostvars["nodeup_bootstrap_sts_endpoint"],
                                    again.hostvars["nodeup_bootstrap_sts_endpoint"])
        (artifacts / "tampered").write_text(tampered)
        started = time.monotonic()
        refused = host.run("bash %s/tampered" % artifacts, timeout=600)
    assert refused.returncode != 0 and "not the pinned %s: refused" % ("0" * 64) in refused.stderr, refused.stderr[-3000:]
    assert "of 'fetch_config' failed" not in refused.stderr  # refused at once, not asked again
    print("boot: a config not the pinned one refused in %.1f s" % (time.monotonic() - started))
