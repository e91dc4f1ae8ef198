"""aws_models.py: botocore's models kept on disk between runs, read back as botocore itself would parse them."""

from __future__ import annotations

import botocore
import botocore.exceptions
import botocore.loaders
import botocore.session
import pytest

from ansible_collections.kubeops.kops.plugins.module_utils import aws_models
from ansible_collections.kubeops.kops.plugins.module_utils.api import validation_aws
from ansible_collections.kubeops.kops.plugins.module_utils.cloud import aws
from tests import botocore_models


@pytest.fixture(autouse=True)
def botocore_as_installed(monkeypatch):
    """botocore's Loader without the test process's sharing between loaders (tests/botocore_models.py): here a new
    loader must be a new run's, which has only the disk."""
    for name in botocore_models.SHARED_METHODS:
        method = getattr(botocore.loaders.Loader, name)
        if getattr(method, "shared_between_loaders", False):
            monkeypatch.setattr(botocore.loaders.Loader, name, method.__wrapped__)


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    """An empty user cache, and no user models (botocore's ~/.aws/models, which it reads HOME for on import)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(botocore.loaders.Loader, "CUSTOMER_DATA_PATH", str(tmp_path / "home" / ".aws" / "models"))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    return tmp_path / "cache"


def _fresh_loader(data_path=None):
    """A loader as a new run's process makes it (the process's loader is kept for the process)."""
    return aws_models._loader_class()(extra_search_paths=aws_models._search_paths(data_path))


def _asked_botocore(monkeypatch):
    """The names the cache asks botocore's own loader for from now on (what it did not find on disk).  botocore's
    method is wrapped as it is: in this test process it may answer from memory (tests/botocore_models.py), so what
    is counted is the cache's miss, not a JSON parse."""
    asked = []
    botocores = botocore.loaders.Loader.load_data_with_path

    def load_data_with_path(self, name):
        if isinstance(self, aws_models._loader_class()):
            asked.append(name)
        return botocores(self, name)
    monkeypatch.setattr(botocore.loaders.Loader, "load_data_with_path", load_data_with_path)
    return asked


def _botocore_reads(name):
    """What botocore's own loader returns for a name: the reference."""
    return botocore.loaders.Loader().load_data_with_path(name)[0]


def test_a_second_run_reads_the_parsed_model_from_the_cache_and_gets_botocores_own(cache_home, monkeypatch):
    first = _fresh_loader().load_service_model("ec2", "service-2")
    cached = list((cache_home / "kubeops-kops" / "botocore").glob("*/*.marshal"))
    assert {path.name for path in cached} >= {"ec2_2016-11-15_service-2.marshal"}
    asked = _asked_botocore(monkeypatch)
    second = _fresh_loader().load_service_model("ec2", "service-2")
    # Every file came from the cache; botocore is asked only for what it has no file for (an extras file EC2 lacks,
    # which is not cached: looking for it is a few stat calls).
    assert asked == ["ec2/2016-11-15/service-2.sdk-extras"]
    with pytest.raises(botocore.exceptions.DataNotFoundError):
        botocore.loaders.Loader().load_data_with_path(asked[0])
    assert second == first == botocore.loaders.Loader().load_service_model("ec2", "service-2")
    assert "t3.medium" in second["shapes"]["InstanceType"]["enum"]


def test_endpoints_and_tables_come_from_the_cache_too(cache_home, monkeypatch):
    _fresh_loader().load_data("endpoints")
    asked = _asked_botocore(monkeypatch)
    assert _fresh_loader().load_data("endpoints") == _botocore_reads("endpoints")
    assert asked == []


def test_a_client_made_from_cached_models_calls_aws(cache_home, aws, monkeypatch):
    _fresh_loader().load_service_model("ec2", "service-2")  # a first run parsed and cached them
    _fresh_loader().load_data("endpoints")
    asked = _asked_botocore(monkeypatch)
    session = botocore.session.get_session()
    session.register_component("data_loader", _fresh_loader())
    client = session.create_client("ec2", region_name="us-east-1", endpoint_url=aws.url,
                                   aws_access_key_id="testing", aws_secret_access_key="testing")
    zones = client.describe_availability_zones()["AvailabilityZones"]
    assert "us-east-1a" in [zone["ZoneName"] for zone in zones]
    assert "ec2/2016-11-15/service-2" not in asked and "endpoints" not in asked


def test_user_models_outside_the_installed_packages_turn_the_cache_off(cache_home, tmp_path, monkeypatch):
    models = tmp_path / "my-models"
    models.mkdir()
    loader = _fresh_loader(str(models))
    assert aws_models.cache_directory(loader.search_paths) is None
    assert loader.load_service_model("sts", "service-2") == botocore.loaders.Loader().load_service_model(
        "sts", "service-2")
    assert not (cache_home / "kubeops-kops" / "botocore").exists()
    # A data path that does not exist holds no models: the cache applies.
    assert aws_models.cache_directory(_fresh_loader(str(tmp_path / "absent")).search_paths) is not None
    # ~/.aws/models (botocore's customer data path) turns it off too, once it exists.
    (tmp_path / "home" / ".aws" / "models").mkdir(parents=True)
    assert aws_models.cache_directory(_fresh_loader().search_paths) is None


def test_another_botocore_version_reads_json_again(cache_home, monkeypatch):
    before = aws_models.cache_directory(_fresh_loader().search_paths)
    monkeypatch.setattr(botocore, "__version__", "0.0.1")
    assert aws_models.cache_directory(_fresh_loader().search_paths) != before


def test_a_broken_cache_file_is_parsed_again_and_rewritten(cache_home, monkeypatch):
    _fresh_loader().load_data("partitions")
    [path] = (cache_home / "kubeops-kops" / "botocore").glob("*/partitions.marshal")
    path.write_bytes(path.read_bytes()[:100])  # another writer's half file, or a disk that filled up
    asked = _asked_botocore(monkeypatch)
    assert _fresh_loader().load_data("partitions") == _botocore_reads("partitions")
    assert asked == ["partitions"]
    asked.clear()
    assert _fresh_loader().load_data("partitions") == _botocore_reads("partitions")
    assert asked == []


def test_a_cache_that_cannot_be_written_costs_time_not_the_result(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the cache's directory cannot be made under a file
    monkeypatch.setattr(botocore.loaders.Loader, "CUSTOMER_DATA_PATH", str(tmp_path / "home" / ".aws" / "models"))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    assert _fresh_loader().load_data("sdk-default-configuration") == _botocore_reads("sdk-default-configuration")


def test_one_loader_per_process_and_data_path():
    assert aws_models.loader() is aws_models.loader()
    assert aws_models.loader("/nowhere") is not aws_models.loader()


def test_the_collections_sessions_use_the_process_loader(monkeypatch):
    """cloud/aws.py's sessions and api/validation_aws.py's machine-type table ask the same loader: EC2's model is
    parsed (or read from the cache) once per run, not once for each."""
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert aws.session("us-east-1")._session.get_component("data_loader") is aws_models.loader()
    asked = []
    process_loader = aws_models.loader()
    monkeypatch.setattr(aws_models, "loader", lambda data_path=None: asked.append(data_path) or process_loader)
    monkeypatch.setattr(validation_aws, "_INSTANCE_TYPES", set())
    assert "t3.medium" in validation_aws.ec2_instance_types()
    assert asked == [None]
