"""The bootstrap service for real: run by roles/protokube under systemd on a control-plane test host; a worker
test host gets its kubelet and kube-proxy certificates and its nodeup config from it (module node_bootstrap).

Identities are moto's, with signatures and policies checked (tests/unit/nodeup/bootstrap_cloud.py): moto listens
on the pool's bridge address, which the control-plane host reaches; the worker never talks to AWS (it signs
offline).  The state store is a file:// store that exists only on the control-plane host, so the worker
provably has no store to read secrets/ or pki/private/ from (the S3 policy side is tests/unit/nodeup/
test_bootstrap_service.py's).  Times are printed (pytest -s).
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.clusters import ClusterService
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils import updates
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import store as nodeup_store
from ansible_collections.kubeops.kops.plugins.module_utils.completion import populate
from ansible_collections.kubeops.kops.plugins.module_utils.pki import certs, keystore

from tests.integration.conftest import BIN, REPO, ansible_env
from tests.unit.nodeup import bootstrap_cloud as cloud

pytestmark = pytest.mark.hosts
CLUSTER = "boot.example.com"
OPTIONS = {"cluster_name": CLUSTER, "cloud_provider": "aws", "zones": ["us-east-1a"], "networking": "cni",
           "kubernetes_version": "v1.34.2"}

CONTROL_PLANE = """
- name: The control plane's certificates (as roles/nodeup issues them), then the bootstrap service
  hosts: control_plane
  gather_facts: false
  tasks:
    - name: cryptography for node_certificates
      ansible.builtin.apt:
        name: [python3-cryptography, python3-yaml]
    - name: The control plane's certificates from the store's CAs
      kubeops.kops.node_certificates:
        config_base: "{{ protokube_nodeup_config.kubeops.configBase }}"
        nodeup_config: "{{ protokube_nodeup_config }}"
    - name: The bootstrap service
      ansible.builtin.include_role:
        name: kubeops.kops.protokube
        tasks_from: bootstrap_service
"""
WORKER = """
- name: A worker's credentials from the bootstrap service
  hosts: worker
  gather_facts: false
  tasks:
    - name: The node's Python libraries
      ansible.builtin.apt:
        name: [python3-cryptography, python3-botocore, python3-yaml]
    - name: Bootstrap
      kubeops.kops.node_bootstrap:
        server: "{{ bootstrap_server }}"
        ca_cert: "{{ bootstrap_ca }}"
        region: us-east-1
        sts_endpoint: "{{ bootstrap_sts }}"
        include_node_config: "{{ include_node_config | default(false) }}"
      environment: "{{ worker_credentials }}"
      register: bootstrap
    - name: Hand the result to the test
      ansible.builtin.copy:
        content: "{{ bootstrap | to_json }}"
        dest: "{{ result_file }}"
        mode: "0600"
      delegate_to: localhost
      changed_when: false
"""


# The service's health over TLS with the cluster CA (written to /root/ca.crt on the host by the test).
HEALTH = "curl -sf --cacert /root/ca.crt --resolve %s:3988:127.0.0.1 https://%s:3988/healthz"


def _ansible_playbook(inventory, playbook, *extra):
    env = dict(ansible_env(REPO / "build" / "collections"), ANSIBLE_PIPELINING="true")
    started = time.monotonic()
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)] + list(extra),
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    return proc, round(time.monotonic() - started, 1)


def _store(tmp_path):
    """A cluster in a file:// store: keysets, every group's nodeup config; (root, {role: group}, configs)."""
    root = tmp_path / "state"
    service = ClusterService("file://%s" % root)
    service.execute(service.plan_create(OPTIONS))
    completed, groups = updates.load_completed(service, CLUSTER)  # as update completes them, once
    cluster_store = service.cluster_store(CLUSTER)
    changes, _hashes = nodeup_store.node_files(cluster_store, completed, groups)
    cluster_store.apply(changes)
    keysets = nodeup_config.load_keysets(cluster_store, completed)
    configs = {g["spec"]["role"]: nodeup_config.build_config(
        completed, populate.populate_instance_group_spec(completed, g), keysets, cluster_store.config_base())
        for g in groups}
    return root, {g["spec"]["role"]: g["metadata"]["name"] for g in groups}, configs, keysets


def _credentials_env(credentials):
    return {"AWS_ACCESS_KEY_ID": credentials.access_key, "AWS_SECRET_ACCESS_KEY": credentials.secret_key,
            "AWS_SESSION_TOKEN": credentials.token or "", "AWS_EC2_METADATA_DISABLED": "true"}


