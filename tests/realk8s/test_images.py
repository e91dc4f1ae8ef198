"""tests/realk8s/images.py and registry.py: the docker-archives, the Kubernetes build directory our product
side-loads from, and the registry mirror, checked against our own product code and the formats' own rules."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import pathlib
import shutil
import shlex
import signal
import stat
import subprocess
import tarfile
import threading
import time
import urllib.error
import urllib.request

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.completion import cloudfacts, populate
from ansible_collections.kubeops.kops.plugins.module_utils.completion.components import versions
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeconfig

from tests.conformance import kops_fixtures
from tests.hosts import testhosts
from tests.realk8s import binaries, images, registry
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import containerd as nodeup_containerd

VERSION = binaries.NEWER


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _members(data):
    """{name: (TarInfo, bytes or None)} of a tar, in its order."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {info.name: (info, archive.extractfile(info).read() if info.isfile() else None) for info in archive}


def _fake_build(root):
    """A Build whose binaries are small scripts: the layout and names without the real (100 MB) binaries."""
    kubernetes, etcd, tools = root / "kubernetes", root / "etcd", root / "tools"
    out = kubernetes / "bin" / "linux" / "amd64"
    for directory in (out, etcd / "bin", tools):
        directory.mkdir(parents=True)
    fakes = [out / name for name in binaries.k8s_binaries.KUBERNETES_COMMANDS] + [tools / "go-runner", tools / "pause"]
    for path in fakes:
        path.write_text("#!/bin/sh\necho %s\n" % path.name)
        path.chmod(0o755)
    return binaries.Build({VERSION: kubernetes}, etcd, tools)


def _fake_iptables_root(root):
    """A root filesystem with Debian's iptables layout; the files are not ELF, so they need no library."""
    (root / "usr" / "sbin").mkdir(parents=True)
    (root / "usr" / "sbin" / "xtables-nft-multi").write_bytes(b"xtables\n")
    modules = root / images.XTABLES_MODULES.lstrip("/")
    modules.mkdir(parents=True)
    for name in ("libxt_comment.so", "libxt_conntrack.so"):
        (modules / name).write_bytes(name.encode())
    return root


# -- the docker-archive
def _write_sample(path, source):
    return images.write_image(path, ["registry.k8s.io/sample:v1", "example.invalid/sample:latest"], {
        "/usr/local/bin/tool": source,
        "/etc/message": b"hello\n",
        "/usr/local/bin/alias": images.Symlink("tool"),
        "/var/empty": images.Directory(0o700),
        "/run/secret": images.File(b"s", mode=0o600, uid=65534, gid=65534),
    }, entrypoint=["/usr/local/bin/tool"], cmd=["--flag"], user="65534:65534", env=["A=1"])


def test_write_image_is_what_docker_save_writes(tmp_path):
    source = tmp_path / "tool"
    source.write_bytes(b"#!/bin/sh\n")
    source.chmod(0o750)
    archive = _write_sample(tmp_path / "image.tar", source)
    members = _members(pathlib.Path(archive.path).read_bytes())

    manifest = json.loads(members["manifest.json"][1])
    assert manifest == [{"Config": archive.config_digest[len("sha256:"):] + ".json",
                         "RepoTags": ["registry.k8s.io/sample:v1", "example.invalid/sample:latest"],
                         "Layers": [archive.diff_ids[0][len("sha256:"):] + "/layer.tar"]}]
    config_bytes = members[manifest[0]["Config"]][1]
    assert "sha256:" + _sha256(config_bytes) == archive.config_digest
    layer = members[manifest[0]["Layers"][0]][1]
    config = json.loads(config_bytes)
    assert config["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + _sha256(layer)]} == {
        "type": "layers", "diff_ids": archive.diff_ids}
    assert (config["architecture"], config["os"]) == ("amd64", "linux")
    assert config["config"] == {"Entrypoint": ["/usr/local/bin/tool"], "Cmd": ["--flag"], "User": "65534:65534",
                                "Env": [images.DEFAULT_PATH, "A=1"], "WorkingDir": "/"}
    assert len(config["history"]) == 1
    assert json.loads(members["repositories"][1]) == {
        "registry.k8s.io/sample": {"v1": archive.diff_ids[0][len("sha256:"):]},
        "example.invalid/sample": {"latest": archive.diff_ids[0][len("sha256:"):]}}
    assert archive.sha256 == _sha256(pathlib.Path(archive.path).read_bytes())

    files = _members(layer)
    # Sorted, every parent directory present, owners and times fixed.
    assert list(files) == sorted(files) == ["etc", "etc/message", "run", "run/secret", "usr", "usr/local",
                                            "usr/local/bin", "usr/local/bin/alias", "usr/local/bin/tool", "var",
                                            "var/empty"]
    assert {info.mtime for info, _data in files.values()} == {0}
    assert files["usr/local/bin/tool"][0].mode == 0o750 and files["usr/local/bin/tool"][1] == b"#!/bin/sh\n"
    assert files["etc/message"][0].mode == 0o644
    assert files["usr/local/bin/alias"][0].issym() and files["usr/local/bin/alias"][0].linkname == "tool"
    assert files["var/empty"][0].isdir() and files["var/empty"][0].mode == 0o700
    assert (files["run/secret"][0].uid, files["run/secret"][0].mode) == (65534, 0o600)
    assert files["usr"][0].isdir() and (files["usr"][0].uid, files["usr"][0].mode) == (0, 0o755)


