"""The test hosts themselves: systemd, SSH, own addresses, no way out, state across reboots, offline packages."""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.conftest import BIN, REPO, ansible_env

pytestmark = pytest.mark.hosts


def test_three_hosts_answer_ansible_and_only_each_other(host_pool, tmp_path):
    pool = host_pool(3, binds=[tmp_path])
    (tmp_path / "served.txt").write_text("from the test machine\n")
    url = pool.serve_directory(tmp_path)
    inventory = pool.inventory_file(tmp_path / "hosts.yml", groups={"nodes": [h.name for h in pool.hosts]})
    proc = subprocess.run([str(BIN / "ansible"), "nodes", "-i", str(inventory), "-m", "ansible.builtin.ping",
                           "-o"], env=ansible_env(REPO / "build" / "collections"), capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("SUCCESS") == 3
    addresses = set()
    for host in pool.hosts:
        facts = host.run("hostname; cat /proc/1/comm; systemctl is-system-running; ip -4 -o addr show eth0; ip route")
        lines = facts.stdout.splitlines()
        assert lines[0] == host.name and lines[1] == "systemd" and lines[2] in ("running", "degraded")
        assert host.address + "/24" in lines[3]
        assert not any(line.startswith("default") for line in lines[4:])  # nothing routes out
        addresses.add(host.address)
    assert len(addresses) == 3
    first, second = pool.hosts[0], pool.hosts[1]
    assert first.run("ping -c1 -W2 %s" % second.address).returncode == 0
    assert first.run("curl -sf %s/served.txt" % url).stdout == "from the test machine\n"
    assert first.run("curl -sf --max-time 3 http://deb.debian.org/").returncode != 0
    assert first.run("cat %s/served.txt" % tmp_path).stdout == "from the test machine\n"  # bind mount


def test_reboot_keeps_the_disk_and_offline_packages_install(host_pool):
    pool = host_pool(1)
    host = pool.hosts[0]
    install = host.run("DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download containerd runc")
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    version = host.run("ctr version")
    assert version.returncode == 0 and "Server:" in version.stdout, version.stderr
    host.run("echo kept > /var/lib/marker", check=True)
    host.stop()
    host.start()
    assert host.run("cat /var/lib/marker").stdout == "kept\n"
    assert host.run("systemctl is-active containerd").stdout.strip() == "active"
