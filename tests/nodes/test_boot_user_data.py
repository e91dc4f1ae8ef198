"""The launch template's user data, run in a fresh test host against a file:// store, makes it a node."""

from __future__ import annotations

import hashlib
import time

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import bootstrap, config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore

from tests.nodes import boot_artifacts
from tests.unit.nodeup import bootstrap_cloud as cloud

pytestmark = pytest.mark.hosts
CLUSTER = "boot.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}


def test_user_data_boots_a_worker(host_pool, tmp_path):
    store = tmp_path / "state"
    service = ClusterService("file://%s" % store)
    service.execute(service.plan_create(OPTIONS))
    cluster, groups = service.read(CLUSTER)
    completed = service.validate(cluster, groups)
    cluster_store = service.cluster_store(CLUSTER)
    changes, hashes = nodeup_store.node_files(cluster_store, completed, groups)
    cluster_store.apply(changes)
    worker = next(g for g in groups if g["spec"]["role"] == "Node")
    config_path = store / CLUSTER / nodeup_config.config_path(worker)
    assert hashes[worker["metadata"]["name"]] == hashlib.sha256(config_path.read_bytes()).hexdigest()
    # What update cluster uploads: the collection tarball and the pinned wheels, under the store's boot/.
    manifest = boot_artifacts.upload_boot_artifacts(completed, "file://%s/%s" % (store, CLUSTER))
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()

    pool = host_pool(1, binds=[store, artifacts])
    host = pool.hosts[0]
    # The worker's certificates come from the bootstrap service (in the test process on the bridge; the control
    # plane's own is tests/nodes/test_bootstrap_service.py's), the instance's identity from moto.
    ca = keystore.primary(keystore.load(cluster_store, "kubernetes-ca"))
    with cloud.WorkerService(pool, host, CLUSTER, worker["metadata"]["name"], "file://%s/%s" % (store, CLUSTER), ca,
                             tmp_path) as service:
        script = bootstrap.bootstrap_user_data(
            completed, worker, "file://%s/%s" % (store, CLUSTER), hashes[worker["metadata"]["name"]], manifest,
            environment={"AWS_REGION": "us-east-1"},
            nodeup_vars=dict(service.hostvars, nodeup_distro_packages={"containerd": "containerd", "runc": "runc"},
                             nodeup_download_assets=False))
        (artifacts / "user_data").write_text(script)
        started = time.monotonic()
        boot = host.run("bash %s/user_data" % artifacts, timeout=900)
        elapsed = time.monotonic() - started
    instance, lines = service.instance, service.lines
    assert boot.returncode == 0, boot.stdout[-4000:] + boot.stderr[-4000:]
    assert host.run("ctr version").returncode == 0
    assert "--bootstrap-kubeconfig" not in host.run("cat /etc/sysconfig/kubelet").stdout
    kubelet = certs.load_certificate(host.run("cat /var/lib/kubelet/pki/kubelet-client.crt").stdout.encode())
    assert kubelet.subject.rfc4514_string() == "CN=system:node:%s,O=system:nodes" % instance["InstanceId"]
    assert any("bootstrapped %s" % instance["InstanceId"] in line for line in lines), lines
    assert host.run("/opt/kubeops/venv/bin/ansible --version").returncode == 0
    print("boot: user data configured a fresh host in %.1f s" % elapsed)

    # A store that changed after the template was made is refused at once, as kops refuses a wrong NodeupConfigHash.
    tampered = script.replace("NODEUP_CONFIG_HASH=" + hashes[worker["metadata"]["name"]],
                              "NODEUP_CONFIG_HASH=" + "0" * 64)
    (artifacts / "tampered").write_text(tampered)
    refused = host.run("bash %s/tampered" % artifacts, timeout=600)
    assert refused.returncode != 0 and "not the pinned %s: refused" % ("0" * 64) in refused.stderr