def test_write_image_is_deterministic(tmp_path):
    source = tmp_path / "tool"
    source.write_bytes(b"#!/bin/sh\n")
    source.chmod(0o755)
    first = _write_sample(tmp_path / "one.tar", source)
    os.utime(source, (1, 1_000_000))
    second = _write_sample(tmp_path / "two.tar", source)
    assert first.sha256 == second.sha256
    assert pathlib.Path(first.path).read_bytes() == pathlib.Path(second.path).read_bytes()
    assert not list(tmp_path.glob("image-*")) and not list(tmp_path.glob("*.partial"))


def test_write_image_layers_bottom_first(tmp_path):
    archive = images.write_image(tmp_path / "image.tar", ["registry.k8s.io/layered:1"],
                                 [{"/base": b"base"}, {"/top": b"top"}])
    [image] = images.read_image(archive.path)
    assert ["sha256:" + _sha256(layer) for layer in image["layers"]] == archive.diff_ids
    assert [list(_members(layer)) for layer in image["layers"]] == [["base"], ["top"]]
    assert json.loads(image["config"])["rootfs"]["diff_ids"] == archive.diff_ids


def test_write_image_refuses_an_image_without_a_name_or_layer(tmp_path):
    with pytest.raises(ValueError):
        images.write_image(tmp_path / "image.tar", [], {"/a": b"a"})
    with pytest.raises(ValueError):
        images.write_image(tmp_path / "image.tar", ["registry.k8s.io/a:1"], [])


# -- libraries from a root filesystem
def test_elf_dependencies_of_this_machines_ls():
    interpreter, needed = images.elf_dependencies("/usr/bin/ls")
    assert interpreter == "/lib64/ld-linux-x86-64.so.2"
    assert "libc.so.6" in needed


def test_binaries_with_libraries_brings_what_ld_so_loads():
    files = images.binaries_with_libraries("/", ["/usr/bin/ls"])
    libc = images.real_path("/", "/usr/lib/x86_64-linux-gnu/libc.so.6")
    assert isinstance(files[libc], images.File)
    # The interpreter where the binary names it, a link to the real file (merged /usr: /lib64 is a link here).
    loader = files["/lib64/ld-linux-x86-64.so.2"]
    assert isinstance(loader, images.Symlink)
    assert os.path.normpath(os.path.join("/lib64", loader.target)) == images.real_path(
        "/", "/lib64/ld-linux-x86-64.so.2")
    assert all(not isinstance(entry, images.File) or os.path.isfile(entry.source) for entry in files.values())


def test_real_path_stays_inside_the_root(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "real").write_text("inside")
    (tmp_path / "lib").symlink_to("etc")
    (tmp_path / "etc" / "absolute").symlink_to("/etc/real")
    (tmp_path / "etc" / "outside").symlink_to("/etc/hostname")
    assert images.real_path(tmp_path, "/lib/absolute") == "/etc/real"
    assert images.real_path(tmp_path, "/etc/outside") is None
    assert images.elf_dependencies(tmp_path / "etc" / "real") == (None, [])


def test_iptables_files_name_every_command_kube_proxy_runs(tmp_path):
    files = images.iptables_files(_fake_iptables_root(tmp_path))
    assert isinstance(files[images.XTABLES_MULTI], images.File)
    for command in ("iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save",
                    "ip6tables-restore"):
        assert files["/usr/sbin/" + command].target == "xtables-nft-multi"
    assert isinstance(files[images.XTABLES_MODULES + "/libxt_comment.so"], images.File)
    with pytest.raises(FileNotFoundError):
        images.iptables_files(tmp_path / "nothing")


