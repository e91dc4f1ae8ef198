"""containerd on the node as kops' nodeup ContainerdBuilder writes it: kops' five containerdbuilder goldens through
the harness (kops_golden), and the rules behind them for configs the goldens do not cover (the asset install
plan, config.toml's schema by containerd version, registry mirrors, kubenet's CNI template and masquerade rules)."""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import assets, containerd, distribution, files, kubelet, toml
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup.networking import networking_files
from ansible_collections.kubeops.kops.plugins.modules import node_assets

from tests.unit.nodeup import kops_golden

CASES = [case for case in kops_golden.CASES if case.directory.startswith("containerdbuilder/")]
# Paths kops writes that we do not, by design, with the reason (none today).
KOPS_ONLY_BY_DESIGN = {}
CONTAINERD_PATHS = ("/etc/containerd/", "/usr/bin/containerd", "/usr/bin/ctr", "/usr/sbin/runc", "/etc/crictl.yaml",
                    "/etc/sysconfig/containerd", "/usr/share/doc/containerd/", "unit containerd.service",
                    "/opt/kops/bin/cni-iptables-setup", "unit cni-iptables-setup.service")
SHA = "0" * 64


@pytest.fixture
def run_module(capsys):
    """A module run in-process (as tests/unit/modules' fixture does)."""
    def run(module, **args):
        with patch_module_args(dict(args, _ansible_check_mode=False, _ansible_diff=False)):
            with pytest.raises(SystemExit):
                module.main()
        return json.loads(capsys.readouterr().out)
    return run


def test_the_five_cases_are_compared():
    assert sorted(case.directory for case in CASES) == ["containerdbuilder/%s" % name for name in
                                                        ("complex", "flatcar", "simple", "skipinstall", "v3")]


@pytest.mark.parametrize("case", CASES, ids=[c.directory for c in CASES])
def test_kops_containerdbuilder_golden(case):
    result = kops_golden.compare(case)
    assert result.different == {}
    assert sorted(set(result.kops_only) - set(KOPS_ONLY_BY_DESIGN)) == []
    kops = kops_golden.kops_entries(case)
    assert len(result.equal) == len(kops)
    if not kops:  # skipinstall: kops writes nothing of containerd's, and neither do we
        assert not [p for p in kops_golden.our_entries(case) if p.startswith(CONTAINERD_PATHS)]
    else:
        assert {"/etc/containerd/config.toml"} <= set(result.equal)


def _config(**containerd_spec):
    spec = dict({"version": "2.3.4", "logLevel": "info", "sandboxImage": "registry.k8s.io/pause:3.10.1"},
                **containerd_spec)
    return {"containerdConfig": spec, "UsesKubenet": True, "Networking": {"nonMasqueradeCIDR": "100.64.0.0/10"},
            "KubeletConfig": {}}


# --- config.toml's schema and contents -------------------------------------------------------------------------

@pytest.mark.parametrize("version, node, expected", [
    ("2.3.4", {}, 4), ("2.3.0", {}, 4), ("2.2.4", {}, 3), ("2.1.6", {}, 3), ("2.0.0", {}, 3), (None, {}, 3),
    ("2.3.4", {"distribution": "flatcar"}, 3), ("2.3.4", {"distribution": "containeros"}, 3),
    ("1.7.27", {}, 2),
    # A distribution's containerd (the role passes `containerd --version`) decides over the spec's version.
    ("2.3.4", {"containerd_version": "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1"}, 2),
    ("2.3.4", {"containerd_version": "2.2.1"}, 3),
])
def test_schema_version_follows_the_containerd_that_reads_it(version, node, expected):
    config = _config()
    config["containerdConfig"]["version"] = version
    assert containerd.config_version(config, node) == expected
    assert containerd.containerd_toml(config, node).startswith("version = %d\n" % expected)


