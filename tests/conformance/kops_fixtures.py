"""Access to kops' own integration fixtures (../shared/conformance/kops)."""

from __future__ import annotations

import os
import pathlib
import re

import yaml

ROOT = pathlib.Path(os.environ.get("KOPS_CONFORMANCE_DIR", pathlib.Path(__file__).resolve().parents[2].parent
                                   / "shared" / "conformance" / "kops"))
CREATE_CLUSTER = ROOT / "create_cluster"
UPDATE_CLUSTER = ROOT / "update_cluster"


def _camel_to_snake(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z][a-z])", r"_\1\2", name).lower()


def options_map():
    return yaml.safe_load((ROOT / "options-map.yaml").read_text())


def create_cluster_cases():
    return sorted(p.name for p in CREATE_CLUSTER.iterdir() if (p / "options.yaml").exists())


def load_create_options(case):
    """options.yaml (kops Go field names) -> our snake-cased option dict, via options-map.yaml."""
    mapping = options_map()
    raw = yaml.safe_load((CREATE_CLUSTER / case / "options.yaml").read_text()) or {}
    return {mapping.get(key, _camel_to_snake(key)): value for key, value in raw.items()}


def load_expected(case):
    return [d for d in yaml.safe_load_all((CREATE_CLUSTER / case / "expected-v1alpha2.yaml").read_text()) if d]