# -- the build directory, as our product reads it
@pytest.fixture
def served(tmp_path):
    """(root directory, URL) of a 127.0.0.1 HTTP server."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def _get(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def _completed_with_version(url):
    text = (kops_fixtures.UPDATE_CLUSTER / "minimal-aws" / "in-v1alpha2.yaml").read_text()
    cluster, groups = objects.split_objects([d for d in yaml.safe_load_all(text) if d])
    cluster["spec"]["kubernetesVersion"] = url
    # The docker_tag lookup is left to the facts: they read <url>/bin/linux/amd64/<component>.docker_tag over HTTP.
    facts = cloudfacts.StaticCloudFacts({"hosted_zones": {"example.com": "Z1AFAKE1ZON3YO"}})
    return populate.populate_cluster_spec(cluster, groups, facts)


def test_build_directory_is_what_our_product_side_loads(tmp_path, served):
    root, base = served
    build = _fake_build(tmp_path / "build")
    written = images.kubernetes_build_directory(build, VERSION, root / "ci" / VERSION, _fake_iptables_root(
        tmp_path / "debian"))
    url = "%s/ci/%s" % (base, VERSION)
    spec = {"kubernetesVersion": url}

    # kubelet and kubectl: what every node downloads, checked against <url>.sha256 as roles/nodeup does.
    for asset in nodeconfig.asset_urls(spec, {}, "amd64"):
        assert _sha256(_get(asset)) == _get(asset + ".sha256").decode()

    # The images a control-plane node loads, and the names the completed spec gives its static pods.
    sideloaded = nodeconfig.sideloaded_images(spec, objects.ROLE_CONTROL_PLANE, None)["amd64"]
    assert [image["sources"][0].rsplit("/", 1)[1] for image in sideloaded] == [
        "kube-proxy.tar", "kube-apiserver.tar", "kube-controller-manager.tar", "kube-scheduler.tar"]
    completed = _completed_with_version(url)["spec"]
    named = {"kube-apiserver": completed["kubeAPIServer"]["image"],
             "kube-controller-manager": completed["kubeControllerManager"]["image"],
             "kube-scheduler": completed["kubeScheduler"]["image"], "kube-proxy": completed["kubeProxy"]["image"]}
    assert named == written == {component: "registry.k8s.io/%s-amd64:%s" % (component, VERSION)
                                for component in images.SIDELOADED_COMPONENTS}
    for image in sideloaded:
        data = _get(image["sources"][0])
        assert _sha256(data) == _get(image["sources"][0] + ".sha256").decode()
        component = image["sources"][0].rsplit("/", 1)[1][:-len(".tar")]
        archive = tmp_path / (component + ".tar")
        archive.write_bytes(data)
        [content] = images.read_image(archive)
        assert content["repo_tags"] == [named[component]]
        config = json.loads(content["config"])
        assert config["config"]["Entrypoint"] == ["/go-runner"]
        files = _members(content["layers"][0])
        assert files["go-runner"][1] == build.binary("go-runner").read_bytes()
        assert files["usr/local/bin/" + component][1] == build.binary(component, VERSION).read_bytes()
        assert files["usr/local/bin/" + component][0].mode == 0o755
        assert ("usr/sbin/iptables" in files) == (component == "kube-proxy")
    # A worker loads kube-proxy alone.
    assert [image["sources"][0] for image in nodeconfig.sideloaded_images(spec, objects.ROLE_NODE, None)["amd64"]] == [
        url + "/bin/linux/amd64/kube-proxy.tar"]


def test_build_directory_of_a_ci_version_tags_as_kubernetes_does(tmp_path):
    build = _fake_build(tmp_path / "build")
    version = "v1.36.3-alpha.0.12+0123456789ab"
    build._kubernetes[version] = build._kubernetes[VERSION]
    dest = tmp_path / version
    written = images.kubernetes_build_directory(build, version, dest, _fake_iptables_root(tmp_path / "debian"))
    tag = (dest / "bin" / "linux" / "amd64" / "kube-apiserver.docker_tag").read_text()
    assert tag == "v1.36.3-alpha.0.12_0123456789ab"
    assert written["kube-apiserver"] == "registry.k8s.io/kube-apiserver-amd64:" + tag


def test_kube_proxy_image_needs_an_iptables_root(tmp_path):
    with pytest.raises(ValueError, match="iptables"):
        images.component_image(_fake_build(tmp_path / "build"), VERSION, "kube-proxy", tmp_path / "p.tar")


# -- the registry
def _fetch(url, method="GET", accept=registry.MANIFEST_TYPE):
    request = urllib.request.Request(url, method=method, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, dict(response.headers), response.read()


@pytest.fixture
def fake_images(tmp_path):
    build = _fake_build(tmp_path / "build")
    pause = images.pause_image(build, tmp_path / "pause.tar")
    other = images.write_image(tmp_path / "other.tar", ["registry.k8s.io/kubeops-test/other:2"],
                               [{"/a": b"a" * 1000}, {"/b": b"b"}], entrypoint=["/a"])
    return pause, other


def test_pause_image_carries_our_sandbox_image_name(fake_images):
    pause, _other = fake_images
    [image] = images.read_image(pause.path)
    assert image["repo_tags"] == [versions.SANDBOX_IMAGE] == ["registry.k8s.io/pause:" + images.pause_tag()]
    config = json.loads(image["config"])["config"]
    assert (config["Entrypoint"], config["User"]) == (["/pause"], "65535:65535")
    assert list(_members(image["layers"][0])) == ["pause"]


def test_registry_serves_manifests_and_blobs_whose_digests_verify(fake_images):
    with registry.Registry([archive.path for archive in fake_images]) as served:
        assert served.mirrors() == {"registry.k8s.io": [served.url]}
        status, headers, body = _fetch(served.url + "/v2/")
        assert (status, headers["Docker-Distribution-API-Version"], body) == (200, "registry/2.0", b"{}")
        for archive in fake_images:
            _host, name, tag = registry.split_reference(archive.repo_tags[0])
            # As containerd asks a mirror: the path without the registry host, the registry in ?ns=.
            status, headers, body = _fetch("%s/v2/%s/manifests/%s?ns=registry.k8s.io" % (served.url, name, tag))
            assert headers["Content-Type"] == registry.MANIFEST_TYPE
            assert headers["Docker-Content-Digest"] == "sha256:" + _sha256(body)
            manifest = json.loads(body)
            assert (manifest["schemaVersion"], manifest["mediaType"]) == (2, registry.MANIFEST_TYPE)
            assert _fetch("%s/v2/%s/manifests/%s" % (served.url, name, headers["Docker-Content-Digest"]))[2] == body
            _status, head, empty = _fetch("%s/v2/%s/manifests/%s" % (served.url, name, tag), method="HEAD")
            assert (empty, head["Docker-Content-Digest"], head["Content-Length"]) == (
                b"", headers["Docker-Content-Digest"], str(len(body)))

            config = _fetch("%s/v2/%s/blobs/%s" % (served.url, name, manifest["config"]["digest"]))[2]
            assert "sha256:" + _sha256(config) == manifest["config"]["digest"] == archive.config_digest
            assert len(config) == manifest["config"]["size"]
            diff_ids = []
            for layer in manifest["layers"]:
                assert layer["mediaType"] == registry.LAYER_TYPE
                _status, blob_headers, blob = _fetch("%s/v2/%s/blobs/%s" % (served.url, name, layer["digest"]))
                assert "sha256:" + _sha256(blob) == layer["digest"] == blob_headers["Docker-Content-Digest"]
                assert len(blob) == layer["size"]
                diff_ids.append("sha256:" + _sha256(gzip.decompress(blob)))
            assert diff_ids == json.loads(config)["rootfs"]["diff_ids"] == archive.diff_ids
        assert ("GET", "/v2/pause/manifests/%s?ns=registry.k8s.io" % images.pause_tag()) in served.requests


@pytest.mark.parametrize("path, method, status, code", [
    ("/v2/pause/manifests/0.0", "GET", 404, "MANIFEST_UNKNOWN"),
    ("/v2/pause/manifests/%s?ns=docker.io" % images.pause_tag(), "GET", 404, "NAME_UNKNOWN"),
    ("/v2/nothing/manifests/1", "GET", 404, "NAME_UNKNOWN"),
    ("/v2/pause/blobs/sha256:" + "0" * 64, "GET", 404, "BLOB_UNKNOWN"),
    ("/v1/pause", "GET", 404, "NOT_FOUND"),
    ("/v2/pause/blobs/uploads/", "POST", 405, "UNSUPPORTED"),
])
def test_registry_answers_the_rest_with_its_errors(fake_images, path, method, status, code):
    with registry.Registry([fake_images[0].path]) as served:
        with pytest.raises(urllib.error.HTTPError) as caught:
            _fetch(served.url + path, method=method)
        assert caught.value.code == status
        assert json.loads(caught.value.read())["errors"][0]["code"] == code


def test_registry_serves_the_same_bytes_each_time(fake_images):
    with registry.Registry([fake_images[1].path]) as first, registry.Registry([fake_images[1].path]) as second:
        assert (_fetch(first.url + "/v2/kubeops-test/other/manifests/2")[2]
                == _fetch(second.url + "/v2/kubeops-test/other/manifests/2")[2])


def test_split_reference_reads_names_as_containerd_does():
    assert registry.split_reference("registry.k8s.io/kubeops-test/sleeper:1") == (
        "registry.k8s.io", "kubeops-test/sleeper", "1")
    assert registry.split_reference("localhost:5000/a:b") == ("localhost:5000", "a", "b")
    assert registry.split_reference("busybox:1") == ("docker.io", "library/busybox", "1")
    with pytest.raises(ValueError):
        registry.split_reference("registry.k8s.io/pause")


# -- the sleeper workload
@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not on PATH: the sleeper is compiled with it")
def test_sleeper_waits_for_sigterm_and_exits_0(tmp_path):
    binary = images.build_sleeper(tmp_path / "sleeper")
    assert images.elf_dependencies(binary) == (None, [])
    proc = subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "sleeper: waiting for SIGTERM\n"
        time.sleep(0.2)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
    archive = images.sleeper_image(binary, tmp_path / "sleeper.tar")
    [image] = images.read_image(archive.path)
    assert image["repo_tags"] == [images.SLEEPER_IMAGE]
    assert json.loads(image["config"])["config"]["User"] == images.SLEEPER_USER


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not on PATH: the sleeper is compiled with it")
def test_standard_images_are_our_sandbox_image_and_the_sleeper(tmp_path):
    paths = registry.standard_images(_fake_build(tmp_path / "build"), tmp_path / "images")
    tags = [images.read_image(path)[0]["repo_tags"] for path in paths]
    assert tags == [[versions.SANDBOX_IMAGE], [images.SLEEPER_IMAGE]]
    with registry.Registry(paths) as served:
        assert sorted(served.repositories) == ["kubeops-test/sleeper", "pause"]
        assert served.mirrors() == {"registry.k8s.io": [served.url]}


# -- what runs from the images: unpacked and run in a chroot in a network namespace of its own (root)
@pytest.fixture
def debian_root():
    """The test-host image's root filesystem (Debian's iptables), when a hosts test has built it."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("running an image's files needs root (chroot) and unshare (a network namespace of its own)")
    if not testhosts.image_dir().is_dir():
        pytest.skip("the test-host image is not built (tests/hosts/build_image.sh; any hosts test builds it)")
    return testhosts.image_dir()


