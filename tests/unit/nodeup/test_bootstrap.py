"""The boot script in user data: small, quoted, fetches what the group needs, and runs bash -n clean."""

from __future__ import annotations

import subprocess

from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import bootstrap

from tests.unit.nodeup.test_config import _completed


def _script(**kwargs):
    completed, groups = _completed("minimal-aws")
    node = next(g for g in groups if g["metadata"]["name"] == "nodes")
    return bootstrap.bootstrap_user_data(completed, node, "s3://bucket/minimal-aws.example.com", **kwargs)


def test_script_is_valid_bash_under_the_ec2_limit(tmp_path):
    script = _script(nodeup_config_hash="ab" * 32, environment={"AWS_REGION": "us-test-1"})
    assert len(script.encode()) < bootstrap.USER_DATA_LIMIT
    path = tmp_path / "user_data"
    path.write_text(script)
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert "NODEUP_CONFIG=s3://bucket/minimal-aws.example.com/igconfig/node/nodes/nodeupconfig.yaml" in script
    assert "COLLECTION=kubeops.kops==0.1.0\n" in script
    assert "export AWS_REGION=us-test-1" in script
    assert "NODEUP_CONFIG_HASH=" + "ab" * 32 in script


def test_values_are_shell_quoted():
    script = _script(pip_args="--no-index --find-links http://10.0.0.1:8000/wheels",
                     collection="s3://bucket/kubeops-kops-0.1.0.tar.gz",
                     nodeup_vars={"nodeup_distro_packages": {"containerd": "containerd"}})
    # The boot venv has cryptography, PyYAML and botocore, so the roles install no packages for them.
    assert """NODEUP_VARS='{"nodeup_control_plane_python_packages": [], """ \
        """"nodeup_distro_packages": {"containerd": "containerd"}, "nodeup_etcd_peer_discovery": "aws", """ \
        """"nodeup_worker_python_packages": [], "protokube_api_dns_provider": "aws", """ \
        """"protokube_api_wait_timeout": 600, "protokube_bootstrap_packages": [], """ \
        """"protokube_bootstrap_python": "/opt/kubeops/venv/bin/python", "protokube_etcd_volume_provider": "aws"}'""" \
        in script
    assert "PIP_ARGS='--no-index --find-links http://10.0.0.1:8000/wheels'" in script
    assert "COLLECTION=s3://bucket/kubeops-kops-0.1.0.tar.gz" in script


def test_hash_changes_the_script_so_the_launch_template_changes():
    assert _script(nodeup_config_hash="a" * 64) != _script(nodeup_config_hash="b" * 64)
