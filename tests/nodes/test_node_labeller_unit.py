"""The node labeller as roles/protokube runs it: the kubeops-node-labeller unit on a real test host (systemd),
started by the role's own tasks (tasks/node_labeller.yml), labelling a Node on a real kube-apiserver
(tests/realk8s/apiserver.py, listening on the hosts' bridge; Node,RBAC authorization and NodeRestriction) with its
own certificate, its cloud lookups in moto (signed requests), its groups' labels from a file:// store.

Times are printed (pytest -s): the role's run, and registration -> labelled by the unit.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.addons import node_labeller as node_labeller_addon
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import node_labels
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import node_labeller
from tests.integration import test_node_labeller as helpers
from tests.integration.conftest import BIN, REPO, ansible_env
from tests.nodes import boot_artifacts
from tests.unit.nodeup import bootstrap_cloud

pytestmark = pytest.mark.hosts

COLLECTIONS = REPO / "build" / "collections"
VENV = "/opt/kubeops/venv"
PLAYBOOK = """
- name: The node labeller on a control-plane node
  hosts: control_plane
  gather_facts: false
  tasks:
    - name: The role's node labeller tasks
      ansible.builtin.include_role:
        name: kubeops.kops.protokube
        tasks_from: node_labeller.yml
"""


def test_the_unit_labels_a_registered_node(host_pool, start_real_kube_api, tmp_path):
    times = {}
    completed, groups = helpers._completed("minimal-aws")
    cluster = completed["metadata"]["name"]
    config_base = helpers._write_store(tmp_path, completed, groups)
    pool = host_pool(1, binds=[tmp_path, boot_artifacts.wheelhouse(), REPO])
    host = pool.hosts[0]
    bridge = host.address.rsplit(".", 1)[0] + ".1"
    moto = bootstrap_cloud.SigningMoto(host=bridge).start()
    api = start_real_kube_api(host=bridge)
    try:
        started = time.monotonic()
        result = host.run("python3 -m venv %s && %s/bin/pip install -q --no-index --find-links %s ansible-core "
                          "cryptography pyyaml botocore" % (VENV, VENV, boot_artifacts.wheelhouse()), timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr
        times["node_venv_s"] = round(time.monotonic() - started, 1)
        paths = helpers._write_credentials(api, tmp_path, node_labeller.USER, ())
        for obj in node_labeller_addon.rbac_objects():  # what the channel applies before
            api.create(obj["apiVersion"], obj["kind"], obj)
        instance = bootstrap_cloud.run_instance(moto, cluster, "master-us-test-1a")
        admin = moto.admin.get_credentials()
        config = {"kubeops": {"instanceGroup": "master-us-test-1a",
                              "nodeLabeller": node_labels.labeller_settings(completed, groups["master-us-test-1a"])}}
        hostvars = {host.name: {
            "ansible_python_interpreter": "%s/bin/python" % VENV, "protokube_nodeup_config": config,
            "protokube_python": "%s/bin/python" % VENV, "protokube_collections_path": str(COLLECTIONS),
            "protokube_api": {"status": 200}, "protokube_node_labeller_wait_timeout": 3,
            "protokube_node_labeller_overrides": {"apiServer": api.url, "caCert": paths["ca"],
                                                  "clientCert": paths["cert"], "clientKey": paths["key"],
                                                  "configBase": config_base, "ec2Endpoint": moto.url,
                                                  "region": bootstrap_cloud.REGION, "intervalSeconds": 1},
            "protokube_node_labeller_environment": {"AWS_ACCESS_KEY_ID": admin.access_key,
                                                    "AWS_SECRET_ACCESS_KEY": admin.secret_key}}}
        inventory = pool.inventory_file(tmp_path / "hosts.yml", groups={"control_plane": [host.name]},
                                        hostvars=hostvars)
        playbook = tmp_path / "labeller.yml"
        playbook.write_text(PLAYBOOK)
        started = time.monotonic()
        proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)],
                              env=ansible_env(COLLECTIONS), capture_output=True, text=True, timeout=900, check=False)
        times["role_s"] = round(time.monotonic() - started, 1)
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
        # nothing registered yet: the role's wait says so and goes on
        assert "No node of instance group master-us-test-1a was labelled within 3 s" in proc.stdout
        assert host.run("systemctl is-active kubeops-node-labeller").stdout.strip() == "active"

        registered = time.monotonic()
        helpers._register(api, tmp_path, instance["InstanceId"], "aws:///us-east-1a/%s" % instance["InstanceId"])
        deadline = registered + 60
        while time.monotonic() < deadline:
            labels = api.get("v1", "Node", instance["InstanceId"])["metadata"].get("labels") or {}
            if "node-role.kubernetes.io/control-plane" in labels:
                break
            time.sleep(0.1)
        times["registration_to_labelled_s"] = round(time.monotonic() - registered, 2)
        journal = host.run("journalctl -u kubeops-node-labeller --no-pager").stdout
        assert labels.get("kops.k8s.io/instancegroup") == "master-us-test-1a", journal
        assert "labelled node %s (instance group master-us-test-1a)" % instance["InstanceId"] in journal
        node = api.get("v1", "Node", instance["InstanceId"])
        assert node_labeller.FIELD_MANAGER in [f["manager"] for f in node["metadata"]["managedFields"]]

        # a second run of the role changes nothing
        proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)],
                              env=ansible_env(COLLECTIONS), capture_output=True, text=True, timeout=900, check=False)
        assert proc.returncode == 0 and "changed=0" in proc.stdout, proc.stdout[-3000:]
        print("\nnode labeller unit on a test host: %s" % json.dumps(times))
        (tmp_path / "labeller-times.json").write_text(json.dumps(times))
    finally:
        moto.stop()
