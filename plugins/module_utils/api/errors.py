# -*- coding: utf-8 -*-
# Copyright: kubeops.kops contributors
# Apache License 2.0 (see LICENSE)
"""Field errors in the shape kops (and Kubernetes' field.ErrorList) prints them.

Every layer reports bad input as a list of FieldError; ValidationError carries
the whole list so a user sees every problem at once, each naming the field
path and what would be valid.
"""

from __future__ import annotations

import json

from ansible_collections.kubeops.kops.plugins.module_utils.errors import SpecError

# The error kinds of k8s.io/apimachinery/pkg/util/validation/field.
REQUIRED = "Required value"
INVALID = "Invalid value"
FORBIDDEN = "Forbidden"
NOT_FOUND = "Not found"
DUPLICATE = "Duplicate value"
UNSUPPORTED = "Unsupported value"
UNKNOWN_FIELD = "Unknown field"

_SHOWS_VALUE = (INVALID, NOT_FOUND, DUPLICATE, UNSUPPORTED)


class FieldError(object):
    """One problem at one field path, e.g. ``spec.subnets[1].cidr``."""

    __slots__ = ("path", "kind", "value", "detail")

    def __init__(self, path, kind, detail="", value=None):
        self.path = path
        self.kind = kind
        self.detail = detail
        self.value = value

    def __str__(self):
        text = "%s: %s" % (self.path, self.kind)
        if self.kind in _SHOWS_VALUE and self.value is not None:
            text += ": %s" % _render(self.value)
        if self.detail:
            text += ": %s" % self.detail
        return text

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, FieldError) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def _render(value):
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


def required(path, detail=""):
    return FieldError(path, REQUIRED, detail)


def invalid(path, value, detail=""):
    return FieldError(path, INVALID, detail, value)


def forbidden(path, detail=""):
    return FieldError(path, FORBIDDEN, detail)


def not_found(path, value, detail=""):
    return FieldError(path, NOT_FOUND, detail, value)


def duplicate(path, value, detail=""):
    return FieldError(path, DUPLICATE, detail, value)


def unsupported(path, value, valid_values, detail=""):
    allowed = "supported values: %s" % ", ".join('"%s"' % v for v in valid_values)
    return FieldError(path, UNSUPPORTED, "; ".join(d for d in (allowed, detail) if d), value)


def unknown_field(path, detail=""):
    return FieldError(path, UNKNOWN_FIELD, detail)


class ValidationError(SpecError):
    """Raised with every FieldError found; nothing has been written when it is."""

    def __init__(self, errors, subject=""):
        self.errors = list(errors)
        self.subject = subject
        SpecError.__init__(self, self.message())

    def message(self):
        head = "%s is not valid" % self.subject if self.subject else "spec is not valid"
        return "%s:\n%s" % (head, "\n".join("  - %s" % e for e in self.errors))
