"""Access to kops' own integration fixtures (../shared/conformance/kops)."""

from __future__ import annotations

import os
import pathlib
import re

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
# Where kops' fixtures live: $KOPS_CONFORMANCE_DIR, else the steering repo's
# shared/ beside this checkout (../shared), else the workplace's /work/shared.
CANDIDATES = [pathlib.Path(p) for p in (os.environ.get("KOPS_CONFORMANCE_DIR"),) if p] + [
    REPO.parent / "shared" / "conformance" / "kops", pathlib.Path("/work/shared/conformance/kops")]
ROOT = next((c for c in CANDIDATES if (c / "create_cluster").is_dir()), None)
if ROOT is None:
    raise RuntimeError("kops conformance fixtures not found; looked in %s (set KOPS_CONFORMANCE_DIR)"
                       % ", ".join(str(c) for c in CANDIDATES))
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
