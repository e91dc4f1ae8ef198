"""playbooks/nodeup.yml as a user runs it (the installed collection, from another directory): which hosts it
configures by default, and the filters it and roles/protokube take their paths and etcd layout from."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1].parent
BIN = pathlib.Path(sys.executable).parent
# The groups and host variables the kubeops.kops.kops inventory makes (docs/inventory.md); addresses are never
# connected to (--list-hosts, or connection local).
INVENTORY = """\
[role_bastion]
bastion-1 kops_instance_group=bastions kops_role=Bastion ansible_host=192.0.2.10
[role_control_plane]
cp-1 kops_instance_group=master-us-test-1a kops_role=Master ansible_host=192.0.2.11
[role_node]
node-1 kops_instance_group=nodes kops_role=Node ansible_host=192.0.2.12
node-2 kops_instance_group=nodes kops_role=Node ansible_host=192.0.2.13
"""


def _env():
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / "build" / "collections"))
    for name in ("PYTHONPATH", "ANSIBLE_CONFIG"):
        env.pop(name, None)
    return env


def _playbook(tmp_path, *args):
    (tmp_path / "hosts.ini").write_text(INVENTORY)
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "hosts.ini", *args], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120, check=False)


def _plays_hosts(stdout):
    """{play name: [hosts]} from --list-hosts output."""
    plays, current = {}, None
    for line in stdout.splitlines():
        if line.strip().startswith("play #"):
            current = line.split(": ", 1)[1].split("\t", 1)[0].strip()
            plays[current] = []
        elif current and line.startswith("      ") and line.strip():
            plays[current].append(line.strip())
    return plays


def test_default_hosts_leave_out_the_bastion(tmp_path):
    proc = _playbook(tmp_path, "--list-hosts", "kubeops.kops.nodeup")
    assert proc.returncode == 0, proc.stderr
    plays = _plays_hosts(proc.stdout)
    assert {name: sorted(hosts) for name, hosts in plays.items()} == {
        "Nodeup": ["cp-1", "node-1", "node-2"], "Protokube": ["cp-1", "node-1", "node-2"]}, proc.stdout


def test_nodeup_hosts_still_chooses(tmp_path):
    proc = _playbook(tmp_path, "--list-hosts", "kubeops.kops.nodeup", "-e", "nodeup_hosts=role_node")
    assert proc.returncode == 0, proc.stderr
    assert {name: sorted(hosts) for name, hosts in _plays_hosts(proc.stdout).items()} == {
        "Nodeup": ["node-1", "node-2"], "Protokube": ["node-1", "node-2"]}, proc.stdout


FILTERS = """\
- hosts: all
  gather_facts: false
  connection: local
  tasks:
    - name: The config path of each host, from its inventory variables
      ansible.builtin.copy:
        content: "{{ kops_instance_group | kubeops.kops.nodeup_config_path(kops_role) }}"
        dest: "{{ playbook_dir }}/{{ inventory_hostname }}.path"
        mode: "0644"
"""


def test_config_path_filter_from_inventory_variables(tmp_path):
    (tmp_path / "play.yml").write_text(FILTERS)
    proc = _playbook(tmp_path, "play.yml", "-e", "ansible_python_interpreter=%s" % sys.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    paths = {path.stem: path.read_text() for path in tmp_path.glob("*.path")}
    assert paths == {"bastion-1": "igconfig/bastion/bastions/nodeupconfig.yaml",
                     "cp-1": "igconfig/control-plane/master-us-test-1a/nodeupconfig.yaml",
                     "node-1": "igconfig/node/nodes/nodeupconfig.yaml", "node-2": "igconfig/node/nodes/nodeupconfig.yaml"}


def test_config_path_filter_names_the_fix_for_a_wrong_role(tmp_path):
    (tmp_path / "play.yml").write_text(FILTERS)
    proc = _playbook(tmp_path, "play.yml", "-l", "node-1", "-e", "kops_role=Worker",
                     "-e", "ansible_python_interpreter=%s" % sys.executable)
    assert proc.returncode != 0
    assert "kops_role (one of" in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr


def test_etcd_filters_from_a_stored_config(tmp_path):
    """roles/protokube's filters on a config built as cluster_update builds it, through Ansible's templating."""
    sys.path.insert(0, str(REPO))
    from tests.unit.nodeconfig.test_etcd_layout import _clusters
    kubeops = {"etcdClusters": _clusters("ha", "master-us-test-1b", "s3://state/ha.example.com")}
    (tmp_path / "config.json").write_text(json.dumps({"kubeops": kubeops}))
    (tmp_path / "play.yml").write_text("""\
- hosts: localhost
  gather_facts: false
  vars:
    etcd: "{{ lookup('file', 'config.json') | from_json | kubeops.kops.etcd_node_clusters({'a': '10.0.1.10', 'b': '10.0.2.10', 'c': '10.0.3.10'}) }}"
  tasks:
    - name: What the role loops over
      ansible.builtin.copy:
        dest: "{{ playbook_dir }}/result.json"
        mode: "0644"
        content: "{{ {'members': etcd | map(attribute='member') | list,
                  'sans': etcd | map(attribute='certificates') | flatten | map(attribute='ip_addresses', default=[]) | list,
                  'restart': etcd | kubeops.kops.etcd_restart_units(['etcd-events'], ['/etc/kubernetes/pki/etcd-main/peer.crt'],
                                                                    ['inactive', 'active'])} | to_json }}"
""")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "play.yml",
                           "-e", "ansible_python_interpreter=%s" % sys.executable],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result == {"members": ["etcd-b", "etcd-events-b"],
                      "sans": [["10.0.2.10"], ["10.0.2.10", "127.0.0.1"], [],
                               ["10.0.2.10"], ["10.0.2.10", "127.0.0.1"], []],
                      "restart": ["etcd-events"]}