def _unpack(archive, dest):
    """The image's root filesystem: its layers extracted in order."""
    [image] = images.read_image(archive)
    for layer in image["layers"]:
        with tarfile.open(fileobj=io.BytesIO(layer)) as files:
            files.extractall(dest)
    return dest


def test_kube_proxy_image_runs_iptables_as_kube_proxy_does(tmp_path, debian_root):
    build = _fake_build(tmp_path / "build")
    archive = images.component_image(build, VERSION, "kube-proxy", tmp_path / "kube-proxy.tar", debian_root)
    root = _unpack(archive.path, tmp_path / "root")
    # kube-proxy runs the plain names through PATH: the image's.
    path = json.loads(images.read_image(archive.path)[0]["config"])["config"]["Env"][0]
    assert "/usr/sbin" in path.split("=", 1)[1].split(":")
    rules = ("*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment test "
             "-m tcp --dport 443 -j DNAT --to-destination 10.0.0.2:443\nCOMMIT\n"
             "*filter\n:KUBE-FIREWALL - [0:0]\n-A KUBE-FIREWALL -m conntrack --ctstate INVALID -j DROP\nCOMMIT\n")
    # The image has no shell (nor have Kubernetes' own): this machine's sh runs each of the image's commands in
    # a chroot, all in one network namespace of their own, so the rules are written and read back there.
    image = "env -i %s chroot %s " % (path, root)
    script = ("set -e; {0}iptables --version; {0}ip6tables --version; printf '%s' | {0}iptables-restore --noflush; "
              "{0}iptables -w 5 -t nat -S KUBE-SERVICES; {0}iptables-save -t filter; {0}ip6tables-save -t nat"
              .format(image) % rules)
    proc = subprocess.run(["unshare", "--net", "sh", "-c", script], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("iptables v") and "(nf_tables)" in proc.stdout
    assert "-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment test -m tcp --dport 443 -j DNAT" in proc.stdout
    assert "-A KUBE-FIREWALL -m conntrack --ctstate INVALID -j DROP" in proc.stdout


def test_real_build_directory_runs_each_component_as_its_static_pod_does(tmp_path, debian_root):
    build = binaries.require_build()
    dest = tmp_path / VERSION
    written = images.kubernetes_build_directory(build, VERSION, dest, debian_root)
    out = dest / "bin" / "linux" / "amd64"
    for name in images.BUILD_BINARIES:
        proc = subprocess.run([str(out / name), "version", "--client"] if name == "kubectl" else
                              [str(out / name), "--version"], capture_output=True, text=True, timeout=60, check=False)
        assert VERSION in proc.stdout, proc.stderr
    for component in written:
        root = _unpack(out / (component + ".tar"), tmp_path / component)
        # A container runtime gives every container a /dev (go-runner's command reads /dev/null); chroot does not.
        (root / "dev").mkdir()
        os.mknod(root / "dev" / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        log = "/tmp/%s.log" % component
        # What our static pods run (nodeup/manifests.py): /go-runner --log-file=... --also-stdout <binary> <flags>.
        proc = subprocess.run(["unshare", "--net", "chroot", str(root), "/go-runner", "--log-file=" + log,
                               "--also-stdout", "/usr/local/bin/" + component, "--version"], capture_output=True,
                              text=True, timeout=60, check=False)
        assert (proc.returncode, proc.stdout) == (0, "Kubernetes %s\n" % VERSION), proc.stderr
        assert (root / log.lstrip("/")).read_text() == proc.stdout


# -- on a test host: containerd (Debian's 1.6) takes the archives and pulls through the mirror
def _host_with_containerd(host_pool):
    host = host_pool(1).hosts[0]
    proc = host.run("DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download containerd runc")
    assert proc.returncode == 0, proc.stderr
    return host


def _image_refs(host):
    proc = host.run("ctr --namespace k8s.io images ls -q")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.hosts
def test_a_host_imports_a_side_loaded_tarball_under_its_exact_name(host_pool, host_image, tmp_path):
    host = _host_with_containerd(host_pool)
    served = tmp_path / "served"
    served.mkdir()
    archive = images.component_image(_fake_build(tmp_path / "build"), VERSION, "kube-proxy",
                                     served / "kube-proxy.tar", host_image)
    url = host.pool.serve_directory(served)
    # As roles/nodeup/tasks/images.yml loads it.
    proc = host.run("curl -sfo /tmp/kube-proxy.tar %s/kube-proxy.tar && ctr --namespace k8s.io images import "
                    "/tmp/kube-proxy.tar" % url)
    assert proc.returncode == 0, proc.stderr
    refs = _image_refs(host)
    # The name our static pods run, and the config's digest: the image ID the kubelet sees through CRI.
    assert images.component_image_name("kube-proxy", VERSION) in refs
    assert archive.config_digest in refs


@pytest.mark.hosts
def test_a_host_pulls_the_sandbox_image_through_the_registry_mirror(host_pool, tmp_path):
    build = binaries.require_build()
    host = _host_with_containerd(host_pool)
    pause = images.pause_image(build, tmp_path / "pause.tar")
    with registry.Registry([pause.path], host="%s.1" % host.pool.subnet) as served:
        # The hosts.toml our product writes for spec.containerd.registryMirrors (containerd's config_path).
        written = nodeup_containerd.registry_hosts({"containerdConfig": {"registryMirrors": served.mirrors()}})
        assert list(written) == ["/etc/containerd/certs.d/registry.k8s.io/hosts.toml"]
        for path, text in written.items():
            proc = host.run("mkdir -p %s && printf '%%s' %s > %s" % (os.path.dirname(path), shlex.quote(text), path))
            assert proc.returncode == 0, proc.stderr
        proc = host.run("ctr --namespace k8s.io images pull --hosts-dir /etc/containerd/certs.d %s"
                        % versions.SANDBOX_IMAGE)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert versions.SANDBOX_IMAGE in _image_refs(host)
        assert ("HEAD", "/v2/pause/manifests/%s?ns=registry.k8s.io" % images.pause_tag()) in served.requests
