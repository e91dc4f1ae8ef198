"""Access to kops' own integration fixtures (../shared/conformance/kops)."""

from __future__ import annotations

import json
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


# ---- kops' update_cluster fixtures: the 9 under ROOT (CI), or all of a kops checkout's (opt-in, KOPS_SOURCE)

SOURCE_UPDATE_CLUSTER = "tests/integration/update_cluster"
# The world kops' update_cluster tests run in (its pkg/testutils/integrationtestharness.go), as our cloud facts: the
# shared VPC, its three subnets and egress-only gateway, the three hosted zones.  kops' mock GCE DNS has one
# managed zone for example.com, named "1".
HARNESS_FACTS = {
    "vpcs": {"vpc-12345678": "172.20.0.0/16"},
    "subnets": {
        "subnet-12345678": {"cidr": "172.20.32.0/19", "zone": "us-test-1a", "vpc": "vpc-12345678"},
        "subnet-abcdef": {"cidr": "172.20.4.0/22", "zone": "us-test-1a", "vpc": "vpc-12345678"},
        "subnet-b2345678": {"cidr": "172.20.8.0/22", "zone": "us-test-1b", "vpc": "vpc-12345678"},
    },
    "hosted_zones": {"example.com": "Z1AFAKE1ZON3YO", "internal.example.com": "Z2AFAKE1ZON3NO",
                     "private.example.com": "Z3AFAKE1ZOMORE"},
    "egress_only_internet_gateways": {"vpc-12345678": "eigw-1"},
}
GCE_HARNESS_FACTS = {"hosted_zones": {"example.com": "1"}}
SKIP_WITHOUT_SOURCE = "KOPS_SOURCE is not set: point it at a kops checkout (its %s) to compare with all of kops' " \
                      "fixtures" % SOURCE_UPDATE_CLUSTER


def source_update_cluster(required=False):
    """$KOPS_SOURCE/tests/integration/update_cluster, or None without KOPS_SOURCE (required: an error instead)."""
    source = os.environ.get("KOPS_SOURCE")
    root = pathlib.Path(source) / SOURCE_UPDATE_CLUSTER if source else None
    if root is not None and not root.is_dir():
        raise RuntimeError("KOPS_SOURCE=%s holds no %s: point it at a kops checkout" % (source, SOURCE_UPDATE_CLUSTER))
    if root is None and required:
        raise RuntimeError(SKIP_WITHOUT_SOURCE)
    return root


def fixture_objects(directory):
    """The kops objects (dicts) of a fixture's in-v1alpha2.yaml."""
    return [d for d in yaml.safe_load_all((pathlib.Path(directory) / "in-v1alpha2.yaml").read_text()) if d]


def fixture_cluster(directory):
    return next(d for d in fixture_objects(directory) if d.get("kind") == "Cluster")


def completed_spec(directory):
    """The completed spec a kubernetes.tf's directory holds as a store object's data (kops' name for it), or None."""
    for path in sorted((pathlib.Path(directory) / "data").glob("*_cluster-completed.spec_content")):
        return yaml.safe_load(path.read_text())
    return None


FILE_REFERENCE = re.compile(r'^\$\{file\("\$\{path\.module\}/([^"]+)"\)\}$')


def unquoted(value):
    """python-hcl2 keeps quotes on strings and quoted keys; kops quotes every tag key, we only where needed."""
    if isinstance(value, dict):
        return {k.strip('"'): unquoted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unquoted(v) for v in value]
    return value.strip('"') if isinstance(value, str) else value


def _value(value, read, replacements):
    """A body value to compare: file() references read (without the newline kops' writer ends files with), HCL
    escapes undone, replacements ((pattern, text), ...) applied, JSON documents parsed."""
    if isinstance(value, dict):
        return {k: _value(v, read, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v, read, replacements) for v in value]
    if not isinstance(value, str):
        return value
    match = FILE_REFERENCE.match(value)
    if match:
        text = read(match.group(1))
        value = value if text is None else text.rstrip("\n")
    elif "\\" in value:
        value = value.encode("utf-8").decode("unicode_escape")
    for pattern, replacement in replacements:
        value = pattern.sub(replacement, value)
    if value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def terraform_resources(text, read, replacements=(), select=None):
    """{type.name: body} of a kubernetes.tf's text, bodies normalised for comparison (_value); read(path) gives a
    file() reference's text (None: left as the reference); select(key) keeps only some resources."""
    import hcl2  # the test requirements' python-hcl2; only the Terraform comparisons need it

    found = {}
    for resource in hcl2.loads(text).get("resource", []):
        for kind, named in resource.items():
            for name, body in named.items():
                key = "%s.%s" % (kind.strip('"'), name.strip('"'))
                if select is None or select(key):
                    found[key] = _value(unquoted(body), read, replacements)
    return found


def directory_reader(directory):
    """read() for terraform_resources: a file under directory, None when it is not there."""
    directory = pathlib.Path(directory)

    def read(path):
        target = directory / path
        return target.read_text() if target.is_file() else None
    return read


def fixture_resources(directory, replacements=(), select=None):
    """{type.name: body} of directory's kubernetes.tf (kops' fixture, or our out_dir)."""
    directory = pathlib.Path(directory)
    return terraform_resources((directory / "kubernetes.tf").read_text(), directory_reader(directory), replacements,
                               select)
