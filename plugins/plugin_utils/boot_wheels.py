# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Prefetch the nodes' pinned wheels (nodeconfig/boot_artifacts.NODE_REQUIREMENTS for every boot target).

    python -m ansible_collections.kubeops.kops.plugins.plugin_utils.boot_wheels [DEST]

Without DEST: into the user's cache, where cluster_update reads them when KUBEOPS_BOOT_WHEELHOUSE is unset (a no-op
once there; `make wheels`).  With DEST: into that directory, to give as KUBEOPS_BOOT_WHEELHOUSE (an execution
environment bakes them in this way: docs/awx.md).  Controller side only; needs pip and the package index once.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import tempfile

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts


def prefetch(dest=None):
    """The directory now holding the wheels."""
    if dest is None:
        os.environ.pop(boot_artifacts.WHEELHOUSE_ENV, None)  # the cache, not a directory given for the runs
        return boot_artifacts.wheelhouse()
    dest = pathlib.Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=".boot-wheels-", dir=str(dest.parent)))
    try:
        boot_artifacts.pip_download(boot_artifacts.NODE_REQUIREMENTS, boot_artifacts.TARGETS, partial)
        shutil.rmtree(str(dest), ignore_errors=True)
        partial.rename(dest)  # never a half-filled wheelhouse
    finally:
        shutil.rmtree(str(partial), ignore_errors=True)
    return dest


def main(argv):
    if len(argv) > 1:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    dest = prefetch(argv[0] if argv else None)
    files = sorted(dest.glob("*.whl"))
    print("%d wheels, %.1f MB, in %s" % (len(files), sum(f.stat().st_size for f in files) / 1e6, dest))


if __name__ == "__main__":
    main(sys.argv[1:])
