#!/usr/bin/env python
"""kubespray's playbooks on our test hosts, timed: the kubespray column of docs/kubespray.md (run by hand, as root).

    KUBESPRAY_DIR=/path/to/kubespray KUBESPRAY_PYTHON=/path/to/venv/bin/python \\
        /work/main/.venv/bin/python bench/kubespray.py [--rounds N] [--playbooks cluster,scale,...] [--keep-going]

KUBESPRAY_DIR is a checkout of github.com/kubernetes-sigs/kubespray (nothing of it is in this repository);
KUBESPRAY_PYTHON the Python of a virtualenv holding its requirements.txt (kubespray pins its own ansible, which is
not ours):
    python3 -m venv /tmp/kubespray-venv && /tmp/kubespray-venv/bin/pip install -r $KUBESPRAY_DIR/requirements.txt

What one round does, on fresh test hosts (tests/hosts/testhosts.py, kubelet mode: one control plane + etcd, two
workers, as our metal e2e, and a fourth host for scale):
  cluster.yml (Kubernetes OLD) -> cluster.yml again -> scale.yml --limit <4th host> -> remove-node.yml -e node=<4th>
  -> upgrade-cluster.yml -e kube_version=NEW -> recover-control-plane.yml (nothing broken: one control plane is all
  there is) -> reset.yml
Each playbook's wall time is printed, and the median over the rounds (n = rounds that got that far).

kubespray is installed as its offline documentation says (docs/operations/offline-environment.md): a files repo
served on the hosts' bridge with the original domains as top directories (dl.k8s.io/, github.com/), `dl_k8s_io_url`
and `github_url` pointing there, and a registry mirror for registry.k8s.io (containerd's hosts.toml,
`containerd_registries_mirrors`). What the repo and the mirror hold, none of it downloaded from the internet:
- kubelet, kubectl (hack/k8s_binaries.py's build) and kubeadm (its --kubeadm build) of both versions;
- etcd 3.6.12 (hack/k8s_binaries.py's build, etcd's release layout);
- containerd 1.6.20, runc 1.1.5 and the CNI plugins 1.1.1: Debian's packages from the test-host image's apt cache,
  repacked in the layout of their GitHub release archives;
- crictl 1.36.0 (sigs.k8s.io/cri-tools, built from the Go module proxy), also under 1.35.0's name (not on the proxy);
- nerdctl: a stub script. nerdctl cannot be built from the Go module proxy (v2.2.2's go.mod replaces
  github.com/containerd/nerdctl/mod/tigron with a directory its module zip lacks; v2.3.0 answers 403), so kubespray
  pulls images with crictl here (`image_command_tool: crictl`) and nerdctl is only installed;
- images kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy (tests/realk8s/images.py's go-runner
  images, tagged as kubeadm names them) and pause (3.10.1 and 3.10.2, kubespray's pins for 1.35 and 1.36).
kubespray checks every file's sha256 against its own table: the table is given for our builds
(`<name>_checksums` as extra vars, which is how role vars are overridden).

The test-host settings (docs/test-hosts.md says why each): `kubelet_fail_cgroup_v1: false` (cgroup v1 here),
containerd's `restrict_oom_score_adj` (no CAP_SYS_RESOURCE), `kube_proxy_conntrack_max_per_core: 0` (/sys read-only),
`kubelet_protect_kernel_defaults: false` (kubespray would write kernel.* and vm.* sysctls, which are the machine's
own and read-only here; the kubelet checks them itself), fs.inotify.max_user_instances read as 8192 through a bind
mount (kubespray raises it to 8192: read-only here), the system packages the image lacks and no network can bring
left out of `pkgs`, `kube_proxy_mode: iptables` (no ip_vs modules), no DNS add-on (`dns_mode: none`: no CoreDNS
image here) and `kube_network_plugin: cni` with a bridge CNI config written on each host (no Calico image here;
ours runs kubenet, the kubelet's own bridge).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "build" / "collections"), str(REPO)]

from tests.hosts import testhosts  # noqa: E402
from tests.realk8s import binaries, images, registry as test_registry  # noqa: E402

k8s_binaries = binaries.k8s_binaries
OLD, NEW = binaries.OLDER, binaries.NEWER  # v1.35.4 -> v1.36.3: one minor
CONTROL_PLANE, WORKERS, ADDED = "node1", ("node2", "node3"), "node4"
PLAYBOOKS = ("cluster", "cluster-again", "scale", "remove-node", "upgrade-cluster", "recover-control-plane", "reset")
ETCD_VERSION = k8s_binaries.ETCD_VERSION.lstrip("v")
# kubespray picks the newest crictl below the next minor: 1.35.0 for Kubernetes 1.35, 1.36.0 for 1.36. cri-tools
# v1.35.0 is not on the Go module proxy (403), so v1.36.0 is served under both names (crictl speaks CRI v1 to any).
CRICTL_BUILT = "v1.36.0"
CRICTL_NAMES = ("v1.35.0", "v1.36.0")
NERDCTL_VERSION = "2.2.2"
PAUSE_TAGS = ("3.10.1", "3.10.2")  # kubespray's pod_infra_supported_versions for 1.35 and 1.36
CONTROL_PLANE_IMAGES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")
# The test-host image's Debian packages, repacked as kubespray downloads them from GitHub: name -> (deb, version).
DEBIAN = {"containerd": "containerd_*.deb", "runc": "runc_*.deb", "cni": "containernetworking-plugins_*.deb"}
# kubespray's system packages (roles/system_packages) that the test-host image has: the others cannot be installed
# without a network, and none of them is used by what is measured here (socat: kubectl port-forward; conntrack,
# ipset, ebtables: kube-proxy brings its own in its image; rsync, unzip, xfsprogs, gnupg, apparmor, mergerfs: unused).
PRESENT_PACKAGES = ("curl", "e2fsprogs", "iproute2", "iptables", "libseccomp2", "openssl", "python3-apt", "tar")
NERDCTL_STUB = """#!/bin/sh
# bench/kubespray.py: nerdctl cannot be built from the Go module proxy; kubespray pulls with crictl here.
[ "$1" = completion ] && exit 0
echo "nerdctl: not available on this test host (bench/kubespray.py)" >&2
exit 1
"""


def log(line):
    print(line, file=sys.stderr, flush=True)


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# -- what is built ---------------------------------------------------------------------------------------------------
def build_go_command(module, version, package, name):
    """A command of a Go module at a release, built from the Go module proxy once into hack/k8s_binaries.py's cache."""
    target = k8s_binaries.CACHE / ("kubespray-%s-%s-%s" % (name, version, k8s_binaries.go_version()))
    if (target / name).is_file():
        return target / name
    partial = k8s_binaries._fresh(target)
    with tempfile.TemporaryDirectory(prefix="kubeops-kubespray-") as workdir:
        pathlib.Path(workdir, "go.mod").write_text("module example.invalid/probe\n")
        info = k8s_binaries.module_info(module, version, workdir)
        pathlib.Path(workdir, "go.mod").write_text(k8s_binaries.wrapper_gomod(
            {module: version}, {}, k8s_binaries.go_directives(info["GoModText"])))
        started = time.monotonic()
        k8s_binaries._go(["build", "-trimpath", "-ldflags", "-s -w", "-o", str(partial / name), package], workdir)
        log("%s %s: built in %.0f s" % (name, version, time.monotonic() - started))
    return k8s_binaries._publish(partial, target) / name