def test_schema_2_for_containerd_1x_keeps_everything_in_the_cri_plugin():
    config = _config(registryMirrors={"docker.io": ["https://mirror.example.com"]}, selinuxEnabled=True)
    text = containerd.containerd_toml(config, {"containerd_version": "1.6.20"})
    assert text == """version = 2

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    enable_selinux = true
    sandbox_image = "registry.k8s.io/pause:3.10.1"

    [plugins."io.containerd.grpc.v1.cri".cni]
      conf_template = "/etc/containerd/config-cni.template"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
            SystemdCgroup = true

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "/etc/containerd/certs.d"
"""


def test_config_override_is_written_verbatim_without_mirror_files():
    config = _config(configOverride="version = 2\n# mine\n", registryMirrors={"docker.io": ["https://m.example"]})
    assert containerd.containerd_toml(config) == "version = 2\n# mine\n"
    paths = [f.path for f in containerd.containerd_files(config, {})]
    assert not [p for p in paths if p.startswith(containerd.REGISTRY_DIR)]


def test_nri_timeouts_as_go_writes_durations():
    config = _config(nri={"pluginRequestTimeout": "90s", "pluginRegistrationTimeout": "0.5s"})
    text = containerd.containerd_toml(config)
    assert '[plugins."io.containerd.nri.v1.nri"]\n    disable = false\n' \
        '    plugin_registration_timeout = "500ms"\n    plugin_request_timeout = "1m30s"\n' in text
    assert "io.containerd.nri.v1.nri" not in containerd.containerd_toml(_config(nri={"enabled": False}))
    assert [containerd.go_duration(v) for v in ("5s", "1h", "2m3.25s", "0s", "1500us")] == \
        ["5s", "1h0m0s", "2m3.25s", "0s", "1.5ms"]
    with pytest.raises(ValueError, match="containerd.nri: 'soon' is not a duration"):
        containerd.go_duration("soon")


def test_config_additions_paths_and_values():
    config = _config(configAdditions={'plugins."io.containerd.grpc.v1.cri".x.flag': "true", "a.b": 3, "a.c": "3",
                                      "a.d": "text"})
    text = containerd.containerd_toml(config)
    assert '\n[a]\n  b = 3\n  c = "3"\n  d = "text"\n' in text
    assert '[plugins."io.containerd.grpc.v1.cri".x]\n      flag = true\n' in text
    with pytest.raises(ValueError, match="configAdditions"):
        containerd.containerd_toml(_config(configAdditions={'a."b': "x"}))


def test_gvisor_and_nvidia_runtimes():
    config = _config(gvisor={"enabled": True}, nvidiaGPU={"enabled": True})
    text = containerd.containerd_toml(config, {"gpu_vendor": "nvidia"})
    assert 'runtime_type = "io.containerd.runsc.v1"' in text
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime"' in text
    assert "nvidia" not in containerd.containerd_toml(config, {})  # no NVIDIA device on this node
    runsc = [f for f in containerd.containerd_files(config, {}) if f.path == "/etc/containerd/runsc.toml"]
    assert runsc[0].content == b'\n[runsc_config]\n  platform = "systrap"\n'
    control_plane = dict(config, ControlPlaneConfig={})
    assert "runsc" not in containerd.containerd_toml(control_plane, {})


def test_toml_writer_order_quoting_and_scalars():
    tree = toml.Tree()
    tree.set_path(["z"], 1)
    tree.set_path(["t", "a.b", "k"], "q\"\n")
    tree.set_path(["a"], True)
    assert tree.render() == 'a = true\nz = 1\n\n[t]\n\n  [t."a.b"]\n    k = "q\\"\\n"\n'
    with pytest.raises(ValueError):
        tree.set_path(["f"], 1.5)


# --- registry mirrors ------------------------------------------------------------------------------------------

