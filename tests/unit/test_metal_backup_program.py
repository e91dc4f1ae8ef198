"""roles/enroll installs the etcd backups' program on a metal control plane file by file (no collection there): every
collection module a backup to a file:// store imports must be in its list, and the program must run with those files
alone on a Python without Ansible (the distribution's)."""

import pathlib
import shutil
import subprocess
import sys

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULE_UTILS = REPO / "plugins" / "module_utils"


def copied_files():
    tasks = yaml.safe_load((REPO / "roles" / "enroll" / "tasks" / "backup_program.yml").read_text())
    install = next(t for t in tasks if t.get("name", "").startswith("Install the backup program"))
    return install["loop"]


def test_the_listed_files_alone_back_up_to_a_file_store(tmp_path):
    root = tmp_path / "collections"
    for relative in copied_files():
        target = root / "ansible_collections/kubeops/kops/plugins/module_utils" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MODULE_UTILS / relative, target)
    # Imports only: etcd_node and the file:// store it writes backups with, in a Python that has no Ansible.
    probe = ("import sys; sys.modules['ansible'] = None\n"
             "from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_node\n"
             "from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs\n"
             "store = vfs.open_store('file://%s')\n"
             "print(type(store).__name__)\n" % (tmp_path / "backups"))
    done = subprocess.run([sys.executable, "-c", probe], env={"PYTHONPATH": str(root)}, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "FileStore"
