# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""A small HCL2 writer for the Terraform files kops writes.

Values: str/int/float/bool/None, lists, dicts (written as object literals
``{ k = v }``), Expression (a raw Terraform expression, e.g. a reference
``aws_vpc.x.id``) and Block (a nested block, repeated for a list of Blocks).
Attributes are aligned on ``=`` within a run of single-line attributes, as
``terraform fmt`` does, and keys are sorted like kops' writer.
"""

from __future__ import annotations

import json
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import TaskError

_BARE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class Expression(str):
    """A Terraform expression written verbatim (a reference, a function call)."""


class Block(object):
    """A nested block such as ``launch_template { ... }``."""

    def __init__(self, body):
        self.body = body


def literal(value, indent=0):
    if isinstance(value, Expression):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v, indent) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        lines = _attributes(value, indent + 1)
        return "{\n" + "\n".join(lines) + "\n" + "  " * indent + "}" if lines else "{}"
    raise TaskError("cannot write %r as HCL" % (value,))


def _string(value):
    text = json.dumps(value, ensure_ascii=False)
    # ${ and %{ start template sequences in HCL strings; kops escapes them.
    return text.replace("${", "$${").replace("%{", "%%{")


def _key(key):
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _attributes(body, indent):
    """Lines of a block body: aligned attributes, then nested blocks (sorted by key)."""
    pad = "  " * indent
    lines = []
    run = []

    def flush():
        width = max(len(_key(item[0])) for item in run) if run else 0
        for key, text in run:
            lines.append("%s%s = %s" % (pad, _key(key).ljust(width), text))
        del run[:]

    for key in sorted(body):
        value = body[key]
        if isinstance(value, Block) or (isinstance(value, list) and value and all(isinstance(v, Block) for v in value)):
            flush()
            for block in value if isinstance(value, list) else [value]:
                lines.append("%s%s {" % (pad, key))
                lines.extend(_attributes(block.body, indent + 1))
                lines.append("%s}" % pad)
            continue
        text = literal(value, indent)
        if "\n" in text:
            flush()
            lines.append("%s%s = %s" % (pad, _key(key), text))
        else:
            run.append((key, text))
    flush()
    return lines


def block(header, body):
    """A top-level block: ``resource "aws_vpc" "name" { ... }``."""
    return "\n".join(["%s {" % header] + _attributes(body, 1) + ["}"])


def header(kind, *labels):
    return " ".join([kind] + ['"%s"' % label for label in labels])


def terraform_name(name):
    """kops' sanitizeName for resource names: '.' -> '-', '/' -> '--', ':' -> '_'; a leading digit gets 'prefix_'."""
    if name[:1].isdigit():
        name = "prefix_" + name
    return name.replace(".", "-").replace("/", "--").replace(":", "_")