def test_registry_mirrors_hosts_toml():
    config = _config(registryMirrors={"registry.k8s.io": ["https://b.example.com", "https://a.example.com"],
                                      "*": ["https://fallback.example.com"]})
    hosts = containerd.registry_hosts(config)
    assert hosts == {
        "/etc/containerd/certs.d/_default/hosts.toml":
            '[host."https://fallback.example.com"]\n  capabilities = ["pull", "resolve"]\n\n',
        # containerd tries the hosts in the order given: kept, not sorted
        "/etc/containerd/certs.d/registry.k8s.io/hosts.toml":
            '[host."https://b.example.com"]\n  capabilities = ["pull", "resolve"]\n\n'
            '[host."https://a.example.com"]\n  capabilities = ["pull", "resolve"]\n\n',
    }
    assert 'config_path = "/etc/containerd/certs.d"' in containerd.containerd_toml(config)
    assert "config_path" not in containerd.containerd_toml(_config())
    with pytest.raises(ValueError, match="registryMirrors: '../etc' is not a registry host name"):
        containerd.registry_hosts(_config(registryMirrors={"../etc": ["https://x"]}))


# --- kubenet, units and the distributions ----------------------------------------------------------------------

def test_kubenet_template_and_masquerade_only_for_kubenet_modes():
    paths = [f.path for f in containerd.containerd_files(_config(), {})]
    assert containerd.CNI_TEMPLATE_PATH in paths and containerd.IPTABLES_SETUP in paths
    cilium = dict(_config(), UsesKubenet=False)
    text = containerd.containerd_toml(cilium)
    paths = [f.path for f in containerd.containerd_files(cilium, {})]
    assert "conf_template" not in text and containerd.CNI_TEMPLATE_PATH not in paths
    assert containerd.IPTABLES_SETUP not in paths
    everything = dict(_config(), Networking={"nonMasqueradeCIDR": "0.0.0.0/0"})
    assert containerd.IPTABLES_SETUP not in [f.path for f in containerd.containerd_files(everything, {})]
    ipv6 = dict(_config(), Networking={"nonMasqueradeCIDR": "fd00:10:96::/64"})
    assert '"routes": [{"dst":"0.0.0.0/0"},{"dst":"::/0"}]' in containerd.cni_config_template(ipv6)
    setup = [f for f in containerd.containerd_files(ipv6, {}) if f.path == containerd.IPTABLES_SETUP][0]
    assert setup.mode == 0o755 and b"-d fd00:10:96::/64 " in setup.content
    assert setup.restarts == ("cni-iptables-setup.service",)


def test_uses_kubenet_from_the_cluster_networking():
    document, _keysets = kops_golden.our_config(CASES[0])
    assert document["UsesKubenet"] is True


def test_unit_and_sysconfig():
    config = _config(address="/run/c.sock", root="/var/lib/c", state="/run/c")
    config["KubeletConfig"] = {"runtimeCgroups": "/system.slice/containerd"}
    assert containerd.sysconfig(config) == \
        "CONTAINERD_OPTS=--address=/run/c.sock --log-level=info --root=/var/lib/c --state=/run/c"
    unit = containerd.containerd_unit(config, {"distribution": "rocky9"})
    assert "Slice=system.slice/containerd.slice\n" in unit and "restorecon" not in unit
    selinux = containerd.containerd_unit(_config(selinuxEnabled=True), {"distribution": "rhel9"})
    assert selinux.index("restorecon -v /usr/sbin/runc") < selinux.index("EnvironmentFile=")
    assert "restorecon" not in containerd.containerd_unit(_config(selinuxEnabled=True), {"distribution": "debian12"})


def test_container_optimized_os_gets_kops_drop_in():
    by_path = {f.path: f for f in containerd.containerd_files(_config(), {"distribution": "containeros"})}
    assert by_path["/etc/systemd/system/containerd.service.d/10-kops.conf"].content == \
        b"[Service]\nEnvironmentFile=/etc/environment\nTasksMax=infinity"
    assert "/etc/systemd/system/containerd.service" not in by_path and "/etc/crictl.yaml" not in by_path


def test_node_files_carry_the_containerd_files_and_skip_install_drops_them():
    node = {"name": "n", "address": None, "distribution": "debian12"}
    config = dict(_config(), CAs={"kubernetes-ca": ""})
    paths = [f.path for f in files.node_files(config, node, bootstrap_token="a.b")]
    assert "/etc/containerd/config.toml" in paths and "/etc/systemd/system/containerd.service" in paths
    config["containerdConfig"]["skipInstall"] = True
    paths = [f.path for f in files.node_files(config, node, bootstrap_token="a.b")]
    assert not [p for p in paths if p.startswith(("/etc/containerd", "/etc/systemd/system/containerd"))]


