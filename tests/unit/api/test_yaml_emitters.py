"""libyaml's emitter and parser (PyYAML's C classes) against PyYAML's Python ones, as the collection uses them.

The collection writes every spec, manifest and node file with libyaml where PyYAML has it (api/objects.py
_yaml_classes) and with PyYAML's Python classes otherwise, so both must write the same bytes: for every document
of kops' own fixtures (the addon manifests, nodeup configs and specs kops wrote), and for generated strings that
exercise the style choices (quoting, folding at 80 columns, escapes, block scalars).
"""

from __future__ import annotations

import random
import string

import pytest
import yaml

from ansible_collections.kubeops.kops.plugins.module_utils.addons import channel
from ansible_collections.kubeops.kops.plugins.module_utils.api import objects
from ansible_collections.kubeops.kops.plugins.module_utils.nodeup import goyaml

from tests.conformance import kops_fixtures

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="this PyYAML was built without libyaml (yaml.__with_libyaml__ is False): "
                                "the collection then writes with PyYAML's Python emitter only")

# Characters PyYAML's Python emitter and libyaml's choose different styles for: NEL, the Unicode line and paragraph
# separators and the byte order mark (Python writes them raw in single quotes, as line breaks; libyaml, which
# go-yaml ports, double-quotes and escapes them).  Neither appears in what kops writes; the test below reads
# libyaml's output back instead.
STYLE_DIVERGENT = "\x85\u2028\u2029\ufeff"
ALPHABET = string.ascii_letters + string.digits + "    ::--#'\"\\\n\t{}[],&*!|>%@`.=/é€\x07"


def _fixture_documents():
    documents = []
    for path in sorted(kops_fixtures.ROOT.rglob("*")):
        if not path.is_file() or path.suffix not in ("", ".yaml", ".yml"):
            continue
        try:
            documents.extend(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, (dict, list)))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # not YAML (user data scripts, JSON policies read as text by other tests)
    return documents


def _dumps(document, pure):
    return (objects.dump_object(document, pure=pure), channel.dump_manifest([document], pure=pure).decode("utf-8"),
            goyaml.dumps(document, pure=pure))


def test_both_emitters_write_kops_fixtures_alike():
    documents = _fixture_documents()
    assert len(documents) > 200, "the kops fixtures' YAML documents were not found under %s" % kops_fixtures.ROOT
    different = [index for index, document in enumerate(documents) if _dumps(document, True) != _dumps(document, False)]
    assert not different, "libyaml and PyYAML write %d of %d documents differently, first %r" % (
        len(different), len(documents), documents[different[0]])


@pytest.mark.parametrize("seed", range(4))
def test_both_emitters_write_generated_strings_alike(seed):
    rng = random.Random(seed)
    for _case in range(500):
        text = "".join(rng.choice(ALPHABET) for _char in range(rng.choice([0, 1, 3, 12, 79, 81, 160, 400])))
        document = {"metadata": {"name": text, "labels": {text[:20] or "k": text}}, "args": [text, {"v": text}], "n": 1}
        assert _dumps(document, True) == _dumps(document, False), repr(text)


@pytest.mark.parametrize("char", STYLE_DIVERGENT)
def test_libyaml_escapes_line_separators_it_reads_back(char):
    document = {"k": "a%sb" % char, "l": ["x %s y" % char]}
    for text in _dumps(document, False):
        assert "\\" in text
        assert yaml.safe_load(text) == document


def test_libyaml_and_pure_loaders_read_alike():
    text = objects.dump_objects(_fixture_documents()[:50])
    assert objects.load_yaml_documents(text) == list(yaml.load_all(text, Loader=objects._yaml_classes(pure=True)[0]))
    assert objects._yaml_classes()[0].__mro__[1] is yaml.CSafeLoader


def test_a_creation_timestamp_stays_a_string_with_either_loader():
    for pure in (True, False):
        assert yaml.load("t: 2020-01-01T00:00:00Z\n", Loader=objects._yaml_classes(pure)[0]) == {"t": "2020-01-01T00:00:00Z"}
