"""etcd on a control-plane node: the spec's exact version from its release tarball, pinned by sha256.

roles/protokube installs from the nodeup config's etcdClusters[].install (tasks/packages.yml); the plan is
built and checked here, and the role's templates are rendered with it. The role itself runs on test hosts
(tests/nodes/test_protokube_role.py).
"""

from __future__ import annotations

import json
import pathlib

import jinja2
import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig.generated import asset_data
from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import etcd, etcd_assets
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import etcd_members

from tests.unit.nodeconfig.test_config import _completed

REPO = pathlib.Path(__file__).resolve().parents[3]
RELEASES = "https://github.com/etcd-io/etcd/releases/download"


def _control_plane():
    completed, groups = _completed("minimal-aws")
    return completed, next(g for g in groups if g["spec"]["role"] == "Master")


def test_the_spec_version_is_installed_from_its_pinned_release():
    completed, group = _control_plane()
    clusters = etcd.etcd_clusters(completed, group, "s3://state/minimal-aws.example.com")
    expected = {
        "version": "3.6.12", "dir": "/opt/etcd-v3.6.12",
        "assets": {
            "amd64": "d2564bb50b58e52fbaf3bde4a9561a1d04e20cdc761f795580e4d615d5d41355@%s/v3.6.12/"
                     "etcd-v3.6.12-linux-amd64.tar.gz" % RELEASES,
            "arm64": "147afc710e164fa342ad8561bcca8903f3913bd9fb9ae0c83c857b1d868189cc@%s/v3.6.12/"
                     "etcd-v3.6.12-linux-arm64.tar.gz" % RELEASES,
        },
    }
    assert [(c["name"], c["install"]) for c in clusters] == [("main", expected), ("events", expected)]


def test_a_file_repository_serves_the_same_path_with_the_same_hash():
    completed, group = _control_plane()
    completed["spec"]["assets"] = {"fileRepository": "https://mirror.example.com/kops/"}
    install = etcd.etcd_clusters(completed, group, "s3://state/c")[0]["install"]
    assert install["assets"]["amd64"] == ("d2564bb50b58e52fbaf3bde4a9561a1d04e20cdc761f795580e4d615d5d41355@"
                                          "https://mirror.example.com/kops/etcd-io/etcd/releases/download/v3.6.12/"
                                          "etcd-v3.6.12-linux-amd64.tar.gz")


@pytest.mark.parametrize("version", ["3.5.31", "v3.5.6", "3.6.0"])
def test_every_pinned_version_installs_exactly(version):
    completed, group = _control_plane()
    for cluster in completed["spec"]["etcdClusters"]:
        cluster["version"] = version
    install = etcd.etcd_clusters(completed, group, "s3://state/c")[0]["install"]
    bare = version.lstrip("v")
    assert install["version"] == bare and install["dir"] == "/opt/etcd-v%s" % bare
    url = "%s/v%s/etcd-v%s-linux-arm64.tar.gz" % (RELEASES, bare, bare)
    assert install["assets"]["arm64"] == "%s@%s" % (asset_data.SHA256[url], url)


AMD64, ARM64 = "a" * 64, "b" * 64