@pytest.mark.parametrize("text, expected", [
    ('ID=debian\nVERSION_ID="12"\n', "debian12"), ('ID=ubuntu\nVERSION_ID="24.04"\n', "ubuntu2404"),
    ("ID=flatcar\nVERSION_ID=3975.2.0\n", "flatcar"), ("ID=cos\nVERSION_ID=113\n", "containeros"),
    ('ID="rocky"\nVERSION_ID="9.4"\n', "rocky9"), ("ID=arch\n", ""),
])
def test_distribution_names(text, expected):
    assert distribution.from_os_release(text) == expected


# --- the asset install plan ------------------------------------------------------------------------------------

RELEASE = "https://github.com/containerd/containerd/releases/download/v2.3.4/containerd-2.3.4-linux-%s.tar.gz"
MEMBERS = ["bin/containerd", "bin/containerd-shim-runc-v2", "bin/containerd-stress", "bin/ctr", "LICENSE"]


def _asset_config(**extra):
    urls = ["https://dl.k8s.io/release/v1.34.2/bin/linux/%s/kubelet",
            "https://dl.k8s.io/release/v1.34.2/bin/linux/%s/kubectl",
            "https://artifacts.k8s.io/binaries/cloud-provider-aws/v1.31.7/linux/%s/ecr-credential-provider-linux-%s",
            "https://github.com/containernetworking/plugins/releases/download/v1.6.2/cni-plugins-linux-%s-v1.6.2.tgz",
            RELEASE, "https://github.com/opencontainers/runc/releases/download/v1.4.3/runc.%s"]
    config = {"Assets": {arch: ["%s@%s" % (SHA, url.replace("%s", arch)) for url in urls]
                         for arch in ("amd64", "arm64")},
              "InstallCNIAssets": True, "containerdConfig": {"version": "2.3.4"}}
    config.update(extra)
    return config


def _plan(config, arch="amd64", distro="ubuntu2404", **kwargs):
    planned = assets.downloads(config, arch, **kwargs)
    members = {d.file: (MEMBERS if d.name == "containerd" else ["./bridge", "./loopback"]) for d in planned if d.archive}
    return {i.path: (i.key, i.member, "%04o" % i.mode) for i in assets.installs(config, planned, members, distro)}


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_asset_plan_per_architecture(arch):
    plan = _plan(_asset_config(), arch)
    assert plan == {
        "/usr/local/bin/kubelet": ("kubelet", "", "0755"),
        "/usr/local/bin/ecr-credential-provider": ("ecr-credential-provider-linux-%s" % arch, "", "0755"),
        "/usr/bin/containerd": ("containerd", "bin/containerd", "0755"),
        "/usr/bin/containerd-shim-runc-v2": ("containerd-shim-runc-v2", "bin/containerd-shim-runc-v2", "0755"),
        "/usr/bin/containerd-stress": ("containerd-stress", "bin/containerd-stress", "0755"),
        "/usr/bin/ctr": ("ctr", "bin/ctr", "0755"),
        "/usr/sbin/runc": ("runc.%s" % arch, "", "0755"),
        "/opt/cni/bin/bridge": ("bridge", "bridge", "0755"),
        "/opt/cni/bin/loopback": ("loopback", "loopback", "0755"),
    }  # kubectl: API server nodes only; the release's LICENSE is no binary kops installs
    downloads = assets.downloads(_asset_config(), arch)
    assert [d.url for d in downloads if d.name == "containerd"] == [RELEASE % arch]
    assert all(d.sha256 == SHA for d in downloads)
    with pytest.raises(ValueError, match="architecture 's390x'"):
        assets.downloads(_asset_config(), "s390x")


