"""lookup kubeops.kops.state_store: reads cluster files on the controller, never private keys."""

from __future__ import annotations

import subprocess

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs

from tests.integration.conftest import BIN, REPO, ansible_env

PATH = "igconfig/node/nodes/nodeupconfig.yaml"


@pytest.fixture
def store(tmp_path):
    url = "file://%s" % tmp_path
    store = vfs.open_store(url)
    store.write("k8s.example.com/%s" % PATH, b"ClusterName: k8s.example.com\n")
    store.write("k8s.example.com/pki/private/kubernetes-ca/keyset.yaml", b"PRIVATE")
    return url


def _lookup(arguments):
    expression = "{{ lookup('kubeops.kops.state_store', %s) }}" % arguments
    return subprocess.run([str(BIN / "ansible"), "localhost", "-m", "ansible.builtin.debug", "-a",
                           "msg=%s" % expression], env=ansible_env(REPO / "build" / "collections"),
                          capture_output=True, text=True, timeout=120, check=False)


def test_reads_by_store_and_name_or_by_config_base(store):
    for arguments in ("'%s', state_store='%s', cluster_name='k8s.example.com'" % (PATH, store),
                      "'%s', config_base='%s/k8s.example.com'" % (PATH, store)):
        proc = _lookup(arguments)
        assert proc.returncode == 0 and "ClusterName: k8s.example.com" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("term, message", [
    ("pki/private/kubernetes-ca/keyset.yaml", "private keys stay in the store"),
    ("igconfig/../pki/private/kubernetes-ca/keyset.yaml", "private keys stay in the store"),
    ("igconfig/node/other/nodeupconfig.yaml", "run kubeops.kops.cluster_update first"),
])
def test_refuses_keys_and_names_missing_files(store, term, message):
    proc = _lookup("'%s', config_base='%s/k8s.example.com'" % (term, store))
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
    assert "PRIVATE" not in proc.stdout + proc.stderr
