# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""YAML as kops writes it: sigs.k8s.io/yaml's Marshal (JSON, then go-yaml v2's encoder).

kops' nodeup writes its static pod manifests and kubeconfigs this way, so the
files a node gets are the bytes kops' would be.  go-yaml's emitter is a port of
libyaml, as PyYAML's is (block style, 2-space indent, sequences not indented
under a mapping key, plain scalars folded at 80 columns); what differs is the
choice of scalar style, which is Go's here:

- mapping keys in go-yaml's order (runs of digits by value, non-letters before letters);
- a string that would read back as another type (YAML 1.1: null, bools such as
  "yes" and "on", numbers, timestamps, base-60 floats) in double quotes;
- a string with a newline as a literal block (|, |-, |+);
- anything else plain, or single-quoted where YAML's syntax does not allow plain.

Input is what JSON can hold: dicts, lists, strings, ints, floats, bools and None.
"""

from __future__ import annotations

import io
import math
import re

from ansible_collections.kubeops.kops.plugins.module_utils.api import goyaml_emitter
from ansible_collections.kubeops.kops.plugins.module_utils.errors import NodeError

try:
    import yaml
    from yaml.emitter import Emitter
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode
    from yaml.resolver import BaseResolver
    from yaml.serializer import Serializer
    HAS_YAML = True
except ImportError:  # the role installs python3-yaml on every node (nodeup_*_python_packages)
    HAS_YAML = False

STR_TAG = "tag:yaml.org,2002:str"
# go-yaml v2 resolve.go: the plain scalars that read back as a bool, null, float or merge key.
RESOLVED_WORDS = frozenset(
    "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF ~ null Null NULL "
    ".nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<".split()) | {""}
YAML_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
BASE60_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
GO_FLOAT = re.compile(r"^[-+]?(?:(?:[0-9](?:_?[0-9])*)?\.?[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9]+)?|"
                      r"[0-9](?:_?[0-9])*\.(?:[eE][-+]?[0-9]+)?|"
                      r"0[xX](?:_?[0-9a-fA-F])*\.?(?:_?[0-9a-fA-F])*[pP][-+]?[0-9]+|inf|infinity|nan)$", re.I)
GO_INT = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO]?[0-7]*|[1-9][0-9]*)$")
# go-yaml's allowedTimestampFormats (time.Parse layouts): date, date and time with zone ("T"/"t"), or a space.
TIMESTAMP = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?"
                       r"(?:Z|[-+]\d{2}:\d{2}))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?))?$")
INT64 = (-2 ** 63, 2 ** 64 - 1)


def _is_timestamp(text):
    match = TIMESTAMP.match(text)
    if not match:
        return False
    year, month, day = (int(part) for part in match.group(1, 2, 3))
    days = [31, 29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28, 31, 30, 31, 30, 31, 31, 30,
            31, 30, 31]
    if not 1 <= month <= 12 or not 1 <= day <= days[month - 1]:
        return False
    clock = [int(part) for part in match.groups()[3:] if part is not None]
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def _is_number(text):
    """go-yaml's int/float resolution for a scalar starting with a digit or a sign."""
    plain = text.replace("_", "")
    if GO_INT.match(plain):
        digits = plain.lstrip("+-")
        base = {"0x": 16, "0X": 16, "0b": 2, "0B": 2, "0o": 8, "0O": 8}.get(digits[:2])
        body = digits[2:] if base else digits
        base = base or (8 if len(digits) > 1 and digits[0] == "0" else 10)
        if not body:
            return base == 8 and digits == "0"  # "0" alone; "0x" is not a number
        value = int(body, base) * (-1 if plain.startswith("-") else 1)
        return INT64[0] <= value <= INT64[1]
    if YAML_STYLE_FLOAT.match(plain) and GO_FLOAT.match(plain):
        return True
    if plain.startswith(("0b", "-0b")):
        body = plain.split("b", 1)[1]
        return bool(body) and set(body) <= set("01")
    return False


def resolves_to_non_string(text):
    """Whether go-yaml would read text, written plain, as something else than a string (its encoder then quotes)."""
    if text in RESOLVED_WORDS:
        return True
    first = text[0]
    if first == ".":
        return bool(GO_FLOAT.match(text))
    if first in "+-0123456789":
        return _is_timestamp(text) or _is_number(text) or bool(BASE60_FLOAT.match(text))
    return False