@pytest.fixture
def sums_server():
    """etcd's release layout on 127.0.0.1 (a file repository mirroring github.com/etcd-io/etcd/releases):
    v3.5.2/SHA256SUMS as etcd publishes it (sha256sum lines, other files listed too); requests recorded."""
    import http.server
    import threading

    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            requests.append(self.path)
            if self.path != "/etcd-io/etcd/releases/download/v3.5.2/SHA256SUMS":
                self.send_error(404)
                return
            body = ("%s  etcd-v3.5.2-darwin-amd64.zip\n%s  etcd-v3.5.2-linux-amd64.tar.gz\n"
                    "%s  etcd-v3.5.2-linux-arm64.tar.gz\n" % ("c" * 64, AMD64, ARM64)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d" % server.server_address[1], requests
    server.shutdown()


def test_a_version_without_a_pinned_hash_is_read_from_the_release_sums(sums_server):
    """kops runs any etcd version: the hashes come from the SHA256SUMS etcd publishes beside the tarballs
    (through the file repository, as the tarballs), and the plan says so."""
    repository, requests = sums_server
    completed, group = _control_plane()
    completed["spec"]["assets"] = {"fileRepository": repository}
    completed["spec"]["etcdClusters"][0]["version"] = "3.5.2"
    install = etcd.etcd_clusters(completed, group, "s3://state/c")[0]["install"]
    base = "%s/etcd-io/etcd/releases/download/v3.5.2" % repository
    assert install["assets"] == {"amd64": "%s@%s/etcd-v3.5.2-linux-amd64.tar.gz" % (AMD64, base),
                                 "arm64": "%s@%s/etcd-v3.5.2-linux-arm64.tar.gz" % (ARM64, base)}
    assert install["sha256Source"] == "read from %s/SHA256SUMS" % base
    assert requests == ["/etcd-io/etcd/releases/download/v3.5.2/SHA256SUMS"]


def test_a_version_without_a_pinned_hash_takes_the_users_hashes():
    completed, group = _control_plane()
    completed["spec"]["etcdClusters"][0]["version"] = "3.6.99"
    given = {"3.6.99": {"amd64": AMD64, "arm64": ARM64.upper()}}

    def no_fetch(url):
        raise AssertionError("fetched %s although the hashes were given" % url)
    install = etcd_assets.install_plan("main", "3.6.99", given=given, fetch=no_fetch)
    assert install["assets"]["arm64"] == "%s@%s/v3.6.99/etcd-v3.6.99-linux-arm64.tar.gz" % (ARM64, RELEASES)
    assert install["sha256Source"] == "given in cloud_facts.etcd_sha256"
    kubeops = nodeup_config.kubeops_section(completed, group, "s3://state/c", etcd_sha256=given)
    assert kubeops["etcdClusters"][0]["install"]["assets"]["amd64"].startswith(AMD64 + "@")
    with pytest.raises(ValueError, match=r"cloud_facts.etcd_sha256\[3.6.99\]: give the sha256 .* linux-arm64"):
        etcd_assets.install_plan("main", "3.6.99", given={"3.6.99": {"amd64": AMD64}}, fetch=no_fetch)


def test_pinned_versions_are_never_fetched():
    def no_fetch(url):
        raise AssertionError("fetched %s for a pinned version" % url)
    install = etcd_assets.install_plan("main", "3.6.12", fetch=no_fetch)
    assert "sha256Source" not in install


def test_unreadable_sums_say_how_to_give_the_hash(sums_server):
    repository, _requests = sums_server
    completed, group = _control_plane()
    completed["spec"]["assets"] = {"fileRepository": repository}
    completed["spec"]["etcdClusters"][0]["version"] = "3.6.99"  # the file repository has no such release
    with pytest.raises(ValueError) as error:
        nodeup_config.kubeops_section(completed, group, "s3://state/c")
    message = str(error.value)
    assert message.startswith("etcd cluster main: etcd 3.6.99 has no pinned sha256 and cannot read %s/etcd-io/etcd/"
                              "releases/download/v3.6.99/SHA256SUMS" % repository)
    assert "cloud_facts.etcd_sha256" in message and "3.6.12" in message and "\n" not in message


def test_pinned_versions_are_the_releases_kops_supports():
    versions = etcd_assets.pinned_versions()
    assert versions[0] == "3.5.6" and versions[-1] == "3.6.12" and len(versions) == 39


def _render(template, **variables):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(REPO / "roles/protokube/templates")))
    env.filters["to_json"] = json.dumps
    return env.get_template(template).render(**variables)


def test_the_role_runs_each_member_from_its_versions_directory():
    completed, group = _control_plane()
    kubeops = nodeup_config.kubeops_section(completed, group, "s3://state/c")
    defaults = yaml.safe_load((REPO / "roles/protokube/defaults/main.yml").read_text())
    peers = {"a": "10.0.0.1"}
    members = etcd_members.node_clusters(kubeops, peers, defaults["protokube_etcd_install_override"])
    assert [m["etcd_dir"] for m in members] == ["/opt/etcd-v3.6.12", "/opt/etcd-v3.6.12"]
    unit = _render("etcd.service.j2", item=members[0], ansible_managed="managed", protokube_conf_dir="/etc/kubeops",
                   protokube_etcd_start_timeout=180)
    assert "\nExecStart=/opt/etcd-v3.6.12/etcd\n" in unit
    override = {"version": "3.4.30", "dir": "/opt/etcd-test", "assets": {"amd64": "%s@http://10.0.0.9/etcd.tgz" % ("a" * 64)}}
    members = etcd_members.node_clusters(kubeops, peers, override)
    assert {m["etcd_dir"] for m in members} == {"/opt/etcd-test"}


def test_the_role_no_longer_installs_a_distribution_etcd():
    tasks = yaml.safe_load((REPO / "roles/protokube/tasks/packages.yml").read_text())
    modules = [next(k for k in task if k.startswith(("ansible.builtin.", "kubeops.kops."))) for task in tasks]
    assert "ansible.builtin.apt" not in modules and "ansible.builtin.package" not in modules
    download = next(t for t in tasks if "ansible.builtin.get_url" in t)["ansible.builtin.get_url"]
    assert download["checksum"].startswith("sha256:{{")