def test_asset_plan_kubectl_on_api_servers_and_distribution_directories():
    api = _asset_config(APIServerConfig={})
    assert _plan(api)["/usr/local/bin/kubectl"] == ("kubectl", "", "0755")
    flatcar = _plan(api, distro="flatcar")
    assert "/opt/kubernetes/bin/kubelet" in flatcar and "/opt/kops/bin/kubectl" in flatcar
    assert not [p for p in flatcar if p.startswith(("/usr/bin/", "/usr/sbin/"))]  # the image's containerd


def test_asset_plan_skip_install_distro_packages_and_cni():
    skip = _plan(_asset_config(containerdConfig={"skipInstall": True, "version": "2.3.4"}))
    assert not [p for p in skip if p.startswith(("/usr/bin/", "/usr/sbin/"))]
    packaged = assets.downloads(_asset_config(), "amd64", distro_packages=["containerd", "runc"])
    assert sorted(d.name for d in packaged) == ["cni-plugins", "ecr-credential-provider", "kubectl", "kubelet"]
    no_cni = _plan(_asset_config(InstallCNIAssets=False))
    assert not [p for p in no_cni if p.startswith("/opt/cni/bin/")]
    with pytest.raises(ValueError, match="Assets: no node install rule for 'etcd.tar.gz'"):
        assets.downloads({"Assets": {"amd64": ["https://example.com/etcd.tar.gz"]}}, "amd64")
    with pytest.raises(ValueError, match="no sha256 before its '@'"):
        assets.downloads({"Assets": {"amd64": ["xyz@https://example.com/kubelet"]}}, "amd64")


def test_asset_plan_mirrors_from_file_repository():
    """kops' assets.fileRepository: the controller writes mirrored URLs (same paths, same sha256); a node can
    also be pointed at a mirror of its own (nodeup_file_repository)."""
    case = kops_golden.Case("containerdbuilder/simple", "tasks.yaml")
    completed, group = kops_golden.load_case(case)
    completed["spec"]["assets"] = {"fileRepository": "https://mirror.example.com/files/"}
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    document = nodeup_config.build_config(completed, group, keysets, completed["spec"]["configBase"])
    planned = assets.downloads(document, "arm64")
    by_name = {d.name: d for d in planned}
    assert by_name["containerd"].url == "https://mirror.example.com/files/containerd/containerd/releases/download/" \
                                        "v2.3.4/containerd-2.3.4-linux-arm64.tar.gz"
    assert by_name["containerd"].sha256 == "a985fbb7e18fc0362d31a055338f5d7b0e087a3e27f14c70d1c5965399a29f95"
    assert all(d.url.startswith("https://mirror.example.com/files/") for d in planned)
    local = assets.downloads(_asset_config(), "amd64", file_repository="http://10.0.0.1:8080")
    assert [d.url for d in local if d.name == "runc"] == \
        ["http://10.0.0.1:8080/opencontainers/runc/releases/download/v1.4.3/runc.amd64"]


def test_node_assets_module_installs_once(run_module, tmp_path):
    cache, root = tmp_path / "cache", tmp_path / "root"
    (cache / "extracted" / "containerd-2.3.4-linux-amd64.tar.gz" / "bin").mkdir(parents=True)
    (cache / "extracted" / "containerd-2.3.4-linux-amd64.tar.gz" / "bin" / "ctr").write_text("ctr\n")
    (cache / "runc.amd64").write_text("runc\n")
    config = {"Assets": {"amd64": ["%s@%s" % (SHA, RELEASE % "amd64"),
                                   "%s@https://github.com/opencontainers/runc/releases/download/v1/runc.amd64" % SHA]},
              "containerdConfig": {"version": "2.3.4"}}
    args = dict(nodeup_config=config, arch="amd64", cache=str(cache), root=str(root), distribution="debian12")
    plan = run_module(node_assets, **args)
    assert [d["checksum"] for d in plan["downloads"]] == ["sha256:" + SHA] * 2 and not plan["changed"]
    first = run_module(node_assets, state="install", **args)
    assert first["changed_files"] == ["/usr/bin/ctr", "/usr/sbin/runc"]
    assert (root / "usr/bin/ctr").read_text() == "ctr\n"
    assert stat.S_IMODE(os.stat(root / "usr/sbin/runc").st_mode) == 0o755
    assert run_module(node_assets, state="install", **args)["changed"] is False
    (cache / "runc.amd64").write_text("runc 2\n")
    assert run_module(node_assets, state="install", **args)["changed_files"] == ["/usr/sbin/runc"]
    os.remove(cache / "runc.amd64")
    missing = run_module(node_assets, state="install", **args)
    assert missing["failed"] and "runc.amd64" in missing["msg"]
    bad = run_module(node_assets, **dict(args, nodeup_config={"Assets": {"amd64": ["ftp"]}}))
    assert bad["failed"] and bad["msg"].startswith("nodeup_config: Assets:")


