"""Machines-in-miniature for the node roles: network namespaces + overlay roots + systemd-nspawn.

Each host has its own network namespace with a veth on a bridge (a 10.231.x.0/24
per pool prefix, the bridge is .1, hosts .11 up), its own root (an overlayfs over one cached
Debian image), real systemd as PID 1 (`systemd-nspawn -b`) and sshd with a key
the pool makes.  Nothing routes out: no default route (kubelet hosts: one to an address no one
holds), no forwarding.  `HostPool(kubelet=True)`
makes hosts that can run a kubelet, containerd and runc containers (own cgroups, writable cgroup
mounts, /dev/kmsg, the kubelet's kernel settings, state on the machine's disk).  See
docs/test-hosts.md for the measured times and the flags that were needed.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import http.server
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
CACHE = pathlib.Path(os.environ.get("KUBEOPS_TESTHOST_CACHE", "/var/cache/kubeops-kops"))
BUILD_SCRIPT = HERE / "build_image.sh"
FIRST_HOST = 11
# A bridge address no host holds (hosts are .11 up, the bridge .1): kubelet hosts' default gateway.
NO_ONE = 254
# The global kernel settings the kubelet checks at start and writes where they differ (setupKernelTunables in
# kubernetes pkg/kubelet/cm/container_manager_linux.go). /proc/sys/{vm,kernel} are the test machine's own, so they
# stay read-only in the hosts, and a kubelet host reads a file bind-mounted over each one that differs here.
KUBELET_SYSCTLS = {"vm/overcommit_memory": "1", "vm/panic_on_oom": "0", "kernel/panic": "10",
                   "kernel/panic_on_oops": "1", "kernel/keys/root_maxkeys": "1000000",
                   "kernel/keys/root_maxbytes": "25000000"}
# containerd's and the kubelet's state, bound from the machine's disk: overlayfs (containerd's snapshots, the
# kubelet's view of them) does not stack on the host's overlay root.
KUBELET_STATE_DIRS = ("/var/lib/containerd", "/var/lib/kubelet")
KUBELET_SETUP = "/usr/local/sbin/kubeops-kubelet-host"
KUBELET_SYSCTL_DIR = "/usr/local/lib/kubeops-kubelet-host"
KUBELET_UNIT = """[Unit]
Description=Let a kubelet, containerd and runc run in this test host (tests/hosts/testhosts.py)
DefaultDependencies=no
Before=sysinit.target containerd.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=%s

[Install]
WantedBy=sysinit.target
""" % KUBELET_SETUP


class HostError(RuntimeError):
    pass


def image_dir():
    """The cached root filesystem, keyed by the build script's content (a changed script rebuilds)."""
    key = hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()[:12]
    return CACHE / ("bookworm-%s" % key)


