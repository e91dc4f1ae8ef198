#!/usr/bin/env python
"""Regenerate plugins/module_utils/completion/channel_data.py from a kops checkout.

Copies kops' release channels (channels/stable and channels/alpha) byte for
byte into raw string literals, after checking each parses as YAML with a
spec.  Ansible ships module_utils as Python only, hence the .py wrapper.

    hack/gen_channel_data.py --kops ../kops > plugins/module_utils/completion/channel_data.py
"""

from __future__ import annotations

import pathlib
import sys

import yaml

import kops_go

CHANNELS = ("stable", "alpha")

HEADER = '''# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""kops release channels, embedded as data.

Copied unchanged from kops (github.com/kubernetes/kops, channels/, Apache 2.0,
commit %(commit)s) so a cluster can be created with no network access.  They
live in a .py file because Ansible ships module_utils as Python only.
"""

from __future__ import annotations

'''


def channel_text(kops, name):
    """The channel file's text, refused if a raw ''' literal could not hold it or it is not a channel."""
    path = pathlib.Path(kops) / "channels" / name
    text = path.read_text(encoding="utf-8")
    if "'''" in text or text.endswith("\\"):
        raise ValueError("%s cannot be written as a raw ''' string" % path)
    document = yaml.safe_load(text)
    if not isinstance(document, dict) or not isinstance(document.get("spec"), dict):
        raise ValueError("%s is not a kops channel (no spec mapping)" % path)
    return text


def generate(kops, commit=None):
    lines = [HEADER % {"commit": kops_go.git_commit(kops, commit)} + "CHANNEL_TEXT = {"]
    for name in CHANNELS:
        lines.append("    %r: r'''%s'''," % (name, channel_text(kops, name)))
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(kops_go.main(generate, __doc__.splitlines()[0]))
