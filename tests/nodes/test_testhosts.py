"""The test hosts themselves: systemd, SSH, own addresses, no way out, state across reboots, offline packages;
kubelet hosts: own cgroups, the kubelet's kernel settings, /dev/kmsg, runc containers, nothing left behind."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import platform
import shutil
import subprocess
import tarfile

import pytest

from tests.hosts import testhosts
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


def test_kubelet_hosts_have_their_own_cgroups_and_kernel_settings_and_leave_nothing_behind(host_pool):
    machine_sysctls = {key: pathlib.Path("/proc/sys", key).read_text()
                       for key in list(testhosts.KUBELET_SYSCTLS) + ["net/ipv4/ip_forward"]}
    pool = host_pool(2, kubelet=True)
    first, second = pool.hosts
    with open("/proc/self/cgroup") as handle:
        hierarchies = len(handle.readlines())
    for host in pool.hosts:
        assert len(host.cgroups) == hierarchies
        init = pathlib.Path("/proc/%d/task/%d/children" % (host.process.pid, host.process.pid)).read_text().split()
        for line in pathlib.Path("/proc/%s/cgroup" % init[0]).read_text().splitlines():
            assert "/kubeops-%s" % host.name in line, line  # every hierarchy, as the test machine sees the host's init
    # A cgroup host 1 makes is in its own tree: host 2 does not see it.
    assert first.run("mkdir /sys/fs/cgroup/memory/kubeops-probe").returncode == 0
    assert second.run("test -e /sys/fs/cgroup/memory/kubeops-probe").returncode == 1
    first_memory = next(path for path in first.cgroups if "/sys/fs/cgroup/memory/" in str(path))
    assert (first_memory / "kubeops-probe").is_dir()
    for key, wanted in testhosts.KUBELET_SYSCTLS.items():
        assert first.run("cat /proc/sys/%s" % key).stdout == wanted + "\n", key
    assert first.run("test -w /proc/sys/vm/swappiness || test -w /proc/sys/kernel/pid_max").returncode == 1
    kmsg = first.run("dd if=/dev/kmsg bs=16k count=1 iflag=nonblock status=none")
    assert kmsg.returncode == 0 and kmsg.stdout, kmsg.stderr
    forward = first.run("echo 1 > /proc/sys/net/ipv4/ip_forward && cat /proc/sys/net/ipv4/ip_forward")
    assert forward.stdout == "1\n", forward.stderr
    for target in testhosts.KUBELET_STATE_DIRS:
        assert first.run("mountpoint -q %s && echo kept > %s/probe" % (target, target)).returncode == 0
        assert (first.state_dir(target) / "probe").read_text() == "kept\n"  # on the machine's disk
    for key, value in machine_sysctls.items():
        assert pathlib.Path("/proc/sys", key).read_text() == value, key

    cgroups = first.cgroups + second.cgroups
    pool.stop()
    for path in cgroups:
        assert not path.exists(), path
    with open("/proc/self/mountinfo") as handle:
        mount_points = [line.split()[4] for line in handle]
    assert [m for m in mount_points if m.startswith(str(pool.workdir))] == []
    assert not pool.workdir.exists()
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    for host in pool.hosts:
        assert host.name not in namespaces
        assert " %sh@" % host.name not in links and " %sh:" % host.name not in links
    assert " %s:" % pool.bridge not in links


HELLO_GO = """package main

import (
    "fmt"
    "os"
)

func main() {
    cgroups, _ := os.ReadFile("/proc/self/cgroup")
    fmt.Printf("hello from pid %d\\n%s", os.Getpid(), cgroups)
}
"""


def write_docker_archive(path, tag, name, binary):
    """A docker-archive image (what `docker save` writes): manifest.json, its config, one layer holding `binary`."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(binary), 0o755
        tar.addfile(info, io.BytesIO(binary))
    layer = layer.getvalue()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}[platform.machine()]
    config = json.dumps({"architecture": arch, "os": "linux", "config": {"Entrypoint": ["/" + name]},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}})
    config_name = hashlib.sha256(config.encode()).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [tag], "Layers": ["layer.tar"]}]).encode()
    with tarfile.open(path, "w") as tar:
        for member, data in ((config_name, config.encode()), ("layer.tar", layer), ("manifest.json", manifest)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_kubelet_host_runs_a_runc_container_from_an_imported_image(host_pool, tmp_path):
    go = shutil.which("go")
    if go is None:
        pytest.skip("the container's static binary is built with Go, which is not installed here")
    (tmp_path / "hello.go").write_text(HELLO_GO)
    build = subprocess.run([go, "build", "-o", str(tmp_path / "hello"), str(tmp_path / "hello.go")],
                           env=dict(os.environ, CGO_ENABLED="0"), capture_output=True, text=True, timeout=600,
                           check=False)
    assert build.returncode == 0, build.stderr
    write_docker_archive(tmp_path / "hello.tar", "kubeops.test/hello:1", "hello", (tmp_path / "hello").read_bytes())
    pool = host_pool(1, binds=[tmp_path], kubelet=True)
    host = pool.hosts[0]
    install = host.run("DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download containerd runc")
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    assert host.run("systemctl is-active containerd").stdout == "active\n"
    imported = host.run("ctr -n k8s.io images import %s/hello.tar" % tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    # runc's cgroupfs driver (containerd's default), then its systemd driver (kops' containerd config).
    systemd_driver = "--runc-systemd-cgroup --cgroup kubepods.slice:cri:hello"
    for flags, cgroup in (("", "/k8s.io/hello"), (systemd_driver, "/kubepods.slice/cri-hello.scope")):
        ran = host.run("ctr -n k8s.io run --rm %s kubeops.test/hello:1 hello" % flags, timeout=120)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        first, *cgroup_lines = ran.stdout.splitlines()
        assert first == "hello from pid 1"  # its own PID namespace
        cgroups = {controller: path for _hierarchy, controllers, path in (line.split(":", 2) for line in cgroup_lines)
                   for controller in controllers.split(",")}
        assert cgroups["memory"] == cgroups["cpu"] == cgroups["pids"] == cgroup, cgroup_lines  # in the host's tree
    snapshots = host.state_dir("/var/lib/containerd") / "io.containerd.snapshotter.v1.overlayfs" / "snapshots"
    assert any(snapshots.iterdir())  # the image unpacked by the overlayfs snapshotter on the machine's disk
    # A replacement instance on the same host (tests/realk8s' control-plane roll): the image's disk again, the kept
    # volume as it was, the kubelet host's setup done again at boot, the address unchanged.
    host.run("mkdir -p /mnt/etcd-main && echo member > /mnt/etcd-main/data && echo old > /etc/old-instance",
             check=True)
    host.reimage(keep=["/mnt/etcd-main"])
    assert host.run("cat /mnt/etcd-main/data").stdout == "member\n"
    assert host.run("test -e /etc/old-instance").returncode == 1
    assert host.run("command -v containerd").returncode == 1  # installed by the old instance only
    assert not any(host.state_dir("/var/lib/containerd").iterdir())
    assert host.run("systemctl is-active kubeops-kubelet-host").stdout == "active\n"