def test_node_assets_module_reads_a_real_archive_layout(run_module, tmp_path):
    """The members are what the unpacked archive holds (tar's ./ prefixes included)."""
    cache, root = tmp_path / "cache", tmp_path / "root"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        for name in ("./bridge", "./host-local"):
            info = tarfile.TarInfo(name)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"cni"))
    archive.seek(0)
    target = cache / "extracted" / "cni-plugins-linux-amd64-v1.6.2.tgz"
    target.mkdir(parents=True)
    with tarfile.open(fileobj=archive) as tar:
        tar.extractall(str(target))
    config = {"Assets": {"amd64": ["https://github.com/containernetworking/plugins/releases/download/v1.6.2/"
                                   "cni-plugins-linux-amd64-v1.6.2.tgz"]}, "InstallCNIAssets": True}
    result = run_module(node_assets, state="install", nodeup_config=config, arch="amd64", cache=str(cache),
                        root=str(root))
    assert result["changed_files"] == ["/opt/cni/bin/bridge", "/opt/cni/bin/host-local"]
    assert result["downloads"][0]["checksum"].endswith("cni-plugins-linux-amd64-v1.6.2.tgz.sha256")


# --- the networking builders -----------------------------------------------------------------------------------

def _networking_paths(networking, **node):
    return {f.path: f for f in networking_files({"Networking": networking}, node)}


def test_cilium_mounts_and_networkd_settings_by_distribution():
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import networking
    files_ = _networking_paths({"cilium": {}}, distribution="ubuntu2404")
    assert sorted(files_) == ["/etc/cloud/cloud.cfg.d/99-disable-network-hotplug.cfg",
                              "/etc/systemd/system/run-cilium-cgroupv2.mount", "/etc/systemd/system/sys-fs-bpf.mount",
                              "/usr/lib/systemd/networkd.conf.d/40-disable-manage-foreign-routes.conf"]
    assert files_["/etc/systemd/system/sys-fs-bpf.mount"].content.decode() == networking.BPF_MOUNT
    assert files_["/etc/systemd/system/sys-fs-bpf.mount"].restarts == ("sys-fs-bpf.mount",)
    assert files_["/usr/lib/systemd/networkd.conf.d/40-disable-manage-foreign-routes.conf"].restarts == \
        ("systemd-networkd",)
    # Ubuntu 22.04: networkd keeps its hands off CNI routes, cloud-init's hotplug stays (kops: 24.04 and later).
    assert "/etc/cloud/cloud.cfg.d/99-disable-network-hotplug.cfg" not in \
        _networking_paths({"cilium": {}}, distribution="ubuntu2204")
    assert sorted(_networking_paths({"cilium": {}}, distribution="debian11")) == \
        ["/etc/systemd/system/run-cilium-cgroupv2.mount", "/etc/systemd/system/sys-fs-bpf.mount"]
    eni = _networking_paths({"cilium": {"ipam": "eni"}}, distribution="debian12", primary_interface="ens5")
    assert eni["/etc/systemd/network/75-eni-secondary.network"].content == \
        b"\n[Match]\nDriver=ena\nProperty=!INTERFACE=ens5\n\n[Link]\nUnmanaged=yes\n"
    assert "/etc/systemd/network/99-default.link" in eni
    with pytest.raises(ValueError, match="primary network interface is unknown"):
        _networking_paths({"cilium": {"ipam": "eni"}}, distribution="debian12")