def _key_before(left, right):
    """go-yaml's keyList.Less for two strings."""
    for index, (a, b) in enumerate(zip(left, right)):
        if a == b:
            continue
        a_letter, b_letter = a.isalpha(), b.isalpha()
        if a_letter and b_letter:
            return a < b
        if a_letter or b_letter:
            return b_letter
        a_number = b_number = 0
        if a == "0" or b == "0":
            back = index - 1
            while back >= 0 and left[back].isdigit():
                if left[back] != "0":
                    a_number = b_number = 1
                    break
                back -= 1
        a_end = index
        while a_end < len(left) and left[a_end].isdigit():
            a_number = a_number * 10 + int(left[a_end])
            a_end += 1
        b_end = index
        while b_end < len(right) and right[b_end].isdigit():
            b_number = b_number * 10 + int(right[b_end])
            b_end += 1
        if a_number != b_number:
            return a_number < b_number
        if a_end != b_end:
            return a_end < b_end
        return a < b
    return len(left) < len(right)


class _GoKey(object):
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __lt__(self, other):
        return _key_before(self.text, other.text)


def _scalar(text, style=None):
    return ScalarNode(STR_TAG, text, style=style)


def _string(text):
    if "\n" in text:
        return _scalar(text, "|")
    if resolves_to_non_string(text):
        return _scalar(text, '"')
    return _scalar(text)


def _float(value):
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == int(value) and abs(value) < 1e21:
        return "%d" % value  # strconv.FormatFloat(f, 'g', -1, 64) of a whole number below 1e21
    text = repr(value)
    mantissa, _e, exponent = text.partition("e")
    return mantissa + ("e%+03d" % int(exponent) if exponent else "")


def node(value):
    """The YAML node go-yaml would emit for a JSON value."""
    if isinstance(value, dict):
        items = sorted(((str(k), v) for k, v in value.items()), key=lambda item: _GoKey(item[0]))
        return MappingNode("tag:yaml.org,2002:map", [(_string(k), node(v)) for k, v in items], flow_style=False)
    if isinstance(value, (list, tuple)):
        return SequenceNode("tag:yaml.org,2002:seq", [node(v) for v in value], flow_style=False)
    if value is None:
        return _scalar("null")
    if isinstance(value, bool):
        return _scalar("true" if value else "false")
    if isinstance(value, int):
        return _scalar(str(value))
    if isinstance(value, float):
        return _scalar(_float(value))
    if isinstance(value, str):
        return _string(value)
    raise NodeError("cannot write %r (%s) as YAML" % (value, type(value).__name__))


if HAS_YAML:
    class _GoDumper(goyaml_emitter.GoDoubleQuoted, Emitter, Serializer, BaseResolver):
        """PyYAML's emitter and serializer; every scalar is a string node (styles chosen above)."""

        def __init__(self, stream):
            Emitter.__init__(self, stream, allow_unicode=True)
            Serializer.__init__(self)
            BaseResolver.__init__(self)

    if getattr(yaml, "__with_libyaml__", False):
        from yaml.cyaml import CEmitter

        class _GoCDumper(CEmitter, BaseResolver):
            """libyaml's emitter, which go-yaml's is a port of (PyYAML's C classes, as PyPI's wheels and Debian's
            python3-yaml have them): the same bytes, several times faster."""

            def __init__(self, stream):
                CEmitter.__init__(self, stream, allow_unicode=True)
                BaseResolver.__init__(self)
    else:
        _GoCDumper = _GoDumper


def _flow_empty(tree):
    """Empty mappings and sequences: go-yaml writes {} and [] (flow), like PyYAML for empty collections."""
    if isinstance(tree, (MappingNode, SequenceNode)):
        if not tree.value:
            tree.flow_style = True
        for child in tree.value:
            for part in (child if isinstance(child, tuple) else (child,)):
                _flow_empty(part)
    return tree


def load(text):
    """A YAML document read back (PyYAML's safe loader)."""
    if not HAS_YAML:
        raise ImportError("reading YAML needs PyYAML on the node (python3-yaml)")
    return yaml.safe_load(text)


def dumps(document, pure=False):
    """sigs.k8s.io/yaml.Marshal of a JSON-shaped document, as text (pure: with PyYAML's Python emitter, even where
    libyaml's is there)."""
    if not HAS_YAML:
        raise ImportError("writing kops' YAML files needs PyYAML on the node (python3-yaml)")
    stream = io.StringIO()
    dumper = (_GoDumper if pure else _GoCDumper)(stream)
    try:
        dumper.open()
        dumper.serialize(_flow_empty(node(document)))
        dumper.close()
    finally:
        dumper.dispose()
    return goyaml_emitter.without_document_end(stream.getvalue())
