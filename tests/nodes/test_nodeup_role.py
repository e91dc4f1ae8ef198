"""roles/nodeup on real test hosts: a control-plane and a worker node from their nodeup configs."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import time

import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store

from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs

from tests.integration.conftest import BIN, REPO, ansible_env
from tests.nodes import boot_artifacts
from tests.unit.nodeup import bootstrap_cloud as cloud

pytestmark = pytest.mark.hosts
CLUSTER = "nodes.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}
# No network in the test hosts: containerd and runc come from Debian's packages (cached in the image);
# kubelet and kubectl exist in no reachable registry, so they are not downloaded (their files are still written).
# protokube on the control plane: no etcd release is reachable, so Debian's etcd is installed through
# protokube_etcd_install_override (tests/nodes/boot_artifacts.py), and no kube-apiserver answers here, so the
# addons are skipped after 1 s.
EXTRA = ["-e", json.dumps({"nodeup_distro_packages": {"containerd": "containerd", "runc": "runc"},
                           "nodeup_download_assets": False, "protokube_api_wait_timeout": 1})]


def _store(tmp_path, url=None):
    root = tmp_path / "state"
    service = ClusterService(url or "file://%s" % root)
    service.execute(service.plan_create(OPTIONS))
    completed, groups = updates.load_completed(service, CLUSTER)  # as update completes them, once
    cluster_store = service.cluster_store(CLUSTER)
    changes, _hashes = nodeup_store.node_files(cluster_store, completed, groups)
    cluster_store.apply(changes)
    return root, {g["spec"]["role"]: g["metadata"]["name"] for g in groups}


def run_nodeup(inventory, *extra):
    env = dict(ansible_env(REPO / "build" / "collections"), ANSIBLE_PIPELINING="true")
    started = time.monotonic()
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(REPO / "playbooks" / "nodeup.yml")]
                          + EXTRA + list(extra), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    return [int(n) for n in re.findall(r"changed=(\d+)", proc.stdout)], time.monotonic() - started


def test_control_plane_and_worker_nodes(host_pool, tmp_path):
    """The control plane first (it runs the bootstrap service the worker asks, identities in moto), then the worker."""
    store, groups = _store(tmp_path)
    pool = host_pool(2, binds=[store])
    control, worker = pool.hosts
    moto = cloud.SigningMoto(host="%s.1" % pool.subnet).start()
    try:
        _control_plane_and_worker(pool, moto, store, groups, tmp_path)
    finally:
        moto.stop()


def _control_plane_and_worker(pool, moto, store, groups, tmp_path):
    control, worker = pool.hosts
    instance = cloud.give_worker_identity(moto, CLUSTER, groups["Node"], worker, control.address)
    admin = moto.admin.get_credentials()
    hostvars = {control.name: {"kops_role": "Master", "kops_instance_group": groups["Master"],
                               "protokube_etcd_install_override": boot_artifacts.debian_etcd_install(control),
                               "protokube_bootstrap_overrides": {"stsEndpoint": moto.url + "/",
                                                                 "ec2Endpoint": moto.url},
                               "protokube_bootstrap_environment": {"AWS_ACCESS_KEY_ID": admin.access_key,
                                                                   "AWS_SECRET_ACCESS_KEY": admin.secret_key},
                               # the node labeller's EC2 is moto too (it asks EC2 only once the API answers)
                               "protokube_node_labeller_overrides": {"ec2Endpoint": moto.url}},
                worker.name: {"kops_role": "Node", "kops_instance_group": groups["Node"],
                              "nodeup_bootstrap_sts_endpoint": moto.url + "/"}}
    for variables in hostvars.values():
        variables.update(kops_state_store="file://%s" % store, kops_cluster_name=CLUSTER)
    inventory = pool.inventory_file(tmp_path / "hosts.yml", hostvars=hostvars)
    first = run_nodeup(inventory, "-e", "nodeup_hosts=%s" % control.name)[0]
    first += run_nodeup(inventory, "-e", "nodeup_hosts=%s" % worker.name)[0]
    assert all(n > 0 for n in first)
    for host in pool.hosts:
        version = host.run("ctr version")
        assert version.returncode == 0 and "Server:" in version.stdout, version.stderr
        toml = host.run("cat /etc/containerd/config.toml").stdout
        # Debian's containerd 1.6 (a distribution package): kops' config in schema 2, which 1.x reads.
        assert toml.startswith("version = 2\n") and "SystemdCgroup = true" in toml
        assert 'sandbox_image = "registry.k8s.io/pause:' in toml
        assert host.run("systemctl show -p ExecStart --value containerd").stdout.count("/etc/containerd/config.toml")
        assert host.run("cat /etc/sysconfig/containerd").stdout == "CONTAINERD_OPTS=--log-level=info"
        config = yaml.safe_load(host.run("cat /var/lib/kubelet/kubelet.conf").stdout)
        # kubernetes-validate has no schema for KubeletConfiguration (not an API object): check its shape.
        assert (config["apiVersion"], config["kind"]) == ("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration")
        assert config["cgroupDriver"] == "systemd" and config["clusterDNS"] == ["100.64.0.10"]
        # What the kubelet config points at is on the node: its serving certificate and the CA.
        assert host.run("test -s %s && test -s %s && test -s /srv/kubernetes/ca.crt" % (
            config["tlsCertFile"], config["tlsPrivateKeyFile"])).returncode == 0
        # systemd-nspawn keeps /proc/sys read-only in the hosts, so the file is checked, not the live value.
        assert "net.ipv4.ip_forward=1" in host.run("cat /etc/sysctl.d/99-k8s-general.conf").stdout
    flags = control.run("cat /etc/sysconfig/kubelet").stdout
    # No labels on the kubelet's command line (kops: the kubelet refuses kubernetes.io labels it may not set).
    assert "--node-labels" not in flags and "--bootstrap-kubeconfig" not in flags
    assert flags.startswith('DAEMON_ARGS="') and "--config=/var/lib/kubelet/kubelet.conf" in flags
    # The worker's kubelet has the bootstrap service's certificate, for its instance, and registers under that name.
    worker_flags = worker.run("cat /etc/sysconfig/kubelet").stdout
    assert "--bootstrap-kubeconfig" not in worker_flags and "--hostname-override=%s" % instance["InstanceId"] in worker_flags
    kubelet = certs.load_certificate(worker.run("cat /var/lib/kubelet/pki/kubelet-client.crt").stdout.encode())
    assert kubelet.subject.rfc4514_string() == "CN=system:node:%s,O=system:nodes" % instance["InstanceId"]
    assert not (store / CLUSTER / "secrets" / "kubelet-bootstrap-token").exists()
    kubeconfig = worker.run("stat -c %a /var/lib/kubelet/kubeconfig; cat /var/lib/kubelet/kubeconfig")
    mode, document = kubeconfig.stdout.split("\n", 1)
    assert mode == "600" and json.loads(document)["users"][0]["user"]["client-certificate"] == \
        "/var/lib/kubelet/pki/kubelet-client.crt"
    assert json.loads(document)["clusters"][0]["cluster"]["server"] == "https://api.internal.%s:443" % CLUSTER
    proxy = json.loads(worker.run("cat /var/lib/kube-proxy/kubeconfig").stdout)
    assert proxy["users"][0]["user"]["client-certificate"] == "/var/lib/kube-proxy/client.crt"

    _assert_control_plane(control, store)
    worker_pods = worker.run("ls /etc/kubernetes/manifests").stdout.split()
    assert worker_pods == ["kube-proxy.manifest"]
    assert worker.run("test -e /srv/kubernetes/kube-apiserver").returncode != 0  # no control-plane credentials

    pid_before = control.run("systemctl show -p MainPID --value containerd").stdout.strip()
    again, noop = run_nodeup(inventory)
    assert again == [0, 0]
    assert control.run("systemctl show -p MainPID --value containerd").stdout.strip() == pid_before
    print("nodeup: second (no-op) run on 2 hosts %.1f s" % noop)


def test_worker_from_an_s3_store_read_on_the_controller(host_pool, aws, tmp_path):
    """The node cannot reach the store (moto listens on the controller's loopback): the play reads its
    nodeup config on the controller and hands it over; its certificates come from the bootstrap service
    (here in the test process, on the bridge: the control plane's own is tested above), no secret from the store.
    First as an instance entering a warm pool (kops' Warming mode: the kubelet stays stopped and disabled), then
    as one leaving it (started and enabled)."""
    import boto3
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="kops-state")
    _root, groups = _store(tmp_path, url="s3://kops-state")
    pool = host_pool(1)
    worker = pool.hosts[0]
    cluster_store = layout.ClusterStore(vfs.open_store("s3://kops-state"), CLUSTER)
    ca = keystore.primary(keystore.load(cluster_store, "kubernetes-ca"))
    # A stand-in kubelet (the test hosts download no assets), so that the role has a kubelet to run or not.
    assert worker.run("printf '#!/bin/sh\\nexec sleep infinity\\n' > /usr/local/bin/kubelet && "
                      "chmod 0755 /usr/local/bin/kubelet").returncode == 0
    with cloud.WorkerService(pool, worker, CLUSTER, groups["Node"], "s3://kops-state/%s" % CLUSTER, ca, tmp_path,
                             s3=boto3.client("s3", region_name="us-east-1")) as service:
        worker_vars = dict(service.hostvars, kops_role="Node", kops_instance_group=groups["Node"],
                           kops_state_store="s3://kops-state", kops_cluster_name=CLUSTER)
        warming = dict(worker_vars, nodeup_configuration_mode="Warming")
        counts, _elapsed = run_nodeup(pool.inventory_file(tmp_path / "hosts.yml", hostvars={worker.name: warming}))
        kubelet_state = worker.run("systemctl is-enabled kubelet; systemctl is-active kubelet").stdout.split()
        assert kubelet_state == ["disabled", "inactive"]
        again, _elapsed = run_nodeup(pool.inventory_file(tmp_path / "hosts.yml", hostvars={worker.name: worker_vars}))
        kubelet_state = worker.run("systemctl is-enabled kubelet; systemctl is-active kubelet").stdout.split()
        assert again and kubelet_state == ["enabled", "active"]
    instance, lines = service.instance, service.lines
    assert counts and counts[0] > 0
    assert cluster_store.read("secrets/kubelet-bootstrap-token") is None
    assert any("bootstrapped %s" % instance["InstanceId"] in line for line in lines), lines
    kubelet = certs.load_certificate(worker.run("cat /var/lib/kubelet/pki/kubelet-client.crt").stdout.encode())
    assert kubelet.subject.rfc4514_string() == "CN=system:node:%s,O=system:nodes" % instance["InstanceId"]
    assert worker.run("test -s /etc/kubernetes/manifests/kube-proxy.manifest").returncode == 0


def _assert_control_plane(control, store):
    """Static pods validate against the Kubernetes schemas; certificates chain to the store's CAs."""
    from cryptography import x509
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs

    names = control.run("ls /etc/kubernetes/manifests").stdout.split()
    assert names == ["kube-apiserver.manifest", "kube-controller-manager.manifest", "kube-proxy.manifest",
                     "kube-scheduler.manifest"]
    for name in names:
        pod = yaml.safe_load(control.run("cat /etc/kubernetes/manifests/%s" % name).stdout)
        kubernetes_validate.validate(pod, "1.34.0", strict=True)
    cluster_store = layout.ClusterStore(vfs.open_store("file://%s" % store), CLUSTER)
    for path, signer in (("/srv/kubernetes/kube-apiserver/server.crt", "kubernetes-ca"),
                         ("/srv/kubernetes/kube-apiserver/etcd-client.crt", "etcd-clients-ca"),
                         ("/srv/kubernetes/kube-apiserver/apiserver-aggregator.crt", "apiserver-aggregator-ca"),
                         ("/var/lib/kube-controller-manager/kubeconfig", "kubernetes-ca")):
        text = control.run("cat %s" % path).stdout
        if path.endswith("kubeconfig"):  # kops' format: the client certificate inline
            text = base64.b64decode(yaml.safe_load(text)["users"][0]["user"]["client-certificate-data"]).decode()
        certificate = x509.load_pem_x509_certificate(text.encode())
        ca_certificate, _key = keystore.primary(keystore.load(cluster_store, signer))
        certificate.verify_directly_issued_by(ca_certificate)
    # playbooks/nodeup.yml ran protokube on the control plane: its single-member main and events are up over TLS,
    # where kube-apiserver's manifest expects them.
    for cluster, port in (("main", 4001), ("events", 4002)):
        pki = "/etc/kubernetes/pki/etcd-%s" % cluster
        health = control.run("ETCDCTL_API=3 etcdctl --endpoints https://127.0.0.1:%d --cacert %s/clients-ca.crt "
                             "--cert %s/etcdctl.crt --key %s/etcdctl.key endpoint health" % (port, pki, pki, pki))
        assert health.returncode == 0 and "is healthy" in health.stdout + health.stderr, health.stderr
    modes = control.run("stat -c '%a %n' /srv/kubernetes/kube-apiserver/*.key /srv/kubernetes/kube-controller-manager/*.key")
    assert modes.returncode == 0 and set(line.split()[0] for line in modes.stdout.splitlines()) == {"600"}


def _set_assets(store, group, assets):
    """The worker's nodeup config in the (file://) store, with these assets for amd64."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
    path = store / CLUSTER / nodeup_config.config_path_of(group, "Node")
    document = yaml.safe_load(path.read_text())
    document["Assets"] = {"amd64": assets, "arm64": []}
    path.write_text(yaml.safe_dump(document))


def test_assets_from_the_test_network_by_sha256(host_pool, tmp_path, request):
    """Assets come over HTTP from the test network, are checked by sha256 and installed where kops' nodeup puts
    them (kubeops.kops.node_assets); a second run downloads and installs nothing; a wrong hash is refused.
    (kubelet is not among them: no kubelet binary can be had here, and a fake one would be started; kubectl is
    installed on API server nodes only, as kops does.)"""
    import hashlib
    import io
    import tarfile
    store, groups = _store(tmp_path)
    pool = host_pool(1, binds=[store])
    worker = pool.hosts[0]
    served = tmp_path / "mirror"
    served.mkdir()
    provider = "ecr-credential-provider-linux-amd64"
    (served / provider).write_text("#!/bin/sh\necho provider-from-the-mirror\n")
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        data = b"#!/bin/sh\necho bridge\n"
        info = tarfile.TarInfo("./bridge")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    (served / "cni-plugins-linux-amd64-v9.9.9.tgz").write_bytes(archive.getvalue())
    url = pool.serve_directory(served)
    assets = ["%s@%s/%s" % (hashlib.sha256((served / name).read_bytes()).hexdigest(), url, name)
              for name in (provider, "cni-plugins-linux-amd64-v9.9.9.tgz")]
    _set_assets(store, groups["Node"], assets)
    # The worker's certificates come from a bootstrap service (this test is about assets).
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import layout, vfs
    ca = keystore.primary(keystore.load(layout.ClusterStore(vfs.open_store("file://%s" % store), CLUSTER),
                                        "kubernetes-ca"))
    service = cloud.WorkerService(pool, worker, CLUSTER, groups["Node"], "file://%s/%s" % (store, CLUSTER), ca, tmp_path)
    service.__enter__()
    request.addfinalizer(lambda: service.__exit__(None, None, None))
    hostvars = {worker.name: dict(service.hostvars, kops_role="Node", kops_instance_group=groups["Node"],
                                  kops_state_store="file://%s" % store, kops_cluster_name=CLUSTER)}
    inventory = pool.inventory_file(tmp_path / "hosts.yml", hostvars=hostvars)
    overrides = ["-e", json.dumps({"nodeup_download_assets": True})]
    run_nodeup(inventory, *overrides)
    assert worker.run("/usr/local/bin/ecr-credential-provider").stdout.strip() == "provider-from-the-mirror"
    assert worker.run("/opt/cni/bin/bridge").stdout.strip() == "bridge"
    assert worker.run("stat -c %a /opt/cni/bin/bridge").stdout.strip() == "755"
    assert worker.run("test -e /usr/local/bin/kubectl").returncode != 0
    again, _elapsed = run_nodeup(inventory, *overrides)
    assert again == [0]
    _set_assets(store, groups["Node"], ["%s@%s/%s" % ("0" * 64, url, provider)])
    env = dict(ansible_env(REPO / "build" / "collections"), ANSIBLE_PIPELINING="true")
    (served / provider).write_text("#!/bin/sh\necho tampered\n")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(REPO / "playbooks" / "nodeup.yml")]
                          + EXTRA + ["-e", json.dumps({"nodeup_download_assets": True,
                                                       "nodeup_asset_cache": "/opt/kubeops/other-cache"})],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode != 0 and "checksum" in proc.stdout.lower()
    assert worker.run("/usr/local/bin/ecr-credential-provider").stdout.strip() == "provider-from-the-mirror"
