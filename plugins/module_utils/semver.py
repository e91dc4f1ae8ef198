# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Semantic versions and the range expressions kops' channel files use.

Ranges are blang/semver style: space-separated comparisons that must all hold
(``">=1.27.0 <1.32.0"``), ``||`` between alternatives.
"""

from __future__ import annotations

import operator
import re

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_COMPARISON = re.compile(r"^(>=|<=|>|<|=|==|!=)?\s*(\S+)$")
_OPERATORS = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
    "=": operator.eq, "==": operator.eq, "!=": operator.ne, None: operator.eq,
}


class Version(tuple):
    """(major, minor, patch, prerelease) ordered like semver: a prerelease sorts first."""

    def __new__(cls, text):
        match = _VERSION.match(str(text).strip())
        if not match:
            raise SpecError("%r is not a semantic version (expected e.g. 1.34.2 or v1.34.2)" % (text,))
        major, minor, patch, pre = match.groups()
        pre_key = (1,) if pre is None else (0,) + tuple(
            (0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
        self = tuple.__new__(cls, (int(major), int(minor), int(patch or 0), pre_key))
        self.prerelease = pre
        return self

    @property
    def major(self):
        return self[0]

    @property
    def minor(self):
        return self[1]

    @property
    def patch(self):
        return self[2]

    def __str__(self):
        text = "%d.%d.%d" % self[:3]
        return text + ("-" + self.prerelease if self.prerelease else "")


def parse(text):
    return Version(text)


def release(version):
    """major.minor.patch of a version, its prerelease dropped: kops' IsKubernetesGTE/LT compare the cluster's
    version so, a 1.34.0-alpha.1 counting as 1.34 (pkg/util IsKubernetesGTE ignores Pre and Build)."""
    return Version("%d.%d.%d" % tuple(version[:3]))


# kops' ParseKubernetesVersion: a release URL (a CI or side-loaded build) names its minor as /v1.<minor>.
_VERSION_IN_URL = re.compile(r"/v1\.(\d+)\.")
BASE_URL_PREFIXES = ("http:", "https:", "memfs:")


def is_base_url(text):
    """kops' IsBaseURL: kubernetesVersion names the base URL of a Kubernetes build instead of a version."""
    return str(text).startswith(BASE_URL_PREFIXES)


def kubernetes_version(text):
    """spec.kubernetesVersion as kops reads it: a version, or a base URL whose path names v1.<minor>.<...>
    (that minor, patch 0); anything else fails naming the value."""
    if is_base_url(text):
        match = _VERSION_IN_URL.search(str(text))
        if not match:
            raise SpecError("%r: a Kubernetes build URL must name its version in its path (for example "
                            "https://dl.k8s.io/release/v1.35.0)" % (text,))
        return Version("1.%s.0" % match.group(1))
    return Version(text)


def is_valid(text):
    try:
        Version(text)
    except ValueError:
        return False
    return True


def in_range(version, expression):
    """True if version satisfies a channel range like ``">=1.27.0 <1.32.0"``."""
    version = version if isinstance(version, Version) else Version(version)
    for alternative in expression.split("||"):
        if all(_holds(version, part) for part in alternative.split()):
            return True
    return False


def _holds(version, comparison):
    match = _COMPARISON.match(comparison)
    if not match:
        raise SpecError("cannot parse version range %r" % comparison)
    op, bound = match.groups()
    return _OPERATORS[op](version, Version(bound))
