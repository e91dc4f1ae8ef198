"""Download the nodes' pinned wheels (nodeconfig/boot_artifacts.NODE_REQUIREMENTS, every boot target) into the
user's cache, where cluster_update reads them when KUBEOPS_BOOT_WHEELHOUSE is unset, and copy them into DEST.

`make venv` runs it once, at install time (like `pip install`): the README's commands, run from an activated venv
with nothing exported, find the wheels in the cache, and `make demo` and the tests (KUBEOPS_BOOT_WHEELHOUSE=DEST)
never reach an index.  An installed collection has the same entry point (this script is not in the tarball):
`python -m ansible_collections.kubeops.kops.plugins.plugin_utils.boot_wheels [DEST]`.
Usage: hack/boot_wheels.py DEST
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import tempfile

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts


def main(dest):
    os.environ.pop(boot_artifacts.WHEELHOUSE_ENV, None)  # the cache, not the directory being made
    cache = boot_artifacts.wheelhouse()
    dest = pathlib.Path(dest)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=".boot-wheels-", dir=str(dest.parent)))
    try:
        for wheel in sorted(cache.glob("*.whl")):
            shutil.copy2(str(wheel), str(partial / wheel.name))
        shutil.rmtree(str(dest), ignore_errors=True)
        partial.rename(dest)  # never a half-filled wheelhouse
    finally:
        shutil.rmtree(str(partial), ignore_errors=True)
    print("%d wheels in %s (and %s)" % (len(list(dest.glob("*.whl"))), dest, cache))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(sys.argv[1])
