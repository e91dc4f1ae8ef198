"""The README's "Use it" commands, literally, on moto as its "On moto" section says: from a checkout after
`make venv && . .venv/bin/activate`, its moto server started by its own line, its exports and nothing else, then
every `ansible-playbook playbooks/...` line of "Use it" with the `image:` line added to my-cluster.yml.  The
project's ansible.cfg finds the collection in ./build/collections (relative); the modules, which Ansible runs in a
temporary directory, must still find the collection they put on the nodes (regression: "cannot find the kubeops.kops
collection to put on the nodes").

What the test changes, and why: the server's port (a free one: tests run side by side), `make venv` (the checkout's
.venv is this venv), `pip install` (moto is in it: requirements-test.txt); it waits for the server to answer before
the next line (a user types slower than a script); and it follows the section's own words for moto: rolling_update.yml
with cloud_only, validate_cluster.yml skipped (its API is a name moto invents, never to be connected to).
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.integration.conftest import BIN, REPO
from tests.servers import free_port

README = (REPO / "README.md").read_text()
USE_IT = re.search(r"^## Use it\n.*?```sh\n(.*?)```", README, re.S | re.M).group(1)
ON_MOTO = re.search(r"^### On moto\n(.*?)^Installed the Ansible way", README, re.S | re.M).group(1)
MOTO_SETUP, MOTO_IMAGE = re.findall(r"```sh\n(.*?)```", ON_MOTO, re.S)
PORT = "5000"


@pytest.fixture
def checkout(tmp_path):
    """A copy of this checkout's tracked files after `make venv` (the venv and the collection link it makes)."""
    root = tmp_path / "checkout"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source, target = REPO / name, root / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (root / ".venv").symlink_to(BIN.parent)  # the venv running the tests
    link = root / "build" / "collections" / "ansible_collections" / "kubeops" / "kops"
    link.parent.mkdir(parents=True)
    link.symlink_to(root)  # what `make venv` links
    return root


def _script(port):
    """The README's lines as one shell session, each ansible-playbook's output to its own numbered log."""
    setup = MOTO_SETUP.splitlines()
    assert setup[0] == "make venv && . .venv/bin/activate", setup
    assert setup[1].startswith("pip install 'moto[server,s3]>=5.0'")  # the pin of requirements-test.txt
    assert "moto[server,s3]>=5.0" in (REPO / "requirements-test.txt").read_text()
    # A line that fails ends the session; the trap stops the server it started.
    lines = ["set -e", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", ". .venv/bin/activate"]
    for line in setup[2:]:
        lines.append(line.replace(PORT, port))
        if line.startswith("python tests/moto_server.py"):
            lines.append("until python -c 'import urllib.request as u; u.urlopen(\"http://127.0.0.1:%s/moto-api/\")' "
                         "2>/dev/null; do sleep 0.2; done" % port)
    use_it = USE_IT.splitlines()
    commands = []
    for line in use_it[use_it.index(next(l for l in use_it if l.startswith("cat > my-cluster.yml"))):]:
        if line.startswith("ansible-playbook playbooks/validate_cluster.yml"):
            continue  # the section: skipped on moto
        if line.startswith("ansible-playbook playbooks/rolling_update.yml"):
            line = line.replace(" --check", " -e cloud_only=true --check")  # the section: cloud_only on moto
        if line.startswith("ansible-playbook "):
            commands.append(line.split("#", 1)[0].strip())
            log = "out/%d.log" % len(commands)
            line = "%s > %s 2>&1 || { cat %s; exit 1; }" % (commands[-1], log, log)
        lines.append(line)
        if line == "YAML":
            lines.extend(MOTO_IMAGE.strip().splitlines())
    # The update the README gives, to Terraform ("terraform writes out/terraform/kubernetes.tf"): the boot
    # artefacts need the collection too.
    lines.append("ansible-playbook playbooks/update_cluster.yml -e cluster_name=k8s.example.com -e target=terraform "
                 "> out/terraform.log 2>&1 || { cat out/terraform.log; exit 1; }")
    lines.append("kill %1")
    return "\n".join(lines) + "\n", commands


def _user_env(home):
    """What a shell of the user's holds before the README's lines: no AWS variables, no KOPS_STATE_STORE."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    # The nodes' boot wheels: `make venv` downloads them once; here from that cache, as no index is reachable.
    env["KUBEOPS_BOOT_WHEELHOUSE"] = os.environ.get("KUBEOPS_BOOT_WHEELHOUSE", str(REPO / "build" / "boot-wheels"))
    return env


def test_readme_use_it_commands_run_on_moto_as_written(checkout, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (checkout / "out").mkdir()
    script, commands = _script(str(free_port()))
    # Every ansible-playbook line of "Use it" but the validation the section skips, in its order.
    assert [c.split()[1] for c in commands] == [
        "playbooks/create_cluster.yml", "playbooks/create_cluster.yml", "playbooks/get_cluster.yml",
        "playbooks/get_cluster.yml", "playbooks/replace_cluster.yml", "playbooks/update_cluster.yml",
        "playbooks/update_cluster.yml", "playbooks/rolling_update.yml", "playbooks/delete_cluster.yml"], commands
    proc = subprocess.run(["bash", "-c", script], cwd=checkout, env=_user_env(home), capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    outputs = [(checkout / "out" / ("%d.log" % n)).read_text() for n in range(1, len(commands) + 1)]
    for output in outputs:
        assert "cannot find the kubeops.kops collection" not in output
        for warning in ("No inventory was parsed", "provided hosts list is empty"):  # the checkout's ansible.cfg
            assert warning not in output, output[-3000:]
    preview, create, tables, _export, replace, _check, update, roll, delete = outputs
    assert "+ aws_autoscaling_group (7)" in preview, preview[-3000:]  # the preview names what a create makes
    assert "= aws_ami (1, used, not owned): ami-1e749f67" in preview, preview[-3000:]
    assert "changed=0" not in create, create[-2000:]  # the second line created the cluster
    assert "\nInstance Groups\nNAME  " in tables and "\nbastions  " in tables, tables[-3000:]
    assert "kubeops.kops/revision: \"1\"" in (checkout / "k8s.example.com.yaml").read_text()  # the annotation
    # (The YAML result format of the checkout's ansible.cfg folds a line longer than 80 columns.)
    assert "No changes in file://%s/state/k8s.example.com, now at revision 1" % checkout in " ".join(replace.split())
    assert "No changes need to be applied" in update, update[-2000:]  # the spec as created: nothing to do
    assert "NAME                            STATUS  NEEDUPDATE      READY   MIN" in roll, roll[-2000:]
    assert "No rolling-update required." in roll, roll[-2000:]
    assert "TYPE                    NAME  " in delete and "set yes: true to delete them" in delete, delete[-2000:]
    assert (checkout / "out" / "terraform" / "kubernetes.tf").is_file()
