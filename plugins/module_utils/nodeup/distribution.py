# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""The node's distribution as kops' nodeup names it (util/pkg/distributions): debian12, ubuntu2404, flatcar, ..."""

from __future__ import annotations

import shlex

# os-release ID -> kops' project name; versioned ones get their version appended as kops spells it.
PROJECTS = {"debian": "debian", "ubuntu": "ubuntu", "rhel": "rhel", "centos": "centos", "rocky": "rocky",
            "fedora": "fedora", "amzn": "amazonlinux", "flatcar": "flatcar", "cos": "containeros"}
UNVERSIONED = ("flatcar", "containeros")
RPM_PROJECTS = ("rhel", "centos", "rocky", "fedora", "amazonlinux")


def from_os_release(text):
    """kops' distribution name from /etc/os-release's text ('' for one kops does not know)."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            parts = shlex.split(value) if value.strip() else [""]
            fields[key.strip()] = parts[0] if parts else ""
    project = PROJECTS.get(fields.get("ID", "").lower())
    if not project:
        return ""
    if project in UNVERSIONED:
        return project
    version = fields.get("VERSION_ID", "")
    if project == "ubuntu":
        return "ubuntu" + version.replace(".", "")
    return project + version.split(".", 1)[0]


def read(root="/"):
    """The distribution of the machine (or image) under root."""
    for path in ("etc/os-release", "usr/lib/os-release"):
        try:
            with open("%s/%s" % (root.rstrip("/"), path)) as handle:
                return from_os_release(handle.read())
        except (IOError, OSError):
            continue
    return ""


def is_rhel_family(distribution):
    return distribution.startswith(RPM_PROJECTS)
