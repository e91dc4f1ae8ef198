"""Boot artefacts: what update cluster uploads for the nodes, and the node's downloader that checks them.

The collection tarball is built from this checkout; the wheels are small stand-ins
(named as pip names wheels) except in the last test, which installs the real
pinned wheels offline into a venv, as the boot script does.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import pathlib
import subprocess
import sys
import tarfile

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import boot_fetch
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

from tests.unit.nodeconfig.test_config import _completed

WHEELS = ("ansible_core-2.19.14-py3-none-any.whl",
          "pyyaml-6.0.3-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl",
          "pyyaml-6.0.3-cp312-cp312-manylinux2014_aarch64.manylinux_2_17_aarch64.manylinux_2_28_aarch64.whl",
          "cryptography-50.0.2-cp311-abi3-manylinux_2_34_x86_64.whl")
COLLECTION = ("kubeops-kops-0.1.0.tar.gz", b"collection bytes")


@pytest.fixture()
def wheels(tmp_path):
    directory = tmp_path / "wheels"
    directory.mkdir()
    for name in WHEELS:
        (directory / name).write_bytes(("wheel " + name).encode())
    return directory


def _artifacts(tmp_path, wheels, cluster="minimal-aws"):
    completed, _groups = _completed(cluster)
    base = "file://%s/state/%s" % (tmp_path, completed["metadata"]["name"])
    return boot_artifacts.build(completed, base, collection=COLLECTION, wheels_dir=wheels), base


def test_manifest_pins_every_object_by_sha256_at_a_content_addressed_path(tmp_path, wheels):
    boot, base = _artifacts(tmp_path, wheels)
    manifest = json.loads(boot.manifest)
    assert manifest["base"] == base
    assert manifest["collection"] == {"file": COLLECTION[0], "sha256": hashlib.sha256(COLLECTION[1]).hexdigest(),
                                      "path": "boot/sha256/%s/%s" % (hashlib.sha256(COLLECTION[1]).hexdigest(),
                                                                     COLLECTION[0])}
    assert sorted(w["file"] for w in manifest["wheels"]) == sorted(WHEELS)
    for wheel in manifest["wheels"]:
        assert wheel["sha256"] == hashlib.sha256(("wheel " + wheel["file"]).encode()).hexdigest()
        assert wheel["path"] == "boot/sha256/%s/%s" % (wheel["sha256"], wheel["file"])
    assert boot.manifest_sha256 == hashlib.sha256(boot.manifest).hexdigest()
    assert boot.manifest_url == "%s/boot/sha256/%s/manifest.json" % (base, boot.manifest_sha256)


def test_upload_writes_what_is_missing_once_and_a_second_run_writes_nothing(tmp_path, wheels):
    boot, base = _artifacts(tmp_path, wheels)
    store = vfs.open_store(base)
    assert len(boot.missing(store)) == len(WHEELS) + 2  # and check mode stops here: nothing written
    assert not (tmp_path / "state").exists()
    written = boot.upload(store)
    assert len(written) == len(WHEELS) + 2 and written[-1] == boot.manifest_path
    assert (tmp_path / "state" / "minimal-aws.example.com" / boot.manifest_path).read_bytes() == boot.manifest
    again, _base = _artifacts(tmp_path, wheels)
    assert again.manifest_sha256 == boot.manifest_sha256
    assert again.upload(vfs.open_store(base)) == []


def test_file_repository_store_url_is_the_base_and_https_is_not():
    completed, _groups = _completed("minimal-aws")
    completed["spec"]["assets"] = {"fileRepository": "s3://mirror/kops/"}
    assert boot_artifacts.base_url(completed, "s3://state/c") == "s3://mirror/kops"
    completed["spec"]["assets"] = {"fileRepository": "https://mirror.example.com/kops"}
    assert boot_artifacts.base_url(completed, "s3://state/c") == "s3://state/c"


def test_collection_tarball_is_deterministic_and_installs_offline(tmp_path):
    name, data = boot_artifacts.collection_tarball()
    boot_artifacts._BUILT.clear()  # pylint: disable=protected-access  # a second, independent build
    assert boot_artifacts.collection_tarball() == (name, data)
    assert name == "kubeops-kops-0.1.0.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    assert {m.mtime for m in members} == {0} and {m.uid for m in members} == {0}
    assert "playbooks/nodeup.yml" in {m.name for m in members} and "MANIFEST.json" in {m.name for m in members}
    assert not [m.name for m in members if m.name.startswith((".venv", "build/", "hack/"))]
    tarball = tmp_path / name
    tarball.write_bytes(data)
    galaxy = pathlib.Path(sys.executable).with_name("ansible-galaxy")
    result = subprocess.run([str(galaxy), "collection", "install", "--offline", "--force", "-p", str(tmp_path / "c"), str(tarball)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    installed = tmp_path / "c/ansible_collections/kubeops/kops"
    assert (installed / "roles/protokube/tasks/packages.yml").is_file()
    # A controller that installed the collection (from Galaxy, or this tarball) ships exactly what FILES.json lists.
    again_name, again = boot_artifacts.collection_tarball(installed)
    assert again_name == name and again == boot_artifacts.collection_tarball(installed)[1]
    with tarfile.open(fileobj=io.BytesIO(again)) as tar:
        assert {m.name for m in tar.getmembers() if m.isfile()} == {m.name for m in members if m.isfile()}
    (tmp_path / "again.tar.gz").write_bytes(again)
    result = subprocess.run([str(galaxy), "collection", "install", "--offline", "--force", "-p", str(tmp_path / "d"),
                             str(tmp_path / "again.tar.gz")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "d/ansible_collections/kubeops/kops/playbooks/nodeup.yml").is_file()


@pytest.mark.parametrize("name, python, machine, fits", [
    (WHEELS[0], (3, 11), "x86_64", True),
    (WHEELS[1], (3, 11), "x86_64", True),
    (WHEELS[1], (3, 12), "x86_64", False),
    (WHEELS[1], (3, 11), "aarch64", False),
    (WHEELS[2], (3, 12), "aarch64", True),
    (WHEELS[3], (3, 13), "x86_64", True),  # abi3 from 3.11 up
    (WHEELS[3], (3, 10), "x86_64", False),
    ("six-1.17.0-py2.py3-none-any.whl", (3, 12), "aarch64", True),
])
def test_a_node_downloads_only_the_wheels_its_python_and_machine_install(name, python, machine, fits):
    assert boot_fetch.wheel_fits(name, python, machine) is fits


def _node_target():
    return "cp%d%d" % sys.version_info[:2], __import__("platform").machine()


def test_node_fetches_the_manifest_and_its_files_checked(tmp_path, wheels):
    boot, base = _artifacts(tmp_path, wheels)
    boot.upload(vfs.open_store(base))
    node = tmp_path / "node"
    assert boot_fetch.main(["boot_fetch.py", "manifest", boot.manifest_url, boot.manifest_sha256, str(node)]) == 0
    assert (node / "collection.tar.gz").read_bytes() == COLLECTION[1]
    fitting = sorted(n for n in WHEELS if boot_fetch.wheel_fits(n))
    assert sorted(p.name for p in (node / "wheels").iterdir()) == fitting
    if _node_target() == ("cp311", "x86_64"):
        assert len(fitting) == 3


def test_a_tampered_artefact_is_refused_and_not_written(tmp_path, wheels, capsys):
    boot, base = _artifacts(tmp_path, wheels)
    boot.upload(vfs.open_store(base))
    stored = tmp_path / "state" / "minimal-aws.example.com" / json.loads(boot.manifest)["collection"]["path"]
    stored.write_bytes(b"something else")
    node = tmp_path / "node"
    assert boot_fetch.main(["boot_fetch.py", "manifest", boot.manifest_url, boot.manifest_sha256, str(node)]) == 3
    assert "not the pinned %s: refused" % hashlib.sha256(COLLECTION[1]).hexdigest() in capsys.readouterr().err
    assert not (node / "collection.tar.gz").exists() and not list((node / "wheels").iterdir())


def test_a_manifest_other_than_the_pinned_one_is_refused(tmp_path, wheels):
    boot, base = _artifacts(tmp_path, wheels)
    boot.upload(vfs.open_store(base))
    assert boot_fetch.main(["boot_fetch.py", "manifest", boot.manifest_url, "0" * 64, str(tmp_path / "node")]) == 3
    assert not (tmp_path / "node" / "manifest.json").exists()


def test_s3_signature_is_botocores(monkeypatch):
    botocore_auth = pytest.importorskip("botocore.auth")
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    now = datetime.datetime(2026, 11, 23, 12, 0, 0, tzinfo=datetime.timezone.utc)
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda *args, **kwargs: now.replace(tzinfo=None))
    credentials = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")
    url, headers = boot_fetch.s3_request("my-bucket", "c/boot/sha256/ab/x y+z.whl", "eu-west-1", credentials, now=now)
    assert url == "https://s3.eu-west-1.amazonaws.com/my-bucket/c/boot/sha256/ab/x%20y%2Bz.whl"
    request = AWSRequest(method="GET", url=url)
    botocore_auth.S3SigV4Auth(Credentials(*credentials), "s3", "eu-west-1").add_auth(request)
    assert headers["Authorization"] == request.headers["Authorization"]
    assert headers["x-amz-security-token"] == "session-token"


def test_node_reads_an_s3_store_without_boto3(aws, tmp_path, monkeypatch):
    import boto3
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="boot-state")
    boto3.client("s3", region_name="us-east-1").put_object(Bucket="boot-state", Key="c/boot/file", Body=b"payload")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    dest = tmp_path / "file"
    boot_fetch.fetch("s3://boot-state/c/boot/file", hashlib.sha256(b"payload").hexdigest(), str(dest))
    assert dest.read_bytes() == b"payload"
    with pytest.raises(boot_fetch.Refused):
        boot_fetch.fetch("s3://boot-state/c/boot/file", "1" * 64, str(tmp_path / "other"))
    assert not (tmp_path / "other").exists()


def test_node_reads_a_gs_store_without_google_auth(gcs, tmp_path):
    gcs.create_bucket("boot-gs")
    vfs.open_store("gs://boot-gs/c").write("boot/file", b"gs payload")
    dest = tmp_path / "file"
    boot_fetch.fetch("gs://boot-gs/c/boot/file", hashlib.sha256(b"gs payload").hexdigest(), str(dest))
    assert dest.read_bytes() == b"gs payload"


def test_real_wheels_install_offline_as_the_boot_script_does(tmp_path):
    """The pinned closure for this machine's Python installs with pip --no-index from what a node downloads."""
    wheelhouse = boot_artifacts.wheelhouse()
    completed, _groups = _completed("minimal-aws")
    base = "file://%s/state/c" % tmp_path
    boot = boot_artifacts.build(completed, base, collection=COLLECTION, wheels_dir=wheelhouse)
    boot.upload(vfs.open_store(base))
    node = tmp_path / "node"
    assert boot_fetch.main(["boot_fetch.py", "manifest", boot.manifest_url, boot.manifest_sha256, str(node)]) == 0
    downloaded = sorted((node / "wheels").iterdir())
    print("a %s %s node downloads %d wheels, %d bytes" % (_node_target() + (len(downloaded),
                                                          sum(p.stat().st_size for p in downloaded))))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(tmp_path / "venv/bin/python"), "install", "-q",
                             "--no-index", "--find-links", str(node / "wheels")] + [str(p) for p in downloaded],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    check = subprocess.run([str(tmp_path / "venv/bin/python"), "-c",
                            "import ansible, boto3, cryptography, yaml, google.auth, requests; print(ansible.__version__)"],
                           capture_output=True, text=True, check=False)
    assert check.stdout.strip() == "2.19.14", check.stderr