def test_amazon_vpc_eni_rules_by_distribution():
    assert sorted(_networking_paths({"amazonvpc": {}}, distribution="debian11")) == \
        ["/etc/udev/rules.d/75-cloud-ifupdown.rules"]
    al2023 = _networking_paths({"amazonvpc": {}}, distribution="amazonlinux2023", primary_interface="ens5")
    assert al2023["/etc/udev/rules.d/99-vpc-policy-routes.rules"].content == b""
    assert al2023["/etc/udev/rules.d/99-vpc-policy-routes.rules"].restarts == ("udev-rules",)
    assert "/etc/systemd/network/75-eni-secondary.network" in al2023
    ubuntu = _networking_paths({"amazonvpc": {}}, distribution="ubuntu2404")
    assert "/etc/systemd/network/75-eni-secondary.network" not in ubuntu  # kops: Debian 12+ and AL2023 only
    assert "/etc/systemd/network/99-default.link" in ubuntu
    assert _networking_paths({"kuberouter": {}, "calico": {}, "flannel": {}, "kindnet": {}},
                             distribution="ubuntu2404") == {}


def test_cluster_networking_reaches_the_node_config():
    case = kops_golden.Case("containerdbuilder/simple", "tasks.yaml")
    completed, group = kops_golden.load_case(case)
    completed["spec"]["networking"] = {"cilium": {"ipam": "eni", "version": "v1.18.0"}}
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
    from ansible_collections.kubeops.kops.plugins.module_utils.pki import keystore
    keysets = {name: keystore.new_keyset(name) for name in keystore.keyset_names(completed)}
    document = nodeup_config.build_config(completed, group, keysets, completed["spec"]["configBase"])
    assert document["Networking"]["cilium"] == {"ipam": "eni"} and "UsesKubenet" not in document


def test_license_table_is_what_its_generator_writes_from_kops(tmp_path):
    """containerd_license.py is hack/gen_containerd_license.py's output for kops' license text (the goldens carry
    it; with KOPS_SOURCE, a kops checkout's own file)."""
    import pathlib
    import subprocess
    import sys
    import yaml
    repo = pathlib.Path(__file__).resolve().parents[3]
    source = pathlib.Path(os.environ["KOPS_SOURCE"]) if os.environ.get("KOPS_SOURCE") else tmp_path
    if not os.environ.get("KOPS_SOURCE"):
        tasks = yaml.safe_load_all((kops_golden.GOLDEN / "containerdbuilder/simple/tasks.yaml").read_text())
        text = [t for t in tasks if t and t.get("path") == "/usr/share/doc/containerd/apache.txt"][0]["contents"]
        license_path = tmp_path / "nodeup/pkg/model/resources/containerd-license.txt"
        license_path.parent.mkdir(parents=True)
        license_path.write_text(text)
    generated = subprocess.run([sys.executable, str(repo / "hack/gen_containerd_license.py"), "--kops", str(source)],
                               capture_output=True, text=True, check=True).stdout
    assert generated == (repo / "plugins/module_utils/nodeup/generated/containerd_license.py").read_text()


def test_gcp_credential_provider_installs_under_the_name_the_kubelet_config_gives():
    """kops' KubeletBuilder installs the auth-provider-gcp asset as gcp-credential-provider, the name its
    credential-provider.conf (and ours, nodeup/kubelet.py) gives the kubelet."""
    url = "https://artifacts.k8s.io/binaries/cloud-provider-gcp/v35.0.0/auth-provider-gcp/linux/amd64/auth-provider-gcp"
    config = {"Assets": {"amd64": [url]}}
    planned = assets.downloads(config, "amd64")
    assert [i.path for i in assets.installs(config, planned, {})] == ["/usr/local/bin/gcp-credential-provider"]
    assert "    name: gcp-credential-provider\n" in kubelet.GCP_CREDENTIAL_PROVIDER_CONFIG
