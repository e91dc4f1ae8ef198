"""Session-wide test servers (see tests/servers.py) and a clean memfs per test."""

from __future__ import annotations

import pytest

from tests import servers


@pytest.fixture(scope="session")
def moto_server():
    server = servers.MotoServer().start()
    yield server
    server.stop()


@pytest.fixture
def aws(moto_server, monkeypatch):
    """A fresh moto account, with boto3 pointed at it through AWS_ENDPOINT_URL."""
    moto_server.reset()
    servers.point_aws_at(moto_server.url, monkeypatch)
    return moto_server


@pytest.fixture(scope="session")
def gcs_server():
    try:
        binary = servers.FakeGCSServer.binary()
    except (ImportError, RuntimeError) as exc:
        pytest.skip("fake-gcs-server binary not available on this platform: %s" % exc)
    del binary
    server = servers.FakeGCSServer().start()
    yield server
    server.stop()


@pytest.fixture
def gcs(gcs_server, monkeypatch):
    """fake-gcs-server, with STORAGE_EMULATOR_HOST pointing at it (tests use their own bucket names)."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_server.url)
    return gcs_server


@pytest.fixture(autouse=True)
def _no_ambient_aws(monkeypatch):
    """No AWS credentials, profile or instance metadata from the machine: modules look cloud facts up when
    credentials resolve, so only tests that ask for them (the `aws` fixture) may have any."""
    servers.forget_ambient_aws(monkeypatch)


@pytest.fixture(autouse=True)
def _clean_memfs():
    from ansible_collections.kubeops.kops.plugins.module_utils.statestore import vfs
    vfs.reset_memfs()
    yield
    vfs.reset_memfs()