def debian_package(pattern, into):
    """A .deb of the test-host image's apt cache, unpacked into `into`; its version (upstream part)."""
    debs = sorted((testhosts.ensure_image() / "var/cache/apt/archives").glob(pattern))
    if not debs:
        raise SystemExit("bench/kubespray.py: no %s in the test-host image's apt cache (tests/hosts/build_image.sh)"
                         % pattern)
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(into)], check=True)
    version = debs[-1].name.split("_")[1].split(":")[-1]
    return version.split("~")[0].split("+")[0].split("-")[0]


def _tar(path, members, compression="gz"):
    """A tarball of {name in archive: file on disk}, executables 0755, owned by root."""
    with tarfile.open(path, "w:%s" % compression) as archive:
        for name, source in members.items():
            info = archive.gettarinfo(str(source), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = 0o755
            with open(source, "rb") as handle:
                archive.addfile(info, handle)
    return path


def files_repo(build, kubeadm, directory):
    """The files repo: each file at the path of its original URL under the domain's directory. Returns the checksum
    tables (kubespray's `<name>_checksums`, amd64) for what it holds."""
    checksums = {}

    def put(table, version, path, source=None):
        path = directory / path
        path.parent.mkdir(parents=True, exist_ok=True)
        if source is not None:
            shutil.copy(source, path)
        checksums.setdefault(table, {"amd64": {}})["amd64"][version] = "sha256:" + sha256(path)

    for version in (NEW, OLD):  # kubespray's tables list the newest first; kube_version is given on every run
        release = "dl.k8s.io/release/%s/bin/linux/amd64" % version
        for name in ("kubelet", "kubectl"):
            put("%s_checksums" % name, version.lstrip("v"), "%s/%s" % (release, name), build.binary(name, version))
        put("kubeadm_checksums", version.lstrip("v"), "%s/kubeadm" % release, kubeadm[version])
    put("etcd_binary_checksums", ETCD_VERSION, "github.com/etcd-io/etcd/releases/download/v%s/%s"
        % (ETCD_VERSION, build.etcd_tarball.name), build.etcd_tarball)
    with tempfile.TemporaryDirectory(prefix="kubeops-kubespray-debs-") as workdir:
        unpacked = {name: pathlib.Path(workdir, name) for name in DEBIAN}
        versions = {name: debian_package(pattern, unpacked[name]) for name, pattern in DEBIAN.items()}
        containerd = "github.com/containerd/containerd/releases/download/v{0}/containerd-{0}-linux-amd64.tar.gz"
        path = directory / containerd.format(versions["containerd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        usr_bin = unpacked["containerd"] / "usr" / "bin"
        _tar(path, {"bin/%s" % p.name: p for p in sorted(usr_bin.iterdir())})
        put("containerd_archive_checksums", versions["containerd"], path.relative_to(directory))
        put("runc_checksums", versions["runc"], "github.com/opencontainers/runc/releases/download/v%s/runc.amd64"
            % versions["runc"], unpacked["runc"] / "usr" / "sbin" / "runc")
        cni = "github.com/containernetworking/plugins/releases/download/v{0}/cni-plugins-linux-amd64-v{0}.tgz"
        path = directory / cni.format(versions["cni"])
        path.parent.mkdir(parents=True, exist_ok=True)
        plugins = unpacked["cni"] / "usr" / "lib" / "cni"
        _tar(path, {"./%s" % p.name: p for p in sorted(plugins.iterdir())})
        put("cni_binary_checksums", versions["cni"], path.relative_to(directory))
    crictl = build_go_command("sigs.k8s.io/cri-tools", CRICTL_BUILT, "sigs.k8s.io/cri-tools/cmd/crictl", "crictl")
    for version in CRICTL_NAMES:
        path = directory / ("github.com/kubernetes-sigs/cri-tools/releases/download/{0}/crictl-{0}-linux-amd64.tar.gz"
                            .format(version))
        path.parent.mkdir(parents=True, exist_ok=True)
        _tar(path, {"crictl": crictl})
        put("crictl_checksums", version.lstrip("v"), path.relative_to(directory))
    stub = pathlib.Path(directory, "nerdctl-stub")
    stub.write_text(NERDCTL_STUB)
    path = directory / ("github.com/containerd/nerdctl/releases/download/v{0}/nerdctl-{0}-linux-amd64.tar.gz"
                        .format(NERDCTL_VERSION))
    path.parent.mkdir(parents=True, exist_ok=True)
    _tar(path, {"nerdctl": stub})
    put("nerdctl_archive_checksums", NERDCTL_VERSION, path.relative_to(directory))
    return checksums


def registry_images(build, directory):
    """docker-archives of what kubeadm and kubespray pull from registry.k8s.io, named as they name them."""
    directory.mkdir(parents=True, exist_ok=True)
    root = testhosts.ensure_image()
    archives = []
    for version in (OLD, NEW):
        for component in CONTROL_PLANE_IMAGES:
            files = images.base_files()
            files["/go-runner"] = images.File(str(build.binary("go-runner")), mode=0o755)
            files["/usr/local/bin/%s" % component] = images.File(str(build.binary(component, version)), mode=0o755)
            if component == "kube-proxy":
                files.update(images.iptables_files(root))
            tag = "registry.k8s.io/%s:%s" % (component, version)
            path = directory / ("%s-%s.tar" % (component, version))
            if not path.is_file():  # a work directory used again: the same inputs give the same archive
                images.write_image(path, [tag], files, entrypoint=["/go-runner"])
            archives.append(str(path))
    pause = {"/pause": images.File(str(build.binary("pause")), mode=0o755)}
    archives.append(images.write_image(directory / "pause.tar", ["registry.k8s.io/pause:%s" % t for t in PAUSE_TAGS],
                                       pause, entrypoint=["/pause"], user=images.PAUSE_USER).path)
    return archives


# -- the hosts and kubespray's inventory ----------------------------------------------------------------------------
HOST_PREPARATION = """set -e
# kubespray raises fs.inotify.max_user_instances to 8192; /proc/sys/fs is the machine's and read-only here.
value=/usr/local/lib/kubeops-kubelet-host/fs.inotify.max_user_instances
echo 8192 > $value
mountpoint -q /proc/sys/fs/inotify/max_user_instances || mount --bind $value /proc/sys/fs/inotify/max_user_instances
# kube_network_plugin: cni leaves the pod network to the user: the CNI bridge, pods of this host in its own range.
mkdir -p /etc/cni/net.d
cat > /etc/cni/net.d/10-bench-bridge.conflist <<'EOF'
{"cniVersion": "0.4.0", "name": "bench", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "%(pod_range)s"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
"""


def prepare_host(host, index):
    done = host.run(HOST_PREPARATION % {"pod_range": "10.233.%d.0/24" % (64 + index)})
    if done.returncode != 0:
        raise SystemExit("bench/kubespray.py: preparing %s failed: %s" % (host.name, done.stderr))


def inventory(path, pool, names, workers):
    """kubespray's inventory: node1 the control plane and etcd, the workers in kube_node."""
    common = {"ansible_user": "root", "ansible_ssh_private_key_file": str(pool.key_file),
              "ansible_python_interpreter": "/usr/bin/python3",
              "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"}
    hosts = {name: dict(common, ansible_host=host.address, ip=host.address, access_ip=host.address)
             for name, host in names.items()}
    document = {"all": {"hosts": hosts, "children": {
        "kube_control_plane": {"hosts": {CONTROL_PLANE: None}},
        "etcd": {"hosts": {CONTROL_PLANE: None}},
        "kube_node": {"hosts": {name: None for name in workers}},
        "k8s_cluster": {"children": {"kube_control_plane": None, "kube_node": None}}}}}
    path.write_text(json.dumps(document, indent=1))
    return path


def settings(files_url, registry_url):
    """group_vars/all of the bench's inventory: the offline install and the test-host settings (module docstring)."""
    return {
        "dl_k8s_io_url": "%s/dl.k8s.io" % files_url, "github_url": "%s/github.com" % files_url,
        "containerd_registries_mirrors": [{"prefix": "registry.k8s.io", "mirrors": [
            {"host": registry_url, "capabilities": ["pull", "resolve"], "skip_verify": True}]}],
        "image_command_tool": "crictl",
        "container_manager": "containerd",
        "etcd_deployment_type": "host",
        "kube_network_plugin": "cni",
        "kube_proxy_mode": "iptables",
        "dns_mode": "none",
        "enable_nodelocaldns": False,
        "resolvconf_mode": "none",
        # Workers reach the API at the control plane's address, as ours do (api.internal in /etc/hosts); kubespray's
        # default is a local nginx static pod on each worker (an image not here), for several control planes.
        "loadbalancer_apiserver_localhost": False,
        "kubelet_fail_cgroup_v1": False,
        # kubeadm >= 1.35's preflight refuses cgroup v1 ("You must also explicitly skip this validation"); `kubeadm
        # upgrade apply` refuses a cluster without CoreDNS ("CoreDNS will not be upgraded: start version '' not
        # supported"), which dns_mode none is (kubespray writes the list into its UpgradeConfiguration too).
        "kubeadm_ignore_preflight_errors": ["SystemVerification", "CoreDNSUnsupportedPlugins", "CoreDNSMigration"],
        "kubelet_protect_kernel_defaults": False,
        "kube_proxy_conntrack_max_per_core": 0,
        # kubespray's base runtime spec gives every container RLIMIT_NOFILE 65535; a test host cannot raise a hard
        # limit (no CAP_SYS_RESOURCE) above its own, 20000 here ("error setting rlimit type 7: operation not
        # permitted"): the hosts' own hard limit, which they inherit from this process.
        "containerd_base_runtime_spec_rlimit_nofile": min(65535, resource.getrlimit(resource.RLIMIT_NOFILE)[1]),
        "containerd_extra_args": 'plugins."io.containerd.grpc.v1.cri".restrict_oom_score_adj = true',
        # kubespray's containerd 1.x template (config-v1.toml.j2) reads a runtime's `engine` and `root`, which its
        # default runc runtime no longer has ("'dict object' has no attribute 'engine'"): the default with both.
        "containerd_runc_runtime": {"name": "runc", "type": "io.containerd.runc.v2", "engine": "", "root": "",
                                    "base_runtime_spec": "cri-base.json",
                                    "options": {"Root": "", "SystemdCgroup": "true",
                                                "BinaryName": "{{ bin_dir }}/runc"}},
    }


# -- running kubespray -----------------------------------------------------------------------------------------------
class Kubespray(object):
    def __init__(self, checkout, python, workdir):
        self.checkout = checkout
        self.bin = pathlib.Path(python).parent
        self.workdir = workdir
        self.logs = workdir / "logs"
        self.logs.mkdir(exist_ok=True)
        self.round = 0
        self.loads = {}  # playbook -> [the machine's 5-minute load average when each run ended]

    def env(self):
        env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
        env.pop("PYTHONPATH", None)
        env["PATH"] = "%s:%s" % (self.bin, env.get("PATH", "/usr/bin:/bin"))
        env["ANSIBLE_FORCE_COLOR"] = "0"
        # kubespray's ansible.cfg caches facts in /tmp for a day and keeps SSH masters for 30 minutes, by host name
        # and address, which the next round's fresh hosts reuse: both per round here.
        env["ANSIBLE_CACHE_PLUGIN_CONNECTION"] = str(self.workdir / ("facts-%d" % self.round))
        env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = str(self.workdir / ("ssh-%d" % self.round))
        return env

    def run(self, label, playbook, *args):
        """ansible-playbook <playbook> from the checkout (its ansible.cfg); (seconds, returncode, log path)."""
        log_path = self.logs / ("%s.log" % label)
        command = [str(self.bin / "ansible-playbook"), "-i", str(self.workdir / "inventory"),
                   "-e", "@%s" % (self.workdir / "overrides.json"), playbook] + list(args)
        started = time.monotonic()
        with open(log_path, "w") as handle:
            handle.write("$ %s\n" % " ".join(command))
            handle.flush()
            done = subprocess.run(command, cwd=self.checkout, env=self.env(), stdout=handle, stderr=subprocess.STDOUT,
                                  check=False)
        return round(time.monotonic() - started, 1), done.returncode, log_path


def failure(log_path):
    """The failed task and its message, from an ansible-playbook log."""
    lines = log_path.read_text(errors="replace").splitlines()
    for index, line in enumerate(lines):
        if line.startswith(("fatal:", "failed:")) or "FAILED!" in line:
            task = next((lines[i] for i in range(index, -1, -1) if lines[i].startswith("TASK [")), "")
            return "%s\n%s" % (task, "\n".join(lines[index:index + 6])[:3000])
    return "\n".join(lines[-20:])


def round_of(kubespray, pool, names, wanted, keep_going):
    """One round on fresh hosts; {playbook: seconds} for those that passed, {playbook: failure} for the others."""
    times, failures = {}, {}
    cluster_hosts = dict((n, names[n]) for n in (CONTROL_PLANE,) + WORKERS)
    inventory(kubespray.workdir / "inventory" / "hosts.json", pool, cluster_hosts, WORKERS)
    steps = [
        ("cluster", "cluster.yml", ("-e", "kube_version=%s" % OLD.lstrip("v")), None),
        ("cluster-again", "cluster.yml", ("-e", "kube_version=%s" % OLD.lstrip("v")), None),
        ("scale", "scale.yml", ("-e", "kube_version=%s" % OLD.lstrip("v"), "--limit", ADDED), "added"),
        ("remove-node", "remove-node.yml", ("-e", "kube_version=%s" % OLD.lstrip("v"), "-e", "node=%s" % ADDED,
                                            "-e", "skip_confirmation=true"), None),
        ("upgrade-cluster", "upgrade-cluster.yml", ("-e", "kube_version=%s" % NEW.lstrip("v")), "removed"),
        ("recover-control-plane", "recover-control-plane.yml",
         ("-e", "kube_version=%s" % NEW.lstrip("v"), "--limit", "etcd,kube_control_plane", "-e", "etcd_retries=10"),
         None),
        ("reset", "reset.yml", ("-e", "kube_version=%s" % NEW.lstrip("v"), "-e", "skip_confirmation=true",
                                "-e", "reset_confirmation=true"), None),
    ]
    for label, playbook, args, inventory_change in steps:
        if inventory_change == "added":
            inventory(kubespray.workdir / "inventory" / "hosts.json", pool, names, WORKERS + (ADDED,))
        elif inventory_change == "removed":
            inventory(kubespray.workdir / "inventory" / "hosts.json", pool, cluster_hosts, WORKERS)
        if label not in wanted:
            continue
        seconds, code, log_path = kubespray.run("%s-%d" % (label, kubespray.round), playbook, *args)
        load = os.getloadavg()[1]  # the 5-minute load: what else ran on the machine's cores meanwhile
        kubespray.loads.setdefault(label, []).append(round(load, 1))
        if code == 0:
            times[label] = seconds
            log("%-22s %7.1f s   load %.1f   (%s)" % (label, seconds, load, log_path))
        else:
            failures[label] = "exit %s after %.1f s: %s" % (code, seconds, failure(log_path))
            log("%-22s FAILED after %.1f s (%s):\n%s" % (label, seconds, log_path, failures[label]))
            if not keep_going:
                break
    return times, failures


def serve(kubespray, pool, names):
    """--serve-only: the hosts, files and mirror up for kubespray's playbooks run by hand, until interrupted."""
    inventory(kubespray.workdir / "inventory" / "hosts.json", pool, names, WORKERS + (ADDED,))
    log("cd %s && PATH=%s:$PATH ansible-playbook -i %s -e @%s -e kube_version=%s cluster.yml --limit '!%s'"
        % (kubespray.checkout, kubespray.bin, kubespray.workdir / "inventory", kubespray.workdir / "overrides.json",
           OLD.lstrip("v"), ADDED))
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass


def main(argv=None):
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill <pid> ends --serve-only as Ctrl-C does
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--playbooks", default=",".join(PLAYBOOKS), help="which of %s" % ",".join(PLAYBOOKS))
    parser.add_argument("--keep-going", action="store_true", help="go on after a playbook failed")
    parser.add_argument("--serve-only", action="store_true", help="bring up the hosts, the files repo and the "
                        "mirror, write the inventory, print the ansible-playbook command and wait (Ctrl-C ends it)")
    parser.add_argument("--workdir", help="where the files repo, images, inventory and logs go (default: a new "
                        "directory under /tmp, kept)")
    args = parser.parse_args(argv)
    checkout = pathlib.Path(os.environ.get("KUBESPRAY_DIR", ""))
    python = os.environ.get("KUBESPRAY_PYTHON", "")
    if not (checkout / "cluster.yml").is_file() or not python or not os.access(python, os.X_OK):
        parser.error("set KUBESPRAY_DIR to a kubespray checkout and KUBESPRAY_PYTHON to the python of a virtualenv "
                     "with its requirements.txt")
    wanted = set(args.playbooks.split(","))
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="kubespray-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "inventory" / "group_vars" / "all").mkdir(parents=True, exist_ok=True)
    log("bench/kubespray.py: work directory %s" % workdir)

    build = binaries.cached_build((NEW, OLD))
    if build is None:
        raise SystemExit("bench/kubespray.py: the real Kubernetes components are not built: run `make k8s-binaries`")
    kubeadm = {v: k8s_binaries.build_kubeadm(v, log) / "kubeadm" for v in (NEW, OLD)}
    checksums = files_repo(build, kubeadm, workdir / "files")
    archives = registry_images(build, workdir / "images")
    kubespray = Kubespray(checkout, python, workdir)
    results = {label: [] for label in PLAYBOOKS}
    all_failures = []
    prefix = os.environ.get("KUBEOPS_TESTHOST_PREFIX", "K") + "s"
    for number in range(1, args.rounds + 1):
        kubespray.round = number
        pool = testhosts.HostPool(prefix=prefix, count=4, kubelet=True)
        try:
            pool.start()
            names = {"node%d" % (i + 1): host for i, host in enumerate(pool.hosts)}
            for index, host in enumerate(pool.hosts):
                prepare_host(host, index)
            files_url = pool.serve_directory(workdir / "files")
            mirror = test_registry.Registry(images=archives, host="%s.1" % pool.subnet).start()
            try:
                (workdir / "inventory" / "group_vars" / "all" / "bench.json").write_text(
                    json.dumps(settings(files_url, mirror.url), indent=1))
                # Role vars (kubespray's checksum tables, its package list) give way to extra vars only.
                # etcd_version too: kubespray's etcd_supported_versions is templated whole, and its 1.34 entry (the
                # newest etcd below 3.6 in the table) has no element in a table of 3.6.12 alone.
                overrides = dict(checksums, pkgs={name: [] for name in PRESENT_PACKAGES}, etcd_version=ETCD_VERSION)
                (workdir / "overrides.json").write_text(json.dumps(overrides, indent=1))
                log("round %d: hosts %s" % (number, ", ".join("%s=%s" % (n, h.address) for n, h in names.items())))
                if args.serve_only:
                    serve(kubespray, pool, names)
                    return 0
                times, failures = round_of(kubespray, pool, names, wanted, args.keep_going)
            finally:
                mirror.stop()
        finally:
            pool.stop()
        for label, seconds in times.items():
            results[label].append(seconds)
        all_failures.append(failures)
    summary = {label: {"median_s": statistics.median(values), "n": len(values), "runs_s": values,
                       "load_5min": kubespray.loads.get(label)}
               for label, values in results.items() if values}
    print(json.dumps({"kubespray": subprocess.run(["git", "-C", str(checkout), "describe", "--always", "--tags"],
                                                  capture_output=True, text=True, check=False).stdout.strip(),
                      "times": summary, "failures": all_failures, "workdir": str(workdir)}, indent=1))
    return 0 if not any(all_failures) else 1


if __name__ == "__main__":
    sys.exit(main())
