"""The module runner of tests/unit/modules, for the node modules' AWS options."""

from __future__ import annotations

from tests.unit.modules.conftest import run_module  # noqa: F401  # pylint: disable=unused-import
