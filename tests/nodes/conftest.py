"""Test hosts for the node roles (tests/hosts/testhosts.py), with clear skips where they cannot run."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.hosts import testhosts


def host_support_problem():
    """Why test hosts cannot run here, or None."""
    if os.geteuid() != 0:
        return "test hosts need root (network namespaces, overlay mounts, systemd-nspawn)"
    for tool in ("ip", "mount", "chroot", "ssh-keygen"):
        if shutil.which(tool) is None:
            return "test hosts need the %s command" % tool
    if shutil.which("systemd-nspawn") is None and shutil.which("apt-get") is None:
        return "test hosts need systemd-nspawn (Debian package systemd-container)"
    with open("/proc/filesystems") as handle:
        if "overlay" not in handle.read():
            return "test hosts need overlayfs in the kernel"
    return None


@pytest.fixture(scope="session")
def host_image():
    problem = host_support_problem()
    if problem:
        pytest.skip(problem)
    try:
        return testhosts.ensure_image()
    except testhosts.HostError as exc:
        pytest.skip("the test-host image could not be built: %s" % exc)


@pytest.fixture
def host_pool(host_image, worker_id):
    """host_pool(count, binds=(), kubelet=False) -> started hosts; every pool is stopped after the test.

    kubelet=True: hosts that can run a kubelet, containerd and runc containers (testhosts.HostPool, docs/test-hosts.md).

    Each xdist worker gets its own prefix (so its own bridge and /24); KUBEOPS_TESTHOST_PREFIX (default k) sets its
    first letters, so that runs of several checkouts on one machine never clean up each other's hosts."""
    pools = []
    prefix = os.environ.get("KUBEOPS_TESTHOST_PREFIX", "k") + ("m" if worker_id == "master" else worker_id.replace("gw", "w"))

    def start(count, binds=(), kubelet=False):
        pool = testhosts.HostPool(prefix="%s%s" % (prefix, chr(ord("a") + len(pools))), count=count, binds=binds,
                                  kubelet=kubelet)
        pools.append(pool)
        pool.start()
        return pool
    yield start
    for pool in pools:
        pool.stop()
