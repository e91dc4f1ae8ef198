"""What a fresh test host needs to boot from user data without a network: wheels and the collection.

Real nodes pip-install ansible-core from PyPI and the collection from Galaxy.
Test hosts reach nothing but the test bridge, so the tests download the same
wheels once on the test machine (cached between runs, keyed by the package
list) and serve them over the pool's HTTP server, and build this checkout's
collection tarball.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap

REPO = pathlib.Path(__file__).resolve().parents[2]
CACHE = pathlib.Path(os.environ.get("KUBEOPS_TESTHOST_CACHE", "/var/cache/kubeops-kops"))


def wheelhouse():
    """A directory of the wheels the boot script installs (bootstrap.ANSIBLE_CORE + NODE_PYTHON_PACKAGES)."""
    packages = (bootstrap.ANSIBLE_CORE,) + bootstrap.NODE_PYTHON_PACKAGES
    key = hashlib.sha256(("%d.%d\n" % sys.version_info[:2] + "\n".join(packages)).encode()).hexdigest()[:12]
    target = CACHE / ("wheels-%s" % key)
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = pathlib.Path(tempfile.mkdtemp(prefix=".wheels-", dir=CACHE))
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(partial)]
                   + list(packages), check=True)
    partial.rename(target)  # never leave a half-filled cache behind
    return target


def collection_tarball(out_dir):
    """Build this checkout's collection (ansible-galaxy collection build) into out_dir; returns its path."""
    galaxy = pathlib.Path(sys.executable).with_name("ansible-galaxy")
    subprocess.run([str(galaxy), "collection", "build", "--force", "--output-path", str(out_dir), str(REPO)],
                   check=True, stdout=subprocess.DEVNULL)
    return next(pathlib.Path(out_dir).glob("kubeops-kops-*.tar.gz"))
