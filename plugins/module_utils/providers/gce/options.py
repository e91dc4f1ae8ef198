# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""GCE's part of every kubeops.kops module: no options of its own (the project comes from the spec, credentials
from Google's application default; an s3:// store of a GCE cluster uses the AWS options) and no cloud facts it
looks up (providers/module_options.py)."""

from __future__ import annotations


def argument_spec():
    return {}


def configure_module(module):
    del module


def cloud_facts(params, data, zone_hint):
    del params, data, zone_hint
