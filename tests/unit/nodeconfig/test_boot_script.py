"""The user data: a bash script that downloads only what its manifest pins, kops' MIME multipart and compression."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import subprocess
import time

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import boot_artifacts, bootstrap
from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
from ansible_collections.kubeops.kops.plugins.module_utils.providers.aws.provider import PROVIDER as AWS

from tests.unit.nodeconfig.test_config import _completed

BASE = "s3://bucket/minimal-aws.example.com"
MANIFEST = (BASE + "/boot/sha256/%s/manifest.json" % ("cd" * 32), "cd" * 32)
ADDITIONAL = [{"name": "myscript.sh", "type": "text/x-shellscript",
               "content": '#!/bin/sh\necho "nodes: The time is now $(date -R)!" | tee /root/output.txt\n'}]


def _group(groups, name):
    return next(g for g in groups if g["metadata"]["name"] == name)


def _user_data(name="nodes", base=BASE, manifest=MANIFEST, **spec):
    completed, groups = _completed("minimal-aws")
    group = _group(groups, name)
    group["spec"].update(spec)
    return bootstrap.bootstrap_user_data(completed, group, base, "ab" * 32, manifest,
                                         environment={"AWS_REGION": "us-test-1"})


@pytest.mark.parametrize("group", ["nodes", "master-us-test-1a"])
def test_script_is_valid_bash_under_the_ec2_limit_and_pins_what_it_fetches(group, tmp_path):
    script = _user_data(group)
    size = len(script.encode())
    compressed = len(_user_data(group, compressUserData=True).encode())
    print("user data of %s: %d bytes, %d with compressUserData" % (group, size, compressed))
    assert size < AWS.user_data_limit[0] and compressed < size
    path = tmp_path / "user_data"
    path.write_text(script)
    subprocess.run(["bash", "-n", str(path)], check=True)
    role_dir = "node/nodes" if group == "nodes" else "control-plane/master-us-test-1a"
    assert "NODEUP_CONFIG=%s/igconfig/%s/nodeupconfig.yaml\n" % (BASE, role_dir) in script
    assert "NODEUP_CONFIG_HASH=" + "ab" * 32 + "\n" in script
    assert "BOOT_MANIFEST=%s\nBOOT_MANIFEST_HASH=%s\n" % MANIFEST in script
    assert "export AWS_REGION=us-test-1" in script
    # Nothing from an index: pip only from the downloaded wheels, the collection only from its tarball.
    assert "pip\" install -q --no-index --find-links" in script and "collection install --offline" in script
    assert "pypi" not in script.lower() and "galaxy.ansible.com" not in script and "kubeops.kops==" not in script


def test_a_config_or_manifest_change_changes_the_launch_template():
    assert _user_data() != _user_data(manifest=(MANIFEST[0], "ef" * 32))
    completed, groups = _completed("minimal-aws")
    with pytest.raises(ValueError, match="needs the nodeup config's sha256 and the boot manifest"):
        bootstrap.bootstrap_user_data(completed, _group(groups, "nodes"), BASE, "ab" * 32, None)


def test_compress_user_data_gzips_and_base64s_the_embedded_downloader_as_kops_does_its_config():
    script = _user_data(compressUserData=True)
    encoded = next(line for line in script.splitlines() if "| base64 -d | gzip -d >" in line).split('"')[1]
    assert gzip.decompress(base64.b64decode(encoded)).decode() == bootstrap.fetcher_source()
    assert "__EOF_BOOT_FETCH" not in script and "__EOF_BOOT_FETCH" in _user_data()
    assert _user_data(compressUserData=True) == script  # no timestamp in the gzip header


def test_additional_user_data_is_kops_mime_multipart_script_first():
    user_data = _user_data(additionalUserData=ADDITIONAL)
    script = _user_data()
    # kops' AWSMultipartMIME (fixture data/aws_launch_template_*_user_data of bastionadditional_user-data
    # and complex), with Go's multipart CRLFs.
    part = ('--MIMEBOUNDARY\r\nContent-Disposition: attachment; filename="%s"\r\nContent-Transfer-Encoding: 7bit\r\n'
            'Content-Type: text/x-shellscript\r\nMime-Version: 1.0\r\n\r\n%s\r\n')
    assert user_data == ('Content-Type: multipart/mixed; boundary="MIMEBOUNDARY"\r\nMIME-Version: 1.0\r\n\r\n'
                         + part % ("nodeup.sh", script) + part % ("myscript.sh", ADDITIONAL[0]["content"])
                         + "--MIMEBOUNDARY--\r\n")
    import email
    message = email.message_from_string(user_data)
    assert [(p.get_filename(), p.get_content_type()) for p in message.get_payload()] == [
        ("nodeup.sh", "text/x-shellscript"), ("myscript.sh", "text/x-shellscript")]
    assert message.get_payload()[0].get_payload() == script


def test_bastion_user_data_is_only_its_additional_parts():
    completed, groups = _completed("minimal-aws")
    bastion = {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup", "metadata": {"name": "bastions"},
               "spec": {"role": "Bastion"}}
    assert bootstrap.bootstrap_user_data(completed, bastion, BASE) is None
    bastion["spec"]["additionalUserData"] = ADDITIONAL
    user_data = bootstrap.bootstrap_user_data(completed, bastion, BASE)
    assert "nodeup.sh" not in user_data and 'filename="myscript.sh"' in user_data
    bastion["spec"]["additionalUserData"] = [{"name": "x.sh", "content": "x"}]
    with pytest.raises(ValueError, match=r"additionalUserData\[0\]: type required"):
        bootstrap.bootstrap_user_data(completed, bastion, BASE)


def _run_fetch(tmp_path, user_data, commands):
    """Source the user data (defines its functions, runs nothing) and run commands with INSTALL_DIR in tmp_path."""
    path = tmp_path / "user_data"
    path.write_text(user_data)
    program = 'sysctl() { :; }\nsource "$1"\nset +o errexit\nINSTALL_DIR="$2"\nmkdir -p "$2/boot" "$2/conf"\n' + commands
    return subprocess.run(["bash", "-c", program, "boot", str(path), str(tmp_path / "opt")],
                          capture_output=True, text=True, check=False, timeout=120)


def test_the_script_downloads_and_checks_every_artefact_and_refuses_a_tampered_one(tmp_path):
    completed, groups = _completed("minimal-aws")
    base = "file://%s/state/%s" % (tmp_path, completed["metadata"]["name"])
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "six-1.17.0-py2.py3-none-any.whl").write_bytes(b"six")
    boot = boot_artifacts.build(completed, base, collection=("kubeops-kops-0.1.0.tar.gz", b"tarball"),
                                wheels_dir=wheels)
    boot.upload(vfs.open_store(base))
    config = tmp_path / "state" / completed["metadata"]["name"] / "igconfig/node/nodes/nodeupconfig.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("config")
    user_data = bootstrap.bootstrap_user_data(completed, _group(groups, "nodes"), base,
                                              hashlib.sha256(b"config").hexdigest(),
                                              (boot.manifest_url, boot.manifest_sha256))
    fetch_all = ('write_fetcher\nretry fetch manifest "$BOOT_MANIFEST" "$BOOT_MANIFEST_HASH" "$INSTALL_DIR/boot"\n'
                 'echo "manifest $?"\nretry fetch file "$NODEUP_CONFIG" "$NODEUP_CONFIG_HASH" '
                 '"$INSTALL_DIR/conf/nodeupconfig.yaml"\necho "config $?"\n')
    result = _run_fetch(tmp_path, user_data, fetch_all)
    assert "manifest 0\nconfig 0\n" == result.stdout, result.stderr
    opt = tmp_path / "opt"
    assert (opt / "boot/collection.tar.gz").read_bytes() == b"tarball"
    assert (opt / "boot/wheels/six-1.17.0-py2.py3-none-any.whl").read_bytes() == b"six"
    assert (opt / "conf/nodeupconfig.yaml").read_text() == "config"
    assert json.loads((opt / "boot/manifest.json").read_bytes()) == json.loads(boot.manifest)

    # A tampered wheel in the store: refused at once (no retries), and nothing is written under its name.
    (tmp_path / "state" / completed["metadata"]["name"] / json.loads(boot.manifest)["wheels"][0]["path"]).write_bytes(b"x")
    (opt / "boot/wheels/six-1.17.0-py2.py3-none-any.whl").unlink()
    started = time.monotonic()
    result = _run_fetch(tmp_path, user_data, fetch_all.replace('"config $?"', '"config $?"; exit 0'))
    assert time.monotonic() - started < 9  # retry waits 10 s between attempts: a refusal is final
    assert result.stdout.startswith("manifest 3\n")
    assert "not the pinned %s: refused" % hashlib.sha256(b"six").hexdigest() in result.stderr
    assert not (opt / "boot/wheels/six-1.17.0-py2.py3-none-any.whl").exists()

    # A store whose config changed after the template was made is refused, as kops refuses its NodeupConfigHash.
    config.write_text("changed")
    result = _run_fetch(tmp_path, user_data, 'write_fetcher\nretry fetch file "$NODEUP_CONFIG" "$NODEUP_CONFIG_HASH" '
                                             '"$INSTALL_DIR/conf/other.yaml"\necho "config $?"\n')
    assert result.stdout == "config 3\n" and not (opt / "conf/other.yaml").exists()


def test_nodeup_vars_are_shell_quoted_and_the_boot_venv_needs_no_system_python_packages():
    completed, groups = _completed("minimal-aws")
    script = bootstrap.bootstrap_user_data(completed, _group(groups, "nodes"), BASE, "ab" * 32, MANIFEST,
                                           nodeup_vars={"nodeup_distro_packages": {"containerd": "containerd"}})
    # The boot venv has cryptography, PyYAML and requests (the pinned wheels): the roles install no packages for them.
    # The bootstrap service runs on the boot venv's Python too.
    assert """NODEUP_VARS='{"nodeup_control_plane_python_packages": [], """ \
        """"nodeup_distro_packages": {"containerd": "containerd"}, "nodeup_etcd_peer_discovery": "aws", """ \
        """"nodeup_node_python_packages": [], "nodeup_worker_python_packages": [], "protokube_api_dns_provider": "aws", "protokube_api_wait_timeout": 600, """ \
        """"protokube_bootstrap_packages": [], "protokube_bootstrap_python": "/opt/kubeops/venv/bin/python", """ \
        """"protokube_channel_python_packages": [], "protokube_etcd_volume_provider": "aws"}'""" in script


@pytest.mark.parametrize("provider", ["aws", "gce"])
def test_control_plane_nodes_find_etcd_and_keep_api_internal_in_their_own_cloud(provider):
    """A control-plane node reads its etcd peers and volume from its cloud's API and writes api.internal to its DNS:
    EC2 and Route53 on AWS, Compute and Cloud DNS on GCE (the roles' *_provider variables)."""
    completed, groups = _completed("minimal-aws")
    completed["spec"]["cloudProvider"] = provider
    script = bootstrap.boot_script(completed, _group(groups, "master-us-test-1a"), BASE, "ab" * 32, MANIFEST)
    nodeup_vars = json.loads(script.split("NODEUP_VARS='", 1)[1].split("'\n", 1)[0])
    assert {nodeup_vars[k] for k in ("nodeup_etcd_peer_discovery", "protokube_etcd_volume_provider",
                                     "protokube_api_dns_provider")} == {provider}


def test_workers_ask_the_bootstrap_service_for_their_config_and_never_name_it_in_the_store(tmp_path):
    """kops' ConfigServer: an AWS worker's user data carries the service, its region and the cluster CA, and pins
    the config's hash; it names no igconfig/ path. The control plane (and a worker the service cannot verify,
    on GCE) still reads its config from the store."""
    from ansible_collections.kubeops.kops.plugins.module_utils.nodeconfig import config as nodeup_config
    from tests.unit.nodeconfig.test_config import _keysets
    completed, groups = _completed("minimal-aws")
    keysets = _keysets(completed)
    documents = {g["metadata"]["name"]: nodeup_config.build_config(completed, g, keysets, BASE) for g in groups}
    settings = bootstrap.config_server(documents["nodes"], sts_endpoint="http://sts.example:5000/")
    assert settings == {"server": "https://kops-controller.internal.minimal-aws.example.com:3988",
                        "region": "us-test-1", "caCert": documents["nodes"]["CAs"]["kubernetes-ca"],
                        "stsEndpoint": "http://sts.example:5000/"}
    assert bootstrap.config_server(documents["master-us-test-1a"]) is None
    gce_worker = dict(documents["nodes"], kubeops=dict(documents["nodes"]["kubeops"]))
    del gce_worker["kubeops"]["bootstrapService"]
    assert bootstrap.config_server(gce_worker) is None

    script = bootstrap.bootstrap_user_data(completed, _group(groups, "nodes"), BASE, "ab" * 32, MANIFEST,
                                           environment={"AWS_REGION": "us-test-1"}, config_server_settings=settings)
    (tmp_path / "user_data").write_text(script)
    subprocess.run(["bash", "-n", str(tmp_path / "user_data")], check=True)
    assert "igconfig" not in script and "NODEUP_CONFIG=" not in script
    assert "NODEUP_CONFIG_HASH=" + "ab" * 32 + "\n" in script and "  RETRY_ATTEMPTS=60 retry fetch_config\n" in script
    carried = json.loads(subprocess.run(["bash", "-c", 'sysctl() { :; }; source "$1"; printf %s "$CONFIG_SERVER"', "b",
                                         str(tmp_path / "user_data")], capture_output=True, text=True,
                                        check=True).stdout)
    assert carried == settings
    size = len(script.encode())
    print("worker user data with the bootstrap service's settings: %d bytes" % size)
    assert size < AWS.user_data_limit[0]


def test_fetch_config_runs_the_service_client_with_the_pinned_hash_and_retries_only_an_unreachable_service(tmp_path):
    """The boot script's fetch_config step with a stand-in for the venv's python: what it is asked, and that exit 3
    (refused, or not the pinned config) stops at once while exit 1 (no service yet) is asked again."""
    settings = {"server": "https://kops-controller.internal.c:3988", "region": "us-test-1", "caCert": "PEM"}
    completed, groups = _completed("minimal-aws")
    script = bootstrap.bootstrap_user_data(completed, _group(groups, "nodes"), BASE, "ab" * 32, MANIFEST,
                                           config_server_settings=settings)
    python = tmp_path / "opt" / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/bash\necho "$PYTHONPATH $*" >> "$(dirname "$0")/calls"\nexit "${EXIT_CODE}"\n')
    python.chmod(0o755)
    started = time.monotonic()
    result = _run_fetch(tmp_path, script, 'EXIT_CODE=3 RETRY_ATTEMPTS=60 retry fetch_config\necho "config $?"\n')
    assert result.stdout == "config 3\n" and time.monotonic() - started < 9, result.stderr
    calls = (python.parent / "calls").read_text().splitlines()
    opt = tmp_path / "opt"
    assert calls == ["%s/collections -m ansible_collections.kubeops.kops.plugins.module_utils.nodeup.bootstrap_service "
                     "node-config %s/conf/config-server.json %s %s/conf/nodeupconfig.yaml" % (opt, opt, "ab" * 32, opt)]
    assert json.loads((opt / "conf/config-server.json").read_text()) == settings
    result = _run_fetch(tmp_path, script.replace("sleep 10", "sleep 0"),
                        'EXIT_CODE=1 RETRY_ATTEMPTS=3 retry fetch_config\necho "config $?"\n')
    assert result.stdout == "config 1\n" and len((python.parent / "calls").read_text().splitlines()) == 4
