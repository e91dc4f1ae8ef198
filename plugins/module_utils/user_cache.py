# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The collection's cache directory on the controller (a leaf: it imports nothing of the collection).

What is kept there can be rebuilt from its sources, and is named by what it was built from: the collection tarball
and the nodes' wheels (nodeconfig/boot_artifacts.py), botocore's parsed models (aws_models.py).  Removing the
directory costs the next run time, nothing else.
"""

from __future__ import annotations

import os
import pathlib


def root():
    """$XDG_CACHE_HOME/kubeops-kops, else ~/.cache/kubeops-kops (the XDG base directory rules)."""
    return pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "kubeops-kops"
