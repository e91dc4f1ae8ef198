# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The kops release whose behaviour, fixtures and tables this collection follows (a leaf: any layer may read it)."""

from __future__ import annotations

KOPS_VERSION = "1.37.0-alpha.1"
