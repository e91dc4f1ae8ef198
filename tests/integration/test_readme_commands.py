"""The README's "Use it" commands, literally, from a checkout: `make venv && . .venv/bin/activate`, then
`ansible-playbook playbooks/...` in the checkout with nothing else exported than the README says (the state
store) and the AWS account (moto here).  The project's ansible.cfg finds the collection in ./build/collections
(relative); the modules, which Ansible runs in a temporary directory, must still find the collection they put on
the nodes (regression: "cannot find the kubeops.kops collection to put on the nodes").
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest

from tests.integration.conftest import REPO

README = (REPO / "README.md").read_text()
USE_IT = re.search(r"^## Use it\n.*?```sh\n(.*?)```", README, re.S | re.M).group(1)
MOTO_AMI = "ami-1e749f67"
CLUSTER_FILE = re.search(r"cat > my-cluster.yml <<'YAML'\n(.*?)^YAML$", USE_IT, re.S | re.M).group(1)


def _commands(prefix):
    """The README's command lines that start with prefix, their trailing comments dropped."""
    return [shlex.split(line.split("#", 1)[0]) for line in USE_IT.splitlines() if line.startswith(prefix)]


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
    (root / ".venv").symlink_to(REPO / ".venv")
    link = root / "build" / "collections" / "ansible_collections" / "kubeops" / "kops"
    link.parent.mkdir(parents=True)
    link.symlink_to(root)  # what `make venv` links
    # One line more than the README's: moto has no Canonical images, so the default image (the channel's Ubuntu,
    # owner 099720109477) cannot be found there; one of the AMIs moto ships stands in for it.
    (root / "my-cluster.yml").write_text(CLUSTER_FILE + "  image: %s\n" % MOTO_AMI)
    return root


def _user_env(checkout, home, store):
    """What an activated venv and the README's exports give; nothing from this test process."""
    env = {"PATH": "%s/.venv/bin:/usr/bin:/bin" % checkout, "VIRTUAL_ENV": str(checkout / ".venv"),
           "HOME": str(home), "LANG": "C.UTF-8", "KOPS_STATE_STORE": store}
    env.update({k: v for k, v in os.environ.items() if k.startswith("AWS_")})  # the user's AWS account (moto)
    # The nodes' boot wheels: `make venv` downloads them once; here from that cache, as no index is reachable.
    env["KUBEOPS_BOOT_WHEELHOUSE"] = os.environ.get("KUBEOPS_BOOT_WHEELHOUSE", str(REPO / "build" / "boot-wheels"))
    return env


def test_readme_use_it_commands_run_from_the_checkout(aws, checkout, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = _user_env(checkout, home, "file://%s/state" % tmp_path)
    create = _commands("ansible-playbook playbooks/create_cluster.yml")
    assert len(create) == 2 and "--check" in create[0], create  # the preview, then the create
    assert "target=direct" in create[1], create  # the create line applies (without target only the spec is written)
    outputs = []
    for command in create:
        proc = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        assert "cannot find the kubeops.kops collection" not in proc.stdout
        for warning in ("No inventory was parsed", "provided hosts list is empty"):  # the checkout's ansible.cfg
            assert warning not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-2000:]
        outputs.append(proc.stdout)
    assert "aws_autoscaling_group" in outputs[0] or "AutoscalingGroup" in outputs[0], outputs[0][-3000:]
    assert "changed=0" not in outputs[1], outputs[1][-2000:]  # the second line created the cluster
    # The update the README gives next, to Terraform: the boot artefacts need the collection too.
    update = [c for c in _commands("ansible-playbook playbooks/update_cluster.yml") if "--check" not in c][0]
    proc = subprocess.run(update + ["-e", "target=terraform", "-e", "out_dir=tf"], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert (checkout / "tf" / "kubernetes.tf").is_file()
