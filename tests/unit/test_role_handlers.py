"""The roles' handlers fire: every notify of a task names a handler or a topic handlers listen to, and no handler
relies on notifying others.  Ansible notifies only from a task that reports a change, so a handler chain whose first
link reported unchanged (nodeup's systemd reload, changed_when false) never ran the rest: no change of containerd's
or the kubelet's files restarted them (found by tests/realk8s/test_cluster.py, where Debian's containerd kept its
own config).  The behaviour itself is checked below with ansible-playbook."""

from __future__ import annotations

import subprocess
import sys

import yaml

from tests.integration.conftest import BIN, REPO, ansible_env

ROLES = REPO / "roles"


def _handlers(role):
    path = ROLES / role / "handlers" / "main.yml"
    return yaml.safe_load(path.read_text()) or [] if path.exists() else []


def _notified(role):
    found = set()
    for path in (ROLES / role / "tasks").glob("*.yml"):
        for task in yaml.safe_load(path.read_text()) or []:
            notify = task.get("notify") or []
            found.update([notify] if isinstance(notify, str) else notify)
    return found


def test_every_notify_reaches_a_handler_and_no_handler_chains():
    for role in sorted(p.name for p in ROLES.iterdir() if p.is_dir()):
        handlers = _handlers(role)
        names = {h["name"] for h in handlers} | {h.get("listen") for h in handlers if h.get("listen")}
        assert _notified(role) <= names, (role, _notified(role) - names)
        chained = [h["name"] for h in handlers if h.get("notify")]
        assert chained == [], "%s: handlers %s notify others (they fire only when they report a change)" % (
            role, chained)


def test_the_nodeup_topic_runs_every_listening_handler_in_order(tmp_path):
    """A play with nodeup's handlers file: notifying the topic runs the reload and the restarts it selects."""
    handlers = _handlers("nodeup")
    listening = [h["name"] for h in handlers if h.get("listen") == "Apply the node's changes"]
    assert listening[0] == "Reload systemd's units" and "Restart containerd" in listening
    # The same handlers with their modules swapped for debug (no systemd here), their conditions kept.
    stand_ins = [{"name": h["name"], "listen": h["listen"], "ansible.builtin.debug": {"msg": "ran %s" % h["name"]},
                  **({"when": h["when"]} if "when" in h else {})} for h in handlers if h.get("listen")]
    play = [{"hosts": "localhost", "gather_facts": False, "vars": {
        "nodeup_files": {"restart": ["containerd"]}, "nodeup_new_binaries": [],
        "nodeup_kubelet_binary": {"stat": {"exists": True}}},
        "tasks": [{"name": "A file changed", "ansible.builtin.command": "true", "changed_when": True,
                   "notify": "Apply the node's changes"}],
        "handlers": stand_ins}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml"),
                           "-e", "ansible_python_interpreter=%s" % sys.executable],
                          env=ansible_env(REPO / "build" / "collections"), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ran Reload systemd's units" in proc.stdout and "ran Restart containerd" in proc.stdout, proc.stdout
    assert "ran Restart kubelet" not in proc.stdout  # not in nodeup_files.restart
    assert proc.stdout.index("ran Reload systemd's units") < proc.stdout.index("ran Restart containerd")
