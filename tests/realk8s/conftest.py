"""The test hosts' fixtures (tests/nodes/conftest.py) for the real-cluster tests."""

from tests.nodes.conftest import host_image, host_pool  # noqa: F401  # pylint: disable=unused-import