def test_a_source_tree_is_built_once_until_it_changes(tmp_path, monkeypatch):
    """The galaxy build (a subprocess, a second or more) runs once per state of the tree, not once per run."""
    tree = tmp_path / "collection"
    (tree / "plugins").mkdir(parents=True)
    (tree / "galaxy.yml").write_text("namespace: kubeops\nname: kops\nversion: 0.1.0\n")
    (tree / "plugins" / "a.py").write_text("A = 1\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    builds = []

    def galaxy(_verb, directory, out):
        builds.append(directory)
        tarball = pathlib.Path(out) / "kubeops-kops-0.1.0.tar.gz"
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for path in sorted(pathlib.Path(directory).rglob("*.py")):
                data = path.read_bytes()
                info = tarfile.TarInfo(str(path.relative_to(directory)))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        tarball.write_bytes(raw.getvalue())
        return str(tarball)

    monkeypatch.setattr(boot_artifacts, "_ansible", galaxy)
    first = boot_artifacts._galaxy_build(tree)
    assert boot_artifacts._galaxy_build(tree) == first and len(builds) == 1
    (tree / "plugins" / "a.py").write_text("A = 22\n")
    changed = boot_artifacts._galaxy_build(tree)
    assert len(builds) == 2 and changed[1] != first[1]
    assert boot_artifacts._galaxy_build(tree) == changed and len(builds) == 2