def ensure_image():
    """Build the image once (minutes the first time); returns its directory."""
    target = image_dir()
    if not target.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        # Builders share one <target>.partial (xdist workers, test runs of other checkouts): the script's rm -rf of
        # it would break a build under way, so they take turns and the later ones find the image built.
        with open(CACHE / (target.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_dir():
                proc = subprocess.run(["bash", str(BUILD_SCRIPT), str(target)], capture_output=True, text=True,
                                      check=False)
                if proc.returncode != 0:
                    raise HostError("building the test-host image failed (%s %s):\n%s"
                                    % (BUILD_SCRIPT, target, proc.stderr[-3000:]))
    return target


def _sh(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, check=check)


def cgroup_parents():
    """This process's cgroup directory in each hierarchy it is in: each cgroup-v1 controller, name=systemd, and the
    unified one (a hybrid machine's systemd tracking hierarchy: nspawn puts the host's init into the name=systemd
    cgroup of the same path as its own unified one)."""
    mounts = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields, extra = line.split(" - ")
            fstype, _source, options = extra.split()[:3]
            if fstype in ("cgroup", "cgroup2"):
                root, mountpoint = fields.split()[3:5]
                mounts.append((fstype, set(options.split(",")), root, mountpoint))
    parents = []
    with open("/proc/self/cgroup") as handle:
        for line in handle:
            _hierarchy, controllers, path = line.rstrip("\n").split(":", 2)
            for fstype, options, root, mountpoint in mounts:
                if (fstype == "cgroup2") if not controllers else set(controllers.split(",")) <= options:
                    parents.append(pathlib.Path(mountpoint) / os.path.relpath(path, root))
                    break
    return parents


def remove_cgroup(path, timeout=10.0):
    """Kill what is left in a cgroup and its children, then remove them, children first (containerd, runc and the
    kubelet make sub-cgroups; rmdir refuses a cgroup with children or processes)."""
    if not path.is_dir():
        return
    tree = [pathlib.Path(top) for top, _dirs, _files in os.walk(path)]
    for cgroup in tree:
        if (cgroup / "freezer.state").exists():
            (cgroup / "freezer.state").write_text("THAWED")  # a frozen process does not die of SIGKILL
        for pid in (cgroup / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    for cgroup in reversed(tree):  # os.walk lists parents before their children
        while True:
            try:
                cgroup.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise HostError("cannot remove the cgroup %s: %s (processes: %s)"
                                    % (cgroup, exc, (cgroup / "cgroup.procs").read_text().split()))
                time.sleep(0.1)


class Host(object):
    def __init__(self, pool, index):
        self.pool = pool
        self.index = index
        self.name = "%s%d" % (pool.prefix, index)
        self.address = "%s.%d" % (pool.subnet, FIRST_HOST + index - 1)
        self.dir = pool.workdir / self.name
        self.root = self.dir / "root"
        self.process = None
        self.cgroups = [parent / ("kubeops-" + self.name) for parent in pool.cgroup_parents] if pool.kubelet else []

    # -- lifecycle -------------------------------------------------------
    def prepare(self):
        """Network namespace, veth, overlay root, SSH keys, /etc/hosts: once per host."""
        for sub in ("upper", "work", "root"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        _sh("ip", "netns", "add", self.name)
        _sh("ip", "link", "add", self.name + "h", "type", "veth", "peer", "name", self.name + "c")
        _sh("ip", "link", "set", self.name + "h", "master", self.pool.bridge, "up")
        _sh("ip", "link", "set", self.name + "c", "netns", self.name)
        netns = ("ip", "netns", "exec", self.name)
        _sh(*netns, "ip", "link", "set", self.name + "c", "name", "eth0")
        _sh(*netns, "ip", "addr", "add", self.address + "/24", "dev", "eth0")
        _sh(*netns, "ip", "link", "set", "eth0", "up")
        _sh(*netns, "ip", "link", "set", "lo", "up")
        if self.pool.kubelet:
            # kube-apiserver (and the kubelet) take the node's address from its default route, which every cloud
            # instance has.  Here it points at an address on the bridge that no one holds: the address is found,
            # and a packet sent there is never answered nor forwarded (the test machine does not route).
            _sh(*netns, "ip", "route", "add", "default", "via", "%s.%d" % (self.pool.subnet, NO_ONE), "dev", "eth0")
        self.mount()
        self.write_root()

    def write_root(self):
        """What the pool writes into a fresh root: its name, the pool's names, SSH keys; a kubelet host's setup."""
        etc = self.root / "etc"
        (etc / "hostname").write_text(self.name + "\n")
        lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback", "%s %s" % (self.address, self.name)]
        lines += ["%s %s" % (h.address, h.name) for h in self.pool.hosts if h is not self]
        (etc / "hosts").write_text("\n".join(lines) + "\n")
        if (etc / "resolv.conf").exists() or (etc / "resolv.conf").is_symlink():
            (etc / "resolv.conf").unlink()
        (etc / "resolv.conf").write_text("# no name servers: test hosts reach only the test bridge\n")
        _sh("chroot", str(self.root), "ssh-keygen", "-A")
        ssh_dir = self.root / "root" / ".ssh"
        ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (ssh_dir / "authorized_keys").write_text(self.pool.public_key)
        os.chmod(ssh_dir / "authorized_keys", 0o600)
        for path in self.pool.binds:
            (self.root / str(path).lstrip("/")).mkdir(parents=True, exist_ok=True)
        if self.pool.kubelet:
            self.prepare_kubelet()

    def state_dir(self, target):
        """The directory on the machine's disk bound to the host's `target` (kubelet mode)."""
        return self.dir / target.strip("/").replace("/", "-")

    def prepare_kubelet(self):
        """State directories, and a unit run at boot before containerd and the kubelet (KUBELET_UNIT)."""
        for target in KUBELET_STATE_DIRS:
            self.state_dir(target).mkdir(exist_ok=True)
            (self.root / target.lstrip("/")).mkdir(parents=True, exist_ok=True)
        script = ["#!/bin/sh", "# Written by tests/hosts/testhosts.py for a kubelet host.", "set -e",
                  "# nspawn mounts the cgroup hierarchies read-only; containerd, runc and the kubelet make cgroups.",
                  "for dir in /sys/fs/cgroup/*; do",
                  '    if [ ! -L "$dir" ] && mountpoint -q "$dir"; then mount -o remount,bind,rw "$dir"; fi',
                  "done",
                  "# The kubelet's OOM watcher reads the kernel log; nspawn gives the host no /dev/kmsg.",
                  "[ -e /dev/kmsg ] || mknod /dev/kmsg c 1 11",
                  "# The kubelet's kernel settings that differ on the test machine (read-only here: they are its own)."]
        sysctl_dir = self.root / KUBELET_SYSCTL_DIR.lstrip("/")
        sysctl_dir.mkdir(parents=True, exist_ok=True)
        for key, wanted in KUBELET_SYSCTLS.items():
            if pathlib.Path("/proc/sys", key).read_text().strip() != wanted:
                name = key.replace("/", ".")
                (sysctl_dir / name).write_text(wanted + "\n")
                script.append("mount --bind %s/%s /proc/sys/%s" % (KUBELET_SYSCTL_DIR, name, key))
        setup = self.root / KUBELET_SETUP.lstrip("/")
        setup.write_text("\n".join(script) + "\n")
        setup.chmod(0o755)
        units = self.root / "etc" / "systemd" / "system"
        (units / "kubeops-kubelet-host.service").write_text(KUBELET_UNIT)
        (units / "sysinit.target.wants").mkdir(exist_ok=True)
        (units / "sysinit.target.wants" / "kubeops-kubelet-host.service").symlink_to(
            "/etc/systemd/system/kubeops-kubelet-host.service")

    def make_cgroups(self):
        for path in self.cgroups:
            path.mkdir(exist_ok=True)
            for name in ("cpuset.cpus", "cpuset.mems"):  # empty in a new cpuset cgroup: no process could join it
                if (path / name).exists():
                    (path / name).write_text((path.parent / name).read_text())

    def mount(self):
        if not os.path.ismount(self.root):
            _sh("mount", "-t", "overlay", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s"
                % (self.pool.image, self.dir / "upper", self.dir / "work"), str(self.root))

    def start(self):
        """Boot systemd in the host and wait for SSH."""
        self.mount()
        command = ["systemd-nspawn", "--boot", "--quiet", "--directory", str(self.root), "--machine", self.name,
                   "--register=no", "--keep-unit", "--network-namespace-path=/run/netns/%s" % self.name,
                   "--capability=all", "--private-users=no", "--resolv-conf=off", "--timezone=off",
                   "--link-journal=no", "--console=pipe"]
        command += ["--bind=%s" % path for path in self.pool.binds]
        env = dict(os.environ, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY="0")
        if self.pool.kubelet:
            command.append("--system-call-filter=@keyring")  # runc joins a session keyring (keyctl)
            command += ["--bind=%s:%s" % (self.state_dir(target), target) for target in KUBELET_STATE_DIRS]
            # /proc/sys/net is the host's own network namespace's: writable; vm and kernel stay read-only.
            env["SYSTEMD_NSPAWN_API_VFS_WRITABLE"] = "network"
            # nspawn moves into its own cgroups before it forks the host's init, whose cgroup namespace is rooted
            # there: without them every host shares the test machine's cgroups and sees (and its kubelet cleans up)
            # the others'.
            self.make_cgroups()
            command = (["sh", "-ec", 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"',
                        "kubeops-cgroups"] + [str(path / "cgroup.procs") for path in self.cgroups] + ["--"] + command)
        log = open(self.dir / "console.log", "ab")
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                        env=env, start_new_session=True)
        log.close()
        self.wait_for_ssh()
        return self

    def wait_for_ssh(self, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HostError("%s: systemd-nspawn exited with %s; console:\n%s"
                                % (self.name, self.process.returncode, self.console()[-3000:]))
            try:
                with socket.create_connection((self.address, 22), timeout=1):
                    pass
                if self.run("true", timeout=10).returncode == 0:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise HostError("%s (%s): no SSH after %.0f s; console:\n%s"
                        % (self.name, self.address, timeout, self.console()[-3000:]))

    def console(self):
        try:
            return (self.dir / "console.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=20.0):
        """Power the host off (its overlay upper dir, i.e. its disk, is kept)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # nspawn asks systemd in the container to power off
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def kill(self):
        """Power the host off at once: its init (PID 1 of its PID namespace) killed takes every process in it along.

        For a pool's teardown, whose disks are thrown away: a clean poweroff waited up to 20 s per host."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            children = pathlib.Path("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)).read_text()
        except OSError:
            children = ""
        for pid in children.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        try:
            self.process.wait(10)  # nspawn exits once its container's init is gone
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def reimage(self, keep=()):
        """A new instance of the machine image on this host, as a cloud replaces an instance: powered off, its disk
        back to the image's (overlay upper dir and kubelet state emptied), except the directories in keep, which the
        new instance finds as they were (a data volume re-attached, e.g. etcd's), then booted.  Its address stays."""
        self.kill()
        if os.path.ismount(self.root):
            _sh("umount", str(self.root))
        volumes = self.dir / "volumes"
        shutil.rmtree(volumes, ignore_errors=True)
        upper = self.dir / "upper"
        for path in keep:
            if (upper / path.lstrip("/")).exists():
                (volumes / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                os.rename(upper / path.lstrip("/"), volumes / path.lstrip("/"))
        targets = [self.state_dir(target) for target in KUBELET_STATE_DIRS] if self.pool.kubelet else []
        for path in [upper, self.dir / "work"] + targets:
            shutil.rmtree(path)
            path.mkdir()
        for path in keep:
            if (volumes / path.lstrip("/")).exists():
                (upper / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                os.rename(volumes / path.lstrip("/"), upper / path.lstrip("/"))
        shutil.rmtree(volumes, ignore_errors=True)
        self.mount()
        self.write_root()
        return self.start()

    def destroy(self):
        self.kill()
        if os.path.ismount(self.root):
            _sh("umount", "-l", str(self.root), check=False)
        _sh("ip", "link", "del", self.name + "h", check=False)
        _sh("ip", "netns", "del", self.name, check=False)
        for path in self.cgroups:
            remove_cgroup(path)

    # -- use ---------------------------------------------------------------
    def ssh_command(self, command):
        return ["ssh", "-i", str(self.pool.key_file), "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
                "-o", "ConnectTimeout=5", "root@" + self.address, command]

    def run(self, command, timeout=300, check=False):
        """Run a shell command in the host over SSH -> CompletedProcess (text)."""
        return subprocess.run(self.ssh_command(command), capture_output=True, text=True, timeout=timeout,
                              check=check)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


class HostPool(object):
    """Several test hosts on one bridge. Use as: pool = HostPool(...); hosts = pool.start(); ...; pool.stop()."""

    def __init__(self, prefix="kk", count=1, binds=(), systemd=True, kubelet=False):
        if not systemd:
            raise HostError("only systemd hosts are supported (the roles manage services)")
        self.prefix = prefix
        self.count = count
        self.binds = [str(pathlib.Path(b).resolve()) for b in binds]
        self.kubelet = kubelet
        self.cgroup_parents = cgroup_parents()
        # One /24 per prefix, so pools with different prefixes (xdist workers) never share addresses.
        self.subnet = "10.231.%d" % (int(hashlib.sha256(prefix.encode()).hexdigest(), 16) % 200 + 20)
        self.bridge = prefix + "br0"
        self.workdir = pathlib.Path(tempfile.mkdtemp(prefix="kubeops-hosts-%s-" % prefix))
        self.key_file = self.workdir / "id_ed25519"
        self.public_key = ""
        self.image = None
        self.hosts = []
        self.servers = []
        self._stopped = False

    def start(self):
        self.image = ensure_image()
        self.cleanup_leftovers()
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key_file))
        self.public_key = (self.workdir / "id_ed25519.pub").read_text()
        _sh("ip", "link", "add", self.bridge, "type", "bridge")
        _sh("ip", "addr", "add", "%s.1/24" % self.subnet, "dev", self.bridge)
        _sh("ip", "link", "set", self.bridge, "up")
        atexit.register(self.stop)
        self.hosts = [Host(self, i) for i in range(1, self.count + 1)]
        for host in self.hosts:
            host.prepare()
        errors = []
        threads = [threading.Thread(target=self._start_host, args=(h, errors)) for h in self.hosts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stop()
            raise errors[0]
        return self.hosts

    @staticmethod
    def _start_host(host, errors):
        try:
            host.start()
        except Exception as exc:  # reported by start()
            errors.append(exc)

    def cleanup_leftovers(self):
        """Remove namespaces, links and kubelet hosts' cgroups a crashed run with this prefix left behind."""
        for line in _sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
            name = line.split(":")[1].strip().split("@")[0]
            if name.startswith(self.prefix) and (name == self.bridge or name.endswith("h")):
                _sh("ip", "link", "del", name, check=False)
        for line in _sh("ip", "netns", "list", check=False).stdout.splitlines():
            name = line.split()[0]
            if name.startswith(self.prefix) and name[len(self.prefix):].isdigit():
                _sh("ip", "netns", "del", name, check=False)
        for parent in self.cgroup_parents:
            for path in parent.glob("kubeops-%s*" % self.prefix):
                if path.name[len("kubeops-" + self.prefix):].isdigit():
                    remove_cgroup(path)

    def inventory_file(self, path, groups=None, hostvars=None):
        """A YAML inventory of the hosts; groups: {group: [host names]}; hostvars: {host: {var: value}}."""
        import yaml
        common = {"ansible_user": "root", "ansible_ssh_private_key_file": str(self.key_file),
                  "ansible_python_interpreter": "/usr/bin/python3",
                  "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"}
        hosts = {h.name: dict(common, ansible_host=h.address, **((hostvars or {}).get(h.name) or {}))
                 for h in self.hosts}
        children = {group: {"hosts": {name: {} for name in names}} for group, names in (groups or {}).items()}
        pathlib.Path(path).write_text(yaml.safe_dump({"all": {"hosts": hosts, "children": children}}))
        return path

    def serve_directory(self, path):
        """Serve a directory over HTTP on the bridge address; returns the URL (no trailing slash)."""
        handler = functools.partial(_QuietHandler, directory=str(path))
        server = http.server.ThreadingHTTPServer(("%s.1" % self.subnet, 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.servers.append(server)
        return "http://%s.1:%d" % (self.subnet, server.server_address[1])

    def stop(self):
        if self._stopped:
            return
        self._stopped = True
        for server in self.servers:
            server.shutdown()
        # At once: each host's poweroff waits for its nspawn to exit.
        errors = []
        threads = [threading.Thread(target=self._destroy_host, args=(h, errors)) for h in self.hosts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _sh("ip", "link", "del", self.bridge, check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)
        if errors:
            raise errors[0]

    @staticmethod
    def _destroy_host(host, errors):
        try:
            host.destroy()
        except Exception as exc:  # raised by stop() once every host is gone
            errors.append(exc)
