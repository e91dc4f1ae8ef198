"""Download the nodes' pinned wheels (nodeconfig/boot_artifacts.NODE_REQUIREMENTS, every boot target) into DEST.

`make` runs it once, at install time (like `pip install`), and points KUBEOPS_BOOT_WHEELHOUSE at DEST, so
cluster_update in `make demo` and in the tests never reaches an index.  Usage: hack/boot_wheels.py DEST
"""

from __future__ import annotations

import pathlib
import shutil
import sys
import tempfile

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts


def main(dest):
    dest = pathlib.Path(dest)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=".boot-wheels-", dir=str(dest.parent)))
    try:
        boot_artifacts.pip_download(boot_artifacts.NODE_REQUIREMENTS, boot_artifacts.TARGETS, partial)
        shutil.rmtree(str(dest), ignore_errors=True)
        partial.rename(dest)  # never a half-filled wheelhouse
    finally:
        shutil.rmtree(str(partial), ignore_errors=True)
    print("%d wheels in %s" % (len(list(dest.glob("*.whl"))), dest))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(sys.argv[1])