def test_a_worker_gets_its_kubelet_certificate_from_the_service_on_the_control_plane(host_pool, tmp_path):
    times = {}
    root, groups, configs, keysets = _store(tmp_path)
    pool = host_pool(2)
    control, worker = pool.hosts
    moto = cloud.SigningMoto(host="%s.1" % pool.subnet).start()
    try:
        node_role = cloud.make_role(moto, "nodes.%s" % CLUSTER)
        instance = cloud.run_instance(moto, CLUSTER, groups["Node"])
        gone = cloud.run_instance(moto, CLUSTER, groups["Node"], state="terminated")
        admin = moto.admin.get_credentials()

        # The store exists on the control-plane host only, at the path its nodeup config names.
        archive = subprocess.run(["tar", "-C", str(root), "-cf", "-", "."], capture_output=True, check=True).stdout
        unpack = subprocess.run(control.ssh_command("mkdir -p %s && tar -C %s -xf -" % (root, root)), input=archive,
                                capture_output=True, check=False)
        assert unpack.returncode == 0, unpack.stderr
        assert worker.run("test -e %s" % root).returncode != 0

        ca_pem = keystore.trusted_certificates_pem(keysets["kubernetes-ca"]).decode()
        server_name = "kops-controller.internal.%s" % CLUSTER
        assert configs["Node"]["kubeops"]["bootstrapService"]["server"] == "https://%s:3988" % server_name
        assert worker.run("echo '%s %s' >> /etc/hosts" % (control.address, server_name)).returncode == 0
        assert control.run("cat > /root/ca.crt <<'EOF'\n%sEOF" % ca_pem).returncode == 0
        hostvars = {
            control.name: {"protokube_nodeup_config": configs["Master"],
                           "protokube_bootstrap_overrides": {"stsEndpoint": moto.url + "/", "ec2Endpoint": moto.url},
                           "protokube_bootstrap_environment": _credentials_env(admin)},
            worker.name: {"bootstrap_server": configs["Node"]["kubeops"]["bootstrapService"]["server"],
                          "bootstrap_ca": ca_pem, "bootstrap_sts": moto.url + "/",
                          "result_file": str(tmp_path / "result.json"),
                          "worker_credentials": _credentials_env(
                              cloud.instance_credentials(moto, node_role, instance["InstanceId"]))}}
        inventory = pool.inventory_file(tmp_path / "hosts.yml", hostvars=hostvars,
                                        groups={"control_plane": [control.name], "worker": [worker.name]})
        (tmp_path / "control.yml").write_text(CONTROL_PLANE)
        (tmp_path / "worker.yml").write_text(WORKER)

        proc, times["control_plane_run_s"] = _ansible_playbook(inventory, tmp_path / "control.yml")
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
        deadline = time.monotonic() + 30
        while control.run(HEALTH % (server_name, server_name)).returncode != 0:
            assert time.monotonic() < deadline, control.run("journalctl -u kubeops-bootstrap -n 30").stdout
            time.sleep(0.5)
        assert control.run("systemctl is-enabled kubeops-bootstrap").stdout.strip() == "enabled"

        # 1. The worker bootstraps: certificates signed by the cluster CA for its own instance, its group's config.
        proc, times["worker_first_run_s"] = _ansible_playbook(inventory, tmp_path / "worker.yml",
                                                              "-e", "include_node_config=true")
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
        result = json.loads((tmp_path / "result.json").read_text())
        assert result["changed"] and result["node_name"] == instance["InstanceId"]
        stored = yaml.safe_load((root / CLUSTER / nodeup_config.config_path(
            {"metadata": {"name": groups["Node"]}, "spec": {"role": "Node"}})).read_text())
        assert result["nodeup_config"] == stored
        kubelet = certs.load_certificate(worker.run("cat /var/lib/kubelet/pki/kubelet-client.crt").stdout.encode())
        ca = certs.load_certificate(ca_pem.encode())
        assert certs.issued_by(kubelet, ca)
        assert kubelet.subject.rfc4514_string() == "CN=system:node:%s,O=system:nodes" % instance["InstanceId"]
        proxy = certs.load_certificate(worker.run("cat /var/lib/kube-proxy/client.crt").stdout.encode())
        assert proxy.subject.rfc4514_string() == "CN=system:kube-proxy" and certs.issued_by(proxy, ca)
        assert worker.run("stat -c %a /var/lib/kubelet/pki/kubelet-client.key").stdout.strip() == "600"
        # The key never left the worker: it matches the certificate and the service has no copy.
        check = worker.run("openssl x509 -noout -modulus -in /var/lib/kubelet/pki/kubelet-client.crt | md5sum; "
                           "openssl rsa -noout -modulus -in /var/lib/kubelet/pki/kubelet-client.key | md5sum")
        if check.returncode == 0:
            first, second = check.stdout.split("\n")[:2]
            assert first == second
        journal = control.run("journalctl -u kubeops-bootstrap --no-pager").stdout
        assert "bootstrapped %s" % instance["InstanceId"] in journal, journal[-2000:]
        # Still no store on the worker.
        assert worker.run("test -e %s" % root).returncode != 0

        # 2. A second run keeps the certificates and asks nothing.
        proc, times["worker_second_run_s"] = _ansible_playbook(inventory, tmp_path / "worker.yml")
        assert proc.returncode == 0 and "changed=0" in proc.stdout, proc.stdout[-3000:]

        # 3. A terminated instance's (still valid) credentials are refused; the reason is in the service's log.
        hostvars[worker.name]["worker_credentials"] = _credentials_env(
            cloud.instance_credentials(moto, node_role, gone["InstanceId"]))
        worker.run("rm -f /var/lib/kubelet/pki/kubelet-client.crt")
        inventory = pool.inventory_file(tmp_path / "hosts.yml", hostvars=hostvars,
                                        groups={"control_plane": [control.name], "worker": [worker.name]})
        proc, _seconds = _ansible_playbook(inventory, tmp_path / "worker.yml")
        assert proc.returncode != 0 and "answered 403: failed to verify token" in proc.stdout, proc.stdout[-3000:]
        journal = control.run("journalctl -u kubeops-bootstrap --no-pager").stdout
        assert "refused: instance %s is terminated" % gone["InstanceId"] in journal, journal[-2000:]
        assert worker.run("test -e /var/lib/kubelet/pki/kubelet-client.crt").returncode != 0

        # 4. The service comes back after its host restarts (enabled unit).
        started = time.monotonic()
        control.stop()
        control.start()
        deadline = time.monotonic() + 60
        while control.run(HEALTH % (server_name, server_name)).returncode != 0:
            assert time.monotonic() < deadline, control.run("journalctl -u kubeops-bootstrap -n 30").stdout
            time.sleep(0.5)
        times["service_after_host_restart_s"] = round(time.monotonic() - started, 1)
    finally:
        moto.stop()
    print("bootstrap service times: %s" % json.dumps(times))
